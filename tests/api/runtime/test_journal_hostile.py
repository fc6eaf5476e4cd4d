"""Hostile journals: every one is one line on stderr and exit 2 (or, where a command has no business
with what is wrong, a normal run) — never a traceback, never a hang, in bounded memory.

Each journal of the set is given to ``cefisim journal show``, ``diff``, ``state`` and ``cefisim replay
--from-journal``; a journal whose header names a device, a FIFO, a folder or an oversized file as its
scenario is opened by none of them, a record nested 1,000 deep is no RecursionError, a junk snapshot in
a header no SnapshotError, a record over the largest a journal holds (1 MiB) is refused having read no
more of it than that limit. The hostile journals are sealed where the point is what a sound-looking
record holds (a crafted file, not bit rot), so that what is tested is reached, not the checksum.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from cefisim.api.auth.auth_log import NAMESPACE as AUTH
from cefisim.api.cli.journal_tools.journal_command import journal_main
from cefisim.api.cli.replay import replay_main
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.journal_seal import MAX_RECORD_BYTES, seal_record
from cefisim.api.runtime.simulation import JournalError, Simulation
from cefisim.api.side_state.side_states import NAMESPACES
from cefisim.api.side_state.venue_faults import NAMESPACE as FAULTS
from cefisim.engine.commands import CancelOrder, PlaceOrder
from tests.api.conftest import scenario_doc
from tests.api.runtime.journal_lines import resealed

COMMANDS = ("show", "diff", "state", "replay")


def _sound(tmp_path: Path) -> tuple[Path, dict[str, Any], list[list[Any]]]:
    """A sound journal of a scenario file beside it: its path, header and records (checksums left out)."""
    scenario = tmp_path / "s.json"
    scenario.write_bytes(orjson.dumps(scenario_doc()))
    path = tmp_path / "sound.jsonl"
    sim = Simulation(parse_scenario(scenario_doc(), str(scenario)), clock="virtual", journal_path=path)
    sim.submit(PlaceOrder(101, 1, "SELL", "LIMIT", "1", "50000.00", external_id="s1"))
    sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.5", "50000.00"))
    sim.submit(CancelOrder(101, "s1"))
    sim.close()
    header, *lines = path.read_bytes().splitlines()
    doc = orjson.loads(header)
    del doc["crc32"]
    return scenario, doc, [orjson.loads(line)[:4] for line in lines]


Case = Callable[[Path, dict[str, Any], list[list[Any]]], bytes]


def _header(**changes: Any) -> Case:
    def make(scenario: Path, header: dict[str, Any], records: list[list[Any]]) -> bytes:
        return resealed({**header, **changes}, records)

    return make


def _record(n: int, value: Any) -> Case:
    def make(scenario: Path, header: dict[str, Any], records: list[list[Any]]) -> bytes:
        return resealed(header, [*records[:n], value, *records[n + 1 :]])

    return make


def _raw(edit: Callable[[bytes], bytes]) -> Case:
    def make(scenario: Path, header: dict[str, Any], records: list[list[Any]]) -> bytes:
        return edit(resealed(header, records))

    return make


def _sealed_after(n: int, raw: bytes) -> Case:
    """The sound journal with record ``n`` replaced by ``raw`` (JSON no serialiser writes, such as an
    integer beyond 64 bits or an array nested 1,000 deep), every line sealed."""

    def make(scenario: Path, header: dict[str, Any], records: list[list[Any]]) -> bytes:
        lines = resealed(header, records[:n]).splitlines(keepends=True)
        line, crc = seal_record(raw, zlib.crc32(b"".join(lines)))  # the chain: the CRC-32 of what is before
        out = [*lines, line]
        for record in records[n + 1 :]:
            line, crc = seal_record(orjson.dumps(record), crc)
            out.append(line)
        return b"".join(out)

    return make


PLACE = [1793610000000000000, "ext", "place", [100, 1, "BUY", "LIMIT", "1", "50000.00", "GTC", [], [], None, None]]
#: (name, the journal's bytes, the commands that may run it normally; every other one exits 2). A
#: server refuses every one but those that concern the scenario the header names (a server is given its
#: scenario and checks its digest) and the empty file (a journal that is yet to be written)
CASES: list[tuple[str, Case, tuple[str, ...]]] = [
    ("empty", lambda s, h, r: b"", ()),
    ("a line end alone", lambda s, h, r: b"\n", ()),
    ("header not JSON", lambda s, h, r: b"{not json\n", ()),
    ("header an array", lambda s, h, r: b"[1, 2]\n", ()),
    ("header without format", _header(format=None), ()),
    ("format a number", _header(format=3), ()),
    ("format of no cefisim", _header(format="other/1"), ()),
    ("start_ns negative", _header(start_ns=-1), ()),
    ("start_ns text", _header(start_ns="soon"), ()),
    ("start_ns true", _header(start_ns=True), ()),
    ("header torn", lambda s, h, r: orjson.dumps(h)[:40], ()),
    ("header changed", _raw(lambda data: data.replace(b'"virtual"', b'"wall"', 1)), ()),
    ("header after a BOM", _raw(lambda data: b"\xef\xbb\xbf" + data), ()),
    ("header of spaces", lambda s, h, r: b" " * (MAX_RECORD_BYTES * 2) + b"{}\n", ()),
    ("scenario /dev/zero", _header(scenario="/dev/zero"), ("show", "diff", "replay")),
    ("scenario a folder", _header(scenario="/"), ("show", "diff", "replay")),
    ("scenario missing", _header(scenario="/nonexistent/s.json"), ("show", "diff", "replay")),
    ("scenario another", _header(scenario_sha256="0" * 64), ("show", "diff")),
    ("snapshot junk", _header(snapshot={"objects": 5}), ("show", "diff")),
    ("snapshot a string", _header(snapshot="yes"), ("show", "diff")),
    ("record not JSON", _raw(lambda data: data.replace(b"[1793", b"{1793", 1)), ()),
    ("record an object", _record(1, {"at": 1}), ()),
    ("record of 3", _record(1, [1, "ext", "place"]), ()),
    ("record of 6", _record(1, [1, "ext", "place", [], 5, 6]), ()),
    ("at negative", _record(1, [-5, "ext", "cancel", [100, "1"]]), ()),
    ("at a float", _record(1, [1.5, "ext", "cancel", [100, "1"]]), ()),
    ("at beyond 64 bits", _sealed_after(1, b'[1180591620717411303424,"ext","cancel",[100,"1"]]'), ()),
    ("src unknown", _record(1, [1793610000000000000, "xyz", "cancel", [100, "1"]]), ("show", "diff")),
    ("kind unknown", _record(1, [1793610000000000000, "ext", "teleport", [1]]), ("show", "diff")),
    ("side of no one", _record(1, [1793610000000000000, "ext", "zz.top", [1]]), ("show", "diff")),
    ("values not a list", _record(1, [1793610000000000000, "ext", "cancel", "100"]), ()),
    ("values too few", _record(1, [1793610000000000000, "ext", "place", [100, 1]]), ("show", "diff")),
    ("side BUZ", _record(1, [*PLACE[:3], [*PLACE[3][:2], "BUZ", *PLACE[3][3:], None, None, None]]), ("show", "diff")),
    ("nested 1000 deep", _sealed_after(1, b'[1793610000000000000,"ext","place",' + b"[" * 1000 + b"]" * 1001), ()),
    ("nested 40 deep", _sealed_after(1, b'[1793610000000000000,"ext","zz.top",' + b"[" * 40 + b"]" * 41), ()),
    ("record over the limit", _raw(lambda data: data + b"[" * (MAX_RECORD_BYTES + 10) + b"\n"), ()),
    ("NUL bytes", _raw(lambda data: data.replace(b'"ext"', b'"e\x00t"', 1)), ()),
    ("bytes not UTF-8", _raw(lambda data: data.replace(b'"ext"', b'"\xff\xfe"', 1)), ()),
    ("CRLF line ends", _raw(lambda data: data.replace(b"\n", b"\r\n")), ()),
    ("header twice", _raw(lambda data: data.split(b"\n", 1)[0] + b"\n" + data), ()),
    (
        "records swapped",
        _raw(lambda data: b"\n".join([*data.split(b"\n")[:2], *data.split(b"\n")[3:1:-1], *data.split(b"\n")[4:]])),
        (),
    ),
]


def _run(command: str, journal: Path, scenario: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    if command == "replay":
        code = replay_main([str(scenario), "--from-journal", str(journal), "--quiet"])
    elif command == "diff":
        code = journal_main(["diff", str(journal), str(journal)])
    else:
        code = journal_main([command, str(journal)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("name", "case", "runs"), CASES, ids=[c[0] for c in CASES])
def test_a_hostile_journal_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, case: Case, runs: tuple[str, ...]
) -> None:
    scenario, header, records = _sound(tmp_path)
    journal = tmp_path / "hostile.jsonl"
    data = case(scenario, header, records)
    journal.write_bytes(data)
    for command in COMMANDS:
        code, err = _run(command, journal, scenario, capsys)
        assert "Traceback" not in err and "Error:" not in err, (command, err)
        if command in runs:
            assert code in (0, 1), (command, code, err)  # diff: 1 when the two differ
            continue
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, (command, code, err)
        assert str(journal) in lines[0], (command, lines)
    # a server refuses it the same way, and leaves it as it is
    if name != "empty" and not name.startswith("scenario "):
        with pytest.raises(JournalError):
            Simulation(parse_scenario(scenario_doc(), str(scenario)), clock="virtual", journal_path=journal)
        assert journal.read_bytes() == data


def test_only_regular_files_are_opened(tmp_path: Path) -> None:
    """A FIFO as the journal or as its scenario: refused at once, nothing waits for a writer."""
    scenario, header, records = _sound(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    named = tmp_path / "names-a-fifo.jsonl"
    named.write_bytes(resealed({**header, "scenario": str(fifo)}, records))
    for argv in (
        ["journal", "show", str(fifo)],
        ["journal", "state", str(named)],
        ["replay", str(scenario), "--from-journal", str(fifo)],
        ["serve", "--scenario", str(scenario), "--journal", str(fifo), "--port", "0"],
        ["serve", "--scenario", str(scenario), "--journal", "/dev/zero", "--port", "0"],
    ):
        done = subprocess.run([sys.executable, "-m", "cefisim", *argv], capture_output=True, text=True, timeout=60)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and "not a regular file" in lines[0], (argv, done.stderr)


def test_a_big_scenario_file_is_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, header, records = _sound(tmp_path)
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(65 << 20)  # sparse: no disk used
    journal = tmp_path / "j.jsonl"
    journal.write_bytes(resealed({**header, "scenario": str(big)}, records))
    assert journal_main(["state", str(journal)]) == 2
    err = capsys.readouterr().err
    assert "larger than 64 MiB" in err and len(err.strip().splitlines()) == 1


def test_a_huge_record_costs_no_more_memory_than_the_limit(tmp_path: Path) -> None:
    """A 64 MiB record (the issue's was 300 MB): `show` and `diff` refuse it having read at most the
    limit of 1 MiB, so their peak memory stays near that of a sound journal."""
    _, header, records = _sound(tmp_path)
    sound = tmp_path / "sound-again.jsonl"
    sound.write_bytes(resealed(header, records))
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as f:
        f.write(resealed(header, records))
        chunk = b"1," * (1 << 19)
        f.write(b"[")
        f.writelines(chunk for _ in range(64))
        f.write(b"1]\n")

    def peak_kib(*argv: str) -> tuple[int, int]:
        code = (
            "import resource, sys; from cefisim.api.cli.journal_tools.journal_command import journal_main;"
            f"code = journal_main({list(argv)!r}); "
            "print('peak', code, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
        _, status, peak = out.splitlines()[-1].split()
        return int(status), int(peak)

    for command in (["show"], ["diff"]):
        _, base = peak_kib(*command, str(sound), *([str(sound)] if command == ["diff"] else []))
        code, peak = peak_kib(*command, str(huge), *([str(huge)] if command == ["diff"] else []))
        assert code == 2
        assert peak - base < 16 << 10, (command, base, peak)  # KiB: well below the record's 64 MiB


def test_every_side_state_a_server_keeps_is_one_a_journal_may_hold() -> None:
    """A side-state record of a namespace no side-state keeps is refused (``api/side_state/side_states.py``,
    NAMESPACES): the side-states a server attaches are all among them."""
    assert {AUTH, FAULTS} == NAMESPACES
