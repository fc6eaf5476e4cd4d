"""``cefisim journal show|diff|fork|state`` on journals a server wrote (api/cli/journal_tools/)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from cefisim.api.cli.journal_tools.journal_command import journal_main
from cefisim.api.cli.journal_tools.record_state import digest, facts
from cefisim.api.cli.main import main as cli_main
from cefisim.api.cli.replay import replay_main
from cefisim.api.formats.scenario import load_scenario
from cefisim.api.formats.scenario.shipped import shipped
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.runtime.venues import Venues
from cefisim.engine.commands import CancelOrder, PlaceOrder, VenueCancel
from tests.api.conftest import scenario_doc
from tests.api.runtime.journal_lines import reseal_file


def _scenario(tmp_path: Path, **overrides):
    path = tmp_path / f"scenario-{overrides.get('seed', 7)}.json"
    path.write_bytes(orjson.dumps(scenario_doc(**overrides)))
    return load_scenario(path)


def _run(tmp_path: Path, name: str = "j.jsonl", qty: str = "0.5", **overrides) -> tuple[Path, list[str]]:
    """A server's journal of six external commands; returns it and the state digest after each."""
    path = tmp_path / name
    sim = Simulation(_scenario(tmp_path, **overrides), clock="virtual", journal_path=path)
    digests = []
    for cmd in (
        PlaceOrder(101, 1, "SELL", "LIMIT", "2", "50000.00", external_id="s1"),
        PlaceOrder(100, 1, "BUY", "LIMIT", qty, "50000.00"),
        PlaceOrder(100, 2, "BUY", "LIMIT", "1", "2000.00"),
        CancelOrder(101, "s1"),
        PlaceOrder(101, 1, "SELL", "LIMIT", "1", "50100.00", external_id="s2"),
        VenueCancel("RISK_EVENT", client_id=101),
    ):
        sim.submit(cmd)
        digests.append(digest(facts(sim.venue)))
    sim.close()
    return path, digests


def _main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = journal_main(list(argv))
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def _records(path: Path) -> int:
    return len(path.read_bytes().splitlines()) - 1


def test_show_prints_one_line_per_record_with_time_kind_client_and_summary(tmp_path: Path, capsys) -> None:
    path, _ = _run(tmp_path)
    code, lines, _ = _main(capsys, "show", str(path))
    assert code == 0 and len(lines) == _records(path)
    place = next(line for line in lines if "s1" in line and " place " in line)
    assert "2026-11-02T09:00:00Z" in place and "client=101" in place
    assert "SELL 2 LIMIT @ 50000.00" in place and "external=s1" in place
    assert "RISK_EVENT" in lines[-1] and "venue_cancel" in lines[-1]


def test_show_filters_by_number_and_client_and_prints_json(tmp_path: Path, capsys) -> None:
    path, _ = _run(tmp_path)
    code, lines, _ = _main(capsys, "show", str(path), "--from", "2", "--to", "4", "--client", "100", "--json")
    docs = [orjson.loads(line) for line in lines]
    assert code == 0 and docs and all(2 <= d["number"] <= 4 and d["client"] == "100" for d in docs)
    assert docs[0]["fields"]["side"] == "BUY" and docs[0]["time"].startswith("2026-11-02T09:00:00")


def test_show_renders_a_kind_it_does_not_know(tmp_path: Path, capsys) -> None:
    path, _ = _run(tmp_path)
    reseal_file(
        path, lambda records: records.append([1793610000000000009, "ext", "auth_session", ["u-alice", 3, None]])
    )
    code, lines, _ = _main(capsys, "show", str(path))
    assert code == 0 and "auth_session" in lines[-1] and "u-alice 3 -" in lines[-1]


def test_damage_is_one_line_naming_the_record_and_exit_2(tmp_path: Path, capsys) -> None:
    path, _ = _run(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    offset = sum(map(len, lines[:3]))
    lines[3] = b"[1, 2]\n"
    path.write_bytes(b"".join(lines))
    for action in (
        ["show", str(path)],
        ["state", str(path)],
        ["fork", str(path), "--at", "5", "--out", str(tmp_path / "k")],
    ):
        code, _, err = _main(capsys, *action)
        assert code == 2 and f"record 3 (byte offset {offset}): " in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "k").exists() and not (tmp_path / "k.new").exists()
    code, _, err = _main(capsys, "show", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "missing.jsonl" in err


def test_a_torn_last_line_is_left_out_with_a_warning(tmp_path: Path, capsys) -> None:
    path, _ = _run(tmp_path)
    with open(path, "ab") as f:
        f.write(b'[17, "ext", "pla')
    code, lines, err = _main(capsys, "show", str(path))
    assert code == 0 and len(lines) == _records(path) - 1 and "incomplete last line" in err


def test_state_at_a_record_is_the_state_the_server_had_then(tmp_path: Path, capsys) -> None:
    path, digests = _run(tmp_path)
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    ext = [i + 1 for i, record in enumerate(lines) if record[1] == "ext"]
    for number, expected in zip(ext, digests, strict=True):
        code, out, _ = _main(capsys, "state", str(path), "--at", str(number))
        assert code == 0 and f"digest    {expected}" in out


def test_fork_is_a_journal_a_server_continues_from(tmp_path: Path, capsys) -> None:
    path, digests = _run(tmp_path)
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    third_ext = [i + 1 for i, record in enumerate(lines) if record[1] == "ext"][2]
    fork = tmp_path / "k.jsonl"
    code, _, _ = _main(capsys, "fork", str(path), "--at", str(third_ext), "--out", str(fork))
    assert code == 0 and _records(fork) == third_ext
    assert path.read_bytes().startswith(fork.read_bytes())
    code, _, err = _main(capsys, "fork", str(path), "--at", "2", "--out", str(fork))
    assert code == 2 and "exists" in err
    sim = Simulation(load_scenario(tmp_path / "scenario-7.json"), clock="virtual", journal_path=fork)
    assert digest(facts(sim.venue)) == digests[2]
    sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "49000.00"))  # a new branch of history
    sim.close()
    assert _records(fork) == third_ext + 1
    code, _, err = _main(capsys, "fork", str(path), "--at", "999", "--out", str(tmp_path / "k2"))
    assert code == 2 and "holds" in err


