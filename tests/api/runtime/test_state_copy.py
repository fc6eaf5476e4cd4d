"""A copy of engine state made in bounded steps (api/runtime/state_copy.py): object for object what a
snapshot round trip makes, sharing nothing the source can change, each step within its budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime import snapshot
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.runtime.state_copy import StateCopy, copy_state
from cefisim.engine.commands import CancelOrder, PlaceOrder
from cefisim.engine.events import row
from cefisim.engine.venue import Venue

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"


@pytest.fixture(scope="module")
def busy() -> Simulation:
    """A busy market after 30 s: thousands of orders, fills, executions, the runner's agents and their
    generators, GTC expiries and timers."""
    doc = json.loads((SCENARIOS / "busy_market.json").read_text())
    doc.pop("$schema")
    sim = Simulation(parse_scenario(doc, "busy.json"), clock="virtual")
    sim.advance(sim.now_ns() + 30 * 10**9)
    return sim


def _doc(roots: dict[str, Any]) -> bytes:
    return orjson.dumps(snapshot.to_json(roots, {}))


def test_the_copy_is_what_a_snapshot_round_trip_makes(busy: Simulation) -> None:
    roots = {"venue": busy.venue, "runner": busy.runner}
    copy = copy_state(roots)
    assert copy["venue"] is not busy.venue and copy["runner"].venue is copy["venue"]
    assert _doc(copy) == _doc(snapshot.from_json(snapshot.to_json(roots, {}))) == _doc(roots)
    copy["venue"].check_invariants()


def test_the_copy_shares_nothing_the_source_changes(busy: Simulation) -> None:
    sim = Simulation(busy.scenario, clock="virtual")
    sim.restore(busy.snapshot())  # a venue of its own to change
    copy = copy_state({"venue": sim.venue})
    before = _doc(copy)
    resting = next(o for o in sim.venue.gtc_queue if o.status == "ACTIVE")
    sim.submit(CancelOrder(resting.account.id, str(resting.id)))
    sim.advance(sim.now_ns() + 5 * 10**9)
    assert _doc(copy) == before


def test_the_copy_applies_commands_as_the_codecs_does(busy: Simulation) -> None:
    """The hooks that rebuild what a snapshot leaves out (the command table, the caches) ran."""
    mine = copy_state({"venue": busy.venue})["venue"]
    theirs = snapshot.from_json(snapshot.to_json({"venue": busy.venue}, {}))["venue"]
    at = busy.venue.clock.now + 1
    for venue in (mine, theirs):
        venue.use_rules(busy.venue.rules)
    cmds = [PlaceOrder(901, 1, "BUY", "LIMIT", "0.5", "30010.00"), PlaceOrder(900, 1, "SELL", "MARKET", "0.3")]
    results = [[[row(e) for e in v.submit(cmd, at + i).events] for i, cmd in enumerate(cmds)] for v in (mine, theirs)]
    assert results[0] == results[1] and all(results[0])  # each command did something, the same on both
    assert _doc({"venue": mine}) == _doc({"venue": theirs})


def test_every_step_stays_within_its_budget_and_the_copy_is_whole_only_at_the_end(busy: Simulation) -> None:
    budget = 500
    made = StateCopy({"venue": busy.venue})
    _, _, fields = snapshot.state_tables()
    # a step ends once the budget is reached: it passes it by one object's attributes at most, and each
    # of them may make an object
    most = budget + max(len(f) for f in fields.values()) * 9
    spent, steps = 0, 0
    while True:
        whole = made.step(budget)
        assert made.spent - spent <= most
        spent, steps = made.spent, steps + 1
        if whole:
            break
    assert steps > 50 and made.done
    assert _doc(made.roots) == _doc({"venue": busy.venue})


@pytest.mark.parametrize(("state", "reason"), [({1, 2}, "sets"), (object(), "object is not engine state")])
def test_what_the_codec_refuses_the_copy_refuses(state: Any, reason: str) -> None:
    for attempt in (lambda: copy_state({"x": [state]}), lambda: snapshot.to_json({"x": [state]}, {})):
        with pytest.raises(snapshot.SnapshotError, match=reason):
            attempt()


def test_a_venue_copies_with_its_clock_and_counters() -> None:
    venue = Venue(10**18)
    copy = copy_state({"venue": venue})["venue"]
    assert copy.clock is not venue.clock and copy.clock.now == venue.clock.now
    assert _doc({"venue": copy}) == _doc({"venue": venue})
