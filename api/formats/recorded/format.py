"""The cefisim market-data format: JSON lines, optionally gzip; a streaming loader and a writer.

Contract (``docs/recorded.md`` is the user's description):
- Line 1 is the header ``{"type": "header", "format": "cefisim-md", "version": 1, ...}`` with
  optional ``symbol``, ``source``, ``price_increment`` and ``qty_increment``. Every other line is a
  ``snapshot``, an ``update`` or a ``trade`` with integer ``ts`` and ``local_ts`` (nanoseconds) and
  prices and sizes as decimal strings. Blank lines are skipped.
- :func:`read_events` streams a file: memory is bounded by the number of price levels, never by the
  file's length. It yields the engine's tuples (``engine/recorded/feed.py``) with prices in ticks
  and sizes in lots of the grids given (default: the header's increments, else 1e-18).
- Bad data raises :class:`RecordingError` naming the file, the line and the reason: not JSON, an
  unknown key or type, an exchange timestamp ``ts`` earlier than the one before, a negative or malformed size,
  an unknown side, a
  value off the grid, a book crossed after the updates of one exchange timestamp (a feed applies one
  message's updates together, so a crossing within one timestamp is not an error). Nothing else
  escapes: a caller prints ``str(exc)`` and exits.
- :class:`Writer` writes the same format from the same tuples (gzip when the name ends in ``.gz``),
  checking every event with the loader's own rules, so what it writes always loads.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable, Iterator
from io import BufferedReader, BufferedWriter
from pathlib import Path
from typing import Any, Protocol

import orjson
from sortedcontainers import SortedDict

from cefisim.engine.recorded.feed import SNAPSHOT, TRADE, UPDATE
from cefisim.engine.units import Grid
from cefisim.engine.vocabulary import Side

BUY = Side.BUY
SELL = Side.SELL

FORMAT = "cefisim-md"
VERSION = 1
FINEST = Grid("0.000000000000000001")  # what a file without increments is checked on

_BOOK_SIDES = {"bid": BUY, "ask": SELL}
_TRADE_SIDES = {"buy": BUY, "sell": SELL}
_KEYS = {
    "header": {"type", "format", "version", "symbol", "source", "price_increment", "qty_increment"},
    "snapshot": {"type", "ts", "local_ts", "bids", "asks"},
    "update": {"type", "ts", "local_ts", "side", "price", "qty"},
    "trade": {"type", "ts", "local_ts", "side", "price", "qty", "id"},
}
RecordedEvent = tuple  # engine/recorded/feed.py: one recorded line, not a venue event


class RecordingError(ValueError):
    """Bad market data: ``file:line: reason``."""


#: what reading a damaged file raises (a truncated or corrupt gzip stream, a disk error)
READ_ERRORS = (OSError, EOFError, zlib.error)


MAX_LINE_BYTES = 8 << 20  # one line of a recording or of Binance messages (a deep REST snapshot fits)
MAX_DECOMPRESSED_BYTES = 64 << 30  # one input file once gunzipped: past it the file is refused


def bounded_lines(stream: gzip.GzipFile | BufferedReader, name: str, max_line: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of ``stream`` (newline kept) holding at most ``max_line`` bytes of one in memory: a
    longer line (a file without newlines, a gzip bomb of zeros) is a RecordingError naming its line,
    and so is more than ``MAX_DECOMPRESSED_BYTES`` in all. Memory is bounded by a line, not the file."""
    total = 0
    lineno = 0
    limit = MAX_DECOMPRESSED_BYTES
    while line := stream.readline(max_line + 1):
        lineno += 1
        total += len(line)
        if len(line) > max_line:
            raise RecordingError(f"{name}:{lineno}: a line longer than {_size(max_line)}; is this the right file?")
        if total > limit:
            raise RecordingError(f"{name}: more than {_size(limit)} once decompressed; is this the right file?")
        yield line


