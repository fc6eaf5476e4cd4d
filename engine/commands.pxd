# Compiled build only (setup.py, docs/build.md): the order-entry commands, read field by field on
# every order, and AdvanceClock, which the venue asks every command whether it is, as C types. They are dataclasses: the compiled dataclass takes its fields in the order
# declared HERE, so each class declares its fields in the order of the dataclass in commands.py (the
# journal's positional record follows it too; tests/test_build.py compares them).
cimport cython

@cython.final
cdef class PlaceOrder:
    cdef public object client_id, instrument_id, side, type, qty, price, tif, flags, exec_inst, stp
    cdef public object hold_fee_rate, external_id, msg_id, parent_id

@cython.final
cdef class ModifyOrder:
    cdef public object client_id, order_id, external_id, new_qty, new_price, new_type, msg_id
    cdef public object parent_id, prev_modify

@cython.final
cdef class CancelOrder:
    cdef public object client_id, ref

@cython.final
cdef class AdvanceClock:
    cdef public object to_ns
