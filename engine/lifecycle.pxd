# Compiled build only (setup.py, docs/build.md): an order's activation and end with the order typed.
cimport cython

from cefisim.engine.book cimport Book
from cefisim.engine.core cimport VenueCore
from cefisim.engine.records cimport Order

@cython.locals(book=Book)
cpdef activate(VenueCore v, Order order, events, confirmed=*)

cpdef end_unless_rests(VenueCore v, Order order, stopped, events)

cpdef cancel_now(VenueCore v, Order order, reason, events)
