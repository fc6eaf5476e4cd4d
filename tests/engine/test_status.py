"""Instrument status: OPENING rests without matching and uncrosses in price-time order on ACTIVE; HALTED rejects new
orders and modifies but accepts cancels; DISABLED rejects everything and cancels resting orders."""

from __future__ import annotations

import pytest

from cefisim.engine.events import InstrumentEvent, OrderEvent
from cefisim.engine.rejects import Reject
from cefisim.engine.vocabulary import OrderStatus, Side
from tests.engine.builders import ALICE, BOB, BTC, BTC_USD, CAROL, ETH_USD, USD, Sim, fingerprint, order_events, trades

ACTIVE = OrderStatus.ACTIVE
BUY = Side.BUY
CANCELED = OrderStatus.CANCELED
REJECTED = OrderStatus.REJECTED
SELL = Side.SELL


def opening_sim() -> Sim:
    return Sim(status={BTC_USD: "OPENING"})


def test_opening_rests_crossing_orders_without_matching() -> None:
    sim = opening_sim()
    a = sim.sell(ALICE, "1", "100.00").order.id
    b = sim.buy(BOB, "1", "101.00").order.id
    assert sim.book() == ([(10_100, b, 10_000)], [(10_000, a, 10_000)])
    assert sim.v.books[BTC_USD].last_price is None
    sim.check()  # crossed is allowed while OPENING


def test_opening_rejects_market_and_ioc() -> None:
    sim = opening_sim()
    sim.sell(ALICE, "1", "100.00")
    assert sim.market(BOB, BUY, "1").reject == Reject.INSTRUMENT_OPENING
    assert sim.buy(BOB, "1", "100.00", tif="IOC").reject == Reject.INSTRUMENT_OPENING


@pytest.mark.parametrize("side", [BUY, SELL])
def test_opening_uncross_meets_the_best_price_first(side: str) -> None:
    """The issue's case: entered SELL 0.1 @ 100, BUY 0.1 @ 101, BUY 0.1 @ 102, the better 102 bid meets
    the ask (at the ask's price: it was there first) and the 101 bid rests; the ask side mirrors it."""
    sim = opening_sim()
    better = 1 if side == BUY else -1  # ticks of 1.00 in the side's favour
    a = sim.limit(ALICE, SELL if side == BUY else BUY, "0.1", "100.00").order.id
    sim.limit(BOB, side, "0.1", f"{100 + better}.00")
    c = sim.limit(CAROL, side, "0.1", f"{100 + 2 * better}.00").order.id
    r = sim.status(BTC_USD, "ACTIVE")
    assert trades(r) == [(10_000, 1_000, a, c)]
    bids, asks = sim.book()
    assert [row[0] for row in bids + asks] == [10_000 + 100 * better]
    assert sim.v.books[BTC_USD].last_price == 10_000
    sim.check()


def test_opening_uncross_in_price_time_order_each_fill_at_the_earlier_orders_price() -> None:
    sim = opening_sim()
    a = sim.sell(ALICE, "1", "100.00").order.id
    b = sim.buy(BOB, "1", "101.00").order.id
    c = sim.buy(CAROL, "1", "100.50").order.id
    d = sim.sell(ALICE, "2", "99.00").order.id
    r = sim.status(BTC_USD, "ACTIVE")
    assert isinstance(r.events[0], InstrumentEvent)
    # the best ask (d, 99.00) meets the best bid (b) at b's price, then the next best bid (c) at c's;
    # a (100.00) crosses nothing that is left
    assert trades(r) == [(10_100, 10_000, b, d), (10_050, 10_000, c, d)]
    assert sim.book() == ([], [(10_000, a, 10_000)])
    sim.check()


def test_opening_uncross_the_later_order_of_a_pair_takes() -> None:
    """The bid joined between two asks: it takes the first ask at that ask's price, then the second
    ask takes the rest of the bid at the bid's price (as continuous trading would have it)."""
    sim = opening_sim()
    a1 = sim.sell(ALICE, "1", "100.00").order.id
    b = sim.buy(BOB, "2", "102.00").order.id
    a2 = sim.sell(CAROL, "1", "101.00").order.id
    r = sim.status(BTC_USD, "ACTIVE")
    assert trades(r) == [(10_000, 10_000, a1, b), (10_200, 10_000, b, a2)]
    liq = [(f.order.id, f.liq_flag) for c in (ALICE, BOB, CAROL) for f in sim.v.accounts[c].fills]
    assert liq == [(a1, "MAKER"), (b, "TAKER"), (b, "MAKER"), (a2, "TAKER")]
    assert sim.book() == ([], [])
    sim.check()


