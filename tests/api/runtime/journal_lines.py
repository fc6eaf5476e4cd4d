"""Journals rewritten by tests: as an older format (no checksums), or sealed again after an edit.

A journal of the current format seals every line with a CRC-32 chain (``api/runtime/journal_seal.py``);
a test that edits records on purpose (a kind a newer cefisim writes, a record a scenario would not
regenerate) seals the result again so that what it tests is reached, not the checksum.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from cefisim.api.runtime.journal_seal import seal_object, seal_record


def as_format(path: Path, fmt: str) -> None:
    """Rewrite the sealed journal at ``path`` as format ``fmt`` of before the checksums (/1, /2):
    the header without its ``crc32``, every record without its fifth item."""
    header, *records = path.read_bytes().splitlines()
    doc = orjson.loads(header)
    assert doc.pop("crc32", None) is not None, "a sealed journal"
    doc["format"] = fmt
    out = [orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)]
    out += [orjson.dumps(orjson.loads(line)[:4]) for line in records]
    path.write_bytes(b"\n".join(out) + b"\n")


def resealed(header: dict | bytes, records: list[list | bytes]) -> bytes:
    """A sealed journal of ``header`` and ``records`` (each a decoded record of four parts, or a line as
    written, whose seal is dropped), every checksum computed again."""
    doc = orjson.loads(header) if isinstance(header, bytes) else dict(header)
    doc.pop("crc32", None)
    line, crc = seal_object(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS))
    out = [line]
    for record in records:
        parts = orjson.loads(record)[:4] if isinstance(record, bytes) else record
        line, crc = seal_record(orjson.dumps(parts), crc)
        out.append(line)
    return b"".join(out)


def reseal_file(path: Path, edit: object = None) -> None:
    """Seal the journal at ``path`` again after its lines were edited (``edit``, if given, is called
    with the list of decoded records, header excluded, to change it in place first)."""
    header, *lines = path.read_bytes().splitlines()
    records = [orjson.loads(line)[:4] for line in lines]
    if callable(edit):
        edit(records)
    path.write_bytes(resealed(header, records))


def records(path: Path) -> list[list]:
    """The records of the journal at ``path`` after its header, each as its four parts ``[at, src, kind,
    values]`` (a sealed line's fifth item, its checksum, dropped)."""
    return [orjson.loads(line)[:4] for line in path.read_bytes().splitlines()[1:]]
