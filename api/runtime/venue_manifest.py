"""The record of a server's created venues beside its journal: which are live, and what each is made of.

Contract (``FILE.venues/`` for a server with ``--journal FILE``; ``docs/venues.md``, "Journal"):

- ``{id}.venue.json`` holds one venue's record (:meth:`VenueManifest.write_record`): its shipped
  scenario's name, its scenario document with its credentials, and the digest of each file it read
  (``venue_files.py``). Written whole and fsync'd, then renamed into place; readable by the owner only.
- ``manifest.jsonl`` lists the live venues, one line each, ``{"op": "create", "id": "v3", "record": 2}``,
  appended and fsync'd before a create is answered. A delete rewrites it (staged, fsync'd, renamed),
  so it holds live venues only; a restart rewrites it the same way. A last line
  ``{"op": "delete", "id": ...}`` carries the highest id ever used, so ids are never reused.
- :meth:`VenueManifest.read` streams it a line at a time (a torn last line, a create that was never
  answered, is cut off). A create line without ``"record": 2`` was written by an earlier cefisim,
  which kept the whole document in the line and derived credentials anyone could compute: such a
  venue is listed as set aside, its line and journal kept as they are.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

MANIFEST = "manifest.jsonl"
RECORD_FORMAT = 2


@dataclass(frozen=True)
class Entry:
    """One create line of the manifest: its venue id and, for a line of an earlier cefisim, its bytes."""

    id: str
    legacy: bytes | None = None


class VenueManifest:
    """The files of ``folder`` that record a server's created venues."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._file: IO[bytes] | None = None

    @property
    def path(self) -> Path:
        return self.folder / MANIFEST

    def record_path(self, venue_id: str) -> Path:
        return self.folder / f"{venue_id}.venue.json"

    def read(self) -> tuple[list[Entry], int]:
        """The venues the manifest leaves alive, in creation order, and the highest id it ever used."""
        path = self.path
        if not path.exists():
            return [], 0
        live: dict[str, Entry] = {}
        highest = 0
        with open(path, "r+b") as f:
            complete = 0
            for line in f:
                if not line.endswith(b"\n"):
                    f.truncate(complete)  # a torn last line: that create or delete was never answered
                    os.fsync(f.fileno())
                    break
                complete += len(line)
                record = orjson.loads(line)
                highest = max(highest, int(record["id"][1:]))
                if record["op"] != "create":
                    live.pop(record["id"], None)
                elif record.get("record") == RECORD_FORMAT:
                    live[record["id"]] = Entry(record["id"])
                else:
                    live[record["id"]] = Entry(record["id"], line)
        return list(live.values()), highest

    def read_record(self, venue_id: str) -> dict[str, Any]:
        data = orjson.loads(self.record_path(venue_id).read_bytes())
        if not isinstance(data, dict) or data.get("id") != venue_id:
            raise ValueError(f"{self.record_path(venue_id).name}: not the record of venue {venue_id}")
        return data

    def write_record(self, venue_id: str, record: dict[str, Any]) -> None:
        self._mkdir()
        _replace(self.record_path(venue_id), orjson.dumps(record))

    def append(self, venue_id: str) -> None:
        """Record a create (the venue's record already written), fsync'd."""
        if self._file is None:
            self._mkdir()
            self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115 - closed in close()
        self._file.write(orjson.dumps({"op": "create", "id": venue_id, "record": RECORD_FORMAT}) + b"\n")
        os.fsync(self._file.fileno())

    def rewrite(self, live: list[Entry], highest: int) -> None:
        """The manifest of ``live`` alone (compacted), the id counter kept; replaces the file at once."""
        self.close()
        self._mkdir()
        lines = [e.legacy or orjson.dumps({"op": "create", "id": e.id, "record": RECORD_FORMAT}) + b"\n" for e in live]
        if highest and f"v{highest}" not in {e.id for e in live}:
            lines.append(orjson.dumps({"op": "delete", "id": f"v{highest}"}) + b"\n")
        _replace(self.path, b"".join(lines))

    def remove_record(self, venue_id: str) -> None:
        self.record_path(venue_id).unlink(missing_ok=True)

    def records(self) -> Iterator[str]:
        """Ids of every venue record in the folder (live or left by a create never answered)."""
        if self.folder.is_dir():
            yield from (p.name.removesuffix(".venue.json") for p in self.folder.glob("v*.venue.json"))

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _mkdir(self) -> None:
        self.folder.mkdir(mode=0o700, exist_ok=True)


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: staged beside it, fsync'd, renamed, the folder fsync'd."""
    staged = path.with_name(path.name + ".new")
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(staged, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
