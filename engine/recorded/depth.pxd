# Compiled build only (setup.py, docs/build.md): the recorded market's state as C types, so that the queue
# bookkeeping and the fills, given it typed, read it as struct fields. Each attribute here is one of the
# class's __slots__ in depth.py (tests/test_build.py).
cimport cython

from cefisim.engine.book cimport Book
from cefisim.engine.core cimport VenueCore
from cefisim.engine.levels cimport Level
from cefisim.engine.records cimport Account, Order
from cefisim.engine.reference cimport Instrument

@cython.final
cdef class RecordedLevel:
    cdef public object lots
    cdef public Order depth
    cdef public Level level

@cython.final
cdef class QueuePos:
    cdef public object front, price, qty, traded

cdef class MarketState:
    cdef public VenueCore venue
    cdef public Instrument instrument
    cdef public Book book
    cdef public Account counterparty
    cdef public dict levels, queue
    cdef public object model, traded

    @cython.locals(rec=RecordedLevel, depth=Order)
    cpdef live_depth(self, side, price)
