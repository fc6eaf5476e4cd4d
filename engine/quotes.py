"""Quotes from visible depth: best bid/offer and VWAP quotes. Reads only; the book never changes.

- ``bbo``: best bid and ask with their open quantities.
- ``quote_base``: the cost of trading a base quantity against the contra side (POST /markets/quote
  with qty_unit BASE): VWAP and notional; the book must hold the whole quantity.
- ``quote_notional``: the largest base quantity on the lot grid whose cost fits a quote-asset amount
  (qty_unit QUOTE, and POST /market/quote; the description's quote note 4): levels are consumed whole
  while they fit; at the last consumed level as many whole lots as fit. ``residual`` = amount -
  notional: normally less than one lot's cost at the last level, the shortfall when the amount buys
  the whole visible side, the whole amount when not even one lot fits. Only an empty side has no
  answer (``NOT_ENOUGH_LIQUIDITY``).
Notional rounds like a fill: ceil(sum(lots x ticks) x k) quote units, so a quote equals what the same
order would pay if the book did not change. At most ``max_levels`` levels are walked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cefisim.engine.rejects import Reject
from cefisim.engine.units import format_ratio
from cefisim.engine.vocabulary import Side

BUY = Side.BUY.value

if TYPE_CHECKING:
    from cefisim.engine.reference import Instrument
    from cefisim.engine.venue import Venue

#: extra decimals a VWAP carries beyond the price increment's (trailing zeros trimmed back to it)
VWAP_EXTRA_DECIMALS = 4


@dataclass(frozen=True)
class QuoteResult:
    lots: int
    sum_lt: int  # sum of lots x ticks
    notional: int  # quote units
    residual: int  # quote units (QUOTE mode)


def format_vwap(inst: Instrument, sum_lt: int, lots: int) -> str:
    """Volume-weighted average price as a decimal string (``"0"`` on the grid when nothing traded)."""
    grid = inst.price_grid
    if not lots:
        return grid.zero
    text = format_ratio(sum_lt * grid.coef, lots * 10**grid.scale, grid.scale + VWAP_EXTRA_DECIMALS)
    trimmed = text.rstrip("0")
    whole, _, frac = trimmed.partition(".")
    return f"{whole}.{frac.ljust(grid.scale, '0')}" if grid.scale else (whole if not frac else trimmed)


def notional_of(inst: Instrument, sum_lt: int) -> int:
    return -(-sum_lt * inst.notional_num // inst.notional_den)


def bbo(v: Venue, instrument_id: int) -> tuple[int | None, int, int | None, int]:
    """(best bid ticks, its lots, best ask ticks, its lots)."""
    book = v.books[instrument_id]
    bid = ask = None
    bid_qty = ask_qty = 0
    if book.bid_key is not None:
        level = book.bids[book.bid_key]
        bid, bid_qty = level.price, level.qty
    if book.ask_key is not None:
        level = book.asks[book.ask_key]
        ask, ask_qty = level.price, level.qty
    return bid, bid_qty, ask, ask_qty


def quote_base(v: Venue, inst: Instrument, side: str, lots: int, max_levels: int) -> QuoteResult | Reject:
    """Cost of trading ``lots`` on ``side`` (BUY walks the asks)."""
    levels = v.books[inst.id].asks if side == BUY else v.books[inst.id].bids
    need = lots
    sum_lt = 0
    for walked, level in enumerate(levels.values()):
        if walked >= max_levels:
            return Reject.QUOTE_DEPTH_LIMIT
        take = need if need < level.qty else level.qty
        sum_lt += take * level.price
        need -= take
        if not need:
            return QuoteResult(lots, sum_lt, notional_of(inst, sum_lt), 0)
    return Reject.NOT_ENOUGH_LIQUIDITY


def quote_notional(v: Venue, inst: Instrument, side: str, amount: int, max_levels: int) -> QuoteResult | Reject:
    """Largest lot count (possibly 0, possibly the whole side) whose notional fits ``amount`` quote units."""
    levels = v.books[inst.id].asks if side == BUY else v.books[inst.id].bids
    if not levels:
        return Reject.NOT_ENOUGH_LIQUIDITY
    kn, kd = inst.notional_num, inst.notional_den
    lots = 0
    sum_lt = 0
    budget = amount * kd  # in units of lt x kn: ceil(lt*kn/kd) <= amount  <=>  lt*kn <= amount*kd
    for walked, level in enumerate(levels.values()):
        if walked >= max_levels:
            return Reject.QUOTE_DEPTH_LIMIT
        fit = (budget - sum_lt * kn) // (level.price * kn)
        if fit >= level.qty:
            lots += level.qty
            sum_lt += level.qty * level.price
            continue
        lots += fit
        sum_lt += fit * level.price
        break
    notional = notional_of(inst, sum_lt)
    return QuoteResult(lots, sum_lt, notional, amount - notional)