def test_state_writes_a_snapshot_that_restores(tmp_path: Path, capsys) -> None:
    path, digests = _run(tmp_path)
    out = tmp_path / "snap.json"
    code, _, _ = _main(capsys, "state", str(path), "--snapshot", str(out))
    assert code == 0
    sim = Simulation(load_scenario(tmp_path / "scenario-7.json"), clock="virtual")
    sim.restore(orjson.loads(out.read_bytes()))
    assert digest(facts(sim.venue)) == digests[-1]


def test_diff_same_parted_and_unreadable(tmp_path: Path, capsys) -> None:
    a, _ = _run(tmp_path, "a.jsonl")
    b, _ = _run(tmp_path, "b.jsonl")
    c, _ = _run(tmp_path, "c.jsonl", qty="0.7")
    assert _main(capsys, "diff", str(a), str(b))[0] == 0
    code, lines, _ = _main(capsys, "diff", str(a), str(c))
    text = "\n".join(lines)
    lines_a = [orjson.loads(line) for line in a.read_bytes().splitlines()[1:]]
    second_ext = [i + 1 for i, record in enumerate(lines_a) if record[1] == "ext"][1]
    assert code == 1
    assert f"part at record {second_ext} of each" in text and "BUY 0.5 LIMIT" in text and "BUY 0.7 LIMIT" in text
    # the resting SELL the two BUYs met is the first order whose state differs
    assert f"first state difference after record {second_ext}: order 1" in text
    assert "executed=0.5000" in text and "executed=0.7000" in text
    code, _, err = _main(capsys, "diff", str(a), str(tmp_path / "nope.jsonl"))
    assert code == 2 and "nope.jsonl" in err


def test_diff_of_two_seeds_of_a_replay(tmp_path: Path, capsys) -> None:
    """Two replays of the demo with different seeds: where their agents first act differently."""
    doc = orjson.loads(Path(shipped("demo") or "").read_bytes())
    journals = []
    for seed in (7, 8):
        scenario = tmp_path / f"demo-{seed}.json"
        scenario.write_bytes(orjson.dumps({**doc, "seed": seed}))
        journals.append(str(tmp_path / f"r{seed}.jsonl"))
        assert replay_main([str(scenario), "--until", "+20", "--journal", journals[-1], "--quiet"]) == 0
    capsys.readouterr()
    code, lines, _ = _main(capsys, "diff", *journals)
    assert code == 1 and lines[0] == "headers differ: scenario_sha256"
    assert lines[1].startswith("the journals part at record ") and "first state difference after" in lines[4]
    assert _main(capsys, "diff", journals[0], journals[0])[0] == 0


def test_the_seed_of_a_scenario_without_agents_changes_nothing(tmp_path: Path, capsys) -> None:
    a, _ = _run(tmp_path, "a.jsonl")
    b, _ = _run(tmp_path, "b.jsonl", seed=8)
    assert _main(capsys, "diff", str(a), str(b))[0] == 0


def test_another_scenario_than_the_header_names_is_refused(tmp_path: Path, capsys) -> None:
    path, _ = _run(tmp_path)
    other = tmp_path / "other.json"
    other.write_bytes(orjson.dumps(scenario_doc(seed=9)))
    code, _, err = _main(capsys, "state", str(path), "--scenario", str(other))
    assert code == 2 and "another scenario" in err


def test_a_created_venues_journal_finds_its_scenario_in_the_manifest(tmp_path: Path, capsys) -> None:
    venues = Venues(
        lambda scenario, path: Simulation(scenario, clock="virtual", journal_path=path), journal=tmp_path / "j"
    )
    made = venues.make(venues.next_id(), {"scenario": "demo", "seed": 3})
    venues.commit(made)
    spec, sim = made.spec, made.sim
    sim.advance(sim.venue.clock.now + 5 * 10**9)
    expected = digest(facts(sim.venue))
    venues.close()
    code, out, err = _main(capsys, "state", str(tmp_path / "j.venues" / f"{spec.id}.jsonl"))
    assert code == 0, err
    assert f"digest    {expected}" in out


def test_cefisim_journal_is_a_subcommand(tmp_path: Path, capsys) -> None:
    path, _ = _run(tmp_path)
    assert cli_main(["journal", "show", str(path), "--to", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
    assert cli_main(["journal", "nonsense"]) == 2


def test_a_record_recovery_cannot_apply_is_named_by_its_number(tmp_path: Path, capsys) -> None:
    path, _ = _run(tmp_path)

    def insert(records: list) -> None:  # a newer cefisim's kind
        records.insert(3, [records[2][0], "ext", "auth_session", ["u-alice"]])

    reseal_file(path, insert)
    offset = sum(map(len, path.read_bytes().splitlines(keepends=True)[:4]))
    assert _main(capsys, "show", str(path))[0] == 0
    code, _, err = _main(capsys, "state", str(path))
    assert code == 2 and f"record 4 (byte offset {offset}): " in err and "unknown command kind 'auth_session'" in err
    assert len(err.strip().splitlines()) == 1
