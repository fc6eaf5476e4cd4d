"""Latency (SetLatency): NEW_PENDING, MODIFY_PENDING, CANCEL_PENDING; resting liquidity keeps trading."""

from __future__ import annotations

from cefisim.engine.events import OrderEvent
from cefisim.engine.rejects import Reject
from cefisim.engine.vocabulary import OrderStatus
from tests.engine.builders import ALICE, BOB, BTC, CAROL, SECOND, USD, Sim, order_events, trades

ACTIVE = OrderStatus.ACTIVE
CANCEL_PENDING = OrderStatus.CANCEL_PENDING
CANCELED = OrderStatus.CANCELED
FILLED = OrderStatus.FILLED
MODIFY_PENDING = OrderStatus.MODIFY_PENDING
NEW_PENDING = OrderStatus.NEW_PENDING

MS = SECOND // 1000


def test_entry_latency_new_pending_then_active(sim: Sim) -> None:
    sim.latency(entry=5 * MS)
    r = sim.buy(ALICE, "1", "99.00")
    o = r.order
    assert r.ok and o.status == NEW_PENDING and r.snapshot_status == NEW_PENDING
    assert order_events(r) == [(o.id, NEW_PENDING, None)]
    assert sim.book() == ([], [])
    assert sim.bal(ALICE, USD).hold == 9_900 + 20  # held from entry
    sim.check()
    r = sim.advance(5 * MS - 1)
    assert o.status == NEW_PENDING
    r = sim.advance(1)
    assert o.status == ACTIVE and order_events(r) == [(o.id, ACTIVE, None)]
    assert sim.book()[0] == [(9_900, o.id, 10_000)]
    sim.check()


def test_pending_entry_trades_on_ack_against_the_book_then(sim: Sim) -> None:
    sim.latency(entry=5 * MS)
    o = sim.buy(ALICE, "1", "100.00").order
    sim.latency()
    m = sim.sell(BOB, "1", "100.00").order  # arrives later but is acknowledged first
    assert m.status == ACTIVE
    r = sim.advance(5 * MS)
    assert trades(r) == [(10_000, 10_000, m.id, o.id)]
    assert o.status == FILLED


def test_pending_alo_that_would_now_trade_is_canceled(sim: Sim) -> None:
    sim.latency(entry=5 * MS)
    o = sim.buy(ALICE, "1", "100.00", exec_inst=("ALO",)).order
    sim.latency()
    sim.sell(BOB, "1", "100.00")
    sim.advance(5 * MS)
    assert o.status == CANCELED and o.executed == 0
    sim.check()


def test_cancel_of_pending_new_is_refused(sim: Sim) -> None:
    sim.latency(entry=5 * MS)
    o = sim.buy(ALICE, "1", "99.00").order
    assert sim.cancel(ALICE, o.id).reject == Reject.ORDER_PENDING
    assert sim.modify(ALICE, o.id, "0.5").reject == Reject.ORDER_PENDING


def test_modify_latency(sim: Sim) -> None:
    sim.latency(modify=5 * MS)
    a = sim.sell(ALICE, "2", "100.00").order
    r = sim.modify(ALICE, a.id, "1", "101.00")
    assert a.status == MODIFY_PENDING and r.snapshot_status == MODIFY_PENDING
    assert order_events(r) == [(a.id, MODIFY_PENDING, None)]
    # the order keeps trading at its old terms meanwhile
    r = sim.buy(BOB, "0.5", "100.00")
    assert trades(r) == [(10_000, 5_000, a.id, r.order.id)]
    assert a.status == MODIFY_PENDING
    assert sim.modify(ALICE, a.id, "1").reject == Reject.ORDER_PENDING
    assert sim.cancel(ALICE, a.id).reject == Reject.ORDER_PENDING
    sim.check()
    r = sim.advance(5 * MS)
    assert a.status == ACTIVE and (a.qty, a.price) == (10_000, 10_100)
    assert sim.book()[1] == [(10_100, a.id, 5_000)]
    assert sim.bal(ALICE, BTC).hold == 5 * 10**7
    sim.check()


def test_modify_pending_order_filled_before_ack(sim: Sim) -> None:
    sim.latency(modify=5 * MS)
    a = sim.sell(ALICE, "1", "100.00").order
    sim.modify(ALICE, a.id, "2", "101.00")
    sim.buy(BOB, "1", "100.00")
    assert a.status == FILLED
    sim.advance(5 * MS)
    assert a.status == FILLED and a.qty == 10_000
    sim.check()


def test_modify_pending_executed_beyond_new_qty_ends_the_order(sim: Sim) -> None:
    sim.latency(modify=5 * MS)
    a = sim.sell(ALICE, "2", "100.00").order
    sim.modify(ALICE, a.id, "1")
    sim.buy(BOB, "1.5", "100.00")
    sim.advance(5 * MS)
    assert a.status == CANCELED and a.executed == 15_000
    assert sim.bal(ALICE, BTC).hold == 0
    sim.check()


