# Compiled build only (setup.py, docs/build.md): the reference records every order reads (its
# instrument's grids, fees and status, its client's settings) as C types. They are dataclasses: the
# compiled dataclass takes its fields in the order declared HERE, so each class declares its fields
# in the order of the dataclass in reference.py, one name for each (tests/test_build.py).
cimport cython

from cefisim.engine.units cimport Grid

@cython.final
cdef class Asset:
    cdef public object id, name, decimals, status
    cdef public Grid grid

@cython.final
cdef class Client:
    cdef public object id, mnemonic, self_trade_prevention, status
    cdef public dict fee_overrides

@cython.final
cdef class Instrument:
    cdef public object id, symbol
    cdef public Asset base, quote
    cdef public Grid price_grid, qty_grid
    cdef public object min_qty, price_band, maker_fee, taker_fee, status, base_per_lot, notional_num
    cdef public object notional_den

    cpdef fee_rates_for(self, Client client)
