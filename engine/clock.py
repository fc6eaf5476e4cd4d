"""The engine clock: every record gets a unique, strictly increasing nanosecond timestamp.

The clock never reads the wall itself. ``now`` is moved forward by the venue when it applies a command
at a given time (the API passes the wall clock in UAT mode, the scenario runner passes virtual time),
and ``stamp()`` hands out ``max(now, last + 1)``, so two records never share a timestamp even when many
are made at the same instant. That is what lets timestamp cursors page exactly.
"""

from __future__ import annotations

from typing import ClassVar

NS_PER_SECOND = 1_000_000_000
NS_PER_DAY = 86_400 * NS_PER_SECOND


class Clock:
    __slots__ = ("last", "now")

    SNAPSHOT: ClassVar[tuple[str, ...]] = __slots__  # every slot is state (api/runtime/snapshot.py)

    def __init__(self, start_ns: int) -> None:
        self.now = start_ns  # the time the venue is at
        self.last = start_ns - 1  # the last timestamp handed out

    def advance(self, to_ns: int) -> None:
        """Move the time forward; a time in the past is ignored (the clock never goes back)."""
        if to_ns > self.now:
            self.now = to_ns

    def stamp(self) -> int:
        """A timestamp for a new record: unique and strictly increasing."""
        now, last = self.now, self.last  # each read once: called several times per order
        ts = now if now > last else last + 1
        self.last = ts
        return ts

    def peek(self) -> int:
        """The timestamp the next ``stamp()`` would hand out, without taking it."""
        return self.now if self.now > self.last else self.last + 1
