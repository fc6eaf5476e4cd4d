# Compiled build only (setup.py, docs/build.md): an order's activation and end with the order typed,
# and matching and the holds as direct C calls.
cimport cython

from cefisim.engine.book cimport Book
from cefisim.engine.core cimport VenueCore
from cefisim.engine.events cimport build_event
from cefisim.engine.ledger cimport order_hold, rehold
from cefisim.engine.matching cimport available_to, end_order, match
from cefisim.engine.pricing cimport protection_price, would_trade
from cefisim.engine.records cimport Order, OrderExtra
from cefisim.engine.reference cimport Instrument

@cython.locals(book=Book, inst=Instrument, extra=OrderExtra)
cpdef activate(VenueCore v, Order order, events, confirmed=*)

cpdef bint end_unless_rests(VenueCore v, Order order, stopped, events)

@cython.locals(book=Book)
cpdef cancel_now(VenueCore v, Order order, reason, events)

@cython.locals(inst=Instrument, extra=OrderExtra)
cpdef ack_entry(VenueCore v, Order order, events)

cpdef ack_cancel(VenueCore v, Order order, events)
