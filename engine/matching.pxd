# Compiled build only (setup.py, docs/build.md): the matching loop's and a fill's records typed, so
# their attributes are read as C struct fields, and Book's methods and the holds' arithmetic called
# directly.
cimport cython

from cefisim.engine.book cimport Book
from cefisim.engine.levels cimport Level, SortedLevels, level_of
from cefisim.engine.core cimport VenueCore
from cefisim.engine.events cimport build_event
from cefisim.engine.ledger cimport buy_bound, hold_rate, order_hold, settle
from cefisim.engine.records cimport Account, Balance, Execution, Order, OrderExtra
from cefisim.engine.reference cimport Instrument

@cython.locals(extra=OrderExtra)
cpdef effective_stp(Order order)

@cython.locals(account=Account, bal=Balance)
cpdef end_order(VenueCore v, Order order, status, reason, events)

@cython.locals(buyer=Order, seller=Order, bx=Execution, sx=Execution, bc=Account, sc=Account, inst=Instrument)
cpdef fill(VenueCore v, Order taker, Order maker, lots, price, events, t_rates, t_hold_rate, t_bound=*)

@cython.locals(book=Book, levels=SortedLevels, level=Level, maker=Order, account=Account, orders=dict, gone=list)
cpdef match(VenueCore v, Order taker, events)

@cython.locals(book=Book, level=Level, maker=Order)
cpdef available_to(VenueCore v, Order taker, limit, wanted)
