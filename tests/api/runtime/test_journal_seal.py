"""The seal the journal's writer puts on each record, in both builds (``api/runtime/journal_seal.py``).

The rule (docs/journal.md, Integrity): a record's line is the record without its closing bracket, then
``,"xxxxxxxx"]`` and a line end, where ``xxxxxxxx`` is the CRC-32 of every byte of the file before the
seal. The compiled build (docs/build.md) seals in C (``journal_seal.pxd``, cimported by the writer in
``journal_file.py``); Python callers and the pure build use ``journal_seal._seal_record``. ``make test``
runs this file on both builds: the writer's file is checked here against the CRC of its own bytes,
computed by zlib over the whole file (an answer that depends on neither form), and line for line against
the Python form, over records of every length and content, so the compiled pass compares C with Python.
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.journal_file import JournalFile, journal_header, record_json
from cefisim.api.runtime.journal_seal import RECORD_TAIL, _seal_record, seal_object
from cefisim.engine.commands import AdvanceClock, CancelOrder, Command, ModifyOrder, PlaceOrder, SetLatency
from tests.api.conftest import scenario_doc

HEADER = seal_object(b'{"format":"cefisim-journal/3"}')[0]  # a sealed header: its journal seals its records


def _records(count: int, seed: int) -> list[bytes]:
    """Byte strings to seal: every length from 0 to 300, then random ones up to 70 KB (past a buffered
    writer's 64 KiB), of random bytes (a seal does not parse what it seals), and the edge cases."""
    rng = random.Random(seed)
    out = [bytes(rng.getrandbits(8) for _ in range(n)) for n in range(301)]
    out += [rng.randbytes(rng.choice((rng.randrange(1, 400), rng.randrange(1, 70_000)))) for _ in range(count)]
    return [*out, b"", b"]", b"[]", b"\n", b'[1,"ext","x",[]]', b"\xff" * 1000]


def _lines(records: list[bytes], crc: int) -> tuple[bytes, int]:
    """The records sealed by the Python form, chained from ``crc``; and the chain value after them."""
    out = []
    for data in records:
        line, crc = _seal_record(data, crc)
        out.append(line)
    return b"".join(out), crc


def _check_against_the_file(data: bytes, start: int) -> int:
    """Each line after ``start`` checked by zlib over the file's bytes before its seal: the number of lines."""
    lines, at = 0, start
    while at < len(data):
        end = data.index(b'"]\n', at + RECORD_TAIL - 3) + 3  # a line ends with its seal (hex digits, no quote)
        seal = data[end - RECORD_TAIL : end]
        assert seal[:2] == b',"' and seal == b',"%08x"]\n' % zlib.crc32(data[: end - RECORD_TAIL]), (lines, seal)
        lines, at = lines + 1, end
    return lines


@pytest.mark.parametrize("durable", [True, False])
def test_the_writer_seals_every_record_as_the_rule_says(tmp_path: Path, durable: bool) -> None:
    path = tmp_path / "j.jsonl"
    journal = JournalFile.create(path, HEADER, durable)
    records = _records(2_000, seed=44)
    journal.append_records(records[:1000])
    for data in records[1000:]:
        journal.append_records([data])
    crc = journal.crc
    journal.close()
    written = path.read_bytes()
    expected, after = _lines(records, zlib.crc32(HEADER))
    assert written == HEADER + expected and crc == after == zlib.crc32(written)


def test_every_line_is_checked_by_the_crc_of_the_file_before_its_seal(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = JournalFile.create(path, HEADER, False)
    # one line each, and no quote: the only '"]' and line end of a record line are its seal's
    records = [rec.replace(b"\n", b" ").replace(b'"', b"'") for rec in _records(300, seed=7)]
    journal.append_records(records)
    journal.close()
    assert _check_against_the_file(path.read_bytes(), len(HEADER)) == len(records)


def _commands(rng: random.Random) -> list[Command]:
    """Commands of the kinds a replay journals most, with values of every shape (None, tuples, text)."""
    out: list[Command] = []
    for i in range(3000):
        side = rng.choice(("BUY", "SELL"))
        price = f"{rng.randrange(1, 10**7)}.{rng.randrange(100):02d}"
        out.append(
            rng.choice(
                (
                    PlaceOrder(rng.randrange(1, 10**6), 1, side, "LIMIT", "0.25", price),
                    PlaceOrder(
                        900, 2, side, "MARKET", str(rng.randrange(1, 99)), None, "IOC", ("USE_AGGRESSIVE_PRICING",)
                    ),
                    PlaceOrder(
                        901, 3, side, "LIMIT", "1", price, "GTC", (), ("ALO",), "NONE", None, f"é-{i}", "m", "0"
                    ),
                    CancelOrder(rng.randrange(1, 10**6), str(rng.randrange(1, 10**9))),
                    ModifyOrder(900, rng.randrange(1, 10**6), None, "0.5", price),
                    SetLatency(rng.randrange(10**9), 0, rng.randrange(10**6)),
                    AdvanceClock(rng.randrange(10**18)),
                )
            )
        )
    return out


@pytest.mark.parametrize("durable", [True, False])
def test_the_command_writer_writes_what_record_json_and_the_rule_give(tmp_path: Path, durable: bool) -> None:
    """The writer every command goes through (``command_writer``), sealed and in an older format."""
    scenario = parse_scenario(scenario_doc(), "s.json")
    commands = _commands(random.Random(3))
    for sealed in (True, False):
        path = tmp_path / f"{sealed}.jsonl"
        header = journal_header(scenario, 1, "virtual") if sealed else b'{"format":"cefisim-journal/2"}\n'
        journal = JournalFile.create(path, header, durable)
        write = journal.command_writer()
        for at, cmd in enumerate(commands, 1):
            write(at * 997, "ext" if at % 3 else "scn", cmd)
        crc, size = journal.crc, journal.size
        journal.close()
        data = [record_json(at * 997, "ext" if at % 3 else "scn", cmd) for at, cmd in enumerate(commands, 1)]
        if sealed:
            expected, after = _lines(data, zlib.crc32(header))
            assert crc == after
        else:
            expected = b"".join(line + b"\n" for line in data)
        assert path.read_bytes() == header + expected and size == len(header) + len(expected)


def test_the_chain_goes_on_from_a_journal_opened_again(tmp_path: Path) -> None:
    """A journal opened again (a server going on with its file) seals from the chain value it is given."""
    path = tmp_path / "j.jsonl"
    first, rest = _records(50, seed=1), _records(50, seed=2)
    journal = JournalFile.create(path, HEADER, True)
    journal.append_records(first)
    crc = journal.crc
    journal.close()
    again = JournalFile(path, True, True, crc)
    again.command_writer()(5, "ext", CancelOrder(1, "7"))
    again.append_records(rest)
    again.close()
    expected, _ = _lines([*first, record_json(5, "ext", CancelOrder(1, "7")), *rest], zlib.crc32(HEADER))
    assert path.read_bytes() == HEADER + expected
