"""The journal file, written and read in one dialect (``docs/journal.md``).

Every journal cefisim writes goes through :class:`JournalFile` (``cefisim serve --journal``, ``cefisim
replay --journal``, the control plane's venues), and every restore reads it back with
:func:`read_header` and :class:`Records`:

- a header line (:func:`journal_header`): the format, the scenario (a shipped one by its name) and its
  sha256, the effective start, the clock, and the snapshot the journal starts from if it does not
  start from the scenario;
- one line per record, ``[at, src, kind, values]``: an engine command (``engine/journal.py``,
  :func:`record_json`) or a change of state kept beside the engine (a kind with a dot, a
  :class:`SideStateRecord`). ``src`` is ``ext`` (requests, the control plane, clock moves) or ``scn`` (the
  scenario's events and agents). The scenario's ``settings`` are part of the venue it builds, not
  records.

Integrity (``journal_seal.py``): a journal of the current format seals every line with the CRC-32 of
the file's bytes before its seal, so any damage other than a torn last line is found and named
(record number and byte offset) rather than replayed. Journals of formats /1 and /2 carry no checksums; they
restore as before, and a server goes on appending to them in their own format.

Writing: a fresh journal's header goes to ``FILE.new`` (:meth:`JournalFile.stage`), renamed over
``FILE`` once what must be in it is (:meth:`JournalFile.commit`), or removed (:meth:`JournalFile.discard`).
Each record is written whole or not at all: a write that fails is cut back to the end of the last
complete record and raises :class:`JournalWriteError` (the caller then does not apply the command).
``durable`` (the server) writes unbuffered, each record reaching the operating system before its
command applies; otherwise (an offline run) records are buffered and reach it at the latest on
:meth:`JournalFile.close`.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from cefisim.api.formats.scenario import Scenario
from cefisim.api.formats.scenario.shipped import shipped
from cefisim.api.runtime.journal_seal import (
    MAX_HEADER_BYTES,
    MAX_RECORD_BYTES,
    RECORD_TAIL,
    NotRegular,
    check_object,
    check_record,
    check_seal,
    crc_of,
    open_regular,
    regular_or_absent,
    seal_object,
    seal_record,
    torn,
)
from cefisim.api.side_state.side_states import SideStateRecord
from cefisim.engine.commands import Command
from cefisim.engine.core import RULES
from cefisim.engine.journal import from_record, to_record

log = logging.getLogger("cefisim.sim")

JOURNAL_FORMAT = "cefisim-journal/3"
#: every journal format a server restores, and the edition of the venue's rules (``engine/core.py``,
#: ``RULES``) its commands were recorded under. /2 marks that commands do other things than under /1
#: (docs/journal.md, Format versions), /3 that every line is sealed; a journal goes on, when appended
#: to, under the rules and in the format it was written with
JOURNAL_RULES = {"cefisim-journal/1": 1, "cefisim-journal/2": RULES, JOURNAL_FORMAT: RULES}
SEALED_FORMATS = frozenset({JOURNAL_FORMAT})
BUFFER_BYTES = 1 << 16  # an offline run's write buffer
MAX_NS = 2**63 - 1  # a record's time: signed 64-bit nanoseconds, as every timestamp
_LINE_LIMIT = MAX_RECORD_BYTES + 1  # a read of a record line stops there: a longer line is refused
LINE = orjson.OPT_APPEND_NEWLINE


class JournalError(Exception):
    """The journal file cannot be used (unreadable, damaged, another scenario); the message names the
    file, where (record number and byte offset) and what to do."""


class JournalWriteError(Exception):
    """A record could not be written to the journal; its command was not applied."""


# --- the dialect ----------------------------------------------------------------------------------


def scenario_digest(scenario: Scenario) -> str:
    """The sha256 of a scenario's document: a journal names the scenario it was written for."""
    return hashlib.sha256(orjson.dumps(scenario.doc, option=orjson.OPT_SORT_KEYS)).hexdigest()


def scenario_name(scenario: Scenario) -> str:
    """What a journal or snapshot names its scenario by: a shipped scenario's name (``demo``), which
    restores wherever cefisim is installed; any other by its path as given."""
    source = str(scenario.source)
    if source.endswith(".json"):
        path = shipped(Path(source).stem)
        if path is not None and os.path.realpath(source) == os.path.realpath(path):
            return path.stem
    return source


