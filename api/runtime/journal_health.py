"""Whether a server's journal takes writes, and how the simulation behaves while it does not.

Contract (``docs/journal.md``, When the journal cannot be written):

- A write the journal cannot take (a full disk, a read-only file system, an I/O error) is refused
  with :class:`JournalWriteError` before anything of it applies; the simulation rolls back whatever
  of the operation had applied (``Simulation``), so the answer is a 503 problem and nothing changed.
- From the first failure the journal is *failing*: one line is logged when it starts
  (:meth:`JournalHealth.failed`) and one when it ends (:meth:`JournalHealth.succeeded`), whatever the
  number of requests and ticks refused in between.
- The scenario's turns (which write records of their own) run only when the journal's file system
  has :data:`ROOM` bytes free (:meth:`JournalHealth.check_room`, ``statvfs``; a file system that
  reports no size counts as roomy), so a full disk refuses them before a turn starts rather than in
  its middle; once it has, the turns run again at once. While failing for another reason (a write
  that failed), a turn is tried again at most once per back-off interval (1 s, doubling up to a
  minute), so a broken disk does not make every tick roll back.
- A request whose command is one record is always tried: it lands whole or changes nothing.
- *Broken* (:meth:`JournalHealth.broke`): the state could not be rolled back to the journal (the
  journal could not be read or cut back). Every write is then refused until the server restarts,
  which rebuilds the state from the journal; reads go on.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from cefisim.api.runtime.journal_file import JournalWriteError

log = logging.getLogger("cefisim.sim")

ROOM = 1 << 20  # free bytes the scenario's turns need on the journal's file system
FIRST_RETRY_S = 1.0
LAST_RETRY_S = 60.0


class JournalHealth:
    """The write health of one journal (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.failing: str | None = None  # why, while the journal is failing
        self.broken: str | None = None
        self._short = False  # failing because its file system is short of room (no back-off then)
        self._retry_at = 0.0
        self._backoff = FIRST_RETRY_S

    def has_room(self) -> bool:
        """Whether the journal's file system has :data:`ROOM` bytes free (True when it cannot tell)."""
        try:
            fs = os.statvfs(self.path.parent)
        except OSError:
            return True
        return fs.f_blocks == 0 or fs.f_bavail * fs.f_frsize >= ROOM

    def check_broken(self) -> None:
        if self.broken is not None:
            raise JournalWriteError(self.broken)

    def check_room(self) -> None:
        """Before the scenario's turns run: :class:`JournalWriteError` (nothing tried) when the file
        system is short of room, or while failing for another reason until the next retry is due."""
        self.check_broken()
        if not self.has_room():
            self.failed(f"journal {self.path}: less than {ROOM >> 20} MiB free on its file system")
            self._short = True
            raise JournalWriteError(self.failing)
        if self._short:
            self._short = False  # room again: tried at once
        elif self.failing is not None:
            now = time.monotonic()
            if now < self._retry_at:
                raise JournalWriteError(self.failing)
            self._retry_at = now + self._backoff
            self._backoff = min(self._backoff * 2, LAST_RETRY_S)

    def failed(self, reason: str) -> None:
        """A write failed (or was refused): the first of a failing spell is logged."""
        if reason == self.failing:
            return  # told already (check_room refused it)
        if self.failing is None:
            log.error("%s; writes are refused (503) and the scenario waits until it can be written", reason)
            self._retry_at = time.monotonic() + FIRST_RETRY_S
            self._backoff = FIRST_RETRY_S * 2
        self.failing = reason
        self._short = False

    def succeeded(self) -> None:
        """An operation was journaled whole: a failing spell ends once the file system has room again."""
        if self.failing is not None and self.has_room():
            log.warning("journal %s: writable again; writes and the scenario go on", self.path)
            self.failing = None
            self._short = False

    def broke(self, reason: str) -> None:
        log.error("journal %s: %s; writes are refused until the server restarts", self.path, reason)
        self.broken = f"journal {self.path}: {reason}; restart the server to rebuild its state from the journal"
        self.failing = self.broken
