"""Price-time priority, FIFO, best bid/offer, cancel, GTC expiry, IOC, MARKET, ALO, AON, STP, grids."""

from __future__ import annotations

import pytest

from cefisim.engine.commands import PlaceOrder
from cefisim.engine.events import OrderEvent
from cefisim.engine.pricing import protection_price
from cefisim.engine.rejects import Reject
from cefisim.engine.vocabulary import OrderStatus, Side
from tests.engine.builders import (
    ALICE,
    BOB,
    BTC_USD,
    CAROL,
    DAVE,
    DAY,
    ETH_USD,
    RICH,
    SECOND,
    START,
    Sim,
    fingerprint,
    trades,
)

ACTIVE = OrderStatus.ACTIVE
BUY = Side.BUY
CANCELED = OrderStatus.CANCELED
FILLED = OrderStatus.FILLED
REJECTED = OrderStatus.REJECTED
SELL = Side.SELL


def rich_dave(sim: Sim) -> None:
    for aid, units in RICH.items():
        sim.v.credit(DAVE, aid, units)


# --- price-time priority ------------------------------------------------------------------------


def test_better_price_first_then_arrival_within_level(sim: Sim) -> None:
    a = sim.sell(ALICE, "1", "101.00").order.id
    b = sim.sell(BOB, "1", "100.00").order.id
    c = sim.sell(CAROL, "1", "100.00").order.id
    rich_dave(sim)
    r = sim.buy(DAVE, "2.5", "101.00")
    t = r.order.id
    assert trades(r) == [(10000, 10000, b, t), (10000, 10000, c, t), (10100, 5000, a, t)]
    assert r.order.status == FILLED
    assert sim.book() == ([], [(10100, a, 5000)])
    sim.check()


def test_bids_best_first_and_fifo(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "99.00").order.id
    b = sim.buy(BOB, "1", "99.50").order.id
    c = sim.buy(CAROL, "1", "99.50").order.id
    d = sim.buy(ALICE, "1", "99.50").order.id
    assert sim.book()[0] == [(9950, b, 10000), (9950, c, 10000), (9950, d, 10000), (9900, a, 10000)]
    rich_dave(sim)
    r = sim.sell(DAVE, "1.5", "99.00")
    assert trades(r) == [(9950, 10000, b, r.order.id), (9950, 5000, c, r.order.id)]
    assert sim.book()[0] == [(9950, c, 5000), (9950, d, 10000), (9900, a, 10000)]
    sim.check()


