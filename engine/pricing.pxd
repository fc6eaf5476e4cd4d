# Compiled build only (setup.py, docs/build.md): the price checks of order entry as direct C calls,
# the venue, the instrument and the book typed.
cimport cython

from cefisim.engine.book cimport Book
from cefisim.engine.core cimport VenueCore
from cefisim.engine.reference cimport Instrument

cpdef reference_price2(VenueCore v, Instrument inst)

cdef _reference2(Book book)

@cython.locals(book=Book)
cpdef within_band(VenueCore v, Instrument inst, price)

@cython.locals(book=Book)
cpdef protection_price(VenueCore v, order_side, Instrument inst, aggressive)

cpdef _band_edge(base2, order_side, band)

@cython.locals(book=Book)
cpdef would_trade(VenueCore v, side, Instrument inst, price)
