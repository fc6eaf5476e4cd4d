"""Opening a file by a name that must resolve inside one folder, in one step, following no link.

Contract: :func:`open_beneath` returns a descriptor of the file ``name`` names below ``root``, opened
read-only and non-blocking, or raises :class:`Outside` (the name leaves ``root``: absolute, or ``..``
past it), :class:`Linked` (a component is a symbolic link) or ``OSError`` (the file cannot be opened).
The name is resolved and opened by the kernel in one step, so no swap of a folder for a link between a
check and an open can lead the read elsewhere:

- on Linux 5.6 and later, one ``openat2`` call with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
  RESOLVE_NO_MAGICLINKS`` (the kernel refuses any link and any escape while it walks the name);
- elsewhere (an older kernel, a sandbox that filters the call, another system), a walk of directory
  descriptors from ``root``, each component opened with ``O_NOFOLLOW`` relative to its parent's
  descriptor: what a component is can no longer change between its check and its use.

Both refuse the same names: ``..`` is resolved as text first (``a/../b`` is ``b``; a name that climbs
above ``root`` is :class:`Outside` before anything is opened), so the two ways differ only in speed.
``root`` itself is the operator's choice and may be reached through links. A hard link inside ``root``
is the file itself (``docs/security.md`` says what that means for a data directory).
"""

from __future__ import annotations

import ctypes
import errno
import os
import posixpath
import stat
import sys
from collections.abc import Callable

#: how the final component is opened: read-only, and non-blocking so that a FIFO with no writer cannot
#: hold the opener (the caller checks the file type with ``fstat`` before it reads)
FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC

# openat2(2): the same syscall number on every Linux architecture (the unified table, since 5.6)
_SYS_OPENAT2 = 437
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08


class Outside(Exception):
    """The name leaves the folder (absolute, or ``..`` above it)."""


class Linked(Exception):
    """A component of the name is a symbolic link."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _libc_openat2() -> Callable[[int, bytes, int], int] | None:
    """The ``openat2`` system call through libc's ``syscall``; None where there is no such call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    resolve = _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS

    def openat2(dir_fd: int, path: bytes, flags: int) -> int:
        how = _OpenHow(flags, 0, resolve)
        fd = syscall(
            ctypes.c_long(_SYS_OPENAT2),
            ctypes.c_long(dir_fd),
            ctypes.c_char_p(path),
            ctypes.byref(how),
            ctypes.c_long(ctypes.sizeof(how)),
        )
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        return int(fd)

    return openat2


#: None where the kernel has no ``openat2`` (found on first use: then the descriptor walk serves)
_openat2 = _libc_openat2()


def open_beneath(root: str | os.PathLike[str], name: str) -> int:
    """A descriptor of ``name`` below ``root`` (``FILE_FLAGS``); the caller closes it."""
    global _openat2
    parts = _components(name)
    root_fd = os.open(root, _DIR_FLAGS)
    try:
        if _openat2 is not None:
            try:
                return _openat2(root_fd, "/".join(parts).encode("utf-8", "surrogateescape"), FILE_FLAGS)
            except OSError as exc:
                if exc.errno in (errno.ENOSYS, errno.EPERM):
                    _openat2 = None  # an older kernel, or a sandbox filtering the call: walk from now on
                elif exc.errno == errno.ELOOP:
                    raise Linked(name) from None
                elif exc.errno == errno.EXDEV:
                    raise Outside(name) from None  # the kernel saw an escape (a magic link, a mount)
                else:
                    raise
        return _walk(root_fd, parts, name)
    finally:
        os.close(root_fd)


def _components(name: str) -> list[str]:
    """The name's components below the folder, ``..`` resolved as text; :class:`Outside` when it climbs
    above or is absolute, ``ValueError`` for a name no file can have (empty, a NUL byte)."""
    if not name or "\0" in name:
        raise ValueError("a file name is not empty and holds no NUL byte")
    if name.startswith("/"):
        raise Outside(name)
    normal = posixpath.normpath(name)
    if normal == ".." or normal.startswith("../"):
        raise Outside(name)
    parts = [part for part in normal.split("/") if part not in ("", ".")]
    if not parts:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    return parts


def _walk(root_fd: int, parts: list[str], name: str) -> int:
    """Each component opened relative to its parent's descriptor, never following a link."""
    fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            child = _open_component(fd, part, _DIR_FLAGS | os.O_NOFOLLOW, name)
            os.close(fd)
            fd = child
        return _open_component(fd, parts[-1], FILE_FLAGS | os.O_NOFOLLOW, name)
    finally:
        os.close(fd)


def _open_component(dir_fd: int, part: str, flags: int, name: str) -> int:
    try:
        return os.open(part, flags, dir_fd=dir_fd)
    except OSError as exc:
        # O_NOFOLLOW on a link fails with ELOOP (ENOTDIR when a directory was asked for): tell a link
        # from a plain error by what the entry is, without following it
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            try:
                linked = stat.S_ISLNK(os.lstat(part, dir_fd=dir_fd).st_mode)
            except OSError:
                linked = False
            if linked:
                raise Linked(name) from None
        raise