def test_cancel_latency_resting_order_still_trades(sim: Sim) -> None:
    sim.latency(cancel=5 * MS)
    a = sim.sell(ALICE, "2", "100.00").order
    r = sim.cancel(ALICE, a.id)
    assert r.ok and a.status == CANCEL_PENDING and r.snapshot_status == CANCEL_PENDING
    assert order_events(r) == [(a.id, CANCEL_PENDING, None)]
    assert sim.book()[1] == [(10_000, a.id, 20_000)]
    r = sim.buy(BOB, "0.5", "100.00")  # trades before the cancel is acknowledged
    assert trades(r) == [(10_000, 5_000, a.id, r.order.id)]
    assert a.status == CANCEL_PENDING
    sim.check()
    r = sim.advance(5 * MS)
    assert a.status == CANCELED and a.executed == 5_000
    assert order_events(r) == [(a.id, CANCELED, "REQUESTED")]
    assert sim.book() == ([], [])
    assert sim.bal(ALICE, BTC).hold == 0
    sim.check()


def test_cancel_pending_order_filled_before_ack(sim: Sim) -> None:
    sim.latency(cancel=5 * MS)
    a = sim.sell(ALICE, "1", "100.00").order
    sim.cancel(ALICE, a.id)
    sim.buy(BOB, "1", "100.00")
    assert a.status == FILLED
    r = sim.advance(5 * MS)
    assert a.status == FILLED and not order_events(r)


def test_pending_modify_cannot_overdraw_when_balance_was_spent_meanwhile() -> None:
    """The hold grows when the modify is applied; a client who spent the money meanwhile must not end
    with hold > total (found while writing these tests)."""
    sim = Sim(balances={ALICE: {USD: 100_000}, BOB: {BTC: 10**9}})
    sim.latency(modify=5 * MS)
    a = sim.buy(ALICE, "1", "99.00").order  # holds 99.20
    assert sim.modify(ALICE, a.id, "5").ok  # would hold 496.00: affordable now
    assert sim.buy(ALICE, "9", "99.00").ok  # spends the rest of the 1000.00 available
    r = sim.advance(5 * MS)
    sim.check()
    assert sim.bal(ALICE, USD).hold <= sim.bal(ALICE, USD).total
    # the modify is refused when it is applied; the order keeps its old terms
    assert order_events(r) == [(a.id, ACTIVE, "MODIFY_REJECTED:INSUFFICIENT_BALANCE")]
    assert a.status == ACTIVE and a.qty == 10_000
    assert a.ex().modifications[-1][1] == "MODIFY_REJECTED:INSUFFICIENT_BALANCE"


def test_pending_modify_of_alo_that_would_now_trade(sim: Sim) -> None:
    """An ALO never takes liquidity, even when its modify is applied after a delay."""
    sim.latency(modify=5 * MS)
    a = sim.buy(ALICE, "1", "99.00", exec_inst=("ALO",)).order
    assert sim.modify(ALICE, a.id, "1", "100.00").ok  # nothing to cross yet
    sim.sell(BOB, "1", "100.00")  # now it would
    r = sim.advance(5 * MS)
    assert not trades(r)
    assert a.executed == 0 and a.price == 9_900 and a.status == ACTIVE
    assert order_events(r) == [(a.id, ACTIVE, "MODIFY_REJECTED:ALO_WOULD_TRADE")]
    sim.check()


def test_status_of_pending_order_on_halt(sim: Sim) -> None:
    sim.latency(entry=5 * MS)
    o = sim.buy(ALICE, "1", "99.00").order
    sim.status(1, "HALTED")
    sim.advance(5 * MS)
    assert o.status == CANCELED and o.ex().cancel_reason == "INSTRUMENT_HALTED"
    assert sim.bal(ALICE, USD).hold == 0
    sim.check()


def test_pending_modify_applied_while_halted_does_not_cross_the_book(sim: Sim) -> None:
    """HALTED rejects modifies; one still pending when the halt comes must not rest crossed."""
    sim.latency(modify=5 * MS)
    sim.buy(BOB, "1", "99.00")
    a = sim.sell(ALICE, "1", "100.00").order
    assert sim.modify(ALICE, a.id, "1", "99.00").ok
    sim.status(1, "HALTED")
    r = sim.advance(5 * MS)
    sim.check()
    assert a.status == ACTIVE and a.price == 10_000
    assert order_events(r) == [(a.id, ACTIVE, "MODIFY_REJECTED:INSTRUMENT_HALTED")]
    sim.status(1, "ACTIVE")
    sim.check()


def test_expiry_is_on_time_when_orders_are_acknowledged_out_of_creation_order(sim: Sim) -> None:
    """An order acknowledged late (entry latency) still expires 30 days after it was created, even when
    an order created after it was acknowledged first (the latency was lowered meanwhile)."""
    from tests.engine.builders import DAY, START

    sim.latency(entry=10 * SECOND)
    a = sim.buy(ALICE, "1", "99.00").order  # created at START, rests at START + 10 s
    sim.latency()
    b = sim.buy(BOB, "1", "98.00", at=START + SECOND).order  # created and resting at START + 1 s
    sim.advance_to(START + 10 * SECOND)
    assert a.status == ACTIVE and b.status == ACTIVE
    r = sim.advance_to(START + 30 * DAY)
    assert a.status == CANCELED and a.ex().cancel_reason == "EXPIRED"
    assert [e.ts for e in r.events if isinstance(e, OrderEvent) and e.order_id == a.id] == [START + 30 * DAY]
    assert b.status == ACTIVE
    sim.advance_to(START + 30 * DAY + SECOND)
    assert b.status == CANCELED
    sim.check()


