"""Population agents: the loader expands an entry into its agents and clients, each kind does what
docs/agents.md says, and a population replays, journals and snapshots like any scenario."""

from __future__ import annotations

import copy
import itertools
import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cefisim.api.formats.scenario import ScenarioError, parse_scenario
from cefisim.api.runtime.simulation import Simulation, check_wall_clock
from cefisim.engine.commands import CancelOrder, PlaceOrder
from cefisim.engine.simulation.population import (
    InventoryMaker,
    MomentumTrader,
    NoiseTrader,
    ValueTrader,
)
from cefisim.engine.simulation.population_specs import (
    Activity,
    ActivitySpec,
    Fundamental,
    FundamentalSpec,
    int_div,
)
from tests.api.formats.scenario.replay_support import SCENARIOS

S = 10**9
POPULATION = json.loads((SCENARIOS / "population.json").read_text())


def doc(**changes: Any) -> dict[str, Any]:
    """The shipped population, first 30 s, with ``changes`` to its entries (by name)."""
    d = copy.deepcopy(POPULATION)
    d["end"] = "+30"
    entries = {a["name"]: a for a in d["agents"]}
    for name, change in changes.items():
        entries[name].update(change)
    return d


def problems(d: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(d, "pop.json")
    return [(path, reason) for _, path, reason in err.value.problems]


def run(d: dict[str, Any], until_s: float) -> tuple[Any, Any, list[tuple[int, Any, Any]]]:
    scenario = parse_scenario(d, str(SCENARIOS / "population.json"))
    venue = scenario.build_venue()
    runner = scenario.runner(venue)
    steps: list[tuple[int, Any, Any]] = []
    runner.run(scenario.start_ns + int(until_s * S), lambda at, cmd, r: steps.append((at, cmd, r)))
    return scenario, runner, steps


def test_an_entry_becomes_count_agents_each_its_own_client() -> None:
    scenario = parse_scenario(doc(), "pop.json")
    counts = {"maker": 8, "value": 100, "momentum": 20, "noise": 200}
    assert len(scenario.agents) == sum(counts.values())
    makers = [a for a in scenario.agents if a.name.startswith("maker")]
    assert [a.client_id for a in makers] == list(range(1000, 1008))
    assert [a.name for a in makers[:2]] == ["maker-1", "maker-2"]
    client = scenario.clients[1003]
    assert client.mnemonic == "maker-4"
    assert scenario.balances[1003] == {1: 100 * 10**8, 2: 5_000_000 * 100}
    assert scenario.client_id("noise-200") == 4199
    assert {a.latency_min_ns for a in makers} == {1_000_000} and {a.latency_max_ns for a in makers} == {5_000_000}


@pytest.mark.parametrize(
    ("change", "path", "reason"),
    [
        ({"count": 0}, "$.agents[0].count", "between 1 and"),
        ({"clients": {"first_id": "100", "mnemonic": "m"}}, "$.agents[0].clients", "already a client"),
        ({"clients": {"first_id": "1000"}}, "$.agents[0].clients.mnemonic", "missing"),
        ({"clients": {"first_id": "1000", "mnemonic": "m", "balances": {"USD": "0.001"}}}, "balances.USD", "finer"),
        ({"latency_ms": {"min": 5, "max": 1}}, "$.agents[0].latency_ms.max", "at least min"),
        ({"max_inventory": "0.0005"}, "$.agents[0].max_inventory", "qty_increment"),
        ({"spread": "0"}, "$.agents[0].spread", "positive"),
    ],
)
def test_population_problems_name_the_field(change: dict[str, Any], path: str, reason: str) -> None:
    found = problems(doc(maker=change))
    assert any(p.endswith(path) and reason in r for p, r in found), found


def test_clients_of_two_entries_must_not_overlap() -> None:
    d = doc(value={"clients": {"first_id": "1005", "mnemonic": "v"}})
    assert any(p == "$.agents[1].clients" and "1005" in r for p, r in problems(d))
    d = doc(maker={"clients": {"first_id": "1000", "mnemonic": "alice"}})
    d["clients"][0]["mnemonic"] = "alice-3"  # the mnemonic the template gives its third client
    assert any(p == "$.agents[0].clients" and "alice-3" in r for p, r in problems(d))


def test_kind_specific_rules() -> None:
    found = problems(doc(momentum={"short": 12, "long": 12}, noise={"activity": None}))
    assert any(p == "$.agents[2].long" and "more than short" in r for p, r in found), found
    d = doc()
    del d["agents"][3]["activity"]
    assert any(p == "$.agents[3].calm_fraction" and "only with activity" in r for p, r in problems(d))


def test_the_fundamental_reverts_to_its_mean_in_whole_ticks() -> None:
    spec = FundamentalSpec(0, start=1000, mean=500, reversion=100_000_000, step=1, vol=1, every_ns=S, start_ns=0)
    path = Fundamental(spec, random.Random(1))
    values = [path.value_at(t * S) for t in range(200)]
    assert values[0] == 1000 and all(isinstance(v, int) for v in values)
    assert abs(values[-1] - 500) < 30  # 10% of the gap closed a second: about 0 left after 200 s
    again = Fundamental(spec, random.Random(1))
    assert again.value_at(199 * S) == values[-1]  # one long step = the same path as many short ones


def test_activity_alternates_calm_and_busy_spells() -> None:
    activity = Activity(ActivitySpec(0, busy_ns=10 * S, calm_ns=30 * S, start_ns=0), random.Random(2))
    states = [activity.busy_at(t * S // 10) for t in range(20_000)]
    busy = sum(states) / len(states)
    switches = sum(a != b for a, b in itertools.pairwise(states))
    assert 0.1 < busy < 0.45 and switches > 20  # about a quarter of the time, in many spells


def test_each_kind_trades_and_the_population_conserves_every_asset() -> None:
    _, runner, steps = run(doc(momentum={"mean_interval": "1"}), 30)  # 12 wakes before its first signal
    kinds = {type(a).__name__: a for a in runner.agents}
    assert set(kinds) == {"InventoryMaker", "ValueTrader", "MomentumTrader", "NoiseTrader"}
    placed_by = {cmd.client_id for _, cmd, r in steps if isinstance(cmd, PlaceOrder) and r.reject is None}
    for lo in (1000, 2000, 3000, 4000):
        assert any(lo <= c < lo + 1000 for c in placed_by), lo
    assert any(isinstance(cmd, CancelOrder) for _, cmd, _ in steps)
    runner.venue.check_invariants()
    makers = [a for a in runner.agents if isinstance(a, InventoryMaker)]
    assert all(len(a._live) <= 2 * a.spec.levels for a in makers)


def test_latency_delays_a_decision() -> None:
    d = doc(maker={"latency_ms": 40, "count": 1}, value={"count": 1}, momentum={"count": 1}, noise={"count": 1})
    scenario, runner, steps = run(d, 3)
    maker = next(a for a in runner.agents if isinstance(a, InventoryMaker))
    assert maker.latency == 40_000_000
    first = min(at for at, cmd, _ in steps if getattr(cmd, "client_id", None) == 1000)
    assert first == scenario.start_ns + 40_000_000  # decided at the start, arrived 40 ms later


def test_per_agent_latency_is_drawn_from_the_seed() -> None:
    _, runner, _ = run(doc(), 0)
    drawn = [a.latency for a in runner.agents if isinstance(a, NoiseTrader)]
    assert min(drawn) >= 5_000_000 and max(drawn) <= 100_000_000 and len(set(drawn)) > 150
    _, again, _ = run(doc(), 0)
    assert drawn == [a.latency for a in again.agents if isinstance(a, NoiseTrader)]
    _, other, _ = run({**doc(), "seed": 32}, 0)
    assert drawn != [a.latency for a in other.agents if isinstance(a, NoiseTrader)]


def test_the_inventory_maker_stops_quoting_the_side_past_its_limit() -> None:
    d = doc(maker={"count": 1, "max_inventory": "0.001", "latency_ms": 0})
    _, runner, _ = run(d, 30)
    venue = runner.venue
    maker = next(a for a in runner.agents if isinstance(a, InventoryMaker))
    inst = venue.instruments[1]
    held = maker.inventory(venue, inst)
    assert held != 0  # a one-lot limit is reached in 30 s of this market
    maker.decide(venue, inst, venue.clock.now)  # what it would quote now
    sides = {cmd.side for cmd in maker._places}
    assert sides == ({"SELL"} if held >= 1 else {"BUY"})
    spec = maker.spec
    centre = (venue.books[1].best_bid() + venue.books[1].best_ask()) // 2  # type: ignore[operator]
    centre -= int_div(held * spec.skew, spec.max_inventory)  # the quotes lean against the inventory
    prices = sorted(inst.price_grid.parse(c.price or "")[0] or 0 for c in maker._places)
    best = prices[0] if held >= 1 else prices[-1]
    assert best == (centre - spec.spread // 2 + spec.spread if held >= 1 else centre - spec.spread // 2)


def test_momentum_and_value_traders_keep_their_state() -> None:
    _, runner, _ = run(doc(), 30)
    momentum = [a for a in runner.agents if isinstance(a, MomentumTrader)]
    assert all(len(a._mids) <= a.spec.long for a in momentum)
    value = [a for a in runner.agents if isinstance(a, ValueTrader)]
    assert len({id(a.fundamental) for a in value}) == 1  # one shared fundamental per entry
    assert sum(a._estimate is not None for a in value) > 40  # most woke in 30 s (mean interval 30 s)


def _state(sim: Simulation) -> list[Any]:
    venue = sim.venue
    totals = [[(a, b.total, b.hold) for a, b in acc.balances.items()] for acc in venue.accounts.values()]
    return [venue.clock.now, totals, venue.books[1].depth("BUY", 10), venue.books[1].depth("SELL", 10)]


def test_a_population_journals_and_snapshots(tmp_path: Any) -> None:
    scenario = parse_scenario(doc(), str(SCENARIOS / "population.json"))
    journal = tmp_path / "j.jsonl"
    sim = Simulation(scenario, clock="virtual", journal_path=str(journal))
    sim.advance(scenario.start_ns + 10 * S)
    saved = json.loads(json.dumps(sim.snapshot()))
    sim.advance(scenario.start_ns + 20 * S)
    sim.close()
    assert len(journal.read_bytes().splitlines()) > 1000  # every agent command is a journal record
    recovered = Simulation(scenario, clock="virtual", journal_path=str(journal), read_only=True)
    assert _state(recovered) == _state(sim)
    restored = Simulation(scenario, clock="virtual")
    restored.restore(saved)
    restored.advance(scenario.start_ns + 20 * S)
    assert _state(restored) == _state(sim)


@settings(max_examples=50, deadline=None)
@given(times=st.lists(st.integers(0, 400), min_size=1, max_size=30), seed=st.integers(0, 2**32))
def test_shared_paths_do_not_depend_on_who_asks_when(times: list[int], seed: int) -> None:
    """Agents of an entry ask the shared state at their own wakes: the path must be the same."""
    f_spec = FundamentalSpec(0, start=900, mean=1000, reversion=50_000_000, step=2, vol=3, every_ns=S, start_ns=0)
    a_spec = ActivitySpec(0, busy_ns=7 * S, calm_ns=11 * S, start_ns=0)
    asked_f, once_f = Fundamental(f_spec, random.Random(seed)), Fundamental(f_spec, random.Random(seed))
    asked_a, once_a = Activity(a_spec, random.Random(seed)), Activity(a_spec, random.Random(seed))
    for t in sorted(times):
        asked_f.value_at(t * S)
        asked_a.busy_at(t * S)
    end = max(times) * S
    assert asked_f.value_at(end) == once_f.value_at(end)
    assert asked_a.busy_at(end) == once_a.busy_at(end)


def test_a_population_too_fast_for_the_wall_clock_is_named_once_by_its_entry() -> None:
    d = doc(noise={"mean_interval": "0.05"})
    d["agents"].insert(0, d["agents"].pop(3))  # the population first: file index 0, agents 0-199
    scenario = parse_scenario(d, "pop.json")
    with pytest.raises(ScenarioError) as err:
        check_wall_clock(scenario)
    assert [p for _, p, _ in err.value.problems] == ["$.agents[0].mean_interval"]
    assert scenario.agent_path(200) == "$.agents[1]"  # the first maker, after the 200 noise traders
