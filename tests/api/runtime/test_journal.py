"""The command journal: written before each command applies, replayed on start, damage handled."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import JournalError, JournalWriteError, Simulation
from cefisim.engine.commands import CancelOrder, PlaceOrder, SetLatency
from tests.api.conftest import journal_on_a_full_disk, scenario_doc


def _scenario(**overrides):
    return parse_scenario(scenario_doc(**overrides), "journal-test.json")


def _drive(sim: Simulation) -> None:
    sim.submit(PlaceOrder(101, 1, "SELL", "LIMIT", "2", "50000.00", external_id="s1"))
    sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.5", "50000.00"))
    sim.submit(SetLatency(cancel_ns=5_000_000))
    sim.submit(CancelOrder(101, "s1"))
    sim.advance(sim.venue.clock.now + 1_000_000_000)
    sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "49000.00"))


@pytest.fixture
def sims():
    made: list[Simulation] = []

    def make(**kwargs) -> Simulation:
        made.append(Simulation(kwargs.pop("scenario", None) or _scenario(), clock="virtual", **kwargs))
        return made[-1]

    yield make
    for sim in made:
        sim.close()


def test_restart_rebuilds_the_same_state(tmp_path: Path, sims) -> None:
    path = tmp_path / "j.jsonl"
    first = sims(journal_path=path)
    _drive(first)
    first.close()
    second = sims(journal_path=path)
    assert second.recovered_commands == 6
    assert second.snapshot()["objects"] == first.snapshot()["objects"]
    # and it keeps appending: a third start sees the commands of both runs
    second.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "48000.00"))
    second.close()
    third = sims(journal_path=path)
    assert third.snapshot()["objects"] == second.snapshot()["objects"]


def test_journal_of_another_scenario_is_refused(tmp_path: Path, sims) -> None:
    path = tmp_path / "j.jsonl"
    _drive(sims(journal_path=path))
    with pytest.raises(JournalError, match="another scenario"):
        sims(scenario=_scenario(seed=8), journal_path=path)


def test_torn_last_record_is_cut(tmp_path: Path, caplog: pytest.LogCaptureFixture, sims) -> None:
    path = tmp_path / "j.jsonl"
    first = sims(journal_path=path)
    _drive(first)
    first.close()
    expected = first.snapshot()["objects"]
    with open(path, "ab") as f:
        f.write(b'{"at": 17, "src": "ext", "cmd": {"kind": "pla')
    with caplog.at_level(logging.WARNING, logger="cefisim.sim"):
        second = sims(journal_path=path)
    assert "incomplete last record" in caplog.text
    assert second.snapshot()["objects"] == expected
    assert path.read_bytes().endswith(b"\n")


def test_corruption_in_the_middle_refuses_to_start_naming_the_offset(tmp_path: Path, sims) -> None:
    path = tmp_path / "j.jsonl"
    first = sims(journal_path=path)
    _drive(first)
    first.close()
    lines = path.read_bytes().split(b"\n")
    offset = len(lines[0]) + 1 + len(lines[1]) + 1
    lines[2] = b"garbage" + lines[2][7:]
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(JournalError, match=f"byte offset {offset}"):
        sims(journal_path=path)


def test_unwritable_journal_refuses_the_command_and_changes_nothing(tmp_path: Path, sims) -> None:
    sim = sims(journal_path=tmp_path / "j.jsonl")
    before = sim.snapshot()["objects"]
    journal_on_a_full_disk(sim)  # every write fails: no space left on device
    with pytest.raises(JournalWriteError):
        sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "49000.00"))
    assert sim.snapshot()["objects"] == before


def test_a_scenario_command_the_journal_cannot_take_is_not_applied(tmp_path: Path, sims) -> None:
    """The scenario's agents submit through the runtime too: journaled first, or not applied."""
    from cefisim.api.formats.scenario import load_scenario
    from tests.engine.builders import state_hash

    demo = Path(__file__).resolve().parents[3] / "scenarios" / "demo.json"
    sim = sims(scenario=load_scenario(demo), journal_path=tmp_path / "j.jsonl")
    venue = sim.venue
    before = (venue.clock.now, venue.next_order_id, state_hash(venue))
    assert sim.runner.next_time() is not None and venue.next_order_id > 1  # the agents quote and act again
    journal_on_a_full_disk(sim)  # every write fails: no space left on device
    with pytest.raises(JournalWriteError):
        sim.advance(venue.clock.now + 10 * 10**9)
    assert (venue.clock.now, venue.next_order_id, state_hash(venue)) == before


def test_a_server_journal_replays_offline_to_the_same_events(tmp_path: Path, sims, capsys) -> None:
    from cefisim.api.cli.replay import ReplayStats, replay_main
    from cefisim.api.formats.scenario import load_scenario

    demo = Path(__file__).resolve().parents[3] / "scenarios" / "demo.json"
    live = ReplayStats()
    path = tmp_path / "server.jsonl"
    sim = sims(scenario=load_scenario(demo), journal_path=path, on_result=live.result)
    sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.5", "30001.00"))
    sim.advance(sim.venue.clock.now + 30 * 10**9)  # the agents trade meanwhile
    sim.submit(PlaceOrder(101, 1, "SELL", "MARKET", "0.25"))
    sim.advance(sim.venue.clock.now + 30 * 10**9)
    sim.close()
    assert live.trades, "the scenario did not trade"
    assert replay_main([str(demo), "--from-journal", str(path), "--quiet"]) == 0
    assert capsys.readouterr().out == f"sha256:{live.digest.hexdigest()}\n"