def _size(n: int) -> str:
    return f"{n >> 30} GiB" if n >= 1 << 30 else f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def open_text(path: str | Path) -> gzip.GzipFile | BufferedReader:
    """The file's bytes, gunzipped when it starts with the gzip magic number; RecordingError
    naming the file when it cannot be opened."""
    try:
        with open(path, "rb") as probe:
            magic = probe.read(2)
        if magic == b"\x1f\x8b":
            return gzip.open(path, "rb")
        return open(path, "rb")
    except OSError as exc:
        raise RecordingError(f"{path}: {exc.strerror}") from None


class BookCheck:
    """The recorded book as the loader keeps it to check it: price -> size per side, sorted.

    ``apply_*`` change it; ``crossed()`` tells whether best bid >= best ask. O(log levels) per update.
    """

    __slots__ = ("asks", "bids")

    def __init__(self) -> None:
        self.bids: SortedDict = SortedDict()  # -ticks -> lots
        self.asks: SortedDict = SortedDict()  # ticks -> lots

    def set_level(self, side: str, ticks: int, lots: int) -> None:
        levels, key = (self.bids, -ticks) if side == BUY else (self.asks, ticks)
        if lots:
            levels[key] = lots
        else:
            levels.pop(key, None)

    def reset(self, bids: Iterable[tuple[int, int]], asks: Iterable[tuple[int, int]]) -> None:
        self.bids = SortedDict({-p: q for p, q in bids})
        self.asks = SortedDict(dict(asks))

    def crossed(self) -> bool:
        return bool(self.bids) and bool(self.asks) and -self.bids.peekitem(0)[0] >= self.asks.peekitem(0)[0]

    def best(self) -> tuple[int | None, int | None]:
        bid = -self.bids.peekitem(0)[0] if self.bids else None
        ask = self.asks.peekitem(0)[0] if self.asks else None
        return bid, ask


class EventCheck:
    """The loader's ordering and crossing rules, fed one event at a time (used by the reader and the
    writer). ``check(event, where)`` raises :class:`RecordingError` with ``where`` in front."""

    __slots__ = ("_grid_text", "book", "pending_cross", "ts")

    def __init__(self, price_grid: Grid) -> None:
        self.book = BookCheck()
        self.ts = -1
        self.pending_cross: str | None = None  # where the book was left crossed within this timestamp
        self._grid_text = price_grid.format

    def check(self, event: RecordedEvent, where: str) -> None:
        ts = event[1]
        if ts < self.ts:
            raise RecordingError(f"{where}: out-of-order timestamp: ts {ts} is before the previous {self.ts}")
        if ts > self.ts:
            self.end_instant()
        self.ts = ts
        kind = event[0]
        if kind == UPDATE:
            self.book.set_level(event[3], event[4], event[5])
        elif kind == SNAPSHOT:
            self.book.reset(event[3], event[4])
        else:
            return
        self.pending_cross = where if self.book.crossed() else None

    def end_instant(self) -> None:
        """The events of one exchange timestamp are all in: the book must not be crossed."""
        if self.pending_cross is not None:
            bid, ask = self.book.best()
            assert bid is not None and ask is not None  # a crossed book has both sides
            raise RecordingError(
                f"{self.pending_cross}: crossed book after the update: best bid "
                f"{self._grid_text(bid)} >= best ask {self._grid_text(ask)}"
            )


