"""The journal file, written and read in one dialect (``docs/journal.md``).

Every journal cefisim writes goes through :class:`JournalFile` (``cefisim serve --journal``, ``cefisim
replay --journal``, the control plane's venues), and every restore reads it back with
:func:`read_header` and :class:`Records`:

- a header line (:func:`journal_header`): the format, the scenario and its sha256, the effective start,
  the clock, and the snapshot the journal starts from if it does not start from the scenario;
- one line per record, ``[at, src, kind, values]``: an engine command (``engine/journal.py``,
  :func:`command_line`) or a change of state kept beside the engine (a kind with a dot,
  :func:`side_line`). ``src`` is ``ext`` (requests, the control plane, clock moves) or ``scn`` (the
  scenario's events and agents). The scenario's ``settings`` are part of the venue it builds, not
  records.

Writing: a fresh journal's header goes to ``FILE.new``, renamed over ``FILE`` once complete. Each record
is written whole or not at all: a write that fails is cut back to the end of the last complete record
and raises :class:`JournalWriteError` (the caller then does not apply the command). ``durable``
(the server) writes unbuffered, each record reaching the operating system before its command applies;
otherwise (an offline run) records are buffered and reach it at the latest on :meth:`JournalFile.close`.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from cefisim.api.scenario import Scenario
from cefisim.api.sides import SideRecord
from cefisim.engine.commands import Command
from cefisim.engine.core import RULES
from cefisim.engine.journal import from_record, to_record

log = logging.getLogger("cefisim.sim")

JOURNAL_FORMAT = "cefisim-journal/2"
#: every journal format a server restores, and the edition of the venue's rules (``engine/core.py``,
#: ``RULES``) its commands were recorded under. The records are the same in both; /2 marks that
#: commands do other things since (docs/journal.md, Format versions), and a /1 journal replays, and
#: goes on, under the rules it was written with
JOURNAL_RULES = {"cefisim-journal/1": 1, JOURNAL_FORMAT: RULES}
MAX_HEADER_BYTES = 1 << 30  # the header may hold a whole snapshot
BUFFER_BYTES = 1 << 16  # an offline run's write buffer
LINE = orjson.OPT_APPEND_NEWLINE


class JournalError(Exception):
    """The journal file cannot be used (unreadable, corrupt in the middle, another scenario)."""


class JournalWriteError(Exception):
    """A record could not be written to the journal; its command was not applied."""


# --- the dialect ----------------------------------------------------------------------------------


def scenario_digest(scenario: Scenario) -> str:
    """The sha256 of a scenario's document: a journal names the scenario it was written for."""
    return hashlib.sha256(orjson.dumps(scenario.doc, option=orjson.OPT_SORT_KEYS)).hexdigest()


def journal_header(scenario: Scenario, start_ns: int, clock: str, snapshot: dict[str, Any] | None = None) -> bytes:
    """A journal's first line."""
    header = {
        "format": JOURNAL_FORMAT,
        "scenario": str(scenario.source),
        "scenario_sha256": scenario_digest(scenario),
        "start_ns": start_ns,
        "clock": clock,
        **({"snapshot": snapshot} if snapshot is not None else {}),
    }
    return orjson.dumps(header, option=orjson.OPT_SORT_KEYS | LINE)


def command_line(at: int, src: str, cmd: Command) -> bytes:
    """An engine command's record as a journal line."""
    return orjson.dumps(to_record(at, src, cmd), option=LINE)


def side_line(at: int, kind: str, values: list[Any], src: str = "ext") -> bytes:
    """A side record (state kept beside the engine, ``api/sides.py``) as a journal line:
    ``ext`` when a request or the control plane made it, ``scn`` when a scenario event did."""
    return orjson.dumps([at, src, kind, values], option=LINE)


def record_line(at: int, src: str, cmd: Command | SideRecord) -> bytes:
    """:func:`command_line` or :func:`side_line`, whichever ``cmd`` is."""
    if isinstance(cmd, SideRecord):
        return side_line(at, cmd.kind, cmd.values, src)
    return command_line(at, src, cmd)


# --- writing --------------------------------------------------------------------------------------