def journal_header(scenario: Scenario, start_ns: int, clock: str, snapshot: dict[str, Any] | None = None) -> bytes:
    """A journal's first line, sealed."""
    header = {
        "format": JOURNAL_FORMAT,
        "scenario": scenario_name(scenario),
        "scenario_sha256": scenario_digest(scenario),
        "start_ns": start_ns,
        "clock": clock,
        **({"snapshot": snapshot} if snapshot is not None else {}),
    }
    return seal_object(orjson.dumps(header, option=orjson.OPT_SORT_KEYS))[0]


def record_json(at: int, src: str, cmd: Command | SideStateRecord) -> bytes:
    """A record as its JSON array, without a seal or line end (:meth:`JournalFile.append_records`):
    an engine command's, or a side-state record's (state kept beside the engine,
    ``api/side_state/side_states.py``), ``ext`` when a request or the control plane made it, ``scn`` when a
    scenario event did."""
    if isinstance(cmd, SideStateRecord):
        return orjson.dumps([at, src, cmd.kind, cmd.values])
    return orjson.dumps(to_record(at, src, cmd))


# --- writing --------------------------------------------------------------------------------------


class JournalFile:
    """A journal open for appending, a whole record at a time (the module docstring).

    ``sealed``: each record is sealed, chained from ``crc`` (the chain value after the last line in
    the file). ``size``: the bytes the journal holds, its whole records (a buffered one's included).
    Compiled, a C type (``journal_file.pxd``): its attributes are these slots."""

    __slots__ = ("_file", "_raw", "_target", "_write", "crc", "path", "sealed", "size")

    def __init__(self, path: Path, durable: bool = True, sealed: bool = False, crc: int = 0) -> None:
        self.path = path
        self.sealed = sealed
        self.crc = crc
        self._target: Path | None = None  # where a staged journal goes on commit()
        self._raw = open(path, "a+b", buffering=0)  # noqa: SIM115 - open for the journal's life; read to cut back
        self._file: IO[bytes] = self._raw if durable else io.BufferedWriter(self._raw, BUFFER_BYTES)
        self._write = self._file.write
        self.size = os.fstat(self._raw.fileno()).st_size

    @classmethod
    def stage(cls, path: Path, header: bytes, durable: bool = True) -> JournalFile:
        """A fresh journal holding ``header`` only, written to ``path.new``: :meth:`commit` puts it in
        the place of ``path`` (so a process killed meanwhile leaves the previous journal, or none),
        :meth:`discard` removes it. :class:`JournalWriteError` naming ``path`` when it cannot be made
        (nothing is left behind)."""
        try:
            regular_or_absent(path)
        except NotRegular as exc:
            raise JournalWriteError(f"journal {path}: {exc.strerror}") from None
        if len(header) > MAX_HEADER_BYTES:
            raise JournalWriteError(f"journal {path}: the header would exceed {MAX_HEADER_BYTES >> 20} MiB")
        staged = path.with_name(path.name + ".new")
        try:
            crc, sealed = check_object(header), True
        except ValueError:  # a header of an older format (tests, benchmarks): records unsealed
            crc, sealed = 0, False
        try:
            f = open(staged, "wb")  # noqa: SIM115 - closed below, removed if it cannot be completed
        except OSError as exc:
            raise JournalWriteError(f"journal {path} cannot be created: {exc.strerror or exc}") from None
        try:
            with f:
                f.write(header)
            journal = cls(staged, durable, sealed, crc)
        except OSError as exc:
            staged.unlink(missing_ok=True)
            raise JournalWriteError(f"journal {path} cannot be created: {exc.strerror or exc}") from None
        journal._target = path
        return journal

    @classmethod
    def create(cls, path: Path, header: bytes, durable: bool = True) -> JournalFile:
        """:meth:`stage` and :meth:`commit` at once: a fresh journal holding ``header``."""
        journal = cls.stage(path, header, durable)
        journal.commit()
        return journal

    def commit(self) -> None:
        """A staged journal takes the place of the file it was staged for (:class:`JournalWriteError`
        when it cannot: it is then discarded, and the file it would replace stays as it was)."""
        target = self._target
        assert target is not None, "commit() is for a staged journal"
        try:
            os.replace(self.path, target)
        except OSError as exc:
            self.discard()
            raise JournalWriteError(f"journal {target} cannot be replaced: {exc.strerror or exc}") from None
        self.path, self._target = target, None

    def discard(self) -> None:
        """Close a staged journal and remove its file."""
        self._raw.close()
        self.path.unlink(missing_ok=True)

    def mark(self) -> tuple[int, int]:
        """Where the journal ends now (``size``, ``crc``): :meth:`cut_to` goes back there."""
        return self.size, self.crc

    def cut_to(self, mark: tuple[int, int]) -> None:
        """Cut the journal back to a :meth:`mark` of a durable journal (what was written since is
        dropped); ``OSError`` when the file cannot be cut."""
        size, crc = mark
        if self.size != size:
            os.ftruncate(self._raw.fileno(), size)
        self.size, self.crc = size, crc

    def append_records(self, records: Iterable[bytes]) -> None:
        """Write records (:func:`record_json`) in one write, whole or not at all (:class:`JournalWriteError`)."""
        crc, lines = self.crc, []
        for data in records:
            if self.sealed:
                line, crc = seal_record(data, crc)
            else:
                line = data + b"\n"
            self._check_size(line)
            lines.append(line)
        data = b"".join(lines)
        try:
            written = self._write(data)
        except OSError as exc:
            raise self._cut_back(exc) from None
        if written != len(data):  # an unbuffered write that took part of the records
            self._rest(data, written)
        self.size += len(data)
        self.crc = crc

    def command_writer(self) -> Callable[[int, str, Command], None]:
        """The function that journals one command, ``(at, src, command)``: :meth:`append_records` of its
        :func:`record_json`, with everything it needs looked up once (it runs for every command)."""
        write, dumps, rest, cut_back = self._write, orjson.dumps, self._rest, self._cut_back
        check_size, sealed = self._check_size, self.sealed

        # to_record and seal_record by their names: compiled, direct C calls (journal_file.pxd)
        def write_command(at: int, src: str, cmd: Command) -> None:
            if sealed:
                data, crc = seal_record(dumps(to_record(at, src, cmd)), self.crc)
            else:  # a journal of an older format goes on as it was written
                data, crc = dumps(to_record(at, src, cmd), option=LINE), 0
            if len(data) > MAX_RECORD_BYTES:
                check_size(data)
            try:
                written = write(data)
            except OSError as exc:
                raise cut_back(exc) from None
            if written != len(data):
                rest(data, written)
            self.size += len(data)
            if sealed:
                self.crc = crc

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

    def _check_size(self, line: bytes) -> None:
        """A record line no reader would take (longer than ``MAX_RECORD_BYTES``) is never written."""
        if len(line) > MAX_RECORD_BYTES:
            raise JournalWriteError(
                f"journal {self.path}: a record of {len(line)} bytes exceeds the largest a journal holds "
                f"({MAX_RECORD_BYTES} bytes); nothing was changed"
            )

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
        return JournalWriteError(f"journal {self.path}: write failed: {exc.strerror or exc}")


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
    sealed: bool  # its records carry checksums (journal_seal.py)
    crc: int  # the chain value after the header line, where the records' starts


