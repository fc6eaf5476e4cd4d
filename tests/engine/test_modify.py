"""Modify: new_qty is the new total; priority kept only for a lower/equal qty at the same price."""

from __future__ import annotations

import pytest

from cefisim.engine.rejects import Reject
from cefisim.engine.vocabulary import OrderStatus, OrderType, Side
from tests.engine.builders import ALICE, BOB, BTC, CAROL, USD, Sim, fingerprint, order_events, trades

ACTIVE = OrderStatus.ACTIVE
BUY = Side.BUY
CANCELED = OrderStatus.CANCELED
FILLED = OrderStatus.FILLED
MARKET = OrderType.MARKET


def _two_asks(sim: Sim) -> tuple[int, int]:
    a = sim.sell(ALICE, "2", "100.00").order.id
    b = sim.sell(BOB, "1", "100.00").order.id
    return a, b


def test_lower_qty_keeps_queue_position(sim: Sim) -> None:
    a, b = _two_asks(sim)
    r = sim.modify(ALICE, a, "1")
    assert r.ok and sim.order(ALICE, a).qty == 10_000
    assert sim.book()[1] == [(10_000, a, 10_000), (10_000, b, 10_000)]
    assert sim.v.books[1].asks[10_000].qty == 20_000
    assert sim.bal(ALICE, BTC).hold == 10**8
    r = sim.buy(CAROL, "1", "100.00")
    assert trades(r) == [(10_000, 10_000, a, r.order.id)]
    sim.check()


def test_same_qty_same_price_keeps_position(sim: Sim) -> None:
    a, b = _two_asks(sim)
    sim.modify(ALICE, a, "2", "100.00")
    assert [row[1] for row in sim.book()[1]] == [a, b]


def test_larger_qty_loses_position(sim: Sim) -> None:
    a, b = _two_asks(sim)
    sim.modify(ALICE, a, "3")
    assert sim.book()[1] == [(10_000, b, 10_000), (10_000, a, 30_000)]
    assert sim.bal(ALICE, BTC).hold == 3 * 10**8
    sim.check()


def test_price_change_loses_position(sim: Sim) -> None:
    a, b = _two_asks(sim)
    sim.modify(ALICE, a, "2", "100.01")
    sim.modify(ALICE, a, "2", "100.00")
    assert [row[1] for row in sim.book()[1]] == [b, a]
    sim.check()


def test_modify_to_crossing_price_trades(sim: Sim) -> None:
    bid = sim.buy(BOB, "1", "99.00").order.id
    a = sim.sell(ALICE, "2", "100.00").order.id
    r = sim.modify(ALICE, a, "2", "99.00")
    assert trades(r) == [(9_900, 10_000, bid, a)]  # the modified order is the taker, at the maker's price
    assert sim.book() == ([], [(9_900, a, 10_000)])
    sim.check()


def test_modify_buy_price_recomputes_hold(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "100.00").order.id
    sim.modify(ALICE, a, "1", "99.00")
    assert sim.bal(ALICE, USD).hold == 9_900 + 20  # 0.198 -> 0.20
    sim.modify(ALICE, a, "0.5")
    assert sim.bal(ALICE, USD).hold == 4_950 + 10
    sim.check()


def test_new_qty_at_or_below_executed_ends_the_order(sim: Sim) -> None:
    a = sim.sell(ALICE, "2", "100.00").order
    sim.buy(BOB, "1", "100.00")
    r = sim.modify(ALICE, a.id, "1")
    assert r.ok and a.status == CANCELED and a.ex().cancel_reason == "MODIFIED_TO_EXECUTED"
    assert a.executed == 10_000
    assert sim.book() == ([], [])
    assert sim.bal(ALICE, BTC).hold == 0
    assert sim.v.accounts[ALICE].open_orders[1] == 0
    sim.check()


