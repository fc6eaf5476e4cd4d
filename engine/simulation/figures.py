"""The backtest report's numbers, folded exactly from a finished
:class:`~engine.simulation.backtest.Harness` run.

Contract:
- Everything is an exact ``Fraction`` or integer in the venue's units: no float, no rounding until
  ``api/cli/backtest/report.py`` formats the figures.
- PnL is marked to mid: per instrument, the cash the client's fills moved (fees included) plus its
  base position at the instrument's end mark (twice the mid, else the last mid, else twice the last
  trade, as the harness samples it); overall, the change of every asset's balance valued in the
  valuation asset through the first instrument that pairs the two (None when an asset that changed
  has no mark).
- Slippage is signed against the mid just before each fill (positive: paid away), in ticks x lots,
  with basis points weighted by the quote traded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

from cefisim.engine.units import RATE_ONE
from cefisim.engine.vocabulary import LiquidityFlag, Side

BUY = Side.BUY.value
MAKER = LiquidityFlag.MAKER.value

if TYPE_CHECKING:
    from cefisim.engine.records import Fill
    from cefisim.engine.reference import Instrument
    from cefisim.engine.simulation.backtest import Harness


def base_unit_price(inst: Instrument, mark2: int) -> Fraction:
    """Quote-asset units per base-asset unit at a mark of ``mark2 / 2`` ticks."""
    return Fraction(mark2 * inst.notional_num, 2 * inst.notional_den * inst.base_per_lot)


def unrounded_fee(fill: Fill) -> Fraction:
    """The fee of ``fill`` before the ledger rounds it up to the quote asset's smallest unit: the fill's
    exact notional (lots x ticks x quote units per lot-tick) times its fee rate. The ledger rounds an
    order's fees up once over its fills so far (``engine/ledger.py``), on its rounded notional: about
    one unit more an order at most."""
    inst = fill.order.instrument
    return Fraction(fill.qty * fill.price * inst.notional_num * fill.fee_rate, inst.notional_den * RATE_ONE)


def unit_value(
    instruments: Sequence[Instrument], marks2: Sequence[int | None], asset_id: int, valuation_id: int
) -> Fraction | None:
    """Valuation-asset units per unit of ``asset_id``: directly, or through the first instrument (in
    venue order, with a mark) that pairs the two assets either way round; None when none does."""
    if asset_id == valuation_id:
        return Fraction(1)
    for inst, m2 in zip(instruments, marks2, strict=True):
        if not m2:
            continue
        if inst.base.id == asset_id and inst.quote.id == valuation_id:
            return base_unit_price(inst, m2)
        if inst.base.id == valuation_id and inst.quote.id == asset_id:
            return 1 / base_unit_price(inst, m2)
    return None


@dataclass
class InstrumentFigures:
    """One instrument's fills, in its own units: lots, ticks, quote units, base units."""

    fills: int = 0
    maker_fills: int = 0
    lots: int = 0
    maker_lots: int = 0
    quote: int = 0  # quote units traded (before fees)
    maker_quote: int = 0
    fees: int = 0  # quote units paid in fees
    fees_unrounded: Fraction = Fraction(0)  # the same fees before rounding (``unrounded_fee``)
    position: int = 0  # base units bought minus sold
    cash: int = 0  # quote units received minus paid, fees included
    slip_fills: int = 0  # fills with a mid before them
    slip2_lots: int = 0  # sum of 2 x signed slippage (ticks) x lots; positive: paid away against the mid
    slip_lots: int = 0
    mid2_lots: int = 0  # sum of 2 x mid (ticks) x lots over the same fills (for basis points)
    slip_quote: int = 0  # quote units traded in the same fills (weights the overall basis points)
    mark2: int | None = None  # at the end
    pnl: Fraction | None = None  # quote units: cash + position at the mark


@dataclass
class Figures:
    valuation_id: int
    by_instrument: dict[int, InstrumentFigures]
    start: dict[int, int]  # asset id -> client's total at the start
    end: dict[int, int]
    unit_values: dict[int, Fraction | None]  # asset id -> valuation units per unit at the end marks
    pnl: Fraction | None  # valuation units, None when an asset that changed has no mark
    unvalued: list[int] = field(default_factory=list)
    series: list[tuple[int, tuple[int, ...], Fraction | None]] = field(default_factory=list)  # (t, totals, pnl)

    def value(self, asset_id: int, units: int | Fraction) -> Fraction | None:
        per = self.unit_values.get(asset_id)
        return None if per is None else units * per


def figures(h: Harness, valuation_id: int) -> Figures:
    """The report's numbers from a finished run, exact."""
    by: dict[int, InstrumentFigures] = {i.id: InstrumentFigures() for i in h.instruments}
    for fill, mid2 in h.fills:
        order = fill.order
        inst = order.instrument
        f = by[inst.id]
        f.fills += 1
        f.lots += fill.qty
        f.quote += fill.quote
        f.fees += fill.fee
        f.fees_unrounded += unrounded_fee(fill)
        base = fill.qty * inst.base_per_lot
        if order.side == BUY:
            f.position += base
            f.cash -= fill.quote + fill.fee
        else:
            f.position -= base
            f.cash += fill.quote - fill.fee
        if fill.liq_flag == MAKER:
            f.maker_fills += 1
            f.maker_lots += fill.qty
            f.maker_quote += fill.quote
        if mid2 is not None:
            diff2 = 2 * fill.price - mid2 if order.side == BUY else mid2 - 2 * fill.price
            f.slip_fills += 1
            f.slip2_lots += diff2 * fill.qty
            f.slip_lots += fill.qty
            f.mid2_lots += mid2 * fill.qty
            f.slip_quote += fill.quote
    last = h.samples[-1]
    for inst, m2 in zip(h.instruments, last.marks2, strict=True):
        f = by[inst.id]
        f.mark2 = m2
        if m2 is not None:
            f.pnl = f.cash + f.position * base_unit_price(inst, m2)
        elif not f.position:
            f.pnl = Fraction(f.cash)
    start = dict(zip(h.assets, h.start_totals, strict=True))
    end = dict(zip(h.assets, last.totals, strict=True))
    values = {a: unit_value(h.instruments, last.marks2, a, valuation_id) for a in h.assets}
    unvalued = [a for a in h.assets if values[a] is None and end[a] != start[a]]
    pnl: Fraction | None = None
    if not unvalued:  # every asset that changed has a value
        pnl = Fraction(0)
        for a in h.assets:
            per = values[a]
            if per is not None and end[a] != start[a]:
                pnl += (end[a] - start[a]) * per
    series: list[tuple[int, tuple[int, ...], Fraction | None]] = []
    for s in h.samples:
        total = Fraction(0)
        for a, now_units, start_units in zip(h.assets, s.totals, h.start_totals, strict=True):
            if now_units == start_units:
                continue
            per = unit_value(h.instruments, s.marks2, a, valuation_id)
            if per is None:  # an asset that changed has no value at this sample
                series.append((s.at, s.totals, None))
                break
            total += (now_units - start_units) * per
        else:
            series.append((s.at, s.totals, total))
    return Figures(valuation_id, by, start, end, values, pnl, unvalued, series)


__all__ = ["Figures", "InstrumentFigures", "base_unit_price", "figures", "unit_value"]
