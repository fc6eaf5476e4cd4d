"""The record of a server's created venues beside its journal: which are live, and what each is made of.

Contract (``FILE.venues/`` for a server with ``--journal FILE``; ``docs/venues.md``, "Journal"):

- ``{id}.venue.json`` holds one venue's record (:meth:`VenueManifest.write_record`): its shipped
  scenario's name, its scenario document with its credentials, and the digest of each file it read
  (``venue_files.py``). Sealed with its checksum (``journal_seal.py``), written whole and fsync'd, then
  renamed into place; readable by the owner only. A record that does not match its checksum is refused
  (``ValueError``: its venue is set aside); one of an earlier cefisim, without a checksum, is read as
  it is (the venue's journal still checks its scenario's digest).
- ``manifest.jsonl`` lists the live venues, one line each, ``{"op": "create", "id": "v3", "record": 2,
  "crc32": "…"}``, each line sealed with the CRC-32 of the file's bytes before its seal (a line of an
  earlier cefisim, unsealed, counts as its bytes), appended and fsync'd before a create is answered.
  A delete rewrites it (staged, fsync'd, renamed), so it holds live venues only; a restart rewrites it
  the same way. A last line ``{"op": "delete", "id": ...}`` carries the highest id ever used, so ids
  are never reused.
- :meth:`VenueManifest.read` streams it a line at a time. A torn last line (a create that was never
  answered) is cut off. A damaged line — one that is not JSON, is not a create or delete line of a
  venue id, or whose checksum does not match — keeps no other venue from serving: it is returned in
  :attr:`Read.damaged` with its line number, the venue id it names (when one can be read from it) and
  why, and the venue is set aside (``venues.py``); the line is kept as it is when the manifest is
  rewritten. A create line without ``"record": 2`` was written by an earlier cefisim, which kept the
  whole document in the line and derived credentials anyone could compute: such a venue is listed as
  set aside, its line and journal kept as they are.
- Only regular files are read, at most :data:`MAX_LINE_BYTES` a line or a record.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from cefisim.api.runtime.journal_seal import (
    OBJECT_TAIL,
    check_object,
    is_sealed_object,
    open_regular,
    seal_object,
    stored_after,
)

MANIFEST = "manifest.jsonl"
RECORD_FORMAT = 2
MAX_LINE_BYTES = 64 << 20  # a manifest line of an earlier cefisim held a whole document (16 MiB at most)
_ID = re.compile(r"v[1-9][0-9]{0,8}")
_ID_IN = re.compile(rb'"id"\s*:\s*"(v[1-9][0-9]{0,8})"')
_CREATE_KEYS = {"op", "id", "record"}


@dataclass(frozen=True)
class Entry:
    """One line of the manifest kept for a venue: its id and, for a line of an earlier cefisim
    (``legacy``) or a damaged one (``damaged``: why), the line's bytes, written back as they are."""

    id: str
    legacy: bytes | None = None
    damaged: str | None = None


@dataclass
class Read:
    """What :meth:`VenueManifest.read` found: the venues it leaves alive (in creation order), the
    highest id it ever used, and its damaged lines: ``(line number, the line as an entry)``, the entry's
    id empty when no venue id can be read from the line."""

    entries: list[Entry] = field(default_factory=list)
    highest: int = 0
    damaged: list[tuple[int, Entry]] = field(default_factory=list)


