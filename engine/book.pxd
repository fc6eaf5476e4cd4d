# Compiled build only (setup.py, docs/build.md): a level's and a book's attributes as C struct fields,
# and the book's changes as methods other compiled modules call directly. Each attribute here is one
# of the class's __slots__ in book.py (tests/test_build.py).
cimport cython

from cefisim.engine.records cimport Order

@cython.final
cdef class Level:
    cdef public object price, qty
    cdef public dict orders

@cython.final
cdef class Book:
    cdef public object ask_key, asks, band, bid_key, bids, instrument_id, last_price, opening

    @cython.locals(level=Level)
    cpdef add(self, Order order)

    @cython.locals(level=Level)
    cpdef remove(self, Order order, open_lots)

    cpdef drop_level(self, levels, key)

    cpdef best_bid(self)

    cpdef best_ask(self)
