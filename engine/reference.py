"""Reference data: assets, instruments and clients, with the integer grids the engine trades on.

Ids are positive integers here (the wire form ``^[1-9][0-9]*$`` is parsed at the edge). An instrument
fixes three grids: price ticks (``price_increment``), quantity lots (``qty_increment``) and the smallest
unit of each asset (its ``decimals``). A lot must be a whole number of base-asset units, so holds and
transfers of the base asset are exact; a lot times a tick is a rational number of quote units
(``notional_num / notional_den``), rounded only where money changes hands (see ``engine/ledger.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from math import gcd

from cefisim.engine.state import saves_fields
from cefisim.engine.units import RATE_ONE, Grid
from cefisim.engine.vocabulary import AssetStatus, ClientStatus, InstrumentStatus, SelfTradePrevention

ID_RE = re.compile(r"^[1-9][0-9]*$")
SYMBOL_MAX = 31

# status and STP defaults are the plain strings, as the engine stores them (engine/vocabulary.py)


@dataclass(eq=False)
class Asset:
    id: int
    name: str
    decimals: int
    status: str = AssetStatus.ACTIVE.value
    grid: Grid = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0 <= self.decimals <= 18:
            raise ValueError("decimals must be between 0 and 18")
        self.grid = Grid.of_decimals(self.decimals)


@dataclass(eq=False)
class Instrument:
    id: int
    symbol: str
    base: Asset
    quote: Asset
    price_grid: Grid
    qty_grid: Grid
    min_qty: int  # lots
    price_band: int  # fraction in units of 10**-9
    maker_fee: int  # fraction in units of 10**-9
    taker_fee: int
    status: str = InstrumentStatus.ACTIVE.value
    base_per_lot: int = field(init=False)
    notional_num: int = field(init=False)
    notional_den: int = field(init=False)

    def __post_init__(self) -> None:
        if len(self.symbol) > SYMBOL_MAX or not self.symbol:
            raise ValueError(f"symbol must have 1 to {SYMBOL_MAX} characters")
        if self.status not in tuple(InstrumentStatus):
            raise ValueError(f"status must be one of {', '.join(InstrumentStatus)}")
        if not 0 <= self.maker_fee <= RATE_ONE or not 0 <= self.taker_fee <= RATE_ONE:
            raise ValueError("fee rates must be between 0 and 1")
        if not 0 < self.price_band < RATE_ONE:
            raise ValueError("price_band must be a fraction between 0 and 1, exclusive")
        if self.min_qty < 1:
            raise ValueError("min_qty must be at least one qty_increment")
        # base units per lot: qty_increment * 10**base.decimals must be a whole number
        num = self.qty_grid.coef * 10**self.base.decimals
        den = 10**self.qty_grid.scale
        if num % den:
            raise ValueError(
                f"qty_increment {self.qty_grid.text} is finer than the base asset's {self.base.decimals} decimals"
            )
        self.base_per_lot = num // den
        # quote units per (lot x tick) = qty_inc * price_inc * 10**quote.decimals
        num = self.qty_grid.coef * self.price_grid.coef * 10**self.quote.decimals
        den = 10 ** (self.qty_grid.scale + self.price_grid.scale)
        g = gcd(num, den)
        self.notional_num, self.notional_den = num // g, den // g

    def fee_rates_for(self, client: Client) -> tuple[int, int]:
        """(maker, taker) fee rates that apply to ``client`` on this instrument."""
        overrides = client.fee_overrides
        if overrides:  # most clients have none: no lookup
            override = overrides.get(self.id)
            if override is not None:
                return override
        return self.maker_fee, self.taker_fee


@dataclass(eq=False)
class Client:
    """A client as the venue knows it: who it is and its settings. Its balances and records are its
    :class:`~engine.records.Account`, which the venue keeps beside it."""

    id: int
    mnemonic: str
    self_trade_prevention: str = SelfTradePrevention.NONE.value
    status: str = ClientStatus.ACTIVE.value
    # instrument id -> (maker, taker) fee rates that replace the instrument's for this client
    fee_overrides: dict[int, tuple[int, int]] = field(default_factory=dict)


# calls, not decorators: C types in the compiled build (reference.pxd), which take no other decorator
saves_fields(Asset)
saves_fields(Instrument)
saves_fields(Client)
