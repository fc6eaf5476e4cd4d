# Compiled build only (setup.py, docs/build.md): the attributes of the records every order touches,
# as C struct fields. Each name here is one of the class's __slots__ in records.py, and nothing else:
# tests/test_build.py compares the two.

cimport cython

from cefisim.engine.reference cimport Client, Instrument

@cython.final
cdef class OrderExtra:
    cdef public object acked, cancel_reason, exec_inst, flags, hold_fee_rate_given, hold_rate
    cdef public object modifications, modify_info, msg_id, parent_id, price_given, qty_given
    cdef public object ref_external_id, reject_reason, stp

@cython.final
cdef class Execution:
    cdef public object cum_fee, cum_lt, cum_quote, executed, fees_paid

@cython.final
cdef class Account:
    cdef public dict balances, by_external, live_external, open_orders, orders, transfers
    cdef public Client client
    cdef public object id
    cdef public list fills, funds_log

@cython.final
cdef class Order:
    cdef public Account account
    cdef public Instrument instrument
    cdef public object created, external_id, id, price, remaining
    cdef public object side, status, tif, type, updated
    cdef public Execution execution
    cdef public OrderExtra extra

    cpdef OrderExtra ex(self)

@cython.final
cdef class Fill:
    cdef public object fee, fee_rate, liq_flag, match_id, order, price, qty, quote, timestamp

cdef class Balance:
    cdef public object fees_hold, hold, total, unsettled_fees
    cpdef change_hold(self, units, fee_units)

cdef class UnheldBalance(Balance):
    cpdef change_hold(self, units, fee_units)
