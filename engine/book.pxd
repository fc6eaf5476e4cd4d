# Compiled build only (setup.py, docs/build.md): a book's attributes as C struct fields, and the book's
# changes as methods other compiled modules call directly. Each attribute here is one of the class's
# __slots__ in book.py (tests/test_build.py).
cimport cython

from cefisim.engine.levels cimport Level, SortedLevels, level_at, level_of
from cefisim.engine.records cimport Order

@cython.final
cdef class Book:
    cdef public object ask_key, band, bid_key, instrument_id, last_price, opening
    cdef public SortedLevels asks, bids

    @cython.locals(level=Level, levels=SortedLevels)
    cpdef Level add(self, Order order)

    @cython.locals(level=Level, levels=SortedLevels)
    cpdef remove(self, Order order, open_lots)

    cpdef drop_level(self, SortedLevels levels, key)

    cpdef best_bid(self)

    cpdef best_ask(self)
