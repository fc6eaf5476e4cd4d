"""`cefisim replay`: byte-identical journals, a stable summary, problems instead of tracebacks."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from cefisim.api.cli.replay import replay_main, run
from cefisim.api.formats.scenario import load_scenario
from cefisim.api.formats.scenario.shipped import shipped_names
from cefisim.api.runtime.journal_file import JOURNAL_FORMAT
from cefisim.engine.journal import event_digest, from_record
from tests.api.formats.scenario.replay_support import SCENARIOS, SHIPPED
from tests.api.formats.scenario.test_scenario_shipped import GOLDEN
from tests.api.runtime.journal_lines import records


def test_two_runs_write_identical_journals_and_summaries(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    outs = []
    for name in ("a.jsonl", "b.jsonl"):
        assert replay_main([str(SCENARIOS / "flash_crash.json"), "--journal", str(tmp_path / name)]) == 0
        outs.append(capsys.readouterr())
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert outs[0].out == outs[1].out
    lines = outs[0].out.splitlines()
    assert lines[0] == f"scenario  {SCENARIOS / 'flash_crash.json'}"
    assert any(line.startswith("volume    BTC-USD  ") for line in lines)
    assert any(line.startswith("book      BTC-USD  ACTIVE  bids ") for line in lines)
    assert lines[-1] == f"digest    sha256:{GOLDEN['flash_crash.json']}"
    assert outs[0].err.startswith("wall ")  # not a terminal: no progress line, only the timing
    header, first = map(orjson.loads, (tmp_path / "a.jsonl").read_bytes().splitlines()[:2])
    assert header["format"] == JOURNAL_FORMAT and header["clock"] == "virtual"
    assert first[1:3] == ["scn", "place"]


@pytest.mark.parametrize("name", ["flash_crash.json", "self_trade.json"])
def test_a_replay_journal_reads_back_with_from_journal(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """``replay FILE --journal OUT`` writes the server's journal format: ``--from-journal OUT`` rebuilds the
    run from it, regenerating and checking every record, to the same event digest."""
    out = tmp_path / "run.jsonl"
    assert replay_main([str(SCENARIOS / name), "--journal", str(out), "--quiet"]) == 0
    written = out.read_bytes()
    assert replay_main([str(SCENARIOS / name), "--from-journal", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out == f"sha256:{GOLDEN[name]}\n" * 2
    assert out.read_bytes() == written  # an offline replay never writes


@pytest.mark.parametrize("name", SHIPPED)
def test_the_journal_replays_to_the_same_events(name: str, tmp_path: Path) -> None:
    """Feeding the written journal to a fresh venue gives the very same events (the persistence contract)."""
    scenario = load_scenario(SCENARIOS / name)
    _, stats = run(scenario, scenario.end_ns, tmp_path / "j.jsonl")
    venue = scenario.build_venue()
    digest = event_digest([])
    written = records(tmp_path / "j.jsonl")
    assert len(written) == stats.commands
    for record in written:
        at, _, cmd = from_record(record)
        event_digest(venue.submit(cmd, at=at).events, digest)
    assert digest.hexdigest() == stats.digest.hexdigest() == GOLDEN[name]


def test_quiet_prints_the_digest_only(capsys: pytest.CaptureFixture) -> None:
    assert replay_main([str(SCENARIOS / "self_trade.json"), "--quiet"]) == 0
    out = capsys.readouterr()
    assert out.out == f"sha256:{GOLDEN['self_trade.json']}\n" and out.err == ""


def test_until(capsys: pytest.CaptureFixture) -> None:
    assert replay_main([str(SCENARIOS / "halt_resume.json"), "--until", "+10"]) == 0
    out = capsys.readouterr().out
    assert "-> 2026-11-02T09:00:10Z (10 s)" in out and "trades    0" in out
    assert replay_main([str(SCENARIOS / "halt_resume.json"), "--until", "2026-11-02T09:00:30.5Z"]) == 0
    assert "(30.5 s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--until", "tomorrow"], "cefisim replay: --until: 'tomorrow' is not an ISO 8601 UTC time"),
        (["--until", "2020-01-01T00:00:00Z"], "--until: 2020-01-01T00:00:00Z is before start"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_usage_problems_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture) -> None:
    assert replay_main([str(SCENARIOS / "self_trade.json"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_no_file_exits_2(capsys: pytest.CaptureFixture) -> None:
    assert replay_main([]) == 2
    assert "usage: cefisim replay" in capsys.readouterr().err


def test_scenario_problems_are_listed_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"seed": "7", "start": "2026-11-02T09:00:00Z", "assets": [], "instruments": [], "clients": [], "colour": 1}'
    )
    assert replay_main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert sorted(err.splitlines()) == [
        f"{bad}: $.colour: unknown key",
        f"{bad}: $.seed: must be an integer, got a string",
    ]
    assert replay_main([str(tmp_path / "missing.json")]) == 2
    assert "cannot read the file" in capsys.readouterr().err


def test_a_mistyped_shipped_name_says_so_and_lists_the_shipped_names(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no file called demoo here either
    assert replay_main(["demoo"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    names = ", ".join(shipped_names())
    assert line == f"demoo: $: neither a file nor a shipped scenario (shipped: {names})"
    assert "demo, " in names


def test_unwritable_journal_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert replay_main([str(SCENARIOS / "self_trade.json"), "--journal", str(tmp_path / "no" / "dir.jsonl")]) == 1
    assert "No such file or directory" in capsys.readouterr().err


def test_help_exits_0(capsys: pytest.CaptureFixture) -> None:
    assert replay_main(["--help"]) == 0
    assert "--journal OUT" in capsys.readouterr().out
