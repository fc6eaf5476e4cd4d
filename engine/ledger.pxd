# Compiled build only (setup.py, docs/build.md): the holds' arithmetic as direct C calls with the
# order, its execution and its instrument typed (every order entry and every fill asks them).
cimport cython

from cefisim.engine.records cimport Account, Balance, Execution, Order, OrderExtra
from cefisim.engine.reference cimport Instrument

@cython.locals(bal=Balance)
cpdef Balance balance(Account account, asset_id)
cpdef open_qty(Order order)
@cython.locals(extra=OrderExtra)
cpdef hold_rate(Order order, rates=*, given=*)
cpdef buy_bound(Instrument inst, Execution exe, open_lots, price, rate)
cpdef buy_hold(Order order, open_lots, price)

@cython.locals(inst=Instrument, exe=Execution)
cpdef order_hold(Order order)

cpdef rehold(Order order, held, fee_held)

@cython.locals(bc=Account, sc=Account, bal=Balance)
cpdef settle(Instrument inst, Order buyer, Order seller, lots, price, b_rate, s_rate, rate, tuple held)

# the sums' two widths (ledger.py, Two widths): a function whose last argument is an Exact runs on C's
# long long given NATIVE and on Python's integers given UNBOUNDED; its locals declared Exact take the same
ctypedef fused Exact:
    long long
    object

cdef long long NATIVE

@cython.locals(lots=Exact, limit=Exact, fee_rate=Exact, lt=Exact, paid=Exact, fee_sum=Exact, fees_paid=Exact)
@cython.locals(num=Exact, den=Exact, ceil=Exact, one=Exact, cost=Exact, fee=Exact)
cdef tuple _bound(Instrument inst, Execution exe, open_lots, price, rate, Exact width)

@cython.locals(bx=Execution, sx=Execution, n=Exact, p=Exact, b_fee_rate=Exact, s_fee_rate=Exact, num=Exact)
@cython.locals(den=Exact, ceil=Exact, one=Exact, b_lt=Exact, s_lt=Exact, b_paid=Exact, s_paid=Exact)
@cython.locals(b_executed=Exact, s_executed=Exact, b_remaining=Exact, s_remaining=Exact, b_fee_sum=Exact)
@cython.locals(s_fee_sum=Exact, b_fees_paid=Exact, s_fees_paid=Exact, lt=Exact, paid=Exact, quote=Exact)
@cython.locals(b_fee=Exact, s_fee=Exact)
cdef tuple _execute(Instrument inst, Order buyer, Order seller, lots, price, b_rate, s_rate, Exact width)
