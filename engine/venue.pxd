# Compiled build only (setup.py, docs/build.md): the venue a C type too, so that ``submit`` reads its
# state (clock, wake bound, counters) as struct fields and calls order entry and cancel directly. It
# declares no attribute of its own: what is not state (the command table, feeds, rules) lives in its
# instance dictionary. The commands it tells apart are cimported: a type test of a C type is a C call,
# where ``isinstance`` of a Python class that fails also looks the object's ``__class__`` up.
from cefisim.engine.commands cimport AdvanceClock, CancelOrder, PlaceOrder
from cefisim.engine.core cimport VenueCore
from cefisim.engine.entry cimport cancel, place
from cefisim.engine.timers cimport advance

cdef class Venue(VenueCore):
    cdef dict __dict__

    cpdef applies_at(self, cmd, at=*)

    cpdef submit_at(self, cmd, at)
