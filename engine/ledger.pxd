# Compiled build only (setup.py, docs/build.md): the holds' arithmetic as direct C calls with the
# order, its execution and its instrument typed (every order entry and every fill asks them).
cimport cython

from cefisim.engine.records cimport Account, Balance, Execution, Order
from cefisim.engine.reference cimport Instrument

@cython.locals(bal=Balance)
cpdef Balance balance(Account account, asset_id)
cpdef open_qty(Order order)
cpdef hold_rate(Order order, rates=*, given=*)
cpdef buy_bound(Instrument inst, Execution exe, open_lots, price, rate)
cpdef buy_hold(Order order, open_lots, price)

@cython.locals(inst=Instrument)
cpdef order_hold(Order order)

cpdef rehold(Order order, held, fee_held)