def test_opening_uncross_releases_what_a_buy_taker_held_above_the_price_it_paid() -> None:
    sim = Sim(status={BTC_USD: "OPENING"}, balances={ALICE: {USD: 1_000_000}, BOB: {BTC: 10**8}})
    sim.sell(BOB, "1", "100.00")
    sim.buy(ALICE, "1", "102.00")  # holds 102.00 + 0.2% fee
    sim.status(BTC_USD, "ACTIVE")
    bal = sim.bal(ALICE, USD)
    assert bal.hold == 0 and bal.total == 1_000_000 - 10_000 - 20  # paid 100.00 + the 0.2% taker fee
    sim.check()


def test_opening_uncross_self_trade_prevention_is_the_takers() -> None:
    sim = opening_sim()
    sim.stp(ALICE, "CANCEL_AGGRESSIVE")
    a = sim.sell(ALICE, "1", "100.00").order
    b = sim.sell(BOB, "1", "100.50").order
    c = sim.buy(ALICE, "1", "101.00").order  # meets her own ask first: she is the taker
    r = sim.status(BTC_USD, "ACTIVE")
    assert trades(r) == []
    assert c.status == CANCELED and c.ex().cancel_reason == "SELF_TRADE_PREVENTION"
    assert a.status == ACTIVE and b.status == ACTIVE
    sim.check()


def test_opening_uncross_cancel_both_cancels_the_maker_too() -> None:
    sim = opening_sim()
    a = sim.sell(ALICE, "1", "100.00").order
    b = sim.sell(BOB, "1", "100.50").order
    c = sim.buy(ALICE, "1", "101.00", stp="CANCEL_BOTH").order
    r = sim.status(BTC_USD, "ACTIVE")
    assert a.status == CANCELED and c.status == CANCELED and b.status == ACTIVE
    assert order_events(r) == [(a.id, CANCELED, "SELF_TRADE_PREVENTION"), (c.id, CANCELED, "SELF_TRADE_PREVENTION")]
    sim.check()


def test_opening_uncross_in_arrival_order_under_the_rules_of_edition_1() -> None:
    """A venue replaying a ``cefisim-journal/1`` journal feeds the orders back in arrival order, as the
    journal recorded: the 101 bid (entered first) takes the ask, the better 102 bid rests."""
    sim = opening_sim()
    sim.v.use_rules(1)
    a = sim.sell(ALICE, "0.1", "100.00").order.id
    b = sim.buy(BOB, "0.1", "101.00").order.id
    sim.buy(CAROL, "0.1", "102.00")
    r = sim.status(BTC_USD, "ACTIVE")
    assert trades(r) == [(10_000, 1_000, a, b)]
    assert [row[0] for row in sim.book()[0]] == [10_200]
    sim.check()


def test_opening_uncross_keeps_fifo_of_resting_orders() -> None:
    sim = opening_sim()
    a = sim.sell(ALICE, "1", "100.00").order.id
    b = sim.sell(BOB, "1", "100.00").order.id
    sim.status(BTC_USD, "ACTIVE")
    assert [row[1] for row in sim.book()[1]] == [a, b]


def test_opening_uncross_respects_priority_lost_by_modify() -> None:
    """An order that lost its place by a modify during OPENING is behind the orders that were then in
    front of it; feeding the book back by order id alone would put it first again."""
    sim = opening_sim()
    a = sim.sell(ALICE, "1", "100.00").order.id
    b = sim.sell(BOB, "1", "100.00").order.id
    sim.modify(ALICE, a, "2")  # larger qty: to the back of the level
    assert [row[1] for row in sim.book()[1]] == [b, a]
    sim.status(BTC_USD, "ACTIVE")
    assert [row[1] for row in sim.book()[1]] == [b, a]
    r = sim.buy(CAROL, "1", "100.00")
    assert trades(r) == [(10_000, 10_000, b, r.order.id)]
    sim.check()


def test_opening_uncross_never_makes_an_alo_take() -> None:
    """The ask arrived first but rejoined (modify) after the ALO: the ALO must stay the maker. Fed back
    by order id, the ALO would take, paying the taker fee on a maker-rate hold (overdraft)."""
    sim = Sim(status={BTC_USD: "OPENING"}, balances={ALICE: {USD: 9_910}, BOB: {BTC: 10**8}})
    ask = sim.sell(BOB, "1", "100.00").order.id
    alo = sim.buy(ALICE, "1", "99.00", exec_inst=("ALO",)).order
    assert sim.bal(ALICE, USD).available == 0  # 99.00 + 0.1% maker fee
    sim.modify(BOB, ask, "1", "99.00")  # crosses the ALO while OPENING (allowed)
    r = sim.status(BTC_USD, "ACTIVE")
    assert trades(r) == [(9_900, 10_000, alo.id, ask)]
    assert sim.v.accounts[ALICE].fills[0].liq_flag == "MAKER"
    assert sim.bal(ALICE, USD).total == 0
    sim.check()


