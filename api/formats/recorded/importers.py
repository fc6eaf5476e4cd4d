"""Importers: Tardis-style CSV and Binance stream messages to recorded events with decimal strings.

Contract:
- An importer reads one file as a stream, memory bounded by a line (``format.bounded_lines``: a
  Tardis line holds at most 64 KiB, a Binance one 8 MiB, a file at most 64 GiB once decompressed;
  beyond, a one-line RecordingError) and by the book's levels (a snapshot being gathered); it
  yields ``(where, event)``: ``where`` is ``file:line`` and
  ``event`` an engine tuple (``engine/recorded/feed.py``) whose prices and sizes are still the
  file's decimal strings; :mod:`api.formats.recorded.convert` puts them on a grid.
- Bad input raises :class:`~api.formats.recorded.format.RecordingError` with the file, the line and the reason.

Tardis (``incremental_book_L2`` and ``trades`` CSV, told apart by their header row): timestamps are
microseconds. Consecutive book rows with ``is_snapshot`` true form one snapshot (a new run of them
replaces the book); ``amount`` 0 removes a level. A trade's ``side`` is the aggressor's (``buy`` or
``sell``; ``unknown`` is rejected: the replay needs to know which side was hit).

Binance (one JSON message per line: a ``depthUpdate`` diff, a ``trade`` or ``aggTrade``, or a REST
depth snapshot ``{"lastUpdateId", "bids", "asks"}``; optionally wrapped as ``{"stream", "data"}`` of a
combined stream, and with a ``local_ts`` in nanoseconds next to them added by the recorder): the
exchange time is the event time ``E`` in milliseconds (a snapshot without ``E`` takes ``local_ts``);
the local time is ``local_ts``, else ``E``. After a snapshot, diffs whose final update id ``u`` is
at most its ``lastUpdateId`` are dropped (Binance's own rule for syncing a local book); a diff whose
first id ``U`` skips past the previous ``u`` + 1 (``pu`` on futures streams: must equal the previous
``u``) is a gap and an error. ``m`` (buyer is maker) true means the seller was the aggressor.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from cefisim.api.formats.recorded.format import READ_ERRORS, RecordingError, bounded_lines, open_text
from cefisim.engine.recorded.feed import SNAPSHOT, TRADE, UPDATE
from cefisim.engine.vocabulary import Side

BUY = Side.BUY
SELL = Side.SELL

Sourced = tuple[str, tuple]

BOOK_COLUMNS = ("timestamp", "local_timestamp", "is_snapshot", "side", "price", "amount")
TRADE_COLUMNS = ("timestamp", "local_timestamp", "side", "price", "amount")
_US = 1000
MAX_CSV_LINE_BYTES = 64 << 10  # a Tardis row is a few dozen bytes: a longer line is not one
_MS = 1_000_000


def _us(text: str, column: str) -> int:
    if not (text.isdigit() and text.isascii()):
        raise ValueError(f"{column} must be whole microseconds, got {text!r}")
    return int(text) * _US


def tardis(path: str | Path) -> Iterator[Sourced]:
    """Events of one Tardis CSV file: ``incremental_book_L2`` or ``trades``."""
    name = str(path)
    with open_text(path) as stream:
        rows = csv.reader(line.decode("utf-8") for line in bounded_lines(stream, name, MAX_CSV_LINE_BYTES))
        try:
            head = next(rows, None)
        except (UnicodeDecodeError, csv.Error) as exc:
            raise RecordingError(f"{name}:1: not a CSV file: {exc}") from None
        except READ_ERRORS as exc:
            raise RecordingError(f"{name}:1: cannot read: {exc}") from None
        if head is None:
            raise RecordingError(f"{name}:1: empty file (expected a Tardis CSV header row)")
        if all(c in head for c in BOOK_COLUMNS):
            yield from _tardis_book(name, rows, {c: head.index(c) for c in BOOK_COLUMNS})
        elif all(c in head for c in TRADE_COLUMNS):
            yield from _tardis_trades(name, rows, {c: head.index(c) for c in TRADE_COLUMNS})
        else:
            raise RecordingError(
                f"{name}:1: not a Tardis incremental_book_L2 or trades file: the header needs the columns "
                f"{', '.join(BOOK_COLUMNS)} (book) or {', '.join(TRADE_COLUMNS)} (trades)"
            )


def _rows(name: str, rows: Any, width: int) -> Iterator[tuple[str, list[str]]]:
    lineno = 1
    try:
        for row in rows:
            lineno += 1
            if not row:
                continue
            if len(row) < width:
                raise RecordingError(f"{name}:{lineno}: {len(row)} columns, the header has {width}")
            yield f"{name}:{lineno}", row
    except (UnicodeDecodeError, csv.Error) as exc:
        raise RecordingError(f"{name}:{lineno + 1}: not CSV: {exc}") from None
    except READ_ERRORS as exc:
        raise RecordingError(f"{name}:{lineno + 1}: cannot read: {exc}") from None


def _tardis_book(name: str, rows: Any, col: dict[str, int]) -> Iterator[Sourced]:
    width = max(col.values()) + 1
    bids: dict[str, str] = {}
    asks: dict[str, str] = {}
    snap: tuple[str, int, int] | None = None  # where, ts, local_ts of a snapshot being gathered
    for where, row in _rows(name, rows, width):
        try:
            ts = _us(row[col["timestamp"]], "timestamp")
            local = _us(row[col["local_timestamp"]], "local_timestamp")
            flag = row[col["is_snapshot"]].lower()
            if flag not in ("true", "false"):
                raise ValueError(f"is_snapshot must be true or false, got {row[col['is_snapshot']]!r}")
            side = {"bid": BUY, "ask": SELL}.get(row[col["side"]].lower())
            if side is None:
                raise ValueError(f"unknown side {row[col['side']]!r} (expected bid or ask)")
        except ValueError as exc:
            raise RecordingError(f"{where}: {exc}") from None
        price, amount = row[col["price"]], row[col["amount"]]
        if flag == "true":
            if snap is None:
                snap = (where, ts, local)
                bids, asks = {}, {}
            levels = bids if side == BUY else asks
            levels[price] = amount
            continue
        if snap is not None:
            yield snap[0], _snapshot(snap, bids, asks)
            snap = None
        yield where, (UPDATE, ts, local, side, price, amount)
    if snap is not None:
        yield snap[0], _snapshot(snap, bids, asks)


def _snapshot(snap: tuple[str, int, int], bids: dict[str, str], asks: dict[str, str]) -> tuple:
    return (SNAPSHOT, snap[1], snap[2], list(bids.items()), list(asks.items()))


def _tardis_trades(name: str, rows: Any, col: dict[str, int]) -> Iterator[Sourced]:
    width = max(col.values()) + 1
    for where, row in _rows(name, rows, width):
        try:
            ts = _us(row[col["timestamp"]], "timestamp")
            local = _us(row[col["local_timestamp"]], "local_timestamp")
            side = {"buy": BUY, "sell": SELL}.get(row[col["side"]].lower())
            if side is None:
                raise ValueError(f"unknown side {row[col['side']]!r} (expected buy or sell: the aggressor)")
        except ValueError as exc:
            raise RecordingError(f"{where}: {exc}") from None
        yield where, (TRADE, ts, local, side, row[col["price"]], row[col["amount"]])


def binance(path: str | Path) -> Iterator[Sourced]:
    """Events of one file of Binance stream messages, one JSON object per line."""
    name = str(path)
    state = _BinanceState()
    with open_text(path) as stream:
        lineno = 0
        try:
            for lineno, line in enumerate(bounded_lines(stream, name), 1):
                if not line.strip():
                    continue
                where = f"{name}:{lineno}"
                try:
                    yield from ((where, ev) for ev in state.message(orjson.loads(line)))
                except orjson.JSONDecodeError as exc:
                    raise RecordingError(f"{where}: not JSON: {exc}") from None
                except (ValueError, TypeError, KeyError) as exc:
                    reason = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
                    raise RecordingError(f"{where}: {reason}") from None
        except READ_ERRORS as exc:
            raise RecordingError(f"{name}:{lineno + 1}: cannot read: {exc}") from None


def _int(obj: dict[str, Any], key: str) -> int:
    value = obj[key]
    if type(value) is not int or value < 0:
        raise ValueError(f"{key} must be a non-negative integer, got {value!r}")
    return value


def _pairs(value: object, key: str) -> list[tuple[str, str]]:
    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) >= 2 for p in value):
        raise ValueError(f"{key} must be a list of [price, qty] pairs")
    return [(p[0], p[1]) for p in value]


class _BinanceState:
    """What the importer remembers between messages: the last update id (for the sync rule)."""

    def __init__(self) -> None:
        self.snapshot_id: int | None = None
        self.last_u: int | None = None

    def message(self, line: object) -> list[tuple]:
        if not isinstance(line, dict):
            raise ValueError("a line must be a JSON object")
        obj: dict[str, Any] = line
        local: int | None = _int(obj, "local_ts") if "local_ts" in obj else None
        data = obj.get("data")
        if isinstance(data, dict):
            obj = data
        kind = obj.get("e")
        if kind is None and "lastUpdateId" in obj:
            return [self.snapshot(obj, local)]
        if kind not in ("depthUpdate", "trade", "aggTrade"):
            raise ValueError(f"unknown message {kind!r} (expected depthUpdate, trade, aggTrade or a depth snapshot)")
        ts = _int(obj, "E") * _MS
        local = ts if local is None else local
        if kind != "depthUpdate":
            maker = obj["m"]
            if not isinstance(maker, bool):
                raise ValueError(f"unknown side: m must be true or false, got {maker!r}")
            return [(TRADE, ts, local, SELL if maker else BUY, obj["p"], obj["q"])]
        first, final = _int(obj, "U"), _int(obj, "u")
        if self.snapshot_id is not None and final <= self.snapshot_id:
            return []  # older than the snapshot: already in it
        prev = self.last_u
        if prev is not None:
            if "pu" in obj:
                if _int(obj, "pu") != prev:
                    raise ValueError(f"gap in the depth stream: pu {obj['pu']} is not the previous u {prev}")
            elif first > prev + 1:
                raise ValueError(f"gap in the depth stream: U {first} skips past the previous u {prev}")
        self.last_u = final
        out = [(UPDATE, ts, local, BUY, p, q) for p, q in _pairs(obj.get("b"), "b")]
        out += [(UPDATE, ts, local, SELL, p, q) for p, q in _pairs(obj.get("a"), "a")]
        return out

    def snapshot(self, obj: dict[str, Any], local: int | None) -> tuple:
        if "E" in obj:
            ts = _int(obj, "E") * _MS
        elif local is not None:
            ts = local
        else:
            raise ValueError("a depth snapshot needs a time: E (milliseconds) or local_ts (nanoseconds)")
        self.snapshot_id = self.last_u = _int(obj, "lastUpdateId")
        return (
            SNAPSHOT,
            ts,
            ts if local is None else local,
            _pairs(obj.get("bids"), "bids"),
            _pairs(obj.get("asks"), "asks"),
        )


IMPORTERS = {"tardis": tardis, "binance": binance}

__all__ = ["IMPORTERS", "binance", "tardis"]
