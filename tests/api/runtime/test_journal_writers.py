"""One journal dialect: whatever wrote a journal, a server restarts from it and `replay --from-journal`
replays it to the same state and events (``api/runtime/journal_file.py``, docs/journal.md).

The writers: ``cefisim serve --journal`` (a Simulation on a journal path, with requests between the
scenario's commands), ``cefisim replay --journal`` (a Simulation with a fresh journal, nothing but the
scenario), and journals written by the ``cefisim replay`` of before, which held the scenario's settings
as their first records (``fixtures/replay_journal_with_settings.jsonl``, written by it).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from cefisim.api.cli.replay import replay_main, run
from cefisim.api.formats.scenario import load_scenario, parse_scenario
from cefisim.api.runtime.journal_file import JournalError, JournalFile, JournalWriteError, record_json
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine.commands import PlaceOrder, SetLatency
from tests.api.conftest import scenario_doc
from tests.api.formats.scenario.replay_support import SCENARIOS, SHIPPED
from tests.api.formats.scenario.test_scenario_shipped import GOLDEN
from tests.api.runtime.journal_lines import as_format
from tests.engine.builders import state_hash

FIXTURES = Path(__file__).parent / "fixtures"
MS = 10**6


def _restart(scenario_path: Path, journal: Path) -> Simulation:
    return Simulation(load_scenario(scenario_path), clock="virtual", journal_path=journal)


def _from_journal(scenario_path: Path, journal: Path, capsys: pytest.CaptureFixture) -> str:
    assert replay_main([str(scenario_path), "--from-journal", str(journal), "--quiet"]) == 0
    return capsys.readouterr().out.strip()


@pytest.mark.parametrize("name", SHIPPED)
def test_a_replay_journal_restarts_a_server_and_replays(name: str, tmp_path: Path, capsys) -> None:
    """``replay --journal``: a server restarts from it to the replay's state and goes on with it;
    ``--from-journal`` gives the pinned digest. (A scenario with settings failed both before.)"""
    path, journal = SCENARIOS / name, tmp_path / "j.jsonl"
    venue, stats = run(load_scenario(path), load_scenario(path).end_ns, journal)
    assert f"sha256:{stats.digest.hexdigest()}" == f"sha256:{GOLDEN[name]}"
    assert _from_journal(path, journal, capsys) == f"sha256:{GOLDEN[name]}"
    server = _restart(path, journal)
    assert state_hash(server.venue) == state_hash(venue)
    client = next(iter(server.venue.clients))
    server.submit(PlaceOrder(client, next(iter(server.venue.instruments)), "BUY", "MARKET", "1"))
    server.advance(server.now_ns() + 5 * 10**9)
    live = state_hash(server.venue)
    server.close()
    again = _restart(path, journal)
    assert state_hash(again.venue) == live
    again.close()


def test_a_server_journal_restarts_and_replays_to_the_live_events(tmp_path: Path, capsys) -> None:
    """``serve --journal``: requests between the scenario's commands, a restart and --from-journal."""
    from cefisim.api.cli.replay import ReplayStats

    path, journal = SCENARIOS / "cancel_race_latency.json", tmp_path / "j.jsonl"
    live = ReplayStats()
    sim = Simulation(load_scenario(path), clock="virtual", journal_path=journal, on_result=live.result)
    sim.advance(sim.now_ns() + 1_500 * MS)
    sim.submit(PlaceOrder(101, 1, "SELL", "LIMIT", "0.5", "30000.00"))
    sim.advance(sim.now_ns() + 10 * 10**9)
    state = state_hash(sim.venue)
    sim.close()
    assert live.trades
    assert _from_journal(path, journal, capsys) == f"sha256:{live.digest.hexdigest()}"
    again = _restart(path, journal)
    assert state_hash(again.venue) == state
    again.close()


