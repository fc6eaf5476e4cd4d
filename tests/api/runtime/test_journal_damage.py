"""Damage is named, never replayed: every damaged journal is refused naming its record, or restores
exactly what was acknowledged — never another state.

A journal of the current format seals every line with a CRC-32 chained from the line before
(``api/runtime/journal_seal.py``): a flipped bit, an edited record, a record deleted, duplicated or
moved, a complete last record that is corrupt, a last line end turned into another byte, are each
refused with one line naming the file, the record, its byte offset and the fork that keeps the records
before it. Only a torn last line (a prefix of a record, never answered) is cut.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cefisim.api.cli.journal_tools.journal_command import journal_main
from cefisim.api.cli.journal_tools.record_state import digest, facts
from cefisim.api.cli.replay import replay_main
from cefisim.api.formats.scenario import load_scenario
from cefisim.api.runtime.simulation import JournalError, Simulation
from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.commands import CancelOrder, PaperFunds, PlaceOrder

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "scenarios" / "demo.json"
DAMAGE = r"journal (?P<path>\S+): record (?P<n>\d+) \(byte offset (?P<o>\d+)\): .*cefisim journal fork"


def _journal(path: Path) -> str:
    """A server's journal of the demo: orders, a cancel, funds between the scenario's turns, its clock
    advanced; the digest of the state it acknowledged."""
    sim = Simulation(load_scenario(DEMO), clock="virtual", journal_path=path)
    for i in range(6):
        sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.01", f"{29500 + i}.00", external_id=f"o{i}"))
        sim.advance(sim.venue.clock.now + 7 * NS_PER_SECOND)
    sim.submit(CancelOrder(100, "o2"))
    sim.submit(PaperFunds(101, 2, "5.00", False))
    acknowledged = digest(facts(sim.venue, sim.faults))
    sim.close()
    return acknowledged


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, str]:
    path = tmp_path_factory.mktemp("sound") / "j.jsonl"
    acknowledged = _journal(path)
    return path.read_bytes(), acknowledged


def _line_starts(data: bytes) -> list[int]:
    starts, at = [], 0
    for line in data.splitlines(keepends=True):
        starts.append(at)
        at += len(line)
    return starts


def _refused_or_exact(path: Path, data: bytes, acknowledged: str) -> str:
    """Recover ``data``: refused naming a record (that record's number and offset, and the file left
    as it is), or restored to exactly the acknowledged state. Which of the two it was."""
    path.write_bytes(data)
    try:
        sim = Simulation(load_scenario(DEMO), clock="virtual", journal_path=path)
    except JournalError as exc:
        text = str(exc)
        assert path.read_bytes() == data, "a journal refused is left as it is"
        assert "\n" not in text
        if text.endswith("the file is left as it is") and "the header (byte offset 0)" in text:
            return "refused"  # the header: there is no record before it to keep
        found = re.fullmatch(DAMAGE + r".*", text)
        assert found is not None, text
        number, offset = int(found["n"]), int(found["o"])
        starts = _line_starts(data)
        assert starts[number] == offset, (number, offset)
        assert f"--at {number - 1} " in text
        return "refused"
    try:
        assert digest(facts(sim.venue, sim.faults)) == acknowledged, "a damaged journal restored another state"
    finally:
        sim.close()
    return "restored"


def test_thirty_single_bit_flips_are_each_refused_naming_their_record(tmp_path: Path, sound: tuple[bytes, str]) -> None:
    data, acknowledged = sound
    rng = random.Random(44)
    outcomes = []
    for i in range(30):
        at = rng.randrange(len(data))
        damaged = bytearray(data)
        damaged[at] ^= 1 << rng.randrange(8)
        outcomes.append(_refused_or_exact(tmp_path / f"flip{i}.jsonl", bytes(damaged), acknowledged))
    assert outcomes == ["refused"] * 30


@pytest.mark.parametrize("damage", ["edited", "deleted", "swapped", "duplicated", "last-corrupt", "last-line-end"])
def test_records_edited_deleted_moved_or_a_corrupt_last_one_are_refused(
    tmp_path: Path, sound: tuple[bytes, str], damage: str
) -> None:
    data, acknowledged = sound
    lines = data.splitlines(keepends=True)
    middle = next(i for i in range(len(lines) // 2, len(lines)) if b'"BUY"' in lines[i] and b'"ext"' in lines[i])
    if damage == "edited":  # the order served as FILLED with side "BUZ"
        lines[middle] = lines[middle].replace(b'"BUY"', b'"BUZ"')
    elif damage == "deleted":
        del lines[middle]
    elif damage == "swapped":
        lines[middle], lines[middle + 1] = lines[middle + 1], lines[middle]
    elif damage == "duplicated":
        lines.insert(middle, lines[middle])
    elif damage == "last-corrupt":  # complete, newline-ended, and wrong: never cut as if torn
        lines[-1] = lines[-1].replace(b'"5.00"', b'"9.00"')
    else:  # the last line end turned into another byte: a whole record and one byte more
        lines[-1] = lines[-1][:-1] + b"\x0b"
    assert _refused_or_exact(tmp_path / "j.jsonl", b"".join(lines), acknowledged) == "refused"


def test_a_torn_last_record_is_cut_and_the_rest_restores(tmp_path: Path, sound: tuple[bytes, str]) -> None:
    data, _ = sound
    lines = data.splitlines(keepends=True)
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:-1])  # every byte of the last record but its end
    Simulation(load_scenario(DEMO), clock="virtual", journal_path=path).close()
    assert path.read_bytes() == b"".join(lines[:-1])


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    changes=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_damage_anywhere_is_refused_by_record_or_restores_exactly(
    sound: tuple[bytes, str], tmp_path_factory: pytest.TempPathFactory, changes: list[tuple[float, int]]
) -> None:
    data, acknowledged = sound
    damaged = bytearray(data)
    for where, value in changes:
        damaged[int(where * len(data))] = value
    _refused_or_exact(tmp_path_factory.mktemp("fuzz") / "j.jsonl", bytes(damaged), acknowledged)


def test_the_commands_say_so_in_one_line_and_exit_2(tmp_path: Path, sound: tuple[bytes, str], capsys) -> None:
    """serve, replay --from-journal and every journal tool, the way a user runs them."""
    data, _ = sound
    lines = data.splitlines(keepends=True)
    lines[5] = lines[5].replace(b"1", b"2", 1)
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"".join(lines))
    offset = _line_starts(data)[5]
    serve = subprocess.run(
        [sys.executable, "-m", "cefisim", "serve", "--scenario", str(DEMO), "--journal", str(path), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert serve.returncode == 2
    err = serve.stderr.strip().splitlines()
    assert len(err) == 1 and f"journal {path}: record 5 (byte offset {offset}): " in err[0], err
    assert f"cefisim journal fork {path} --at 4 --out" in err[0]
    for argv, run in (
        ([str(DEMO), "--from-journal", str(path)], replay_main),
        (["show", str(path)], journal_main),
        (["state", str(path)], journal_main),
        (["diff", str(path), str(path)], journal_main),
        (["fork", str(path), "--at", "9", "--out", str(tmp_path / "k.jsonl")], journal_main),
    ):
        assert run(argv) == 2, argv
        out = capsys.readouterr()
        assert len(out.err.strip().splitlines()) == 1 and f"record 5 (byte offset {offset})" in out.err, out.err
    assert path.read_bytes() == b"".join(lines)
    # what the message offers: the records before it, forked, serve
    assert journal_main(["fork", str(path), "--at", "4", "--out", str(tmp_path / "k.jsonl")]) == 0
    Simulation(load_scenario(DEMO), clock="virtual", journal_path=tmp_path / "k.jsonl").close()


@pytest.mark.parametrize("content", [b"", None])
def test_replay_from_an_empty_or_missing_journal_exits_2(tmp_path: Path, content: bytes | None, capsys) -> None:
    path = tmp_path / "j.jsonl"
    if content is not None:
        path.write_bytes(content)
    assert replay_main([str(DEMO), "--from-journal", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "not a cefisim journal" in err[0]


def test_the_header_damaged_is_refused(tmp_path: Path, sound: tuple[bytes, str]) -> None:
    data, acknowledged = sound
    header_end = data.index(b"\n")
    damaged = data.replace(b'"virtual"', b'"wall"', 1)
    assert damaged.index(b'"wall"') < header_end
    path = tmp_path / "j.jsonl"
    path.write_bytes(damaged)
    with pytest.raises(JournalError, match=r"the header \(byte offset 0\): the header's checksum does not match"):
        Simulation(load_scenario(DEMO), clock="virtual", journal_path=path)
    assert orjson.loads(data[:header_end])["format"] == "cefisim-journal/3"
    assert _refused_or_exact(path, damaged, acknowledged) == "refused"
