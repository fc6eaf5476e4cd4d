"""Recovery never depends on when a tick fell: random schedules on a wall clock the test moves.

A server on the wall clock runs the scenario's turns from its ticker, between requests, at whatever
instant the ticker happens to wake; a turn may submit nothing (a market maker whose quotes did not
change), and then leaves no record. Whatever the schedule — requests between ticks, idle ticks, a tick
and a request at the same nanosecond, requests between the slices of a long catch-up, the wall clock
stepping back, a venue fault set between turns — and however the server stops (closed, killed, killed
in the middle of a write), the journal must restore every acknowledged command three ways: a server
started on it, ``cefisim replay --from-journal`` (the same events, in order) and ``cefisim journal
state`` (the same state digest). Every shipped scenario, and a market maker quoting a fixed price
(idle after its first quote). ``tests/api/runtime/test_journal_signals.py`` stops real servers.
"""

from __future__ import annotations

import io
import tempfile
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cefisim.api.cli.journal_tools.journal_command import journal_main
from cefisim.api.cli.journal_tools.record_state import digest, facts
from cefisim.api.cli.replay import ReplayStats, replay_main
from cefisim.api.formats.scenario import Scenario, load_scenario, parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine import queries
from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.commands import CancelOrder, PaperFunds, PlaceOrder
from tests.api.conftest import scenario_doc

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted(p.stem for p in (ROOT / "scenarios").glob("*.json"))
#: the wall clock starts an hour after the scenario's own start (the scenario is moved to start then):
#: not further, as a population's price processes are computed from its unmoved start
WALL_LATER_NS = 3_600 * NS_PER_SECOND


def fixed_price_doc() -> dict[str, Any]:
    """A market maker that quotes one fixed price: after its first quote every turn submits nothing."""
    doc = scenario_doc()
    doc["clients"].append({"id": "300", "mnemonic": "mm", "balances": {"BTC": "100", "USD": "10000000"}})
    doc["agents"] = [
        {
            "type": "market_maker",
            "client": "mm",
            "instrument": "BTC-USD",
            "interval": "1",
            "levels": 2,
            "spread": "2.00",
            "spacing": "1.00",
            "qty": "0.1",
            "prices": ["30000.00"],
            "every": "5",
        }
    ]
    return doc


class Wall:
    """The wall clock the simulation reads; the test moves it (forward, or back)."""

    def __init__(self, start_ns: int) -> None:
        self.now = start_ns

    def __call__(self) -> int:
        return self.now


WAITS = (0, 0, 1, 50, 700, 2600, 5000)  # milliseconds of wall time before a step: 0 is the same instant


def schedules(waits: tuple[int, ...] = WAITS, longest: int = 14) -> st.SearchStrategy[list[tuple[str, int, int]]]:
    """Schedules of steps ``(what, milliseconds of wall time before it, a number the step uses)``."""
    step = st.tuples(
        st.sampled_from(["tick", "ticks", "order", "market", "cancel", "funds", "sliced", "back", "faults"]),
        st.sampled_from(waits),
        st.integers(0, 7),
    )
    return st.lists(step, min_size=1, max_size=longest)


STOP = st.sampled_from(["close", "kill", "kill-torn"])


class Live:
    """A wall-clock simulation driven as the server drives it, recording every acknowledged command."""

    def __init__(self, scenario: Scenario, path: Path) -> None:
        self.wall = Wall(scenario.start_ns + WALL_LATER_NS)
        self.stats = ReplayStats()
        self.sim = Simulation(scenario, clock="wall", journal_path=path, wall_ns=self.wall, on_result=self.stats.result)
        self.client = next(iter(scenario.clients))
        self.instrument = next(iter(scenario.instruments))
        self.placed: list[str] = []
        self.acknowledged = 0

    def tick(self) -> None:
        for _ in self.sim.tick():
            pass

    def step(self, what: str, wait_ms: int, n: int) -> None:
        sim, wall = self.sim, self.wall
        wall.now += wait_ms * 1_000_000
        if what == "tick":
            self.tick()
        elif what == "ticks":
            for _ in range(n + 1):
                wall.now += 50_000_000
                self.tick()
        elif what == "back":  # the wall clock steps back (an adjustment); engine time never does
            wall.now -= (n + 1) * 900_000_000
            self.tick()
        elif what == "sliced":  # a late tick: its catch-up in small slices, requests between the first
            wall.now += NS_PER_SECOND // 2
            now = sim.now_ns()
            for k, _ in enumerate(sim.advance_slices(now, max_turns=1 + n % 3)):
                if k < 6 and k % 2 == 0:
                    self.request("order", n + k)
            if sim.timers_due(now):
                sim.finish_advance(now)
        elif what == "faults":  # a side-state record between two turns
            sim.set_venue_faults(0, n * 10, 0)
        else:
            self.request(what, n)

    def request(self, what: str, n: int) -> None:
        sim = self.sim
        inst = queries.instrument(sim.venue, self.instrument)
        assert inst is not None
        book = queries.book(sim.venue, inst.id)
        qty = inst.qty_grid.format(inst.min_qty)
        if what in ("order", "market"):
            ext = f"e{len(self.placed)}"
            best = book.best_bid()
            if what == "market" or best is None:
                cmd = PlaceOrder(self.client, inst.id, "SELL" if n % 2 else "BUY", "MARKET", qty, None, external_id=ext)
            else:
                cmd = PlaceOrder(
                    self.client, inst.id, "BUY", "LIMIT", qty, inst.price_grid.format(best), external_id=ext
                )
            sim.submit(cmd)
            self.placed.append(ext)
        elif what == "cancel":
            if not self.placed:
                return
            sim.submit(CancelOrder(self.client, self.placed[n % len(self.placed)]))
        else:
            sim.submit(PaperFunds(self.client, inst.quote.id, "1", False))
        self.acknowledged += 1


