"""Rounding and priority rules pinned by named examples on both sides of the rule and at its boundary.

Expected values are worked out by hand from docs/matching.md, not read back from the engine:

- fees: each party's fees total ``ceil(Σ quote × rate)`` in quote units, where the quote of a fill is
  what the buyer paid for it (``ceil`` of the exact notional, in cents here). The seller receives the
  quote minus its fee, so a seller's fee rounded down would pay it a cent too much.
- modify: the same price with a lower *or equal* quantity keeps the order's place in its level; a larger
  quantity or another price sends it to the back.
- MARKET protection price: the best opposite price moved by the band, BUY floored to a tick, SELL ceiled.

BTC-USD here (tests/engine/builders.py): tick 0.01 USD, lot 0.0001 BTC, band 5%, maker 0.1%, taker 0.2%;
USD has 2 decimals, so amounts below are cents.
"""

from __future__ import annotations

import pytest

from cefisim.engine.vocabulary import OrderStatus, Side
from tests.engine.builders import ALICE, BOB, CAROL, USD, Sim, book_rows, trades

BUY = Side.BUY
CANCELED = OrderStatus.CANCELED
SELL = Side.SELL

# --- the seller's fee rounds up ------------------------------------------------------------------------

# (qty, price, quote paid in cents, seller's fee in cents): quote × 0.1% (maker) or × 0.2% (taker)
SELLER_MAKER = [
    pytest.param("0.0002", "49950.00", 999, 1, id="0.999-cent-fee-rounds-up-to-1"),
    pytest.param("0.0002", "50000.00", 1000, 1, id="exactly-1-cent-stays-1"),
    pytest.param("0.0002", "50050.00", 1001, 2, id="1.001-cent-fee-rounds-up-to-2"),
    pytest.param("0.0001", "50000.01", 501, 1, id="notional-500.0001-pays-501-fee-0.501-is-1"),
]
SELLER_TAKER = [
    pytest.param("0.0001", "49950.00", 500, 1, id="exactly-1-cent"),  # 499.5 cents -> 500; 500 × 0.2% = 1
    pytest.param("0.0001", "50000.01", 501, 2, id="1.002-cent-fee-rounds-up-to-2"),
    pytest.param("0.0002", "49975.00", 1000, 2, id="exactly-2-cents"),
    pytest.param("0.0002", "49970.00", 1000, 2, id="999.4-pays-1000-fee-2"),
]


def _fees(sim: Sim, client: int) -> tuple[int, int]:
    b = sim.bal(client, USD)
    return b.total, b.unsettled_fees


