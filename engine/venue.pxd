# Compiled build only (setup.py, docs/build.md): the venue a C type too, so that ``submit`` reads its
# state (clock, wake bound, counters) as struct fields and calls order entry and cancel directly. It
# declares no attribute of its own: what is not state (the command table, feeds, rules) lives in its
# instance dictionary.
from cefisim.engine.core cimport VenueCore
from cefisim.engine.entry cimport cancel, place
from cefisim.engine.timers cimport advance

cdef class Venue(VenueCore):
    cdef dict __dict__

    cpdef applies_at(self, cmd, at=*)

    cpdef submit_at(self, cmd, at)
