"""engine/clock.py and the venue's timestamps: unique, strictly increasing, never going back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cefisim.engine.clock import Clock
from tests.engine.builders import ALICE, BOB, START, Sim


def test_stamps_are_unique_at_one_instant() -> None:
    c = Clock(1000)
    stamps = [c.stamp() for _ in range(5)]
    assert stamps == [1000, 1001, 1002, 1003, 1004]


def test_clock_never_goes_back() -> None:
    c = Clock(1000)
    c.advance(2000)
    c.advance(1500)
    assert c.now == 2000
    assert c.stamp() == 2000


def test_peek_does_not_take() -> None:
    c = Clock(10)
    assert c.peek() == 10
    assert c.peek() == 10
    assert c.stamp() == 10
    assert c.peek() == 11


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 50)), max_size=60))
def test_stamps_strictly_increase_under_any_advances(ops: list[tuple[bool, int]]) -> None:
    c = Clock(100)
    last = None
    for is_advance, delta in ops:
        if is_advance:
            c.advance(c.now + delta - 10)  # sometimes into the past
        else:
            ts = c.stamp()
            assert ts >= c.now
            if last is not None:
                assert ts > last
            last = ts


def test_venue_event_timestamps_strictly_increase(sim: Sim) -> None:
    all_events = []
    for _ in range(5):
        all_events += sim.sell(ALICE, "1", "100.00").events
        all_events += sim.buy(BOB, "1", "100.00").events  # trades: several records at one instant
    all_events += sim.buy(BOB, "1", "99.00", at=START + 5).events
    all_events += sim.buy(BOB, "1", "99.00", at=START + 3).events  # a time in the past is ignored
    stamps = [e.ts for e in all_events]
    assert stamps == sorted(stamps)
    assert len(set(stamps)) == len(stamps)
    assert stamps[0] > START  # START itself is the first order's created stamp