@pytest.mark.parametrize("filled", ["0", "0.5"])
def test_new_qty_zero_ends_the_order_like_any_qty_at_or_below_executed(sim: Sim, filled: str) -> None:
    """Zero is at or below any executed quantity: a client that cancels by modifying to zero stops
    trading, on an unfilled and on a partly filled order alike."""
    a = sim.sell(ALICE, "2", "100.00").order
    if filled != "0":
        sim.buy(BOB, filled, "100.00")
    r = sim.modify(ALICE, a.id, "0", "100.00")
    assert r.ok and r.order is a and a.status == CANCELED and a.ex().cancel_reason == "MODIFIED_TO_EXECUTED"
    assert order_events(r) == [(a.id, ACTIVE, "MODIFIED"), (a.id, CANCELED, "MODIFIED_TO_EXECUTED")]
    assert sim.book() == ([], []) and sim.bal(ALICE, BTC).hold == 0
    assert not trades(sim.buy(BOB, "1", "100.00"))  # it trades no more
    sim.check()


def test_new_qty_zero_under_a_modify_latency_ends_the_order_on_acknowledgement(sim: Sim) -> None:
    a = sim.sell(ALICE, "2", "100.00").order
    sim.latency(modify=10)
    assert sim.modify(ALICE, a.id, "0", "100.00").ok and a.status == "MODIFY_PENDING"
    sim.advance(10)
    assert a.status == CANCELED and a.ex().cancel_reason == "MODIFIED_TO_EXECUTED"
    sim.check()


def test_new_qty_zero_is_refused_under_the_rules_of_edition_1(sim: Sim) -> None:
    """What ``cefisim-journal/1`` journals recorded: a modify to zero refused, the order untouched."""
    sim.v.use_rules(1)
    a = sim.sell(ALICE, "2", "100.00").order
    before = fingerprint(sim.v)
    assert sim.modify(ALICE, a.id, "0", "100.00").reject == Reject.QTY_NOT_POSITIVE
    assert fingerprint(sim.v) == before and a.status == ACTIVE


def test_new_qty_below_executed_ends_the_order(sim: Sim) -> None:
    a = sim.sell(ALICE, "2", "100.00").order
    sim.buy(BOB, "1.5", "100.00")
    sim.modify(ALICE, a.id, "0.5")
    assert a.status == CANCELED and a.executed == 15_000
    sim.check()


def test_new_qty_is_the_new_total_not_the_remainder(sim: Sim) -> None:
    a = sim.sell(ALICE, "2", "100.00").order
    sim.buy(BOB, "1", "100.00")
    sim.modify(ALICE, a.id, "1.5")
    assert a.status == ACTIVE and a.qty == 15_000 and a.executed == 10_000
    assert sim.book()[1] == [(10_000, a.id, 5_000)]
    assert sim.bal(ALICE, BTC).hold == 5 * 10**7
    sim.check()


def test_new_type_market_executes_at_once(sim: Sim) -> None:
    ask1 = sim.sell(CAROL, "1", "100.00").order.id
    sim.sell(CAROL, "1", "106.00")
    a = sim.buy(ALICE, "2", "99.00").order
    r = sim.modify(ALICE, a.id, "2", new_type="MARKET")
    assert trades(r) == [(10_000, 10_000, ask1, a.id)]
    assert a.type == MARKET and a.price == 10_500
    assert a.status == CANCELED and a.ex().cancel_reason == "MARKET_REMAINDER"
    assert sim.bal(ALICE, USD).hold == 0
    sim.check()


def test_new_type_market_filled(sim: Sim) -> None:
    sim.sell(CAROL, "1", "100.00")
    a = sim.buy(ALICE, "1", "99.00").order
    sim.modify(ALICE, a.id, "1", new_type="MARKET")
    assert a.status == FILLED


def test_new_type_market_without_liquidity(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "99.00").order
    before = fingerprint(sim.v)
    assert sim.modify(ALICE, a.id, "1", new_type="MARKET").reject == Reject.NO_LIQUIDITY
    assert fingerprint(sim.v) == before


