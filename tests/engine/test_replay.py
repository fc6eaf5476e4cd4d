"""Golden replay: the same (at, command) journal gives the same events and state."""

from __future__ import annotations

import pytest

from cefisim.engine.commands import AdvanceClock, Command, PlaceOrder
from cefisim.engine.events import FeesSettledEvent, TradeEvent
from tests.engine.builders import (
    ALICE,
    BOB,
    BTC,
    BTC_USD,
    CAROL,
    DAY,
    ETH_USD,
    HOUR,
    SECOND,
    START,
    USD,
    Sim,
    build_venue,
    fingerprint,
    state_hash,
)


def session(sim: Sim) -> list[tuple]:
    """A bit of everything: trades, STP, latency, modify, cancel, expiry, transfers, funds, statuses."""
    events: list[tuple] = []
    ev = events.extend
    ev(sim.sell(ALICE, "1", "100.00", external_id="a").events)
    ev(sim.buy(BOB, "0.4", "100.00").events)
    ev(sim.buy(CAROL, "2", "99.50", at=START + SECOND).events)
    ev(sim.sell(CAROL, "0.5", "99.50", stp="CANCEL_BOTH").events)
    ev(sim.latency(entry=3 * SECOND, modify=2 * SECOND, cancel=SECOND).events)
    ev(sim.buy(BOB, "1", "100.00", at=START + 2 * SECOND).events)
    ev(sim.modify(ALICE, 1, "0.5", at=START + 3 * SECOND).events)
    ev(sim.cancel(ALICE, "a", at=START + 6 * SECOND).events)
    ev(sim.latency().events)
    ev(sim.settlement_delay(HOUR).events)
    ev(sim.transfer(BOB, USD, "12.34", "WITHDRAW").events)
    ev(sim.funds(CAROL, BTC, "0.5").events)
    ev(sim.status(ETH_USD, "OPENING").events)
    ev(sim.limit(ALICE, "SELL", "1", "100.00", inst=ETH_USD).events)
    ev(sim.limit(BOB, "BUY", "1", "100.50", inst=ETH_USD).events)
    ev(sim.status(ETH_USD, "ACTIVE").events)
    ev(sim.buy(ALICE, "1", "99.00", at=START + 2 * HOUR).events)
    ev(sim.advance(31 * DAY).events)
    return events


def test_journal_replays_to_identical_events_and_state() -> None:
    journal: list[tuple[int, Command]] = []
    sim = Sim(journal=journal)
    events = session(sim)
    assert any(isinstance(e, TradeEvent) for e in events) and any(isinstance(e, FeesSettledEvent) for e in events)

    fresh = build_venue()
    replayed: list[tuple] = []
    for at, cmd in journal:
        replayed.extend(fresh.submit(cmd, at=at).events)
    assert replayed == events
    assert state_hash(fresh) == state_hash(sim.v)
    assert fingerprint(fresh) == fingerprint(sim.v)


def test_two_runs_give_the_same_events() -> None:
    a, b = Sim(), Sim()
    assert session(a) == session(b)
    assert state_hash(a.v) == state_hash(b.v)
    a.check()


@pytest.mark.parametrize("at", [None, START - 5, START, START + 7])
@pytest.mark.parametrize("target", [START - 9, START + 3, START + 20])
def test_applies_at_is_the_time_submit_applies_a_command_at(at: int | None, target: int) -> None:
    """What a journal records before it submits is the time the command then applies at."""
    v = build_venue()
    place = PlaceOrder(ALICE, BTC_USD, "BUY", "LIMIT", "1", "99.00")
    want = v.applies_at(place, at)
    assert want == (START if at is None or at < START else at)
    assert v.submit(place, at).order.created == want  # type: ignore[union-attr]
    v = build_venue()
    want = v.applies_at(AdvanceClock(target), at)
    assert want == max(START, target, START if at is None else at)
    v.submit(AdvanceClock(target), at)
    assert v.clock.now == want
