"""A backtest runs through the runtime's simulation and journals in its one dialect (``--journal OUT``).

Its journal holds the scenario's commands (``scn``) and the harness's (``ext``: the strategy's orders,
the ``SetLatency`` around each, the clock moves that fire venue timers). A server restarts from it to
the backtest's final state, ``cefisim replay --from-journal`` gives the events the backtest applied,
and the report does not depend on whether a journal was written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cefisim.api.cli.backtest import backtest_command as main
from cefisim.api.cli.backtest import backtest_main, run_backtest
from cefisim.api.cli.backtest.backtest_command import load_strategy_class
from cefisim.api.cli.replay import ReplayStats, replay_main
from cefisim.api.formats.scenario import load_scenario
from cefisim.api.runtime.simulation import Simulation
from tests.api.cli.backtest.test_backtest import strip_wall
from tests.api.formats.scenario.replay_support import SCENARIOS
from tests.engine.builders import state_hash

S = 10**9


class EarlyBird:
    """Orders in ``on_start`` (before the scenario's start instant) and on a timer after that."""

    def on_start(self, ctx: Any) -> None:
        ctx.place_order("1", "BUY", "LIMIT", "0.01", price="29990.00", external_id="early")
        ctx.set_timer("sell", "0.5")

    def on_timer(self, ctx: Any, name: str) -> None:
        ctx.place_order("1", "SELL", "MARKET", "0.01")
        ctx.set_timer("sell", "0.5")


def _strategy(name: str) -> object:
    return EarlyBird() if name == "early" else load_strategy_class(name)()


def _backtest(
    monkeypatch: pytest.MonkeyPatch, scenario_path: Path, strategy: str, journal: Path | None, **options: Any
) -> tuple[dict[str, Any], tuple, str]:
    """The report, the final state and the digest of every event the run applied."""
    stats = ReplayStats()
    monkeypatch.setattr(main, "Simulation", lambda *a, **k: Simulation(*a, on_result=stats.result, **k))
    scenario = load_scenario(scenario_path)
    bt = run_backtest(scenario, _strategy(strategy), until_ns=scenario.start_ns + 20 * S, journal=journal, **options)
    return bt.report, state_hash(bt.harness.venue), f"sha256:{stats.digest.hexdigest()}"


CASES = [
    ("demo.json", "simple_mm", {}),
    ("demo.json", "simple_mm", {"latency_ns": 3_000_000}),
    ("demo.json", "early", {"latency_ns": 1_000_000}),  # ext records before the start instant's
    ("demo.json", "early", {}),
    ("cancel_race_latency.json", "early", {}),  # a scenario with nothing at its start
    ("recorded_busy.json", "simple_mm", {}),  # a latency drawn per command: journaled SetLatency
    ("halt_resume.json", "early", {"latency_ns": 2_000_000}),
]


@pytest.mark.parametrize(("name", "strategy", "options"), CASES)
def test_a_backtest_journal_restarts_a_server_and_replays_the_same_events(
    name: str, strategy: str, options: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    path, journal = SCENARIOS / name, tmp_path / "bt.jsonl"
    report, state, digest = _backtest(monkeypatch, path, strategy, journal, **options)
    plain, plain_state, plain_digest = _backtest(monkeypatch, path, strategy, None, **options)
    assert strip_wall(report) == strip_wall(plain)
    assert (state, digest) == (plain_state, plain_digest)
    records = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert {r[1] for r in records} == {"ext", "scn"}  # the strategy's commands and the scenario's

    assert replay_main([str(path), "--from-journal", str(journal), "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == digest
    kept = tmp_path / "server.jsonl"
    shutil.copy(journal, kept)
    server = Simulation(load_scenario(path), clock="virtual", journal_path=kept)
    assert state_hash(server.venue) == state
    server.close()
    assert kept.read_bytes() == journal.read_bytes()  # recovered whole: nothing cut or appended


def test_orders_sent_in_on_start_come_before_the_start_instant_in_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness runs the scenario's start instant after ``on_start``: its ext records come first."""
    journal = tmp_path / "bt.jsonl"
    _backtest(monkeypatch, SCENARIOS / "demo.json", "early", journal, latency_ns=1_000_000)
    records = [json.loads(line) for line in journal.read_text().splitlines()[1:4]]
    assert [(r[1], r[2]) for r in records] == [("ext", "latency"), ("ext", "place"), ("ext", "latency")]


def test_the_cli_report_is_the_same_with_and_without_journal(tmp_path: Path) -> None:
    args = ["demo", "--strategy", "simple_mm", "--until", "+20", "--latency-ms", "2", "--quiet"]
    reports = []
    for extra in ([], ["--journal", str(tmp_path / "j.jsonl")]):
        out = tmp_path / f"report{len(extra)}.json"
        assert backtest_main([*args, "--report", str(out), *extra]) == 0
        reports.append(strip_wall(json.loads(out.read_text())))
    assert reports[0] == reports[1]
    assert (tmp_path / "j.jsonl").read_text().startswith('{"clock":"virtual","format":"cefisim-journal/3"')


def test_a_journal_that_cannot_be_opened_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing" / "j.jsonl"
    assert backtest_main(["demo", "--strategy", "simple_mm", "--until", "+1", "--quiet", "--journal", str(target)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"cefisim backtest: {target}: ") and "Traceback" not in err


def test_venue_faults_events_are_journaled_but_change_nothing_the_backtest_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """A ``venue_faults`` event changes what a server's reads show, not the venue: the backtest's report
    is the one of the scenario without it (the record is no command), and its journal holds the
    record, which a restart checks."""
    doc = json.loads((SCENARIOS / "demo.json").read_text())
    plain_path, faulty_path = tmp_path / "plain.json", tmp_path / "faulty.json"
    plain_path.write_text(json.dumps(doc))
    doc["events"] = [*doc["events"], {"at": "+3", "type": "venue_faults", "read_lag_ms": 500}]
    faulty_path.write_text(json.dumps(doc))
    journal = tmp_path / "bt.jsonl"
    report, state, digest = _backtest(monkeypatch, faulty_path, "early", journal, latency_ns=1_000_000)
    plain, plain_state, plain_digest = _backtest(monkeypatch, plain_path, "early", None, latency_ns=1_000_000)
    # the same report but one command: the runner's closing clock move of the event's instant
    assert report["run"]["commands"] == plain["run"]["commands"] + 1
    report["run"]["commands"] = plain["run"]["commands"]
    assert {**strip_wall(report), "scenario": ""} == {**strip_wall(plain), "scenario": ""}
    assert (state, digest) == (plain_state, plain_digest)
    assert '"scn","faults.venue",[500,0,0]' in journal.read_text()
    assert replay_main([str(faulty_path), "--from-journal", str(journal), "--quiet"]) == 0
    assert capsys.readouterr().out.strip() == digest
    server = Simulation(load_scenario(faulty_path), clock="virtual", journal_path=journal)
    assert state_hash(server.venue) == state and server.faults.read_lag_ns == 500 * 10**6
    server.close()
