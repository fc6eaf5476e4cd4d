# Compiled build only (setup.py, docs/build.md): the venue's state as C struct fields, so that the
# operations (matching, lifecycle, entry), given the venue typed, read its clock, books and counters
# without a dictionary lookup. Each attribute here is one of VenueCore's __slots__ in core.py
# (tests/test_build.py); a subclass (Venue) keeps a __dict__ for the rest.
cimport cython

from cefisim.engine.clock cimport Clock
from cefisim.engine.records cimport Order


# a dataclass: its fields in the order of VenueConfig in core.py (the compiled dataclass takes them
# from here)
cdef class VenueConfig:
    cdef public object gtc_life_ns, status_retention_ns, listing_window_ns, fee_settlement_interval_ns
    cdef public object max_open_orders, max_venue_open_orders, max_ended_orders_per_client
    cdef public object max_ended_orders

cdef class Result:
    cdef public object events, order, reject, snapshot_status, transfer


cdef class VenueCore:
    cdef public dict accounts, assets, books, clients, fee_account, instruments
    cdef public Clock clock
    cdef public list _timers
    cdef public VenueConfig config
    cdef public object _cap_check_at, _next_housekeeping, _timer_seq, _wake, gtc_queue
    cdef public object latency_cancel_ns, latency_entry_ns, latency_modify_ns, next_match_id
    cdef public object next_order_id, next_transfer_id, settlement_delay_ns

    cpdef schedule(self, due, action, payload)

    @cython.locals(last=Order)
    cpdef queue_expiry(self, Order order)

    cpdef next_due_other(self)

    cpdef next_expiry(self)

    cpdef next_timer(self)

    cpdef pop_timer(self)

    cpdef rewake(self, due=*)