def test_a_journal_of_the_old_replay_with_settings_restores(tmp_path: Path, capsys) -> None:
    """The ``cefisim replay --journal`` of before wrote the scenario's settings as its first ``scn``
    records; recovery passes over them: the same events, a server goes on with it, and its restart
    agrees. Without the rule, the record is one the scenario does not regenerate."""
    path, journal = SCENARIOS / "cancel_race_latency.json", tmp_path / "old.jsonl"
    shutil.copy(FIXTURES / "replay_journal_with_settings.jsonl", journal)
    assert b'"scn","latency",[0,0,50000000]' in journal.read_bytes().splitlines()[1]
    assert _from_journal(path, journal, capsys) == f"sha256:{GOLDEN['cancel_race_latency.json']}"
    venue, _ = run(load_scenario(path), load_scenario(path).end_ns)
    server = _restart(path, journal)
    assert state_hash(server.venue) == state_hash(venue)
    server.submit(PlaceOrder(101, 1, "SELL", "MARKET", "0.1"))
    live = state_hash(server.venue)
    server.close()
    again = _restart(path, journal)
    assert state_hash(again.venue) == live
    again.close()


def _settings_doc() -> dict:
    return scenario_doc(
        end="+2",
        settings={"latency": {"cancel_ms": 5}, "settlement_delay_ms": 100},
        events=[{"at": "+1", "type": "latency", "cancel_ms": 0}],
    )


def test_a_journal_with_part_of_the_settings_is_refused(tmp_path: Path) -> None:
    scenario = parse_scenario(_settings_doc(), "s.json")
    journal = tmp_path / "j.jsonl"
    run(scenario, scenario.end_ns, journal)
    as_format(journal, "cefisim-journal/2")  # the older cefisim replay that wrote the settings wrote /2
    header, *records = journal.read_bytes().splitlines(keepends=True)
    first = record_json(scenario.start_ns, "scn", SetLatency(0, 0, 5 * MS)) + b"\n"
    journal.write_bytes(header + first + b"".join(records))
    with pytest.raises(
        JournalError, match=rf"record 2 \(byte offset {len(header) + len(first)}\): .* settlement_delay is missing"
    ):
        Simulation(scenario, clock="virtual", journal_path=journal)


def test_a_first_event_like_the_settings_reads_as_todays_journal(tmp_path: Path) -> None:
    """A scenario whose first event at its start repeats its first setting: its journal starts like one
    of the old replay; it is read as one of today's (the event's record is the scenario's own)."""
    doc = _settings_doc()
    doc["events"] = [{"at": "+0", "type": "latency", "cancel_ms": 5}, *doc["events"]]
    scenario = parse_scenario(doc, "s.json")
    journal = tmp_path / "j.jsonl"
    venue, _ = run(scenario, scenario.end_ns, journal)
    assert orjson.loads(journal.read_bytes().splitlines()[1])[2] == "latency"
    server = Simulation(scenario, clock="virtual", journal_path=journal)
    assert state_hash(server.venue) == state_hash(venue)
    server.close()


@contextlib.contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """Writes beyond ``limit`` bytes of a file fail (EFBIG) instead of killing the process (SIGXFSZ
    ignored). Only around the writes under test: the limit holds for every file of the process,
    pytest's own output too."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


@pytest.mark.parametrize("durable", [True, False])
def test_a_failed_write_is_cut_back_to_the_last_whole_record(tmp_path: Path, durable: bool) -> None:
    """Durable (the server) or buffered (an offline run): a record the file cannot take in full is
    cut back, so the file ends with a whole record, and the error says the write failed."""
    path = tmp_path / "j.jsonl"
    journal = JournalFile.create(path, b'{"format":"cefisim-journal/2"}\n', durable)
    record = record_json(1, "ext", SetLatency(0, 0, 0))
    line = record + b"\n"
    whole = len(b'{"format":"cefisim-journal/2"}\n') + 3 * len(line)

    def write_five_and_close() -> None:
        for _ in range(5):
            journal.append_records([record])
        journal.close()

    with file_size_limit(whole + len(line) // 2), pytest.raises(JournalWriteError, match="File too large"):
        write_five_and_close()
    journal.close()
    assert path.read_bytes().endswith(line)
    assert os.path.getsize(path) == whole


def test_replay_says_when_its_journal_cannot_be_written(tmp_path: Path, capsys) -> None:
    out = tmp_path / "j.jsonl"
    with file_size_limit(4096):
        status = replay_main([str(SCENARIOS / "busy_market.json"), "--journal", str(out), "--quiet"])
    assert status == 1
    assert "write failed: File too large" in capsys.readouterr().err
    assert out.read_bytes().endswith(b"\n")
