"""The integrity of a journal's lines: a CRC-32 over the file's bytes, sealed into every line; bounds on
what is read; regular files only (``docs/journal.md``, Integrity).

A journal of format ``cefisim-journal/3`` seals each line it writes (and the venues' manifest and
records beside a server's journal are sealed the same way, ``venue_manifest.py``). The header is a
JSON object whose last key is ``"crc32"``; a record is a JSON array whose fifth and last item is its
checksum:

    {"clock":"wall",...,"start_ns":1793610000000000000,"crc32":"5d0a3b1c"}
    [1793610000000000001,"ext","place",[...],"9f0e12ab"]

A line's checksum is the CRC-32 (``zlib.crc32``, 8 lowercase hex digits) of every byte of the file
before its seal: every line before it, seals and line ends included, then its own bytes up to the seal
(``,"crc32":"…"}`` of an object, ``,"…"]`` of a record). So a record changed, deleted, duplicated or
moved, or a header swapped for another, breaks the checksum of the first line checked after the
damage; any CRC-32 tool computes one from the file alone. The lines stay JSON lines any tool reads.

The chain value this module passes around is the CRC-32 of the file's bytes up to a point (the end of
a line): :func:`seal_record` and :func:`check_record` take it as it is before a line and give it as it
is after. A reader may also let a run of lines pass unchecked and check their bytes at once, with one
CRC over the run (:func:`crc_of`), since the checksum covers bytes, not parsed records: recovery
checks the lines the scenario does not regenerate and takes the others' bytes in bulk.

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
RECORD_TAIL = len(RECORD_SEAL % 0)  # 13 bytes: ,"xxxxxxxx"]\n
OBJECT_TAIL = len(OBJECT_SEAL % 0)  # 21 bytes: ,"crc32":"xxxxxxxx"}\n
MISMATCH = "its checksum does not match: it, or a record before it, was changed, removed or moved"
NO_CHECKSUM = "it carries no checksum (a record of cefisim-journal/3 ends with one)"
_CHUNK = 1 << 20


class NotRegular(OSError):
    """A path that names something other than a regular file (a device, a FIFO, a folder)."""


def _seal_record(data: bytes, crc: int) -> tuple[bytes, int]:
    """``data`` (a record as a JSON array, no line end) sealed, with its line end, given ``crc``, the
    chain value before it; and the chain value after the line."""
    body = data[:-1]
    crc = zlib.crc32(body, crc)
    seal = RECORD_SEAL % crc
    return body + seal, zlib.crc32(seal, crc)


#: ``seal_record(data, crc)``: :func:`_seal_record`. In the compiled build (docs/build.md) the modules that
#: cimport it (``journal_file.py``, whose writer seals every command) call ``journal_seal.pxd``'s C
#: version instead: the same bytes, with zlib's ``crc32`` called from C and the line made in one
#: allocation (in Python the two CRC calls, the hex digits and the copies cost more than the engine's
#: order entry spends on a command's record)
seal_record = _seal_record


def check_record(line: bytes, crc: int) -> int:
    """The chain value after ``line`` (a sealed record line, line end included), given the value before
    it; ``ValueError`` saying what is wrong when the line is not sealed or does not match."""
    return check_seal(line, zlib.crc32(line[:-RECORD_TAIL], crc))


def check_seal(line: bytes, crc: int) -> int:
    """:func:`check_record` given the chain value up to ``line``'s seal already (the reader took the
    line's bytes before its seal into a CRC over a run of lines)."""
    seal = line[-RECORD_TAIL:]
    if seal != RECORD_SEAL % crc:
        raise ValueError(MISMATCH if seal[:2] == b',"' and seal[-3:] == b'"]\n' else NO_CHECKSUM)
    return zlib.crc32(seal, crc)


def crc_of(fd: int, start: int, end: int, crc: int) -> int:
    """The chain value ``crc`` (the file's bytes before ``start``) carried over the bytes ``[start, end)``
    of ``fd``, read a chunk at a time (memory stays flat over a long run of lines)."""
    while start < end:
        chunk = os.pread(fd, min(_CHUNK, end - start), start)
        if not chunk:
            raise ValueError("the file ended before its records did")
        crc = zlib.crc32(chunk, crc)
        start += len(chunk)
    return crc


def torn(line: bytes, crc: int, sealed: bool) -> bool:
    """Whether ``line``, a last line without its line end, is a write a stop tore (a prefix of a record,
    cut off and never answered) rather than damage: a sealed record whose line end alone was changed
    into another byte is damage, since a torn write leaves a prefix and changes no byte. ``crc``: the
    chain value before the line."""
    if not sealed or len(line) <= RECORD_TAIL:
        return True
    try:
        check_record(line[:-1] + b"\n", crc)
    except ValueError:
        return True
    return False


def seal_object(data: bytes, crc: int = 0) -> tuple[bytes, int]:
    """``data`` (a JSON object, no line end: a header, a line of the venues' manifest, a venue's record)
    sealed with a last key ``"crc32"``, with its line end, given the chain value before it (0 at the
    start of a file); and the chain value after the line."""
    body = data[:-1]
    crc = zlib.crc32(body, crc)
    seal = OBJECT_SEAL % crc
    return body + seal, zlib.crc32(seal, crc)


def is_sealed_object(line: bytes) -> bool:
    """Whether ``line`` ends as a sealed object does (its checksum not checked)."""
    return line[-OBJECT_TAIL : -OBJECT_TAIL + 10] == b',"crc32":"' and line[-3:] == b'"}\n'


def check_object(line: bytes, crc: int = 0, what: str = "the header") -> int:
    """The chain value after a sealed object line, given the value before it; ``ValueError`` when it
    carries no checksum or it does not match."""
    if not is_sealed_object(line):
        raise ValueError(f"{what} carries no checksum")
    seal = line[-OBJECT_TAIL:]
    crc = zlib.crc32(line[:-OBJECT_TAIL], crc)
    if seal != OBJECT_SEAL % crc:
        raise ValueError(f"{what}'s checksum does not match: it was changed")
    return zlib.crc32(seal, crc)


def stored_after(line: bytes) -> int | None:
    """The chain value after a sealed object line as its own seal tells it (the checksum it carries,
    carried over the seal), whatever its body holds; None when it carries no readable checksum."""
    digits = line[-OBJECT_TAIL + 10 : -3]
    if not is_sealed_object(line) or len(digits) != 8 or digits.strip(b"0123456789abcdef"):
        return None
    return zlib.crc32(line[-OBJECT_TAIL:], int(digits, 16))


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
