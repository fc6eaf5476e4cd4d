"""The journal is the truth: what was acknowledged survives every stop, in wall and virtual mode.

A record is one ``write`` to the operating system, made before its command applies, so a SIGKILL at any
instant leaves the journal as a byte prefix of what the run would have written. Cutting a complete
journal at random byte offsets is therefore a SIGKILL at random instants, without the processes:
every cut must recover, every external command in the prefix must be applied exactly once, and the
recovered journal must be a prefix of the uncut one (the rest of a torn scenario burst regenerated as
it was). ``tests/api/runtime/test_journal_kill.py`` kills real servers.
"""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest

from cefisim.api.formats.scenario import load_scenario, parse_scenario
from cefisim.api.runtime.simulation import JournalError, Simulation
from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.commands import CancelOrder, PaperFunds, PlaceOrder
from tests.api.conftest import scenario_doc
from tests.api.runtime.journal_lines import resealed

DEMO = Path(__file__).resolve().parents[3] / "scenarios" / "demo.json"
TICK_NS = 50_000_000


class FakeWall:
    """A wall clock the test moves (the server's ticker reads ``time.time_ns``)."""

    def __init__(self, start: int) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now


@pytest.fixture(autouse=True)
def _close_every_simulation(monkeypatch: pytest.MonkeyPatch):
    """Every simulation a test opens is closed at its end (its journal file handle)."""
    made: list[Simulation] = []
    init = Simulation.__init__

    def tracked(self: Simulation, *args, **kwargs) -> None:
        made.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(Simulation, "__init__", tracked)
    yield
    for sim in made:
        if hasattr(sim, "_journal"):
            sim.close()


def _objects(sim: Simulation) -> dict:
    return sim.snapshot()["objects"]


def _state(sim: Simulation) -> tuple:
    """Every order (status, fills), balance and the clock: cheaper than a snapshot, as telling here."""
    venue = sim.venue
    return (
        venue.clock.now,
        venue.next_order_id,
        venue.next_match_id,
        [
            (
                cid,
                [(o.id, o.status, o.executed) for o in c.orders.values()],
                sorted((a, b.total, b.hold) for a, b in c.balances.items()),
            )
            for cid, c in sorted(venue.accounts.items())
        ],
    )