class RecordDamage(JournalError):
    """A record the journal cannot be restored past (:func:`damage`): ``number`` and ``offset`` say which."""

    def __init__(self, message: str, number: int, offset: int) -> None:
        super().__init__(message)
        self.number = number
        self.offset = offset


def damage(path: Path, number: int, offset: int, reason: str) -> RecordDamage:
    """A record the journal cannot be restored past: one line naming the file, the record (1 is the
    first after the header), its byte offset, the reason, and how to keep the records before it."""
    keep = (
        f"the {number - 1} records before it are sound: `cefisim journal fork {path} --at {number - 1} "
        "--out NEW.jsonl` copies them to a journal to serve from (docs/journal.md, Damage)"
    )
    return RecordDamage(f"journal {path}: record {number} (byte offset {offset}): {reason}; {keep}", number, offset)


def read_header(path: Path, scenario: Scenario | None) -> Header | None:
    """The header of the journal at ``path`` (None when there is none, or it is empty). Anything but a
    complete, sound header of a known format (for ``scenario``, when given) is a
    :class:`JournalError`, the file left as it is."""
    try:
        if not regular_or_absent(path):
            return None
        with open_regular(path) as f:
            line = f.readline(MAX_HEADER_BYTES + 1)
    except OSError as exc:
        raise JournalError(f"journal {path}: {exc.strerror or exc}") from None
    if not line:
        return None
    where = f"journal {path}: the header (byte offset 0)"
    if len(line) > MAX_HEADER_BYTES:
        raise JournalError(f"{where}: longer than {MAX_HEADER_BYTES >> 20} MiB; the file is left as it is")
    if not line.endswith(b"\n"):
        raise JournalError(f"{where}: incomplete ({len(line)} bytes, no line end); the file is left as it is")
    try:
        header = orjson.loads(line)
        if not isinstance(header, dict) or str(header.get("format")) not in JOURNAL_RULES:
            raise ValueError(f"not a cefisim journal header (format {' or '.join(JOURNAL_RULES)})")
        sealed = header["format"] in SEALED_FORMATS
        crc = check_object(line) if sealed else 0
        if sealed:
            del header["crc32"]
        start_ns = header.get("start_ns")
        if not isinstance(start_ns, int) or isinstance(start_ns, bool) or start_ns < 0:
            raise ValueError("start_ns must be a nanosecond timestamp")
        snapshot = header.get("snapshot")
        if snapshot is not None and not isinstance(snapshot, dict):
            raise ValueError("snapshot must be a snapshot document")
    except ValueError as exc:
        raise JournalError(f"{where}: {exc}; the file is left as it is") from None
    if scenario is not None and header.get("scenario_sha256") != scenario_digest(scenario):
        raise JournalError(f"journal {path} was written for another scenario ({header.get('scenario')})")
    return Header(start_ns, len(line), JOURNAL_RULES[header["format"]], snapshot, sealed, crc)


