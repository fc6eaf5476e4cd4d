"""A journal read as numbered records, one line at a time (memory stays flat on any length).

Every journal cefisim writes has the same shape (``docs/journal.md``): a JSON header line naming the
format (``cefisim-journal/…``), then one record ``[at, src, kind, values]`` a line. Records are
numbered from 1 after the header. This reader does not rebuild commands: a kind it does not know is
kept as it is, so a journal written by a newer cefisim still shows. A record that is not
``[at, src, kind, values]`` is damage: :class:`JournalDamage` names the file, the record number and
the reason.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from cefisim.api.runtime.journal_file import MAX_HEADER_BYTES

FORMAT_PREFIX = "cefisim-journal/"


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


def read_header(f: IO[bytes], path: Path) -> tuple[dict[str, Any], bytes]:
    """The header (parsed) and its line, read from the start of ``f``."""
    line = f.readline(MAX_HEADER_BYTES)
    if not line:
        raise JournalDamage(f"{path}: empty file, not a cefisim journal")
    if not line.endswith(b"\n"):
        raise JournalDamage(f"{path}: header: incomplete line ({len(line)} bytes, no line end)")
    try:
        header = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise JournalDamage(f"{path}: header: not JSON ({exc})") from None
    fmt = header.get("format") if isinstance(header, dict) else None
    if not isinstance(fmt, str) or not fmt.startswith(FORMAT_PREFIX):
        raise JournalDamage(f"{path}: header: not a cefisim journal (no format {FORMAT_PREFIX}N)")
    start = header.get("start_ns")
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        raise JournalDamage(f"{path}: header: start_ns must be a nanosecond timestamp")
    return header, line


def parse_record(line: bytes, number: int, path: Path) -> Record:
    """One record line; :class:`JournalDamage` naming ``number`` when it is not a record."""
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise JournalDamage(f"{path}: record {number}: not JSON ({exc})") from None
    if not isinstance(doc, list) or len(doc) != 4:
        raise JournalDamage(f"{path}: record {number}: not a record [at, src, kind, values]")
    at, src, kind, values = doc
    if not isinstance(at, int) or isinstance(at, bool) or at < 0:
        raise JournalDamage(f"{path}: record {number}: at must be a nanosecond timestamp")
    if not isinstance(src, str) or not isinstance(kind, str) or not isinstance(values, list):
        raise JournalDamage(f"{path}: record {number}: src and kind must be strings, values a list")
    return Record(number, at, src, kind, values, line)


class Journal:
    """An open journal: ``header`` and ``header_line`` read at once, :meth:`records` streamed.

    Use as a context manager; opening raises :class:`JournalDamage` (also for an unreadable file)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._f: IO[bytes] = open(self.path, "rb")  # noqa: SIM115 - closed by __exit__
        except OSError as exc:
            raise JournalDamage(f"{self.path}: {exc.strerror or exc}") from None
        try:
            self.header, self.header_line = read_header(self._f, self.path)
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
        for number, line in enumerate(self._f, start=1):
            if not line.endswith(b"\n"):
                print(
                    f"{self.path}: record {number}: incomplete last line ({len(line)} bytes) left out", file=sys.stderr
                )
                return
            yield parse_record(line, number, self.path)