def test_modify_by_external_id(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "99.00", external_id="x1").order
    assert sim.modify(ALICE, None, "0.5", external_id="x1").ok
    assert a.qty == 5_000


def test_modify_renames_external_id(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "99.00", external_id="x1").order
    assert sim.modify(ALICE, a.id, "0.5", external_id="x2").ok
    assert a.external_id == "x2" and a.ex().ref_external_id == "x1"
    assert sim.cancel(ALICE, "x2").ok
    # x1 is free again
    assert sim.buy(ALICE, "1", "99.00", external_id="x1").ok


def test_modify_rejections(sim: Sim) -> None:
    sim.sell(CAROL, "1", "100.00")
    sim.buy(BOB, "1", "100.00")  # last trade 100.00
    a = sim.buy(ALICE, "1", "99.00", exec_inst=("ALO",)).order
    sim.sell(CAROL, "1", "100.00")
    done = sim.buy(ALICE, "0.1", "98.00").order
    sim.cancel(ALICE, done.id)
    before = fingerprint(sim.v)
    assert sim.modify(ALICE, 999, "1").reject == Reject.UNKNOWN_ORDER
    assert sim.modify(BOB, a.id, "1").reject == Reject.UNKNOWN_ORDER
    assert sim.modify(ALICE, done.id, "1").reject == Reject.ORDER_NOT_ACTIVE
    assert sim.modify(ALICE, a.id, "1", "94.99").reject == Reject.PRICE_OUTSIDE_BAND
    assert sim.modify(ALICE, a.id, "1", "100.00").reject == Reject.ALO_WOULD_TRADE
    assert sim.modify(ALICE, a.id, "1", "99.001").reject == Reject.PRICE_OFF_GRID
    assert sim.modify(ALICE, a.id, "1.00001").reject == Reject.QTY_OFF_GRID
    assert sim.modify(ALICE, a.id, "1", "0").reject == Reject.PRICE_NOT_POSITIVE
    assert fingerprint(sim.v) == before


def test_modify_insufficient_balance() -> None:
    sim = Sim(balances={ALICE: {USD: 20_000, BTC: 10**8}})
    a = sim.buy(ALICE, "1", "99.00").order
    before = fingerprint(sim.v)
    assert sim.modify(ALICE, a.id, "3").reject == Reject.INSUFFICIENT_BALANCE
    s = sim.sell(ALICE, "1", "101.00").order
    assert sim.modify(ALICE, s.id, "1.0001").reject == Reject.INSUFFICIENT_BALANCE
    assert sim.modify(ALICE, a.id, "2").ok  # 198.00 + 0.40 <= 200.00
    del before
    sim.check()


def test_modify_rejected_duplicate_external_id_leaves_no_trace(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "99.00", external_id="x1").order
    sim.buy(ALICE, "1", "98.00", external_id="x2")
    before = fingerprint(sim.v)
    r = sim.modify(ALICE, a.id, "0.5", external_id="x2", msg_id="m-7")
    assert r.reject == Reject.DUPLICATE_EXTERNAL_ID
    assert fingerprint(sim.v) == before
    assert a.qty == 10_000 and a.external_id == "x1"


def test_modify_sell_side_keeps_hold_consistent(sim: Sim) -> None:
    a = sim.sell(ALICE, "1", "101.00").order
    sim.modify(ALICE, a.id, "3", "100.50")
    assert sim.bal(ALICE, BTC).hold == 3 * 10**8
    sim.buy(BOB, "1", "100.50")
    assert sim.bal(ALICE, BTC).hold == 2 * 10**8
    sim.check()


def test_modify_side_of_book_order(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "99.00").order
    b = sim.buy(BOB, "1", "99.00").order
    sim.modify(ALICE, a.id, "1", "99.01")
    assert sim.book()[0] == [(9_901, a.id, 10_000), (9_900, b.id, 10_000)]
    assert a.side == BUY and b.side == BUY
