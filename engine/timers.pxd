# Compiled build only (setup.py, docs/build.md): the passing of time with the venue and its clock typed, so
# that what falls due is asked, and the clock moved, by direct C calls (a recorded market's replay passes
# here for every run of its events and every timer between them).
cimport cython

from cefisim.engine.clock cimport Clock
from cefisim.engine.core cimport VenueCore

@cython.locals(clock=Clock, feeds=tuple)
cpdef advance(VenueCore v, to_ns, list events, budget=*)