def test_opening_to_halted_to_active_leaves_no_crossed_book() -> None:
    sim = opening_sim()
    a = sim.sell(ALICE, "1", "100.00").order.id
    b = sim.buy(BOB, "1", "101.00").order.id
    sim.status(BTC_USD, "HALTED")
    sim.check()
    r = sim.status(BTC_USD, "ACTIVE")
    assert trades(r) == [(10_000, 10_000, a, b)]
    sim.check()


def test_halted_rejects_new_orders_and_modifies_but_accepts_cancels(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "99.00").order
    b = sim.buy(ALICE, "1", "98.00").order
    sim.status(BTC_USD, "HALTED")
    before = fingerprint(sim.v)
    r = sim.buy(BOB, "1", "97.00")
    assert r.reject == Reject.INSTRUMENT_HALTED and r.order.status == REJECTED
    assert fingerprint(sim.v, exclude_order=r.order) == before
    assert sim.market(BOB, SELL, "1").reject == Reject.INSTRUMENT_HALTED
    assert sim.modify(ALICE, a.id, "0.5").reject == Reject.INSTRUMENT_HALTED
    assert a.qty == 10_000
    assert sim.cancel(ALICE, b.id).ok and b.status == CANCELED
    assert sim.book()[0] == [(9_900, a.id, 10_000)]  # resting orders stay
    assert sim.limit(BOB, BUY, "1", "99.00", inst=ETH_USD).ok  # only this instrument is halted
    sim.status(BTC_USD, "ACTIVE")
    assert sim.sell(BOB, "1", "99.00").ok and a.status == "FILLED"
    sim.check()


def test_disabled_cancels_resting_orders_and_rejects_everything(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "99.00").order
    s = sim.sell(BOB, "1", "101.00").order
    r = sim.status(BTC_USD, "DISABLED")
    assert a.status == CANCELED and s.status == CANCELED
    assert a.ex().cancel_reason == "INSTRUMENT_DISABLED"
    ended = {(e.order_id, e.status) for e in r.events if isinstance(e, OrderEvent)}
    assert ended == {(a.id, CANCELED), (s.id, CANCELED)}
    assert sim.book() == ([], [])
    assert sim.bal(ALICE, USD).hold == 0 and sim.bal(BOB, BTC).hold == 0
    assert sim.v.accounts[ALICE].open_orders[BTC_USD] == 0
    r = sim.buy(CAROL, "1", "99.00")
    assert r.reject == Reject.INSTRUMENT_DISABLED and r.order.status == REJECTED
    assert sim.market(CAROL, BUY, "1").reject == Reject.INSTRUMENT_DISABLED
    sim.check()


def test_order_pending_entry_on_a_disabled_instrument_ends_canceled() -> None:
    sim = Sim()
    sim.latency(entry=10)
    o = sim.buy(ALICE, "1", "99.00").order
    sim.status(BTC_USD, "DISABLED")
    assert sim.cancel(ALICE, o.id).reject == Reject.ORDER_PENDING  # not yet acknowledged
    assert sim.modify(ALICE, o.id, "0.5").reject == Reject.ORDER_PENDING
    sim.advance(10)
    assert o.status == CANCELED and o.ex().cancel_reason == "INSTRUMENT_DISABLED"
    assert sim.bal(ALICE, USD).hold == 0
    sim.check()


def test_status_of_unknown_instrument(sim: Sim) -> None:
    assert sim.status(99, "ACTIVE").reject == Reject.UNKNOWN_INSTRUMENT
    assert sim.v.instruments[BTC_USD].status == ACTIVE


def test_reopening_keeps_queues_of_orders_resting_from_before(sim: Sim) -> None:
    a = sim.sell(ALICE, "1", "100.00").order.id
    b = sim.sell(BOB, "1", "100.00").order.id
    sim.modify(ALICE, a, "2")  # a to the back while ACTIVE
    sim.status(BTC_USD, "OPENING")
    c = sim.buy(CAROL, "3", "100.00").order.id  # crosses both while OPENING
    r = sim.status(BTC_USD, "ACTIVE")
    assert trades(r) == [(10_000, 10_000, b, c), (10_000, 20_000, a, c)]
    assert sim.book() == ([], [])
    sim.check()


def test_opening_cancel_and_modify_keep_the_book_consistent() -> None:
    sim = opening_sim()
    a = sim.sell(ALICE, "1", "100.00").order.id
    b = sim.buy(BOB, "1", "101.00").order.id
    sim.cancel(ALICE, a)
    sim.modify(BOB, b, "0.5")  # keeps its place
    d = sim.sell(CAROL, "1", "100.50").order.id
    r = sim.status(BTC_USD, "ACTIVE")
    assert trades(r) == [(10_100, 5_000, b, d)]
    assert sim.book() == ([], [(10_050, d, 5_000)])
    sim.check()