class JournalFile:
    """A journal open for appending, a whole record at a time (the module docstring)."""

    def __init__(self, path: Path, durable: bool = True) -> None:
        self.path = path
        self._raw = open(path, "a+b", buffering=0)  # noqa: SIM115 - open for the journal's life; read to cut back
        self._file: IO[bytes] = self._raw if durable else io.BufferedWriter(self._raw, BUFFER_BYTES)
        self._write = self._file.write

    @classmethod
    def create(cls, path: Path, header: bytes, durable: bool = True) -> JournalFile:
        """A fresh journal holding ``header`` only, replacing ``path``: written to ``path.new`` and
        renamed over it, so a process killed meanwhile leaves the previous journal (or none)."""
        staged = path.with_name(path.name + ".new")
        with open(staged, "wb") as f:
            f.write(header)
        os.replace(staged, path)
        return cls(path, durable)

    def append(self, data: bytes) -> None:
        """Write one or more whole records, or nothing (:class:`JournalWriteError`)."""
        try:
            written = self._write(data)
        except OSError as exc:
            raise self._cut_back(exc) from None
        if written != len(data):  # an unbuffered write that took part of the record
            self._rest(data, written)

    def command_writer(self) -> Callable[[int, str, Command], None]:
        """The function that journals one command, ``(at, src, command)``: :meth:`append` of its
        :func:`command_line`, with everything it needs looked up once (it runs for every command)."""
        write, dumps, records, rest, cut_back = self._write, orjson.dumps, to_record, self._rest, self._cut_back

        def write_command(at: int, src: str, cmd: Command) -> None:
            data = dumps(records(at, src, cmd), option=LINE)
            try:
                written = write(data)
            except OSError as exc:
                raise cut_back(exc) from None
            if written != len(data):
                rest(data, written)

        return write_command

    def close(self) -> None:
        """Flush what is buffered and close; a flush that fails is cut back (:class:`JournalWriteError`)."""
        if self._file is not self._raw and not self._raw.closed:
            try:
                self._file.flush()
            except OSError as exc:
                raise self._cut_back(exc) from None
        self._file.close()
        self._raw.close()

    def _rest(self, data: bytes, written: int) -> None:
        view = memoryview(data)[written:]
        try:
            while view:
                view = view[self._write(view) :]
        except OSError as exc:
            raise self._cut_back(exc) from None

    def _cut_back(self, exc: OSError) -> JournalWriteError:
        """Cut the file back to the end of its last complete record (every record ends with a line
        end, the header too); the error to raise. A buffered journal is closed with it: what its buffer
        held is lost, and an offline run stops at the error."""
        try:
            fd = self._raw.fileno()
            end = os.fstat(fd).st_size
            complete = _end_of_last_line(fd, end)
            if complete < end:
                os.ftruncate(fd, complete)
        except OSError:
            log.error("journal %s: could not cut back a partial record", self.path)
        if self._file is not self._raw:
            self._raw.close()  # the buffer, whose raw file is closed, is dropped without a write
        return JournalWriteError(f"journal write failed: {exc.strerror or exc}")


def _end_of_last_line(fd: int, end: int) -> int:
    """The offset just after the last line end before ``end`` (0 when there is none)."""
    while end > 0:
        start = max(0, end - BUFFER_BYTES)
        chunk = os.pread(fd, end - start, start)
        at = chunk.rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0


# --- reading --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Header:
    """What a journal's header says: where it starts, and what from."""

    start_ns: int
    length: int  # bytes of the header line, its line end included
    rules: int  # the edition of the venue's rules its format was recorded under
    snapshot: dict[str, Any] | None  # the state it starts from, when not the scenario