def _ticks(sim: Simulation, wall: FakeWall, seconds: float) -> None:
    """What the server's ticker does every 50 ms, for ``seconds`` of wall time."""
    for _ in range(int(seconds * NS_PER_SECOND) // TICK_NS):
        wall.now += TICK_NS
        for _ in sim.tick():
            pass


def _ext_ids(sim: Simulation, client_id: int) -> list[str]:
    return sorted(o.external_id for o in sim.venue.accounts[client_id].orders.values() if o.external_id)


def test_wall_clock_restarts_after_idle_and_again_and_again(tmp_path: Path) -> None:
    """The issue's first case: three orders, 7 s idle, a clean stop, a start on the same journal;
    then more idle, more orders and more restarts, each one back to the state it stopped in."""
    scenario = load_scenario(DEMO)
    path = tmp_path / "wall.jsonl"
    wall = FakeWall(1_800_000_000 * NS_PER_SECOND)
    sim = Simulation(scenario, clock="wall", journal_path=path, wall_ns=wall)
    placed = []
    for round_ in range(4):
        for i in range(3):
            ext = f"r{round_}-{i}"
            result = sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.01", "29500.00", external_id=ext))
            assert result.ok
            placed.append(ext)
            _ticks(sim, wall, 0.5)
        sim.submit(CancelOrder(100, placed[-1]))
        _ticks(sim, wall, 7 if round_ % 2 == 0 else 25 * 60)  # idle: seven seconds, or 25 minutes
        before = _objects(sim)
        sim.close()
        wall.now += 3 * NS_PER_SECOND  # the server is down for a while
        sim = Simulation(scenario, clock="wall", journal_path=path, wall_ns=wall)
        assert _objects(sim) == before
        assert _ext_ids(sim, 100) == sorted(placed)
        assert sim.venue.accounts[100].by_external[placed[-1]].status == "CANCELED"
    sim.close()


def test_an_idle_wall_clock_server_journals_nothing(tmp_path: Path) -> None:
    scenario = parse_scenario(scenario_doc(), "quiet.json")  # no agents
    path = tmp_path / "idle.jsonl"
    wall = FakeWall(1_800_000_000 * NS_PER_SECOND)
    sim = Simulation(scenario, clock="wall", journal_path=path, wall_ns=wall)
    size = path.stat().st_size
    _ticks(sim, wall, 30 * 60 - 1)  # half an hour of ticks, no housekeeping due yet
    assert path.stat().st_size == size
    sim.close()


def _long_run(path: Path) -> Simulation:
    """A virtual-clock demo run: orders, cancels and funds between slices of long advances (the
    control plane's sliced advance, with requests let in between two slices)."""
    sim = Simulation(load_scenario(DEMO), clock="virtual", journal_path=path)
    rng = random.Random(5)
    n = 0
    for _ in range(3):
        target = sim.venue.clock.now + 1200 * NS_PER_SECOND
        for _ in sim.advance_slices(target, max_turns=15):
            n += 1
            what = rng.random()
            if what < 0.6:
                sim.submit(
                    PlaceOrder(100, 1, "BUY", "LIMIT", "0.01", f"{rng.randint(29000, 29900)}.00", external_id=f"o{n}")
                )
            elif what < 0.8 and n > 1:
                sim.submit(CancelOrder(100, f"o{rng.randint(1, n - 1)}"))
            else:
                sim.submit(PaperFunds(101, 2, "1.00", False))
        sim.finish_advance(target)
    return sim


def _ext_records(data: bytes) -> int:
    """The external records among the complete lines of ``data`` (a torn last line is not one)."""
    lines = data.split(b"\n")[1:-1]
    return sum(1 for line in lines if orjson.loads(line)[1] == "ext" and "." not in orjson.loads(line)[2])


@pytest.mark.parametrize("seed", [1, 2])
def test_a_kill_at_any_instant_recovers_every_acknowledged_command_once(tmp_path: Path, seed: int) -> None:
    full_path = tmp_path / "full.jsonl"
    live = _long_run(full_path)
    live.close()
    full = full_path.read_bytes()
    header_end = full.index(b"\n") + 1
    assert _ext_records(full) > 50
    rng = random.Random(seed)
    cuts = [*sorted(rng.sample(range(header_end, len(full)), 8)), len(full) - 1]
    scenario = load_scenario(DEMO)
    for cut in cuts:
        path = tmp_path / f"cut-{cut}.jsonl"
        path.write_bytes(full[:cut])
        complete = full[: full.rindex(b"\n", 0, cut) + 1]
        recovered = Simulation(scenario, clock="virtual", journal_path=path)
        recovered.close()
        data = path.read_bytes()
        # the rest of a torn burst is regenerated as the live run wrote it: the file is a prefix of the
        # uncut journal, at least as long as what survived the kill
        assert full.startswith(data) and len(data) >= len(complete), cut
        # every external command that reached the journal is applied, once
        assert recovered.recovered_commands == _ext_records(complete)
        again = Simulation(scenario, clock="virtual", journal_path=path)
        assert _state(again) == _state(recovered), cut
        assert path.read_bytes() == data  # a clean journal is not rewritten
        again.close()
    assert _objects(Simulation(scenario, clock="virtual", journal_path=full_path)) == _objects(live)


def test_a_journal_cut_inside_a_scenario_burst_recovers_with_the_burst_regenerated(tmp_path: Path) -> None:
    """The issue's second case: a market maker's re-quote burst (many records at one nanosecond) cut at
    a line boundary and mid-line."""
    full_path = tmp_path / "full.jsonl"
    sim = Simulation(load_scenario(DEMO), clock="virtual", journal_path=full_path)
    sim.advance(sim.venue.clock.now + 60 * NS_PER_SECOND)
    sim.close()
    full = full_path.read_bytes()
    lines = full.split(b"\n")
    # the longest run of records at one instant
    times = [orjson.loads(line)[0] for line in lines[1:-1]]
    best = max(range(len(times)), key=lambda i: times[i:].count(times[i]) if times[i - 1 : i] != [times[i]] else 0)
    assert times.count(times[best]) >= 10
    start = sum(len(line) + 1 for line in lines[: best + 1])
    for cut in (start + 3 * (len(lines[best + 1]) + 1), start + 5 * (len(lines[best + 1]) + 1) + 7):
        path = tmp_path / f"burst-{cut}.jsonl"
        path.write_bytes(full[:cut])
        Simulation(load_scenario(DEMO), clock="virtual", journal_path=path).close()
        data = path.read_bytes()
        assert full.startswith(data) and len(data) > cut


def test_a_torn_header_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    """The issue's third case: only the first 40 bytes of the header."""
    path = tmp_path / "torn.jsonl"
    sim = Simulation(load_scenario(DEMO), clock="virtual", journal_path=path)
    sim.close()
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(JournalError, match=r"the header \(byte offset 0\): incomplete"):
        Simulation(load_scenario(DEMO), clock="virtual", journal_path=path)
    assert len(path.read_bytes()) == 40


@pytest.mark.parametrize("damage", ["middle", "regenerated", "another-scenario"])
def test_a_journal_that_does_not_replay_is_never_modified(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "j.jsonl"
    sim = Simulation(load_scenario(DEMO), clock="virtual", journal_path=path)
    sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.01", "29500.00"))
    sim.advance(sim.venue.clock.now + 30 * NS_PER_SECOND)
    sim.close()
    lines = path.read_bytes().split(b"\n")
    scenario = load_scenario(DEMO)
    if damage == "middle":
        lines[3] = b"garbage" + lines[3][7:]
    elif damage == "regenerated":  # a scenario record the scenario does not make, sealed as if written
        records = [orjson.loads(line)[:4] for line in lines[1:-1]]
        records[-2][0] += 1
        lines = [*resealed(lines[0], records).split(b"\n")[:-1], b""]
    else:
        scenario = parse_scenario(scenario_doc(), "other.json")
    damaged = b"\n".join(lines) + b"partial last rec"  # a torn tail too: still not cut back
    path.write_bytes(damaged)
    with pytest.raises(JournalError, match=r"record \d+ \(byte offset \d+\)|another scenario"):
        Simulation(scenario, clock="virtual", journal_path=path)
    assert path.read_bytes() == damaged


def test_the_server_refuses_a_torn_header_with_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    from cefisim.api.cli.main import main

    path = tmp_path / "torn.jsonl"
    Simulation(load_scenario(DEMO), clock="virtual", journal_path=path).close()
    path.write_bytes(path.read_bytes()[:40])
    assert main(["serve", "--scenario", str(DEMO), "--journal", str(path), "--clock", "virtual"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"cefisim: journal {path}: the header (byte offset 0):"), err
    assert len(path.read_bytes()) == 40