class LineParser:
    """One line of the format to one engine tuple (or None for the header and blank lines)."""

    def __init__(self, price_grid: Grid, qty_grid: Grid) -> None:
        self.price_grid = price_grid
        self.qty_grid = qty_grid

    def timestamps(self, obj: dict[str, Any]) -> tuple[int, int]:
        out = []
        for key in ("ts", "local_ts"):
            value = obj.get(key)
            if type(value) is not int:
                raise ValueError(f"{key} must be an integer of nanoseconds, got {value!r}")
            if value < 0:
                raise ValueError(f"{key} must not be negative, got {value}")
            out.append(value)
        return out[0], out[1]

    def price(self, text: object, what: str = "price") -> int:
        return self._units(text, what, self.price_grid, "price", True)

    def size(self, text: object, positive: bool) -> int:
        return self._units(text, "size", self.qty_grid, "size", positive)

    @staticmethod
    def _units(text: object, what: str, grid: Grid, grid_name: str, positive: bool) -> int:
        """A decimal string as whole increments of ``grid`` (ValueError naming ``what`` otherwise)."""
        if not isinstance(text, str):
            raise ValueError(f"{what} must be a decimal string, got {text!r}")
        if text.startswith("-"):
            raise ValueError(f"negative {what} {text}")
        units, _ = grid.parse(text)
        if units is None:
            raise ValueError(f"{what} {text!r} is not a decimal string on the {grid_name} grid {grid.text}")
        if positive and units <= 0:
            raise ValueError(f"{what} must be positive, got {text}")
        return units

    def side(self, value: object, sides: dict[str, Side]) -> Side:
        side = sides.get(value) if isinstance(value, str) else None
        if side is None:
            raise ValueError(f"unknown side {value!r} (expected {' or '.join(sides)})")
        return side

    def levels(self, value: object, key: str, side: str) -> tuple[tuple[int, int], ...]:
        if not isinstance(value, list):
            raise ValueError(f"{key} must be a list of [price, size] pairs")
        out: dict[int, int] = {}
        for i, pair in enumerate(value):
            if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
                raise ValueError(f"{key}[{i}] must be a [price, size] pair")
            ticks = self.price(pair[0], f"{key}[{i}] price")
            lots = self.size(pair[1], positive=False)
            if lots:
                out[ticks] = lots
        return tuple(sorted(out.items(), reverse=side == BUY))

    def event(self, obj: object) -> RecordedEvent:
        if not isinstance(obj, dict):
            raise ValueError("a line must be a JSON object")
        kind = obj.get("type")
        keys = _KEYS.get(kind) if isinstance(kind, str) else None
        if keys is None:
            raise ValueError(f"unknown type {kind!r} (expected snapshot, update or trade)")
        extra = sorted(k for k in obj if k not in keys)
        if extra:
            raise ValueError(f"unknown key {extra[0]!r} in a {kind}")
        if kind == "header":
            raise ValueError("a header is only allowed on the first line")
        ts, local_ts = self.timestamps(obj)
        if kind == "update":
            side = self.side(obj.get("side"), _BOOK_SIDES)
            return (UPDATE, ts, local_ts, side, self.price(obj.get("price")), self.size(obj.get("qty"), False))
        if kind == "trade":
            side = self.side(obj.get("side"), _TRADE_SIDES)
            return (TRADE, ts, local_ts, side, self.price(obj.get("price")), self.size(obj.get("qty"), True))
        return (
            SNAPSHOT,
            ts,
            local_ts,
            self.levels(obj.get("bids"), "bids", BUY),
            self.levels(obj.get("asks"), "asks", SELL),
        )


def read_header(line: bytes, where: str) -> dict[str, Any]:
    try:
        head = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise RecordingError(f"{where}: not JSON: {exc}") from None
    if not (isinstance(head, dict) and head.get("type") == "header" and head.get("format") == FORMAT):
        raise RecordingError(
            f'{where}: not a cefisim market-data file: line 1 must be {{"type": "header", '
            f'"format": "{FORMAT}", "version": {VERSION}}}'
        )
    if head.get("version") != VERSION:
        raise RecordingError(f"{where}: unsupported version {head.get('version')!r} (this cefisim reads {VERSION})")
    extra = sorted(k for k in head if k not in _KEYS["header"])
    if extra:
        raise RecordingError(f"{where}: unknown key {extra[0]!r} in the header")
    for key in ("price_increment", "qty_increment"):
        if key in head:
            try:
                Grid(head[key])
            except (ValueError, TypeError):
                raise RecordingError(f"{where}: {key} must be a positive decimal string, got {head[key]!r}") from None
    return head


