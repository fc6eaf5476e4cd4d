"""The integrity of a journal's lines: a CRC-32 chain over every line, bounds on what is read, regular
files only (``docs/journal.md``, Integrity).

A journal of format ``cefisim-journal/3`` seals each line it writes (and the venues' manifest and
records beside a server's journal are sealed the same way, ``venue_manifest.py``). The header is a JSON object whose
last key is ``"crc32"``; a record is a JSON array whose fifth and last item is its checksum:

    {"clock":"wall",...,"start_ns":1793610000000000000,"crc32":"5d0a3b1c"}
    [1793610000000000001,"ext","place",[...],"9f0e12ab"]

The checksum is the CRC-32 (``zlib.crc32``, 8 lowercase hex digits) of the line's bytes before the
seal (the header up to and without its ``,"crc32":…}``, a record up to and without its ``,"…"]``),
started from the checksum of the line before it (the header's from 0). A chain, not one checksum per
line: a record changed, deleted, duplicated or moved, or a header swapped for another, breaks the
checksum of the first line after the damage. A line stays a JSON line any tool reads; checking one
costs one C call over its bytes and a compare of 8 bytes, with no parsing.

Why CRC-32 of the standard library: it catches every error of up to 32 bits in a row and every odd
number of flipped bits, and random damage with a chance of 2**-32 of being missed; CRC-32C would
catch a few more patterns but needs a package, and a cryptographic hash chain would only add
protection against someone who means to forge a journal, who can write the file anyway.

Bounds: a record line is at most :data:`MAX_RECORD_BYTES`, a header line at most
:data:`MAX_HEADER_BYTES` (it may hold a snapshot); a reader reads no more than that before it refuses
the line, so memory stays bounded whatever the file holds. :func:`open_regular` opens only regular
files, without blocking on a FIFO.
"""

from __future__ import annotations

import errno
import os
import stat
import zlib
from pathlib import Path
from typing import IO

MAX_RECORD_BYTES = 1 << 20  # one record: a command is far smaller (a request body is 64 KiB by default)
MAX_HEADER_BYTES = 512 << 20  # a header may hold a snapshot (POST /_sim/snapshot takes up to 256 MiB)
RECORD_SEAL = b',"%08x"]\n'
OBJECT_SEAL = b',"crc32":"%08x"}\n'
_RECORD_TAIL = len(RECORD_SEAL % 0)  # 13 bytes: ,"xxxxxxxx"]\n
_OBJECT_TAIL = len(OBJECT_SEAL % 0)  # 21 bytes: ,"crc32":"xxxxxxxx"}\n
MISMATCH = "its checksum does not match: it, or a record before it, was changed, removed or moved"


class NotRegular(OSError):
    """A path that names something other than a regular file (a device, a FIFO, a folder)."""


def seal_record(data: bytes, crc: int) -> tuple[bytes, int]:
    """``data`` (a record as a JSON array, no line end) sealed, with its line end; and the chain value
    after it, given ``crc``, the value before it."""
    body = data[:-1]
    crc = zlib.crc32(body, crc)
    return body + RECORD_SEAL % crc, crc


def check_record(line: bytes, crc: int) -> int:
    """The chain value after ``line`` (a sealed record line, line end included), given the value
    before it; ``ValueError`` saying what is wrong when the line is not sealed or does not match."""
    if line[-_RECORD_TAIL : -_RECORD_TAIL + 2] != b',"' or line[-3:] != b'"]\n':
        raise ValueError("it carries no checksum (a record of cefisim-journal/3 ends with one)")
    crc = zlib.crc32(memoryview(line)[:-_RECORD_TAIL], crc)
    if line[-_RECORD_TAIL + 2 : -3] != b"%08x" % crc:
        raise ValueError(MISMATCH)
    return crc


def torn(line: bytes, crc: int, sealed: bool) -> bool:
    """Whether ``line``, a last line without its line end, is a write a stop tore (a prefix of a record,
    cut off and never answered) rather than damage: a sealed record whose line end alone was changed
    into another byte is damage, since a torn write leaves a prefix and changes no byte."""
    if not sealed or len(line) <= _RECORD_TAIL:
        return True
    try:
        check_record(line[:-1] + b"\n", crc)
    except ValueError:
        return True
    return False


def seal_object(data: bytes, crc: int = 0) -> tuple[bytes, int]:
    """``data`` (a JSON object, no line end: a header, a line of the venues' manifest, a venue's record)
    sealed with a last key ``"crc32"``, with its line end; and its checksum, chained from ``crc``."""
    body = data[:-1]
    crc = zlib.crc32(body, crc)
    return body + OBJECT_SEAL % crc, crc


def is_sealed_object(line: bytes) -> bool:
    """Whether ``line`` ends as a sealed object does (its checksum not checked)."""
    return line[-_OBJECT_TAIL : -_OBJECT_TAIL + 10] == b',"crc32":"' and line[-3:] == b'"}\n'


def check_object(line: bytes, crc: int = 0, what: str = "the header") -> int:
    """The checksum of a sealed object line (chained from ``crc``); ``ValueError`` when it carries none
    or it does not match."""
    if not is_sealed_object(line):
        raise ValueError(f"{what} carries no checksum")
    crc = zlib.crc32(memoryview(line)[:-_OBJECT_TAIL], crc)
    if line[-_OBJECT_TAIL + 10 : -3] != b"%08x" % crc:
        raise ValueError(f"{what}'s checksum does not match: it was changed")
    return crc


def stored_checksum(line: bytes) -> int | None:
    """The checksum a sealed object line says it has (None when it has no readable one)."""
    digits = line[-_OBJECT_TAIL + 10 : -3]
    if not is_sealed_object(line) or len(digits) != 8 or digits.strip(b"0123456789abcdef"):
        return None
    return int(digits, 16)


def open_regular(path: Path) -> IO[bytes]:
    """``path`` opened for reading, if it is a regular file (:class:`NotRegular` otherwise, before a
    byte is read: opened non-blocking, so a FIFO does not wait for a writer); ``OSError`` as ``open``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def regular_or_absent(path: Path) -> bool:
    """Whether ``path`` exists (then as a regular file: :class:`NotRegular` otherwise)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(mode):
        raise NotRegular(errno.EINVAL, "not a regular file", str(path))
    return True