class VenueManifest:
    """The files of ``folder`` that record a server's created venues."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._file: IO[bytes] | None = None
        self._crc = 0  # the chain value after the manifest's last line (read or written)

    @property
    def path(self) -> Path:
        return self.folder / MANIFEST

    def record_path(self, venue_id: str) -> Path:
        return self.folder / f"{venue_id}.venue.json"

    def read(self) -> Read:
        """The manifest's venues (see the module docstring); a torn last line is cut off.
        ``OSError`` when the file cannot be read at all."""
        out = Read()
        if not self.path.exists():
            return out
        live: dict[str, Entry] = {}
        # the chain values the next line may start from: one, or after a damaged line the value it
        # carries and the one its bytes give (the damage may be in either), so the sound lines after
        # it are still told sound
        chain: tuple[int, ...] = (0,)
        with open_regular(self.path) as f:
            complete, number = 0, 0
            while line := f.readline(MAX_LINE_BYTES + 1):
                number += 1
                reason = ""
                if len(line) > MAX_LINE_BYTES:  # never written by cefisim: its start kept, the rest skipped
                    complete += len(line)
                    while not line.endswith(b"\n") and (rest := f.readline(MAX_LINE_BYTES)):
                        complete += len(rest)
                        line = line[:4096] + rest[-1:]
                    line, reason = line[:4096] + b"\n", f"longer than {MAX_LINE_BYTES >> 20} MiB"
                elif not line.endswith(b"\n"):
                    self._cut(complete)  # a torn last line: that create or delete was never answered
                    break
                else:
                    complete += len(line)
                    try:
                        entry, op, after = _parse(line, chain)
                    except ValueError as exc:
                        reason = str(exc)
                if reason:  # go on from what the line would chain as were its body or its seal sound
                    stored = stored_after(line)
                    chain = (*([stored] if stored is not None else []), *(_sealed_after(line, c) for c in chain))
                    chain = tuple(dict.fromkeys(chain))[:4]
                else:
                    chain = (after,)
                if reason:
                    found = _ID_IN.search(line[:4096])
                    venue_id = found.group(1).decode() if found else ""
                    out.damaged.append((number, Entry(venue_id, line, f"{self.path} line {number}: {reason}")))
                    if venue_id:
                        live.pop(venue_id, None)
                        out.highest = max(out.highest, int(venue_id[1:]))
                    continue
                out.highest = max(out.highest, int(entry.id[1:]))
                if op == "create":
                    live[entry.id] = entry
                else:
                    live.pop(entry.id, None)
        self._crc = chain[0]
        out.entries = list(live.values())
        return out

    def read_record(self, venue_id: str) -> dict[str, Any]:
        """A venue's record; ``ValueError`` naming the file when it is damaged (``OSError`` unreadable)."""
        path = self.record_path(venue_id)
        with open_regular(path) as f:
            data = f.read(MAX_LINE_BYTES + 1)
        if len(data) > MAX_LINE_BYTES:
            raise ValueError(f"{path.name}: larger than {MAX_LINE_BYTES >> 20} MiB")
        if is_sealed_object(data):
            try:
                check_object(data, what=path.name)
            except ValueError as exc:
                raise ValueError(str(exc)) from None
        try:
            record = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"{path.name}: not JSON ({exc})") from None
        if not isinstance(record, dict) or record.get("id") != venue_id:
            raise ValueError(f"{path.name}: not the record of venue {venue_id}")
        record.pop("crc32", None)
        return record

    def write_record(self, venue_id: str, record: dict[str, Any]) -> None:
        """``OSError`` when it cannot be written (nothing is left behind)."""
        self._mkdir()
        _replace(self.record_path(venue_id), seal_object(orjson.dumps(record))[0])

    def append(self, venue_id: str) -> None:
        """Record a create (the venue's record already written), fsync'd; ``OSError`` when it cannot be,
        and then the manifest is as it was."""
        if self._file is None:
            self._mkdir()
            self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115 - closed in close()
        fd = self._file.fileno()
        size = os.fstat(fd).st_size
        line, crc = seal_object(orjson.dumps({"op": "create", "id": venue_id, "record": RECORD_FORMAT}), self._crc)
        try:
            view = memoryview(line)
            while view:
                view = view[self._file.write(view) :]
            os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, size)
            finally:
                self.close()
            raise
        self._crc = crc

    def rewrite(self, live: list[Entry], highest: int) -> None:
        """The manifest of ``live`` alone (compacted), the id counter kept; replaces the file at once.
        ``OSError`` when it cannot be written, and then the manifest is as it was."""
        self.close()
        self._mkdir()
        lines, crc = [], 0
        for entry in live:
            if entry.legacy is not None:
                line = entry.legacy  # an earlier cefisim's, or a damaged one: as it was
            elif entry.damaged is not None:
                continue  # set aside with no line of its own: it gets none
            else:
                line, _ = seal_object(orjson.dumps({"op": "create", "id": entry.id, "record": RECORD_FORMAT}), crc)
            crc = _chain_after(line, crc)
            lines.append(line)
        if highest and f"v{highest}" not in {e.id for e in live}:
            line, crc = seal_object(orjson.dumps({"op": "delete", "id": f"v{highest}"}), crc)
            lines.append(line)
        _replace(self.path, b"".join(lines))
        self._crc = crc

    def remove_record(self, venue_id: str) -> None:
        self.record_path(venue_id).unlink(missing_ok=True)

    def records(self) -> Iterator[str]:
        """Ids of every venue record in the folder (live or left by a create never answered)."""
        if self.folder.is_dir():
            for p in self.folder.glob("v*.venue.json"):
                venue_id = p.name.removesuffix(".venue.json")
                if _ID.fullmatch(venue_id):
                    yield venue_id

    def journals(self) -> Iterator[str]:
        """Ids of every venue journal in the folder."""
        if self.folder.is_dir():
            for p in self.folder.glob("v*.jsonl"):
                if _ID.fullmatch(p.stem):
                    yield p.stem

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _cut(self, size: int) -> None:
        with open(self.path, "r+b") as f:
            f.truncate(size)
            os.fsync(f.fileno())

    def _mkdir(self) -> None:
        self.folder.mkdir(mode=0o700, exist_ok=True)