def read_header(path: Path, scenario: Scenario) -> Header | None:
    """The header of the journal at ``path`` (None when there is none, or it is empty). Anything but a
    complete header of a known format for ``scenario`` is a :class:`JournalError`, the file left as it is."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    with open(path, "rb") as f:
        line = f.readline(MAX_HEADER_BYTES)
    if not line.endswith(b"\n"):
        raise JournalError(
            f"journal {path}: byte offset 0: the header line is incomplete ({len(line)} bytes, "
            "no line end); the file is left as it is"
        )
    try:
        header = orjson.loads(line)
        if not isinstance(header, dict) or str(header.get("format")) not in JOURNAL_RULES:
            raise ValueError(f"not a cefisim journal header (format {' or '.join(JOURNAL_RULES)})")
        start_ns = header.get("start_ns")
        if not isinstance(start_ns, int) or isinstance(start_ns, bool) or start_ns < 0:
            raise ValueError("start_ns must be a nanosecond timestamp")
    except ValueError as exc:
        raise JournalError(f"journal {path}: byte offset 0: {exc}") from None
    if header.get("scenario_sha256") != scenario_digest(scenario):
        raise JournalError(f"journal {path} was written for another scenario ({header.get('scenario')})")
    return Header(start_ns, len(line), JOURNAL_RULES[header["format"]], header.get("snapshot"))


Record = tuple[int, int, str, Command | SideRecord]  # (byte offset, at, src, command or side record)


class Records:
    """The records of a journal file after its header, read one line at a time (memory stays flat).

    ``peek()``/``take()`` give ``(offset, at, src, command)`` (a :class:`SideRecord` in the place of a
    command for a kind with a dot). A last line without a line end, or a
    last line that does not parse, is a torn record: reading stops before it (``complete_until``).
    A bad record anywhere else is a :class:`JournalError` naming its byte offset."""

    def __init__(self, f: IO[bytes], path: Path, offset: int) -> None:
        self._f = f
        self.path = path
        self.size = os.fstat(f.fileno()).st_size
        self.complete_until = offset
        self._offset = offset
        self._next_line = f.readline()
        self._head: Record | None = None
        self._done = False

    def peek(self) -> Record | None:
        if self._head is None and not self._done:
            self._head = self._read()
        return self._head

    def take(self) -> None:
        self._head = None

    def scenario_record_at(self, at: int) -> bool:
        """Whether, from the head on, a ``scn`` record at ``at`` comes before any record of a later time.
        Read by a second handle, so the reading position stays; only the records at ``at`` are read."""
        head = self.peek()
        if head is None:
            return False
        with open(self.path, "rb") as f:
            f.seek(head[0])
            ahead = Records(f, self.path, head[0])
            while (record := ahead.peek()) is not None and record[1] == at:
                if record[2] == "scn":
                    return True
                ahead.take()
        return False

    def _read(self) -> Record | None:
        line, offset = self._next_line, self._offset
        if not line:
            self._done = True
            return None
        self._next_line = self._f.readline()
        last = not self._next_line
        if not line.endswith(b"\n"):
            log.warning("journal %s: incomplete last record (%d bytes) cut off", self.path, len(line))
            self._done = True
            return None
        try:
            record = orjson.loads(line)
            cmd: Command | SideRecord
            try:
                at, src, cmd = from_record(record)
            except ValueError as exc:  # not an engine command: a side record, or damage
                at, src, cmd = _side(record, exc)
            if src not in ("ext", "scn"):
                raise ValueError(f"unknown source {src!r}")
        except (ValueError, TypeError) as exc:
            if last:
                log.warning("journal %s: corrupt last record at byte %d cut off (%s)", self.path, offset, exc)
                self._done = True
                return None
            raise JournalError(f"journal {self.path}: corrupt record at byte offset {offset}: {exc}") from None
        self._offset = offset + len(line)
        self.complete_until = self._offset
        return offset, at, src, cmd


def _side(record: Any, refused: ValueError) -> tuple[int, str, SideRecord]:
    """A record the engine refused (``refused``) read as a side record (a kind with a dot), or that
    refusal. Asked only after the engine's reading fails, so that its records cost nothing more."""
    if not (isinstance(record, list) and len(record) == 4 and isinstance(record[2], str) and "." in record[2]):
        raise refused
    at, src, kind, values = record
    if not isinstance(at, int) or isinstance(at, bool) or src not in ("ext", "scn") or not isinstance(values, list):
        raise ValueError(f'{kind}: a side record is [at, "ext" or "scn", kind, values]')
    return at, src, SideRecord(kind, values)