def _walk_activity(sim: Sim, client: int) -> list[tuple[str, int]]:
    """Every activity item of ``client`` by pages of one, following the cursor."""
    from cefisim.engine.queries import activity

    seen: list[tuple[str, int]] = []
    before = sim.v.clock.peek() + 1
    while True:
        items, cursor = activity(sim.v, client, before, 0, 1)
        seen += [(kind, ts) for kind, ts, _, _, _ in items]
        if cursor is None:
            return seen
        before = cursor


def test_every_delayed_record_has_a_timestamp_of_its_own() -> None:
    """Acknowledgements (confirm, late reject, modify, cancel) and expiries that fall due at one instant
    each get a unique timestamp, so a walk by pages of one sees every activity item."""
    from cefisim.engine.queries import activity
    from cefisim.engine.venue import VenueConfig
    from tests.engine.builders import ETH_USD

    sim = Sim(config=VenueConfig(gtc_life_ns=10 * MS))
    sim.latency(entry=5 * MS, modify=5 * MS, cancel=5 * MS)
    a = sim.buy(ALICE, "1", "99.00").order
    b = sim.buy(ALICE, "1", "98.00").order
    late = sim.buy(ALICE, "1", "99.00", inst=ETH_USD).order
    sim.status(ETH_USD, "HALTED")
    r = sim.advance(5 * MS)  # three acknowledgements at one instant
    assert a.status == ACTIVE and b.status == ACTIVE and late.status == CANCELED
    # the CONFIRM of a delayed order is the ACTIVE event's own timestamp
    assert a.ex().acked == next(e.ts for e in r.events if isinstance(e, OrderEvent) and e.order_id == a.id)
    assert sim.modify(ALICE, a.id, "0.5", "99.00").ok
    assert sim.cancel(ALICE, b.id).ok
    sim.buy(ALICE, "1", "97.00")
    sim.advance(5 * MS)  # a modify, a cancel and a confirm at one instant
    sim.advance(10 * MS)  # the GTC orders still working expire
    items, _ = activity(sim.v, ALICE, sim.v.clock.peek() + 1, 0, 100)
    stamps = [ts for _, ts, _, _, _ in items]
    assert len(stamps) == len(set(stamps)) == 9
    assert stamps == sorted(stamps, reverse=True)
    assert _walk_activity(sim, ALICE) == [(kind, ts) for kind, ts, _, _, _ in items]
    sim.check()


def test_a_delayed_market_buy_repriced_lower_at_its_acknowledgement_releases_the_difference() -> None:
    """The book moved while a MARKET BUY was in flight: its protection price falls at the
    acknowledgement, so it holds less; once it has traded, nothing stays held."""
    sim = Sim()
    sim.sell(CAROL, "0.0006", "30003.00")
    sim.latency(2_000_000, 2_000_000, 2_000_000)
    sim.sell(ALICE, "0.0001", "30000.00")  # acknowledged first: a better ask than the one seen at entry
    buy = sim.market(BOB, "BUY", "0.0001").order
    assert sim.bal(BOB, USD).hold == 316 + 1  # 0.0001 x 31503.15 (30003.00 + 5%) rounded up, and the fee
    sim.advance(SECOND)
    assert sim.order(BOB, buy.id).status == "FILLED"
    assert (sim.bal(BOB, USD).hold, sim.bal(BOB, USD).fees_hold) == (0, 0)
    sim.check()


def test_a_delayed_market_buy_repriced_lower_whose_remainder_is_canceled_holds_nothing(sim: Sim) -> None:
    """As above, but the order ends CANCELED (MARKET_REMAINDER) with part of it untraded: cancelling
    releases the hold at the new price, so the lowered hold must be what the balance holds too."""
    first = sim.sell(BOB, "1", "100.00").order  # the protection price at entry: 100.00 + 5% = 105.00
    sim.latency(entry=5 * MS)
    o = sim.market(ALICE, "BUY", "2").order
    assert o.status == NEW_PENDING and o.price == 10_500
    assert sim.bal(ALICE, USD).hold == 2 * (10_500 + 21)  # 2 BTC at 105.00 plus the 0.2% taker fee
    sim.latency()
    sim.cancel(BOB, first.id)
    m = sim.sell(BOB, "1", "90.00").order  # arrives later, acknowledged first: the protection price is 94.50
    r = sim.advance(5 * MS)
    assert o.price == 9_450 and trades(r) == [(9_000, 10_000, m.id, o.id)]
    assert o.status == CANCELED  # the remainder of a MARKET order never rests
    assert sim.bal(ALICE, USD).hold == 0
    sim.check()
