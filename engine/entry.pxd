# Compiled build only (setup.py, docs/build.md): order entry and cancel with the venue, the command,
# the new order, its account and instrument typed, and the checks and the operations they call
# (activation, holds, prices) as direct C calls.
cimport cython

from cefisim.engine.commands cimport CancelOrder, PlaceOrder
from cefisim.engine.core cimport Result, VenueCore
from cefisim.engine.events cimport build_event
from cefisim.engine.ledger cimport balance, order_hold
from cefisim.engine.lifecycle cimport activate, cancel_now
from cefisim.engine.matching cimport effective_stp
from cefisim.engine.pricing cimport protection_price, within_band, would_trade
from cefisim.engine.records cimport Account, Balance, Order, OrderExtra
from cefisim.engine.reference cimport Client, Instrument

@cython.locals(extra=OrderExtra)
cpdef _extra_of(PlaceOrder cmd, hold_rate)

@cython.locals(account=Account, extra=OrderExtra)
cpdef _reject(VenueCore v, Order order, reason, PlaceOrder cmd, Result result)

cpdef order_reject(VenueCore v, PlaceOrder cmd)

@cython.locals(account=Account, inst=Instrument, order=Order, given=OrderExtra)
cpdef place(VenueCore v, PlaceOrder cmd, Result result)

@cython.locals(inst=Instrument, account=Account, client=Client, extra=OrderExtra)
cpdef _entry_reject(VenueCore v, PlaceOrder cmd, Order order, qty, price, hold_rate)

@cython.locals(inst=Instrument)
cpdef _price_reject(VenueCore v, PlaceOrder cmd, Order order)

@cython.locals(bal=Balance)
cpdef _take_hold(Order order)

@cython.locals(account=Account)
cpdef find_order(VenueCore v, client_id, str ref)

@cython.locals(order=Order)
cpdef cancel(VenueCore v, CancelOrder cmd, Result result)
