"""The recorded market-data events as the engine sees them: integer tuples, one per file line.

Contract (``docs/recorded.md`` describes the file format these come from):
- ``(SNAPSHOT, ts, local_ts, bids, asks)``: the whole book; ``bids``/``asks`` are tuples of
  ``(ticks, lots)``, lots > 0, best first. Every level not listed is empty afterwards.
- ``(UPDATE, ts, local_ts, side, ticks, lots)``: the level's new total size (``side`` is ``BUY`` for
  a bid, ``SELL`` for an ask); 0 lots removes it.
- ``(TRADE, ts, local_ts, side, ticks, lots)``: a trade of the recorded market; ``side`` is the
  aggressor's (``BUY`` took asks, ``SELL`` hit bids).
- ``ts`` is the exchange time, ``local_ts`` the time the recorder received it, both nanoseconds since
  the Unix epoch. Within a stream ``ts`` never decreases; ``local_ts`` is kept as recorded (merged
  streams need not agree on it) and the venue runs on ``ts``.
The loader in ``api/formats/recorded/`` guarantees these rules, and that the recorded book is never crossed
once all the events of one exchange timestamp are applied.
"""

from __future__ import annotations

from typing import Final, Literal

# Final: their literal types let a type checker tell the kinds of RecordedEvent apart by element 0
SNAPSHOT: Final = 0
UPDATE: Final = 1
TRADE: Final = 2

#: a side of the book: ``(ticks, lots)`` per level, best first
Levels = tuple[tuple[int, int], ...]
#: ``(SNAPSHOT, ts, local_ts, bids, asks)``
Snapshot = tuple[Literal[0], int, int, Levels, Levels]
#: ``(UPDATE or TRADE, ts, local_ts, side, ticks, lots)``
LevelChange = tuple[Literal[1, 2], int, int, str, int, int]
RecordedEvent = Snapshot | LevelChange

__all__ = ["SNAPSHOT", "TRADE", "UPDATE", "LevelChange", "Levels", "RecordedEvent", "Snapshot"]