def _parse(line: bytes, chain: tuple[int, ...]) -> tuple[Entry, str, int]:
    """A sound manifest line as an entry, its op and the chain value after it (it starts from one of
    ``chain``); ``ValueError`` saying what is wrong."""
    if len(line) > MAX_LINE_BYTES:
        raise ValueError(f"longer than {MAX_LINE_BYTES >> 20} MiB")
    sealed = is_sealed_object(line)
    after = zlib.crc32(line, chain[0])  # an unsealed line (of an earlier cefisim) chains as its bytes
    if sealed:
        for n, start in enumerate(chain):
            try:
                after = check_object(line, start, "the line")
                break
            except ValueError:
                if n == len(chain) - 1:
                    raise
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(record, dict):
        raise ValueError("not an object")
    if sealed:
        del record["crc32"]
    op, venue_id = record.get("op"), record.get("id")
    if op not in ("create", "delete") or not isinstance(venue_id, str) or not _ID.fullmatch(venue_id):
        raise ValueError('not a line {"op": "create" or "delete", "id": "v…"}')
    if op == "delete":
        if set(record) != {"op", "id"}:
            raise ValueError("a delete line holds op and id only")
        return Entry(venue_id), op, after
    if record.get("record") == RECORD_FORMAT:
        if set(record) != _CREATE_KEYS:
            raise ValueError("a create line holds op, id and record only")
        return Entry(venue_id), op, after
    if sealed or "record" in record:
        raise ValueError(f"record must be {RECORD_FORMAT}")
    return Entry(venue_id, line), op, after  # an earlier cefisim's line, which held the whole document


def _sealed_after(line: bytes, crc: int) -> int:
    """The chain value after ``line`` as if its seal were the right one for its body (the damage in the
    seal alone), given the value before it; an unsealed line chains as its bytes."""
    if not is_sealed_object(line):
        return zlib.crc32(line, crc)
    return seal_object(line[:-OBJECT_TAIL] + b"}", crc)[1]


def _chain_after(line: bytes, crc: int) -> int:
    """The chain value after a line written back as it was (an earlier cefisim's, or a damaged one): as
    its own seal tells it when it carries one (what a reader goes on from after it), else the CRC-32 of
    its bytes chained from ``crc``."""
    stored = stored_after(line)
    return stored if stored is not None else zlib.crc32(line, crc)


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: staged beside it, fsync'd, renamed, the folder fsync'd;
    ``OSError`` when it cannot be, and then nothing is left behind."""
    staged = path.with_name(path.name + ".new")
    try:
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(staged, path)
    except OSError:
        staged.unlink(missing_ok=True)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