@pytest.mark.parametrize(("qty", "price", "quote", "fee"), SELLER_MAKER)
def test_seller_maker_fee_rounds_up(sim: Sim, qty: str, price: str, quote: int, fee: int) -> None:
    seller_before, _ = _fees(sim, BOB)
    buyer_before, _ = _fees(sim, ALICE)
    sim.sell(BOB, qty, price)
    sim.buy(ALICE, qty, price)
    seller_after, seller_unsettled = _fees(sim, BOB)
    assert (seller_after - seller_before, seller_unsettled) == (quote - fee, fee)
    buyer_after, buyer_unsettled = _fees(sim, ALICE)
    taker_fee = -(-quote * 2 // 1000)
    assert (buyer_before - buyer_after, buyer_unsettled) == (quote + taker_fee, taker_fee)


@pytest.mark.parametrize(("qty", "price", "quote", "fee"), SELLER_TAKER)
def test_seller_taker_fee_rounds_up(sim: Sim, qty: str, price: str, quote: int, fee: int) -> None:
    before, _ = _fees(sim, BOB)
    sim.buy(ALICE, qty, price)
    sim.sell(BOB, qty, price)
    after, unsettled = _fees(sim, BOB)
    assert (after - before, unsettled) == (quote - fee, fee)


def test_seller_fee_rounds_once_over_the_order_not_per_fill(sim: Sim) -> None:
    # three buy orders of 500.0001 cents each pay 501 cents each (each buyer order rounds its own
    # notional up); the seller's maker fee is cumulative: ceil(0.501)=1, ceil(1.002)=2, ceil(1.503)=2,
    # so the fills carry fees of 1, 1 and 0 cents (per-fill rounding would charge 1 each time)
    sim.sell(BOB, "0.0003", "50000.01")
    got = []
    for buyer in (ALICE, CAROL, ALICE):
        before, _ = _fees(sim, BOB)
        sim.buy(buyer, "0.0001", "50000.01")
        after, unsettled = _fees(sim, BOB)
        got.append((after - before, unsettled))
    assert got == [(500, 1), (500, 2), (501, 2)]


# --- modify with an equal quantity keeps its place -----------------------------------------------------


@pytest.mark.parametrize(
    ("new_qty", "new_price", "keeps"),
    [
        pytest.param("0.5", "100.00", True, id="lower-qty-keeps"),
        pytest.param("1", "100.00", True, id="equal-qty-keeps"),
        pytest.param("1.0000", "100.00", True, id="equal-qty-other-spelling-keeps"),
        pytest.param("1.0001", "100.00", False, id="one-lot-more-goes-back"),
        pytest.param("1", "100.01", False, id="equal-qty-other-price-goes-back"),
    ],
)
@pytest.mark.parametrize("side", [BUY, SELL])
def test_modify_place_in_the_queue(sim: Sim, side: str, new_qty: str, new_price: str, keeps: bool) -> None:
    place = sim.buy if side == BUY else sim.sell
    first = place(ALICE, "1", "100.00").order
    second = place(BOB, "1", "100.00").order
    if new_price != "100.00":  # join the other order's level again for a fair comparison
        place(BOB, "1", new_price)
    assert sim.modify(ALICE, first.id, new_qty, new_price).ok
    if new_price != "100.00":
        assert sim.modify(ALICE, first.id, new_qty, "100.00").ok
    rows = book_rows(sim.v, 1)[0 if side == BUY else 1]
    at_level = [oid for price, oid, _ in rows if price == 10_000]
    assert at_level == ([first.id, second.id] if keeps else [second.id, first.id])


def test_modify_equal_qty_after_a_partial_fill_keeps_its_place(sim: Sim) -> None:
    first = sim.sell(ALICE, "1", "100.00").order
    second = sim.sell(BOB, "1", "100.00").order
    sim.buy(CAROL, "0.4", "100.00")
    assert sim.modify(ALICE, first.id, "1", "100.00").ok  # total unchanged: 0.6 still open, first in line
    assert [t[2] for t in trades(sim.buy(CAROL, "0.6", "100.00"))] == [first.id]
    assert [oid for _, oid, _ in book_rows(sim.v, 1)[1]] == [second.id]


# --- MARKET protection price: BUY floored, SELL ceiled -------------------------------------------------


@pytest.mark.parametrize(
    ("best", "limit_ticks"),
    [
        pytest.param("100.01", 10_501, id="105.0105-floors-to-105.01"),
        pytest.param("100.00", 10_500, id="exactly-105.00"),
        pytest.param("100.19", 10_519, id="105.1995-floors-to-105.19"),
    ],
)
def test_market_buy_protection_price_floors(sim: Sim, best: str, limit_ticks: int) -> None:
    # a one-sided book has no reference price, so asks far above the best may rest (no band check)
    sim.sell(BOB, "0.0001", best)
    at_limit = sim.sell(BOB, "0.0001", f"{limit_ticks // 100}.{limit_ticks % 100:02d}").order
    above = sim.sell(BOB, "0.0001", f"{(limit_ticks + 1) // 100}.{(limit_ticks + 1) % 100:02d}").order
    result = sim.market(ALICE, BUY, "0.0003")
    assert [t[2] for t in trades(result)][-1] == at_limit.id
    assert above.id not in [t[2] for t in trades(result)]
    assert result.order.status == CANCELED and result.order.executed == 2


@pytest.mark.parametrize(
    ("best", "limit_ticks"),
    [
        pytest.param("100.01", 9_501, id="95.0095-ceils-to-95.01"),
        pytest.param("100.00", 9_500, id="exactly-95.00"),
        pytest.param("100.19", 9_519, id="95.1805-ceils-to-95.19"),
    ],
)
def test_market_sell_protection_price_ceils(sim: Sim, best: str, limit_ticks: int) -> None:
    sim.buy(BOB, "0.0001", best)
    at_limit = sim.buy(BOB, "0.0001", f"{limit_ticks // 100}.{limit_ticks % 100:02d}").order
    below = sim.buy(BOB, "0.0001", f"{(limit_ticks - 1) // 100}.{(limit_ticks - 1) % 100:02d}").order
    result = sim.market(ALICE, SELL, "0.0003")
    assert [t[2] for t in trades(result)][-1] == at_limit.id
    assert below.id not in [t[2] for t in trades(result)]
    assert result.order.status == CANCELED and result.order.executed == 2
