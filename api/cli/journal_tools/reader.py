"""A journal read as numbered records, one line at a time (memory stays flat on any length).

Every journal cefisim writes has the same shape (``docs/journal.md``): a JSON header line naming the
format (``cefisim-journal/…``), then one record ``[at, src, kind, values]`` a line (sealed with a
checksum chain from format /3 on, ``api/runtime/journal_seal.py``). Records are numbered from 1 after
the header. This reader does not rebuild commands: a kind it does not know is kept as it is, so a
journal written by a newer cefisim still shows. Anything else is damage: :class:`JournalDamage` names
the file, the record number, its byte offset and the reason — a record that is not ``[at, src, kind,
values]``, whose checksum does not match, that is longer than the largest record a journal holds, or
whose values nest deeper than :data:`MAX_DEPTH`. Only regular files are read.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from cefisim.api.runtime.journal_file import JOURNAL_RULES, SEALED_FORMATS
from cefisim.api.runtime.journal_seal import (
    MAX_HEADER_BYTES,
    MAX_RECORD_BYTES,
    check_object,
    check_record,
    open_regular,
    torn,
)

FORMAT_PREFIX = "cefisim-journal/"
MAX_DEPTH = 32  # nesting of a record's values: a command's are at most three deep


class JournalDamage(Exception):
    """A journal cannot be read: the message names the file, where (record number or header) and why."""


@dataclass(frozen=True, slots=True)
class Record:
    """One journal record: its number (1 = the first after the header) and its four parts."""

    number: int
    at: int
    src: str
    kind: str
    values: list[Any]
    line: bytes  # as written, line end included (a fork copies it unchanged)


def read_header(f: IO[bytes], path: Path) -> tuple[dict[str, Any], bytes, bool, int]:
    """The header (parsed), its line, whether its records are sealed and the checksum their chain
    starts from, read from the start of ``f``."""
    line = f.readline(MAX_HEADER_BYTES + 1)
    if not line:
        raise JournalDamage(f"{path}: empty file, not a cefisim journal")
    where = f"{path}: header (byte offset 0)"
    if len(line) > MAX_HEADER_BYTES:
        raise JournalDamage(f"{where}: longer than {MAX_HEADER_BYTES >> 20} MiB")
    if not line.endswith(b"\n"):
        raise JournalDamage(f"{where}: incomplete line ({len(line)} bytes, no line end)")
    try:
        header = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise JournalDamage(f"{where}: not JSON ({exc})") from None
    fmt = header.get("format") if isinstance(header, dict) else None
    if not isinstance(fmt, str) or not fmt.startswith(FORMAT_PREFIX):
        raise JournalDamage(f"{where}: not a cefisim journal (no format {FORMAT_PREFIX}N)")
    # a format this version does not know (a newer cefisim's) is sealed when its header is
    sealed = fmt in SEALED_FORMATS or (fmt not in JOURNAL_RULES and "crc32" in header)
    crc = 0
    if sealed:
        try:
            crc = check_object(line)
        except ValueError as exc:
            raise JournalDamage(f"{where}: {exc}") from None
        del header["crc32"]
    start = header.get("start_ns")
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        raise JournalDamage(f"{where}: start_ns must be a nanosecond timestamp")
    return header, line, sealed, crc


def parse_record(line: bytes, number: int, offset: int, path: Path, sealed: bool, crc: int) -> tuple[Record, int]:
    """One record line and the chain value after it; :class:`JournalDamage` naming ``number`` and
    ``offset`` when it is not a sound record."""
    where = f"{path}: record {number} (byte offset {offset})"
    try:
        crc = check_record(line, crc) if sealed else crc
    except ValueError as exc:
        raise JournalDamage(f"{where}: {exc}") from None
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise JournalDamage(f"{where}: not JSON ({exc})") from None
    if sealed and isinstance(doc, list) and len(doc) == 5:
        del doc[4]
    if not isinstance(doc, list) or len(doc) != 4:
        raise JournalDamage(f"{where}: not a record [at, src, kind, values]")
    at, src, kind, values = doc
    if not isinstance(at, int) or isinstance(at, bool) or at < 0:
        raise JournalDamage(f"{where}: at must be a nanosecond timestamp")
    if not isinstance(src, str) or not isinstance(kind, str) or not isinstance(values, list):
        raise JournalDamage(f"{where}: src and kind must be strings, values a list")
    if _deeper_than(values, MAX_DEPTH):
        raise JournalDamage(f"{where}: its values nest deeper than {MAX_DEPTH} levels")
    return Record(number, at, src, kind, values, line), crc


def _deeper_than(values: list[Any], most: int) -> bool:
    """Whether ``values`` nests lists or objects more than ``most`` deep (iteratively: no recursion)."""
    level: list[Any] = [values]
    depth = 0
    while level:
        depth += 1
        if depth > most:
            return True
        level = [
            item
            for node in level
            for item in (node.values() if isinstance(node, dict) else node)
            if isinstance(item, list | dict)
        ]
    return False


class Journal:
    """An open journal: ``header`` and ``header_line`` read at once, :meth:`records` streamed.

    Use as a context manager; opening raises :class:`JournalDamage` (also for an unreadable file)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._f: IO[bytes] = open_regular(self.path)
        except OSError as exc:
            raise JournalDamage(f"{self.path}: {exc.strerror or exc}") from None
        try:
            self.header, self.header_line, self._sealed, self._crc = read_header(self._f, self.path)
        except BaseException:
            self._f.close()
            raise

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()

    def records(self) -> Iterator[Record]:
        """Every record in order, numbered from 1; a damaged one raises when it is reached. A last line
        without its line end is a torn write (a server killed while writing it, which a restart cuts
        off): it ends the records, with a warning on stderr."""
        offset, crc, number = len(self.header_line), self._crc, 0
        while line := self._f.readline(MAX_RECORD_BYTES + 1):
            number += 1
            if len(line) > MAX_RECORD_BYTES:
                raise JournalDamage(
                    f"{self.path}: record {number} (byte offset {offset}): longer than the largest record a "
                    f"journal holds ({MAX_RECORD_BYTES} bytes)"
                )
            if not line.endswith(b"\n"):
                if not torn(line, crc, self._sealed):
                    raise JournalDamage(
                        f"{self.path}: record {number} (byte offset {offset}): its line end was changed "
                        "(a whole record followed by another byte)"
                    )
                print(
                    f"{self.path}: record {number} (byte offset {offset}): incomplete last line ({len(line)} "
                    "bytes) left out",
                    file=sys.stderr,
                )
                return
            record, crc = parse_record(line, number, offset, self.path, self._sealed, crc)
            offset += len(line)
            yield record