Record = tuple[int, int, str, Command | SideStateRecord]  # (byte offset, at, src, command or side-state record)


class Records:
    """The records of a journal file after its header, read one line at a time (memory stays flat).

    ``peek()``/``take()`` give ``(offset, at, src, command)`` (a :class:`SideStateRecord` in the place of a
    command for a kind with a dot); ``number`` is the number of the last record read (the head's).
    A last line without a line end is a torn record: reading stops before it (``complete_until``).
    Any other bad record — one that does not parse, is longer than ``MAX_RECORD_BYTES`` — is a
    :class:`RecordDamage` naming its number and byte offset (:func:`damage`).

    Checksums (``journal_seal.py``): a line's checksum covers every byte of the file before it, so the
    last complete line's checks the whole journal. :meth:`verify` does that once the records are read
    (one CRC over the file in C, no Python per line), and only when it fails does :meth:`first_damaged`
    go through the lines to name the first whose checksum does not match. Nothing a recovery applies
    reaches the file or the outside before that check: recovery is in memory until it has passed."""

    def __init__(self, f: IO[bytes], path: Path, offset: int, sealed: bool = False, crc: int = 0) -> None:
        self._f = f
        self._fd = f.fileno()
        self._readline = f.readline
        self.path = path
        self.size = os.fstat(self._fd).st_size
        self.start = offset  # the first record's byte offset, after the header
        self.complete_until = offset
        self.sealed = sealed
        self._header_crc = crc  # the chain value after the header
        self.number = 0
        self._head: Record | None = None
        self._done = False

    def peek(self) -> Record | None:
        if self._head is None and not self._done:
            self._head = self._read()
        return self._head

    def take(self) -> None:
        self._head = None

    def damage(self, offset: int, reason: str) -> RecordDamage:
        """:func:`damage` at the head (the record at ``offset``)."""
        return damage(self.path, self.number, offset, reason)

    def verify(self) -> int:
        """Check the complete records' bytes against the last one's checksum; the chain value where they
        end (which an append goes on from). :class:`RecordDamage` naming the first damaged record when
        they do not match (:meth:`first_damaged`)."""
        end = self.complete_until
        if not self.sealed or end == self.start:
            return self._header_crc
        crc = crc_of(self._fd, self.start, end - RECORD_TAIL, self._header_crc)
        seal = os.pread(self._fd, RECORD_TAIL, end - RECORD_TAIL)
        try:
            return check_seal(seal, crc)
        except ValueError:
            found = self.first_damaged(end)
            raise found if found is not None else self._gone(end) from None

    def first_damaged(self, until: int) -> RecordDamage | None:
        """The first record at or before byte ``until`` whose checksum does not match (each line checked
        in turn: only when the journal is known to be damaged), or None when all do."""
        with open(self.path, "rb") as f:
            f.seek(self.start)
            offset, crc, number = self.start, self._header_crc, 0
            while offset <= until and (line := f.readline(_LINE_LIMIT)):
                number += 1
                try:
                    crc = check_record(line, crc)
                except ValueError as exc:
                    return damage(self.path, number, offset, str(exc))
                offset += len(line)
        return None

    def _gone(self, end: int) -> RecordDamage:  # pragma: no cover - the file changed under the reading
        return damage(self.path, self.number, end, "the file changed while it was read")

    def chain(self, at: int) -> int:
        """The chain value at byte ``at`` (a line's start): the CRC-32 of the file's bytes before it."""
        return crc_of(self._fd, self.start, at, self._header_crc)

    def scenario_record_at(self, at: int) -> bool:
        """Whether, from the head on, a ``scn`` record at ``at`` comes before any record of a later time.
        Read by a second handle, so the reading position stays; only the records at ``at`` are read."""
        head = self.peek()
        if head is None:
            return False
        with open(self.path, "rb") as f:
            f.seek(head[0])
            ahead = Records(f, self.path, head[0], self.sealed)
            ahead.number = self.number - 1
            while (record := ahead.peek()) is not None and record[1] == at:
                if record[2] == "scn":
                    return True
                ahead.take()
        return False

    def _read(self) -> Record | None:
        offset = self.complete_until
        line = self._readline(_LINE_LIMIT)
        if not line:
            self._done = True
            return None
        self.number += 1
        if line[-1] != 10 or len(line) > MAX_RECORD_BYTES:  # 10: a line end
            self._odd(line, offset)
            return None
        try:
            record = orjson.loads(line)
            if self.sealed:
                record.pop()  # the checksum (the record left must be [at, src, kind, values])
            cmd: Command | SideStateRecord
            try:
                at, src, cmd = from_record(record)
            except ValueError as exc:  # not an engine command: a side-state record, or damage
                at, src, cmd = _side_state_record(record, exc)
            if src != "scn":  # the scenario's own are checked by their regeneration
                if src != "ext":
                    raise ValueError(f"unknown source {src!r}")
                if not 0 <= at <= MAX_NS:
                    raise ValueError(f"at {at} is not a nanosecond timestamp")
        except (ValueError, TypeError, AttributeError, IndexError, RecursionError) as exc:
            raise self.damage(offset, str(exc) or type(exc).__name__) from None
        self.complete_until = offset + len(line)
        return offset, at, src, cmd

    def _odd(self, line: bytes, offset: int) -> None:
        """A line over the limit (damage) or a last line without its end: a write a stop tore, or damage
        when it is a whole record followed by another byte."""
        if len(line) > MAX_RECORD_BYTES:
            raise self.damage(offset, f"longer than the largest record a journal holds ({MAX_RECORD_BYTES} bytes)")
        if self.sealed and not torn(line, self.chain(offset), True):
            raise self.damage(offset, "its line end was changed (a whole record followed by another byte)")
        log.warning(
            "journal %s: record %d (byte offset %d): incomplete last record (%d bytes, a write torn by a "
            "stop, never answered): left out, and cut off by a server going on with the journal",
            self.path,
            self.number,
            offset,
            len(line),
        )
        self._done = True


def _side_state_record(record: Any, refused: ValueError) -> tuple[int, str, SideStateRecord]:
    """A record the engine refused (``refused``) read as a side-state record (a kind with a dot), or that
    refusal. Asked only after the engine's reading fails, so that its records cost nothing more."""
    if not (isinstance(record, list) and len(record) == 4 and isinstance(record[2], str) and "." in record[2]):
        raise refused
    at, src, kind, values = record
    if not isinstance(at, int) or isinstance(at, bool) or src not in ("ext", "scn") or not isinstance(values, list):
        raise ValueError(f'{kind}: a side-state record is [at, "ext" or "scn", kind, values]')
    return at, src, SideStateRecord(kind, values)