def read_events(
    path: str | Path,
    price_grid: Grid | None = None,
    qty_grid: Grid | None = None,
    header: dict[str, Any] | None = None,
) -> Iterator[RecordedEvent]:
    """Stream the file's events as engine tuples, checking every rule (see the module contract).

    ``header``, when given, is filled with the file's header as soon as the first line is read.
    """
    name = str(path)
    with open_text(path) as stream:
        lineno = 0
        try:
            lines = bounded_lines(stream, name)
            first = next(lines, b"")
            lineno = 1
            head = read_header(first, f"{name}:1")
            if header is not None:
                header.update(head)
            pg = price_grid or Grid(head.get("price_increment", FINEST.text))
            qg = qty_grid or Grid(head.get("qty_increment", FINEST.text))
            parser = LineParser(pg, qg)
            check = EventCheck(pg)
            loads = orjson.loads
            for line in lines:
                lineno += 1
                if not line.strip():
                    continue
                where = f"{name}:{lineno}"
                try:
                    event = parser.event(loads(line))
                except orjson.JSONDecodeError as exc:
                    raise RecordingError(f"{where}: not JSON: {exc}") from None
                except ValueError as exc:
                    raise RecordingError(f"{where}: {exc}") from None
                check.check(event, where)
                yield event
            check.end_instant()
        except READ_ERRORS as exc:
            raise RecordingError(f"{name}:{lineno}: cannot read: {exc}") from None


class ByteSink(Protocol):
    """What a Writer needs of its output (a plain or a gzip file, or an in-memory buffer)."""

    def write(self, data: bytes, /) -> object: ...


class Writer:
    """Writes engine tuples in the cefisim format, checking them with the loader's rules.

    ``where`` passed to :meth:`write` names the input the event came from (for error messages).
    """

    def __init__(self, out: ByteSink, price_grid: Grid, qty_grid: Grid, **header: str | None) -> None:
        self.out = out
        self.price = price_grid.format
        self.qty = qty_grid.format
        self.check = EventCheck(price_grid)
        self.count = 0
        head: dict[str, Any] = {"type": "header", "format": FORMAT, "version": VERSION}
        head.update({k: v for k, v in header.items() if v is not None})
        head.setdefault("price_increment", price_grid.text)
        head.setdefault("qty_increment", qty_grid.text)
        out.write(orjson.dumps(head, option=orjson.OPT_APPEND_NEWLINE))

    def write(self, event: RecordedEvent, where: str) -> None:
        self.check.check(event, where)
        kind = event[0]
        price, qty = self.price, self.qty
        obj: dict[str, Any]
        if kind == UPDATE:
            obj = {
                "type": "update",
                "ts": event[1],
                "local_ts": event[2],
                "side": "bid" if event[3] == BUY else "ask",
                "price": price(event[4]),
                "qty": qty(event[5]),
            }
        elif kind == TRADE:
            obj = {
                "type": "trade",
                "ts": event[1],
                "local_ts": event[2],
                "side": "buy" if event[3] == BUY else "sell",
                "price": price(event[4]),
                "qty": qty(event[5]),
            }
        else:
            obj = {"type": "snapshot", "ts": event[1], "local_ts": event[2]}
            obj["bids"] = [[price(p), qty(q)] for p, q in event[3]]
            obj["asks"] = [[price(p), qty(q)] for p, q in event[4]]
        self.out.write(orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE))
        self.count += 1

    def close(self) -> None:
        self.check.end_instant()


class _GzipOut(gzip.GzipFile):
    """A gzip stream that closes the file under it too."""

    def __init__(self, raw: BufferedWriter) -> None:
        # no file name and a zero mtime in the header: the same events always give the same bytes
        super().__init__(filename="", fileobj=raw, mode="wb", mtime=0)
        self._under = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._under.close()


def open_output(path: str | Path) -> BufferedWriter | gzip.GzipFile:
    """A binary file for writing; gzip for a name ending in ``.gz``, with no file name and a zero
    mtime in its header, so the same events always give the same bytes."""
    raw = open(path, "wb")  # noqa: SIM115 - closed by the caller
    if str(path).endswith(".gz"):
        return _GzipOut(raw)
    return raw


__all__ = [
    "FINEST",
    "FORMAT",
    "READ_ERRORS",
    "VERSION",
    "RecordingError",
    "Writer",
    "open_output",
    "open_text",
    "read_events",
]
