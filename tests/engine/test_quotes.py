"""Quotes from visible depth (``engine/quotes.py``): the quote-amount rule of quote note 4."""

from __future__ import annotations

from cefisim.engine.quotes import QuoteResult, quote_base, quote_notional
from cefisim.engine.rejects import Reject
from cefisim.engine.vocabulary import Side
from tests.engine.builders import ALICE, BTC_USD, Sim

BUY = Side.BUY
SELL = Side.SELL


def _asks(sim: Sim) -> None:
    sim.sell(ALICE, "0.1", "300.00")
    sim.sell(ALICE, "0.2", "300.01")


def test_quote_amount_inside_the_book_fits_whole_lots(sim: Sim) -> None:
    _asks(sim)
    q = quote_notional(sim.v, sim.v.instruments[BTC_USD], BUY, 4_000, 1000)  # 40.00 USD
    # 0.1 at 300.00 costs 30.00; 10.00 left buys 0.0333 at 300.01 (9.990333: 39.990333 in all,
    # rounded up to 40.00 like a fill); 0.0334 would bring it to 40.02
    assert q == QuoteResult(1333, 1000 * 30_000 + 333 * 30_001, 4_000, 0)


def test_quote_amount_beyond_the_book_buys_the_whole_side(sim: Sim) -> None:
    _asks(sim)
    q = quote_notional(sim.v, sim.v.instruments[BTC_USD], BUY, 10_000, 1000)  # 100.00 USD
    assert isinstance(q, QuoteResult)
    assert q.lots == 3000 and q.notional == 9_001 and q.residual == 999  # 90.002 rounds up to 90.01


def test_quote_amount_below_one_lot_is_zero_with_the_whole_amount_left(sim: Sim) -> None:
    _asks(sim)
    q = quote_notional(sim.v, sim.v.instruments[BTC_USD], BUY, 1, 1000)  # 0.01 USD
    assert q == QuoteResult(0, 0, 0, 1)


def test_only_an_empty_side_has_no_quote(sim: Sim) -> None:
    _asks(sim)
    inst = sim.v.instruments[BTC_USD]
    assert quote_notional(sim.v, inst, SELL, 10_000, 1000) == Reject.NOT_ENOUGH_LIQUIDITY
    assert quote_base(sim.v, inst, BUY, 3001, 1000) == Reject.NOT_ENOUGH_LIQUIDITY  # BASE echoes: all or nothing
    assert quote_notional(sim.v, inst, BUY, 10_000, 1) == Reject.QUOTE_DEPTH_LIMIT