def _restored(scenario: Scenario, scenario_file: Path, path: Path, live: Live) -> None:
    """Serve, replay --from-journal and journal state all give back what the live run acknowledged."""
    want = digest(facts(live.sim.venue, live.sim.faults))
    # `cefisim journal state` and `cefisim replay --from-journal`: read-only, so first
    out = io.StringIO()
    with redirect_stdout(out):
        assert journal_main(["state", str(path), "--scenario", str(scenario_file)]) == 0
    assert f"digest    {want}" in out.getvalue()
    out = io.StringIO()
    with redirect_stdout(out):
        assert replay_main([str(scenario_file), "--from-journal", str(path), "--quiet"]) == 0
    assert out.getvalue().strip() == f"sha256:{live.stats.digest.hexdigest()}"
    # `cefisim serve --journal`: the server's recovery, which may cut a torn tail
    server = Simulation(scenario, clock="wall", journal_path=path, wall_ns=live.wall)
    try:
        assert digest(facts(server.venue, server.faults)) == want
        assert server.recovered_commands >= live.acknowledged
    finally:
        server.close()


def _run(scenario: Scenario, scenario_file: Path, schedule: list[tuple[str, int, int]], stop: str) -> None:
    with tempfile.TemporaryDirectory(prefix="cefisim-schedule-") as scratch:
        path = Path(scratch) / "j.jsonl"
        live = Live(scenario, path)
        try:
            for what, wait_ms, n in schedule:
                live.step(what, wait_ms, n)
            if stop == "close":  # SIGINT / SIGTERM: the server closes its journal
                live.sim.close()
            elif stop == "kill-torn":  # SIGKILL in the middle of writing a record nobody was answered for
                with open(path, "ab") as f:
                    f.write(b'[1800000000000000000,"ext","place",[100,')
            _restored(scenario, scenario_file, path, live)
        finally:
            live.sim.close()


_SETTINGS = settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_scenario_restores_whatever_the_schedule(name: str) -> None:
    path = ROOT / "scenarios" / f"{name}.json"
    scenario = load_scenario(path)

    @_SETTINGS
    @given(schedule=schedules(WAITS), stop=STOP)
    def restores(schedule: list[tuple[str, int, int]], stop: str) -> None:
        _run(scenario, path, schedule, stop)

    restores()


@settings(_SETTINGS, max_examples=40)
@given(schedule=schedules(WAITS), stop=STOP)
def test_a_fixed_price_maker_restores_whatever_the_schedule(
    tmp_path_factory: pytest.TempPathFactory, schedule: list[tuple[str, int, int]], stop: str
) -> None:
    doc = fixed_price_doc()
    file = tmp_path_factory.mktemp("fixed") / "fixed.json"
    file.write_bytes(orjson.dumps(doc))
    _run(parse_scenario(doc, str(file)), file, schedule, stop)


def test_the_issue_case_an_order_after_an_idle_turn_restores() -> None:
    """6.5 s of ticks on the fixed-price maker (its turns at 1 s, 2 s, ... submit nothing), one order
    (no scenario turn due then: the tick took it), a clean stop: the journal restores."""
    with tempfile.TemporaryDirectory() as scratch:
        file = Path(scratch) / "fixed.json"
        file.write_bytes(orjson.dumps(fixed_price_doc()))
        scenario = load_scenario(file)
        _run(scenario, file, [("ticks", 0, 7)] * 16 + [("order", 0, 0)], "close")


@pytest.mark.parametrize(("name", "seconds"), [("population", 20), ("demo", 600)])
def test_an_advance_journals_the_same_whatever_its_slices(name: str, seconds: int, tmp_path: Path) -> None:
    """A slice ends on a complete instant without a clock move of its own (``ScenarioRunner.run``):
    the journal of an advance in slices of 1, 7 or 25 turns is byte for byte the journal of one run.
    Both scenarios have turns that submit nothing, where a slice used to journal a clock move."""
    journals = []
    for turns in (None, 1, 7, 25):
        path = tmp_path / f"{turns}.jsonl"
        sim = Simulation(load_scenario(ROOT / "scenarios" / f"{name}.json"), clock="virtual", journal_path=path)
        target = sim.now_ns() + seconds * NS_PER_SECOND
        if turns is None:
            sim.run_scenario(target, close=False)
        else:
            slices = sum(1 for _ in sim.advance_slices(target, max_turns=turns))
            assert slices > 1
        sim.finish_advance(target)
        sim.close()
        journals.append(path.read_bytes())
    assert journals[1:] == journals[:1] * 3
