"""The files a created venue reads, and the copies that make its journal self-contained.

Contract (``docs/venues.md``, "Files"):

- A document posted over HTTP names no server file unless the server runs with ``--data-dir DIR``;
  then a name resolves against DIR and must stay inside it, through no symbolic link (resolved and
  opened in one step: ``beneath.py``), be a regular file (a FIFO or a device is refused before a byte
  is read: it is opened non-blocking and checked with ``fstat``), and hold at most
  :data:`MAX_DATA_FILE_BYTES`. A shipped scenario reads its own files, next to it in the package.
- Whatever a venue reads is copied, as it was read, into the server's :class:`FileStore`, named by its
  SHA-256 (``FILE.venues/files/`` beside the journal, a temporary folder without one), and the venue
  reads the copy, now and on every reset and restart. The venue's record maps each name its document
  gives to the digest of the copy, so a restart never depends on the named file staying put or
  unchanged. On restart each copy is read once and checked against its name (:func:`stored`): a copy
  changed or damaged since is refused, and its venue set aside. A copy the store cannot write (a full
  disk) is a :class:`~cefisim.api.runtime.journal_file.JournalWriteError`, not a refusal of the file.
- Every refusal is a :class:`~cefisim.api.formats.scenario.files.FileRefused` whose reason names the file as
  the document wrote it and never quotes its content.
- The store keeps a copy while a live venue's record names it (:meth:`FileStore.prune`).

Blocking: these read and copy whole files; the server runs a venue's create off the event loop.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
from pathlib import Path

from cefisim.api.formats.scenario.document import os_reason
from cefisim.api.formats.scenario.files import FileRefused, FileResolver
from cefisim.api.runtime.beneath import Linked, Outside, open_beneath
from cefisim.api.runtime.journal_file import JournalWriteError
from cefisim.api.runtime.journal_seal import open_regular

MAX_DATA_FILE_BYTES = 1 << 30  # one file a venue reads (a recording of a busy day fits)
_CHUNK = 1 << 20
_DIGEST = re.compile(r"[0-9a-f]{64}")
NO_DATA_DIR = "a document posted over HTTP names no server file (this server runs without --data-dir)"


class FileStore:
    """Copies of the files venues read, each named by the SHA-256 of its bytes, in one folder."""

    def __init__(self, folder: Path | None) -> None:
        """``folder``: where copies live (made on first use); None: a temporary folder of this process."""
        self._folder = folder
        self._temporary: tempfile.TemporaryDirectory[str] | None = None

    @property
    def folder(self) -> Path:
        if self._folder is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="cefisim-venue-files-")
            self._folder = Path(self._temporary.name)
        self._folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        return self._folder

    def path(self, digest: str) -> Path:
        return self.folder / digest

    def keep(self, fd: int, limit: int, name: str) -> str:
        """Copy what ``fd`` holds (at most ``limit`` bytes, else :class:`FileRefused`; a read that fails,
        :class:`FileRefused` too) and return its digest; the copy is complete and fsync'd before its name
        appears. ``OSError`` when the copy cannot be written (nothing is left behind)."""
        digest = hashlib.sha256()
        staged = tempfile.NamedTemporaryFile(dir=self.folder, prefix=".staged-", delete=False)  # noqa: SIM115
        try:
            with staged:
                size = 0
                while chunk := _read(fd, name):
                    size += len(chunk)
                    if size > limit:
                        raise FileRefused(f"{name}: larger than {limit >> 20} MiB")
                    digest.update(chunk)
                    staged.write(chunk)
                staged.flush()
                os.fsync(staged.fileno())
            os.replace(staged.name, self.path(digest.hexdigest()))
        except BaseException:
            Path(staged.name).unlink(missing_ok=True)
            raise
        return digest.hexdigest()

    def check(self, digest: str) -> Path:
        """The copy named ``digest``, once its bytes are checked against its name (:class:`FileRefused`
        when they are not, or it is not a regular file)."""
        path = self.path(digest)
        sha = hashlib.sha256()
        try:
            with open_regular(path) as f:
                while chunk := f.read(_CHUNK):
                    sha.update(chunk)
        except OSError as exc:
            raise FileRefused(f"its copy {digest} cannot be read: {os_reason(exc)}") from None
        if sha.hexdigest() != digest:
            raise FileRefused(f"its copy {digest} no longer matches its digest: it was changed or damaged")
        return path

    def prune(self, keep: set[str]) -> None:
        """Remove every copy (and any staged leftover) no digest in ``keep`` names."""
        if self._folder is None or not self._folder.is_dir():
            return
        for entry in self._folder.iterdir():
            if entry.name not in keep:
                entry.unlink(missing_ok=True)

    def close(self) -> None:
        if self._temporary is not None:
            self._temporary.cleanup()
            self._temporary = None
            self._folder = None


class VenueFiles:
    """The resolver of one create: each name checked, read once, copied into the store.

    ``root``: the folder names resolve against and must stay inside (the data directory, or a shipped
    scenario's folder); None refuses every name. ``kept`` maps each name read to its copy's digest."""

    def __init__(self, store: FileStore, root: Path | None, limit: int | None = None) -> None:
        self._store = store
        self._root = root
        self._limit = limit or MAX_DATA_FILE_BYTES
        self.kept: dict[str, str] = {}
        self.refusals: set[str] = set()  # the reasons given: they quote no file

    def __call__(self, name: str) -> Path:
        if name not in self.kept:
            try:
                self.kept[name] = self._copy(name)
            except FileRefused as exc:
                self.refusals.add(exc.reason)
                raise
        return self._store.path(self.kept[name])

    def _copy(self, name: str) -> str:
        if self._root is None:
            raise FileRefused(NO_DATA_DIR)
        try:
            # resolved and opened in one step, following no link (beneath.py): a folder swapped for a
            # link while this runs cannot lead the read outside the root
            fd = open_beneath(self._root, name)
        except Outside:
            raise FileRefused(f"{name}: outside the server's data directory (--data-dir)") from None
        except Linked:
            raise FileRefused(f"{name}: a symbolic link (files are read without following links)") from None
        except ValueError:
            raise FileRefused(f"{name!r}: not a file name (it is empty or holds a NUL byte)") from None
        except OSError as exc:
            raise FileRefused(f"cannot read {name}: {os_reason(exc)}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise FileRefused(f"cannot read {name}: not a regular file")
            if info.st_size > self._limit:
                raise FileRefused(f"{name}: larger than {self._limit >> 20} MiB")
            os.set_blocking(fd, True)
            try:
                return self._store.keep(fd, self._limit, name)
            except OSError as exc:  # the store's side: the file was read, its copy cannot be kept
                raise JournalWriteError(f"the copy of {name} cannot be kept: {os_reason(exc)}") from None
        finally:
            os.close(fd)


def stored(store: FileStore, kept: dict[str, str], refusals: set[str] | None = None) -> FileResolver:
    """The resolver of a venue being rebuilt: each name to the copy its record names, checked against its
    digest. Each refusal's reason (which quotes nothing of a file) is added to ``refusals``."""

    def resolve(name: str) -> Path:
        digest = kept.get(name)
        try:
            if not isinstance(digest, str) or not _DIGEST.fullmatch(digest) or not store.path(digest).exists():
                raise FileRefused("no copy of it is kept beside the journal")
            return store.check(digest)
        except FileRefused as exc:
            refused = FileRefused(f"{name}: {exc.reason}")
            if refusals is not None:
                refusals.add(refused.reason)
            raise refused from None

    return resolve


def _read(fd: int, name: str) -> bytes:
    """A chunk of the file being copied; a read that fails refuses the file."""
    try:
        return os.read(fd, _CHUNK)
    except OSError as exc:
        raise FileRefused(f"cannot read {name}: {os_reason(exc)}") from None