def test_fills_are_at_the_maker_price_and_never_beyond_the_limit(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.00")
    sim.sell(ALICE, "1", "100.02")
    r = sim.buy(BOB, "3", "100.01")
    assert [t[0] for t in trades(r)] == [10000]
    assert r.order.status == ACTIVE and r.order.executed == 10000
    assert sim.book()[0] == [(10001, r.order.id, 20000)]
    sim.check()


def test_best_bid_and_offer(sim: Sim) -> None:
    book = sim.v.books[BTC_USD]
    assert book.best_bid() is None and book.best_ask() is None
    sim.buy(ALICE, "1", "99.00")
    sim.buy(ALICE, "1", "99.10")
    sim.sell(BOB, "1", "101.00")
    sim.sell(BOB, "1", "100.90")
    assert (book.best_bid(), book.best_ask()) == (9910, 10090)
    assert book.depth(BUY, 5) == [(9910, 10000, 1), (9900, 10000, 1)]
    assert book.depth(SELL, 1) == [(10090, 10000, 1)]
    sim.check()


# --- cancel -------------------------------------------------------------------------------------


def test_cancel_by_id(sim: Sim) -> None:
    o = sim.buy(ALICE, "1", "99.00").order
    r = sim.cancel(ALICE, o.id)
    assert r.ok and o.status == CANCELED and o.cancel_reason == "REQUESTED"
    assert sim.book() == ([], [])
    assert sim.bal(ALICE, 2).hold == 0
    assert sim.cancel(ALICE, o.id).reject == Reject.ORDER_NOT_ACTIVE
    sim.check()


def test_cancel_by_external_id(sim: Sim) -> None:
    o = sim.buy(ALICE, "1", "99.00", external_id="my-1").order
    assert sim.cancel(ALICE, "my-1").ok
    assert o.status == CANCELED
    assert sim.book() == ([], [])
    sim.check()


def test_cancel_of_unknown_or_foreign_order(sim: Sim) -> None:
    o = sim.buy(ALICE, "1", "99.00", external_id="x").order
    assert sim.cancel(BOB, o.id).reject == Reject.UNKNOWN_ORDER
    assert sim.cancel(BOB, "x").reject == Reject.UNKNOWN_ORDER
    assert sim.cancel(ALICE, 999).reject == Reject.UNKNOWN_ORDER
    assert o.status == ACTIVE


# --- GTC expiry ----------------------------------------------------------------------------------


def test_gtc_expires_after_30_days_of_engine_time(sim: Sim) -> None:
    o = sim.buy(ALICE, "1", "99.00").order
    held = sim.bal(ALICE, 2).hold
    assert held > 0
    sim.advance_to(START + 30 * DAY - 1)
    assert o.status == ACTIVE
    r = sim.advance_to(START + 30 * DAY)
    assert o.status == CANCELED and o.ex().cancel_reason == "EXPIRED"
    ended = [(e.order_id, e.status, e.detail) for e in r.events if isinstance(e, OrderEvent)]
    assert (o.id, CANCELED, "EXPIRED") in ended
    assert sim.book() == ([], [])
    assert sim.bal(ALICE, 2).hold == 0
    sim.check()


def test_expiry_fires_on_the_next_command_too(sim: Sim) -> None:
    o = sim.buy(ALICE, "1", "99.00").order
    r = sim.buy(BOB, "1", "98.00", at=START + 31 * DAY)
    assert o.status == CANCELED and o.ex().cancel_reason == "EXPIRED"
    assert r.order.status == ACTIVE
    assert sim.v.books[BTC_USD].best_bid() == 9800


def test_expiry_order_is_by_creation(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "99.00").order
    b = sim.buy(ALICE, "1", "98.00", at=START + DAY).order
    sim.advance_to(START + 30 * DAY)
    assert a.status == CANCELED and b.status == ACTIVE
    sim.advance_to(START + 31 * DAY)
    assert b.status == CANCELED


def test_partially_filled_gtc_expires_with_its_executed_qty(sim: Sim) -> None:
    o = sim.sell(ALICE, "2", "100.00").order
    sim.buy(BOB, "0.5", "100.00")
    sim.advance(30 * DAY)
    assert o.status == CANCELED and o.executed == 5000
    assert sim.bal(ALICE, 1).hold == 0
    sim.check()


# --- IOC ------------------------------------------------------------------------------------------


def test_ioc_partial_is_canceled_with_executed_qty(sim: Sim) -> None:
    m = sim.sell(ALICE, "1", "100.00").order
    r = sim.buy(BOB, "3", "100.00", tif="IOC")
    o = r.order
    assert trades(r) == [(10000, 10000, m.id, o.id)]
    assert o.status == CANCELED and o.executed == 10000 and o.ex().cancel_reason == "IOC_REMAINDER"
    assert sim.book() == ([], [])
    assert sim.bal(BOB, 2).hold == 0
    sim.check()


def test_ioc_full_is_filled(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.00")
    o = sim.buy(BOB, "1", "100.00", tif="IOC").order
    assert o.status == FILLED and o.executed == 10000


def test_ioc_without_trade_never_rests(sim: Sim) -> None:
    o = sim.buy(BOB, "1", "100.00", tif="IOC").order
    assert o.status == CANCELED and o.executed == 0
    assert sim.book() == ([], [])
    assert sim.v.accounts[BOB].open_orders[BTC_USD] == 0


# --- MARKET ---------------------------------------------------------------------------------------


def test_market_buy_protection_is_best_ask_plus_band_floored(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.01")
    sim.sell(ALICE, "1", "105.01")  # 100.01 * 1.05 = 105.0105 -> 105.01: inside
    sim.sell(ALICE, "1", "105.02")  # outside
    assert protection_price(sim.v, BUY, sim.v.instruments[BTC_USD], False) == 10501
    r = sim.market(BOB, BUY, "3")
    assert [t[0] for t in trades(r)] == [10001, 10501]
    assert r.order.price == 10501
    assert r.order.status == CANCELED and r.order.ex().cancel_reason == "MARKET_REMAINDER"
    assert r.order.executed == 20000
    assert sim.book()[1] == [(10502, 3, 10000)]
    assert sim.bal(BOB, 2).hold == 0
    sim.check()


def test_market_sell_protection_is_best_bid_minus_band_ceiled(sim: Sim) -> None:
    sim.buy(ALICE, "1", "100.01")
    sim.buy(ALICE, "1", "95.01")  # 100.01 * 0.95 = 95.0095 -> 95.01: inside
    sim.buy(ALICE, "1", "95.00")  # outside
    assert protection_price(sim.v, SELL, sim.v.instruments[BTC_USD], False) == 9501
    r = sim.market(BOB, SELL, "3")
    assert [t[0] for t in trades(r)] == [10001, 9501]
    assert r.order.status == CANCELED and r.order.executed == 20000
    assert sim.book()[0] == [(9500, 3, 10000)]
    sim.check()


def test_market_filled(sim: Sim) -> None:
    sim.sell(ALICE, "2", "100.00")
    r = sim.market(BOB, BUY, "1.5")
    assert r.order.status == FILLED and r.order.executed == 15000
    assert sim.book()[1] == [(10000, 1, 5000)]


def test_market_without_liquidity_is_rejected(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.00")  # the wrong side for a MARKET SELL
    before = fingerprint(sim.v)
    r = sim.market(BOB, SELL, "1")
    assert r.reject == Reject.NO_LIQUIDITY
    assert r.order.status == REJECTED and r.order.ex().reject_reason == "NO_LIQUIDITY"
    assert fingerprint(sim.v, exclude_order=r.order) == before
    sim.check()


# --- USE_AGGRESSIVE_PRICING ----------------------------------------------------------------------


def _asks_then_trade_at_100(sim: Sim) -> None:
    sim.sell(CAROL, "1", "104.00")
    sim.sell(CAROL, "1", "106.00")
    sim.sell(ALICE, "1", "100.00")
    sim.buy(BOB, "1", "100.00")
    assert sim.v.books[BTC_USD].last_price == 10000


def test_aggressive_pricing_never_reaches_less_than_plain(sim: Sim) -> None:
    _asks_then_trade_at_100(sim)
    inst = sim.v.instruments[BTC_USD]
    # the band edge around the last trade (100 * 1.05 = 105) lies inside the plain reach (104 * 1.05)
    assert protection_price(sim.v, BUY, inst, False) == 10920
    assert protection_price(sim.v, BUY, inst, True) == 10920
    r = sim.market(BOB, BUY, "2", flags=("USE_AGGRESSIVE_PRICING",))
    assert [t[0] for t in trades(r)] == [10400, 10600]
    assert r.order.price == 10920 and r.order.status == FILLED
    sim.check()


def test_aggressive_pricing_trades_where_the_band_edge_of_the_last_trade_ends_short(sim: Sim) -> None:
    # the repro: the best offer lies beyond the band around the last trade
    sim.sell(ALICE, "0.1", "316.00")
    sim.sell(ALICE, "0.1", "300.00")
    sim.buy(BOB, "0.1", "300.00")
    inst = sim.v.instruments[BTC_USD]
    assert protection_price(sim.v, BUY, inst, False) == 33180  # 316 * 1.05
    assert protection_price(sim.v, BUY, inst, True) == 33180  # not 300 * 1.05, which ends short
    r = sim.market(BOB, BUY, "0.05", flags=("USE_AGGRESSIVE_PRICING",))
    assert [t[0] for t in trades(r)] == [31600]
    assert r.order.status == FILLED
    sim.check()


@pytest.mark.parametrize(
    ("side", "resting", "plain", "flagged", "traded"),
    [
        # the best offer (96) lies below the last trade (100): the flag reaches 100 * 1.05, not 96 * 1.05
        (BUY, ("104.00", "96.00"), 10080, 10500, [9600, 10400]),
        # the best bid (104) lies above the last trade: the flag reaches 100 * 0.95, not 104 * 0.95
        (SELL, ("96.00", "104.00"), 9880, 9500, [10400, 9600]),
    ],
)
def test_aggressive_pricing_reaches_the_band_edge_around_the_last_trade(
    sim: Sim, side: str, resting: tuple[str, str], plain: int, flagged: int, traded: list[int]
) -> None:
    sim.sell(ALICE, "1", "100.00")
    sim.buy(BOB, "1", "100.00")
    contra = SELL if side == BUY else BUY
    for price in resting:
        sim.limit(CAROL, contra, "1", price)
    inst = sim.v.instruments[BTC_USD]
    assert protection_price(sim.v, side, inst, False) == plain
    assert protection_price(sim.v, side, inst, True) == flagged
    r = sim.market(BOB, side, "2", flags=("USE_AGGRESSIVE_PRICING",))
    assert [t[0] for t in trades(r)] == traded
    assert r.order.status == FILLED and r.order.price == flagged
    sim.check()


def test_aggressive_pricing_with_the_mid_changes_nothing(sim: Sim) -> None:
    # the mid never lies beyond the contra touch, so its band edge never reaches further
    sim.sell(CAROL, "1", "96.00")
    sim.buy(ALICE, "1", "94.00")
    inst = sim.v.instruments[BTC_USD]
    for side in (BUY, SELL):
        assert protection_price(sim.v, side, inst, True) == protection_price(sim.v, side, inst, False)
    assert protection_price(sim.v, BUY, inst, True) == 10080  # 96 * 1.05, not mid 95 * 1.05
    assert protection_price(sim.v, SELL, inst, True) == 8930  # 94 * 0.95, not mid 95 * 0.95


def test_aggressive_pricing_only_on_market(sim: Sim) -> None:
    r = sim.buy(BOB, "1", "100.00", flags=("USE_AGGRESSIVE_PRICING",))
    assert r.reject == Reject.AGGRESSIVE_PRICING_ONLY_ON_MARKET and r.order.status == REJECTED


# --- price band ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("side", "price", "ok"),
    [
        (BUY, "105.00", True),
        (BUY, "105.01", False),
        (SELL, "95.00", True),
        (SELL, "94.99", False),
        (SELL, "105.00", True),
        (SELL, "105.01", False),
        (BUY, "95.00", True),
        (BUY, "94.99", False),
    ],
)
def test_limit_price_outside_band_around_last_trade(sim: Sim, side: str, price: str, ok: bool) -> None:
    sim.sell(ALICE, "1", "100.00")
    sim.buy(BOB, "1", "100.00")
    r = sim.limit(CAROL, side, "0.1", price)
    if ok:
        assert r.ok
    else:
        assert r.reject == Reject.PRICE_OUTSIDE_BAND and r.order.status == REJECTED


def test_band_around_mid_without_a_trade(sim: Sim) -> None:
    sim.buy(ALICE, "1", "98.00")
    sim.sell(ALICE, "1", "102.00")  # mid 100
    assert sim.buy(BOB, "1", "94.99").reject == Reject.PRICE_OUTSIDE_BAND
    assert sim.buy(BOB, "1", "95.00").ok


def test_no_band_without_reference(sim: Sim) -> None:
    sim.buy(ALICE, "1", "10.00")
    assert sim.buy(BOB, "1", "1000.00").ok  # one-sided book, no trade: nothing to measure against


# --- ALO --------------------------------------------------------------------------------------------


def test_alo_that_would_trade_is_rejected(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.00")
    before = fingerprint(sim.v)
    r = sim.buy(BOB, "1", "100.00", exec_inst=("ALO",))
    assert r.reject == Reject.ALO_WOULD_TRADE and r.order.status == REJECTED
    assert fingerprint(sim.v, exclude_order=r.order) == before
    r = sim.buy(BOB, "1", "99.99", exec_inst=("ALO",))
    assert r.ok and r.order.status == ACTIVE
    assert sim.book()[0] == [(9999, r.order.id, 10000)]


def test_alo_sell(sim: Sim) -> None:
    sim.buy(ALICE, "1", "100.00")
    assert sim.sell(BOB, "1", "99.00", exec_inst=("ALO",)).reject == Reject.ALO_WOULD_TRADE
    assert sim.sell(BOB, "1", "100.01", exec_inst=("ALO",)).ok


def test_alo_on_market_is_rejected(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.00")
    r = sim.market(BOB, BUY, "1", exec_inst=("ALO",))
    assert r.reject == Reject.ALO_NOT_ALLOWED_ON_MARKET and r.order.status == REJECTED
    assert not trades(r)


# --- AON --------------------------------------------------------------------------------------------


def test_aon_only_on_market(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.00")
    r = sim.buy(BOB, "1", "100.00", exec_inst=("AON",))
    assert r.reject == Reject.AON_ONLY_ON_MARKET and r.order.status == REJECTED


def test_aon_fills_completely(sim: Sim) -> None:
    a = sim.sell(ALICE, "1", "100.00").order.id
    c = sim.sell(CAROL, "1", "101.00").order.id
    r = sim.market(BOB, BUY, "2", exec_inst=("AON",))
    assert r.order.status == FILLED
    assert trades(r) == [(10000, 10000, a, r.order.id), (10100, 10000, c, r.order.id)]


def test_aon_not_fillable_trades_nothing(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.00")
    sim.sell(CAROL, "1", "101.00")
    book_before = sim.book()
    r = sim.market(BOB, BUY, "2.0001", exec_inst=("AON",))
    assert not trades(r)
    assert r.order.status == CANCELED and r.order.executed == 0
    assert r.order.ex().cancel_reason == "AON_NOT_FILLABLE"
    assert sim.book() == book_before
    assert sim.bal(BOB, 2).hold == 0
    sim.check()


def test_aon_counts_only_liquidity_within_protection(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.00")
    sim.sell(CAROL, "1", "105.01")  # beyond 100 * 1.05
    r = sim.market(BOB, BUY, "2", exec_inst=("AON",))
    assert r.order.status == CANCELED and not trades(r)


def test_aon_does_not_count_own_orders_behind_stp(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.00")
    sim.sell(BOB, "1", "100.00")
    sim.sell(CAROL, "1", "100.00")
    r = sim.market(BOB, BUY, "2", exec_inst=("AON",), stp="CANCEL_AGGRESSIVE")
    assert r.order.status == CANCELED and not trades(r)
    r = sim.market(BOB, BUY, "1", exec_inst=("AON",), stp="CANCEL_AGGRESSIVE")
    assert r.order.status == FILLED
    sim.check()


# --- STP --------------------------------------------------------------------------------------------


def test_stp_none_trades_with_itself(sim: Sim) -> None:
    m = sim.sell(ALICE, "1", "100.00").order
    r = sim.buy(ALICE, "1", "100.00")
    assert trades(r) == [(10000, 10000, m.id, r.order.id)]
    assert m.status == FILLED and r.order.status == FILLED
    sim.check()


def _stp_book(sim: Sim) -> tuple[int, int, int]:
    b1 = sim.sell(BOB, "1", "99.90").order.id
    a = sim.sell(ALICE, "1", "100.00").order.id
    b2 = sim.sell(BOB, "1", "100.00").order.id
    return b1, a, b2


def test_stp_cancel_aggressive(sim: Sim) -> None:
    b1, a, b2 = _stp_book(sim)
    r = sim.buy(ALICE, "3", "100.00", stp="CANCEL_AGGRESSIVE")
    o = r.order
    assert trades(r) == [(9990, 10000, b1, o.id)]
    assert o.status == CANCELED and o.executed == 10000 and o.ex().cancel_reason == "SELF_TRADE_PREVENTION"
    assert sim.order(ALICE, a).status == ACTIVE
    assert sim.book()[1] == [(10000, a, 10000), (10000, b2, 10000)]
    sim.check()


def test_stp_cancel_both(sim: Sim) -> None:
    b1, a, b2 = _stp_book(sim)
    r = sim.buy(ALICE, "3", "100.00", stp="CANCEL_BOTH")
    o = r.order
    assert trades(r) == [(9990, 10000, b1, o.id)]
    assert o.status == CANCELED and o.ex().cancel_reason == "SELF_TRADE_PREVENTION"
    resting = sim.order(ALICE, a)
    assert resting.status == CANCELED and resting.ex().cancel_reason == "SELF_TRADE_PREVENTION"
    assert sim.book()[1] == [(10000, b2, 10000)]
    assert sim.bal(ALICE, 1).hold == 0 and sim.bal(ALICE, 2).hold == 0
    sim.check()


def test_stp_only_when_the_own_order_is_reachable(sim: Sim) -> None:
    b = sim.sell(BOB, "1", "100.00").order.id
    sim.sell(ALICE, "1", "100.01")
    r = sim.buy(ALICE, "1", "100.00", stp="CANCEL_BOTH")
    assert trades(r) == [(10000, 10000, b, r.order.id)] and r.order.status == FILLED


def test_stp_invalid_is_rejected(sim: Sim) -> None:
    r = sim.buy(ALICE, "1", "100.00", stp="INVALID")
    assert r.reject == Reject.STP_INVALID and r.order.status == REJECTED


def test_order_stp_overrides_client_setting(sim: Sim) -> None:
    assert sim.stp(ALICE, "CANCEL_AGGRESSIVE").ok
    m = sim.sell(ALICE, "1", "100.00").order
    r = sim.buy(ALICE, "1", "100.00")  # client setting applies
    assert not trades(r) and r.order.ex().cancel_reason == "SELF_TRADE_PREVENTION"
    r = sim.buy(ALICE, "1", "100.00", stp="NONE")  # order overrides
    assert trades(r) == [(10000, 10000, m.id, r.order.id)]
    sim.stp(ALICE, "NONE")
    m = sim.sell(ALICE, "1", "100.00").order
    r = sim.buy(ALICE, "1", "100.00", stp="CANCEL_BOTH")
    assert not trades(r) and m.status == CANCELED
    sim.check()


def test_client_stp_invalid_value_refused(sim: Sim) -> None:
    assert sim.stp(ALICE, "BOGUS").reject == Reject.STP_INVALID
    assert sim.stp(999, "NONE").reject == Reject.UNKNOWN_CLIENT
    assert sim.v.clients[ALICE].self_trade_prevention == "NONE"


# --- quantities and grids ---------------------------------------------------------------------------


def test_min_qty(sim: Sim) -> None:
    r = sim.limit(ALICE, BUY, "0.009", "100.00", inst=ETH_USD)
    assert r.reject == Reject.QTY_BELOW_MINIMUM and r.order.status == REJECTED
    assert sim.limit(ALICE, BUY, "0.010", "100.00", inst=ETH_USD).ok


@pytest.mark.parametrize(
    ("inst", "qty", "price", "reason"),
    [
        (BTC_USD, "1", "100.001", Reject.PRICE_OFF_GRID),
        (BTC_USD, "0.00001", "100.00", Reject.QTY_OFF_GRID),
        (ETH_USD, "1", "100.03", Reject.PRICE_OFF_GRID),
        (ETH_USD, "0.0105", "100.05", Reject.QTY_OFF_GRID),
        (BTC_USD, "0", "100.00", Reject.QTY_NOT_POSITIVE),
        (BTC_USD, "1", "0.00", Reject.PRICE_NOT_POSITIVE),
    ],
)
def test_off_grid_rejected_with_record_and_nothing_else(
    sim: Sim, inst: int, qty: str, price: str, reason: Reject
) -> None:
    sim.sell(BOB, "1", "100.00")
    sim.limit(BOB, SELL, "1", "100.00", inst=ETH_USD)
    before = fingerprint(sim.v)
    r = sim.limit(ALICE, BUY, qty, price, inst=inst)
    assert r.reject == reason
    o = r.order
    assert o.status == REJECTED and o.ex().reject_reason == reason.value
    assert o.ex().qty_given == qty and o.ex().price_given == price
    assert sim.v.accounts[ALICE].orders[o.id] is o
    assert [(type(e), e.status) for e in r.events] == [(OrderEvent, REJECTED)]  # type: ignore[union-attr]
    assert fingerprint(sim.v, exclude_order=o) == before
    sim.check()


def test_limit_requires_price(sim: Sim) -> None:
    r = sim.limit(ALICE, BUY, "1", None)  # type: ignore[arg-type]
    assert r.reject == Reject.PRICE_REQUIRED


def test_unknown_client_or_instrument_creates_nothing(sim: Sim) -> None:
    before = fingerprint(sim.v)
    next_id = sim.v.next_order_id
    assert sim.buy(999, "1", "100.00").reject == Reject.UNKNOWN_CLIENT
    assert sim.limit(ALICE, BUY, "1", "100.00", inst=99).reject == Reject.UNKNOWN_INSTRUMENT
    assert fingerprint(sim.v) == before and sim.v.next_order_id == next_id


def test_ids_come_from_counters(sim: Sim) -> None:
    ids = [sim.buy(ALICE, "1", "99.00").order.id for _ in range(3)]
    ids.append(sim.buy(ALICE, "1", "99.001").order.id)  # a rejected order takes an id too
    ids.append(sim.buy(ALICE, "1", "99.00").order.id)
    assert ids == [1, 2, 3, 4, 5]
    sim.sell(BOB, "2", "99.00")
    assert sim.v.next_match_id == 3


def test_max_open_orders_per_client_and_instrument() -> None:
    from cefisim.engine.venue import VenueConfig

    sim = Sim(config=VenueConfig(max_open_orders=2))
    a = sim.buy(ALICE, "1", "99.00").order
    sim.buy(ALICE, "1", "98.00")
    r = sim.buy(ALICE, "1", "97.00")
    assert r.reject == Reject.TOO_MANY_OPEN_ORDERS and r.order.status == REJECTED
    assert sim.limit(ALICE, BUY, "1", "99.00", inst=ETH_USD).ok  # another instrument
    assert sim.buy(BOB, "1", "97.00").ok  # another client
    sim.cancel(ALICE, a.id)
    assert sim.buy(ALICE, "1", "97.00").ok
    sim.sell(CAROL, "2", "97.00")  # fills two of alice's orders and frees their slots
    assert sim.buy(ALICE, "1", "96.00").ok
    sim.check()


def test_latency_timestamps_are_engine_time(sim: Sim) -> None:
    sim.latency(entry=2 * SECOND)
    o = sim.buy(ALICE, "1", "99.00").order
    sim.advance(2 * SECOND)
    assert o.ex().acked == START + 2 * SECOND


def test_market_ignores_a_given_price(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.00")
    for price in ("1.00", "100.001"):  # far away, or even off the grid: not used
        r = sim.submit(PlaceOrder(BOB, BTC_USD, BUY, "MARKET", "0.1", price))
        assert r.ok and r.order.price == 10_500 and r.order.status == FILLED
    sim.check()
