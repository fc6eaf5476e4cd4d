"""Prices an order is checked against: reference price, price band, protection price, ALO cross.

Contract:
- The reference price is the last trade price, else the mid of a two-sided book, else there is none
  (and no band applies). Prices are in ticks; the mid is kept doubled (``reference_price2``) so that
  it stays an integer.
- A limit price is within the band when it lies within ``price_band`` (a fraction) of the reference.
- The protection price of a MARKET order is the best contra price moved by the band away from it;
  BUY rounds down and SELL up, so the bound never exceeds the band. None without contra liquidity.
- USE_AGGRESSIVE_PRICING makes it the more aggressive (BUY: higher, SELL: lower) of that price and
  the band's far edge around the reference price (when there is one): a flagged order never trades
  less than the same order without the flag. It holds at that price, so it may need more balance.

Complexity: O(1) (the book caches its best keys).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cefisim.engine.units import RATE_ONE
from cefisim.engine.vocabulary import Side

BUY = Side.BUY.value

if TYPE_CHECKING:
    from cefisim.engine.book import Book
    from cefisim.engine.core import VenueCore
    from cefisim.engine.reference import Instrument


def reference_price2(v: VenueCore, inst: Instrument) -> int | None:
    """Twice the reference price in ticks (last trade, else mid of a two-sided book), or None."""
    return _reference2(v.books[inst.id])


def _reference2(book: Book) -> int | None:
    """:func:`reference_price2` of the instrument's ``book``."""
    if book.last_price is not None:
        return 2 * book.last_price
    bid_key, ask = book.bid_key, book.ask_key  # bid_key is -(best bid)
    if bid_key is None or ask is None:
        return None
    return ask - bid_key


def within_band(v: VenueCore, inst: Instrument, price: int) -> bool:
    """Whether a limit price lies within ``price_band`` of the reference price (inclusive).

    ref2 * (1 - band) <= 2 * price <= ref2 * (1 + band), in ticks: the bounds are worked out once
    per reference price and kept on the book, since most orders meet the same reference.
    """
    book = v.books[inst.id]
    ref2 = _reference2(book)
    if ref2 is None:
        return True
    band = book.band
    if band is None or band[0] != ref2:
        width = inst.price_band
        low = -(-ref2 * (RATE_ONE - width) // (2 * RATE_ONE))
        high = ref2 * (RATE_ONE + width) // (2 * RATE_ONE)
        band = book.band = (ref2, low, high)
    return band[1] <= price <= band[2]


def protection_price(v: VenueCore, order_side: str, inst: Instrument, aggressive: bool) -> int | None:
    """The limit a MARKET order trades to; None when there is no opposite liquidity."""
    book = v.books[inst.id]
    best = book.best_ask() if order_side == BUY else book.best_bid()
    if best is None:
        return None
    prot = _band_edge(2 * best, order_side, inst.price_band)
    if aggressive:
        ref2 = reference_price2(v, inst)
        if ref2 is not None:
            edge = _band_edge(ref2, order_side, inst.price_band)
            # never less aggressive than the unflagged price: the flag only ever widens the reach
            prot = max(prot, edge) if order_side == BUY else min(prot, edge)
    return prot


def _band_edge(base2: int, order_side: str, band: int) -> int:
    """The band's far edge, in ticks, from twice a price: above it for a BUY (rounded down), below
    it for a SELL (rounded up, at least one tick)."""
    if order_side == BUY:
        return base2 * (RATE_ONE + band) // (2 * RATE_ONE)
    return max(1, -(-base2 * (RATE_ONE - band) // (2 * RATE_ONE)))


def would_trade(v: VenueCore, side: str, inst: Instrument, price: int) -> bool:
    book = v.books[inst.id]
    if side == BUY:
        best = book.best_ask()
        return best is not None and best <= price
    best = book.best_bid()
    return best is not None and best >= price
