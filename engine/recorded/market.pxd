# Compiled build only (setup.py, docs/build.md): the recorded market a C type (its state is depth.pxd's),
# so that apply_until, run once per clock move that reaches a recorded event, reads the state as struct
# fields and calls the level update, the fills and the queue bookkeeping directly. Each attribute here is
# one of RecordedMarket's own __slots__ in market.py (tests/test_build.py). The depth events are built by a
# direct C call (engine/events.pxd says why).
cimport cython

from cefisim.engine.book cimport Book
from cefisim.engine.levels cimport Level, SortedLevels, level_at
from cefisim.engine.clock cimport Clock
from cefisim.engine.core cimport VenueCore
from cefisim.engine.events cimport build_event
from cefisim.engine.recorded.depth cimport MarketState, RecordedLevel
from cefisim.engine.recorded.fills cimport trade, uncross
from cefisim.engine.recorded.queue cimport move_on_depth, place_of
from cefisim.engine.records cimport Account, Order
from cefisim.engine.reference cimport Instrument

# the kinds of a recorded event (feed.py's), as C integers: a kind is compared once or twice per event
cdef long TRADE, UPDATE

cdef class RecordedMarket(MarketState):
    cdef public object _events, _fill_cursor, _next, applied, held_until, impact, last_ts, name, next_ts

    # count: the events of one pass, a C integer (it counts objects in memory)
    @cython.locals(clock=Clock, nxt=tuple, bids=dict, asks=dict, count=Py_ssize_t)
    cpdef apply_until(self, to_ns, list events, budget=*)

    @cython.locals(rec=RecordedLevel, depth=Order, book=Book, level=Level, users=Level)
    @cython.locals(v=VenueCore, cp=Account, inst=Instrument, counts=dict)
    cpdef _set_level(self, side, dict recs, price, lots, recorded=*)
