"""A scenario's recorded source: where the file is, how it maps onto engine time, and how the venue
gets it (``docs/recorded.md``, section "A recorded market in a scenario").

Contract:
- :class:`RecordedSpec` is what the scenario loader made of one ``recorded`` item. ``scan(spec, ...)``
  reads the whole recording once (streaming) with every rule of the loader, so a scenario with bad
  data is refused at load time with the file, line and reason, never half-way through a replay. It
  returns the recording's first and last exchange times.
- Engine time of a recorded event: ``start + (ts - first - offset) / speed``, rounded down to the
  nanosecond; an event before ``offset`` (the part of the recording skipped) plays at ``start``, so
  the book is built before the first command. ``speed`` is a fraction (``num / den``).
- ``attach(venue, spec, start_ns)`` adds the recorded counterparty (a client with an effectively
  unlimited opening balance of the instrument's two assets: it is part of the asset totals from the
  start, so every asset is conserved exactly) and a :class:`~engine.recorded.market.RecordedMarket` fed by
  a fresh stream of the file.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from cefisim.api.formats.recorded.convert import on_grid
from cefisim.api.formats.recorded.format import EventCheck, LineParser, read_events
from cefisim.api.formats.recorded.importers import IMPORTERS
from cefisim.engine import queries
from cefisim.engine.recorded.feed import SNAPSHOT
from cefisim.engine.recorded.market import RecordedMarket
from cefisim.engine.recorded.queue_model import queue_model
from cefisim.engine.reference import Client, Instrument
from cefisim.engine.units import Grid
from cefisim.engine.venue import Venue

FORMATS = ("cefisim", "tardis", "binance")
QUEUE_MODELS = ("risk_averse", "power", "log")
COUNTERPARTY_BASE = 900_000_000_000_000_000  # counterparty client ids: this plus the item's index
COUNTERPARTY_FUNDS = 10**30  # smallest units of each asset: never the limit of a replay


@dataclass(frozen=True)
class RecordedSpec:
    index: int
    instrument_id: int
    files: tuple[str, ...]
    fmt: str = "cefisim"
    offset_ns: int = 0
    speed: tuple[int, int] = (1, 1)
    queue_model: str = "risk_averse"
    power_n: int = 3
    impact: bool = True
    feed_latency_ns: int = 0
    order_latency: tuple[int, int] | None = None  # ns: (lo, hi), a constant when lo == hi
    first_ts: int = 0  # the recording's first exchange time (scan)
    last_ts: int = 0

    @property
    def counterparty_id(self) -> int:
        return COUNTERPARTY_BASE + self.index

    def engine_ns(self, start_ns: int, ts: int) -> int:
        num, den = self.speed
        shifted = ts - self.first_ts - self.offset_ns
        return start_ns if shifted <= 0 else start_ns + shifted * den // num


def recorded_events(files: tuple[str, ...], fmt: str, price_grid: Grid, qty_grid: Grid) -> Iterator[tuple]:
    """The recording's events as engine tuples on the grids, in recording time, every rule checked."""
    if fmt == "cefisim":
        (path,) = files
        yield from read_events(path, price_grid, qty_grid)
        return
    importer = IMPORTERS[fmt]
    parser = LineParser(price_grid, qty_grid)
    check = EventCheck(price_grid)
    for where, raw in heapq.merge(*(importer(p) for p in files), key=lambda item: item[1][1]):
        event = on_grid(parser, where, raw)
        check.check(event, where)
        yield event
    check.end_instant()


def scan(files: tuple[str, ...], fmt: str, inst: Instrument) -> tuple[int, int, int]:
    """(events, first ts, last ts) of a recording, read once with every check (RecordingError)."""
    count, first, last = 0, 0, 0
    for event in recorded_events(files, fmt, inst.price_grid, inst.qty_grid):
        if not count:
            first = event[1]
        last = event[1]
        count += 1
    return count, first, last


def mapped_events(spec: RecordedSpec, start_ns: int, inst: Instrument) -> Iterator[tuple]:
    to_engine = spec.engine_ns
    for ev in recorded_events(spec.files, spec.fmt, inst.price_grid, inst.qty_grid):
        if ev[0] == SNAPSHOT:
            yield (SNAPSHOT, to_engine(start_ns, ev[1]), to_engine(start_ns, ev[2]), ev[3], ev[4])
        else:
            yield (ev[0], to_engine(start_ns, ev[1]), to_engine(start_ns, ev[2]), ev[3], ev[4], ev[5])


def attach(venue: Venue, spec: RecordedSpec, start_ns: int, events: Iterator[tuple] | None = None) -> RecordedMarket:
    """Add the counterparty and the recorded market of ``spec`` to a venue being built; ``events``
    (engine tuples in engine time) replace the file's (the benchmark replays a list from memory)."""
    inst = queries.listed_instrument(venue, spec.instrument_id)
    cp = Client(spec.counterparty_id, f"recorded-{inst.symbol}")
    venue.add_client(cp)
    venue.credit(cp.id, inst.base.id, COUNTERPARTY_FUNDS)
    venue.credit(cp.id, inst.quote.id, COUNTERPARTY_FUNDS)
    model = queue_model(spec.queue_model, spec.power_n)
    stream = mapped_events(spec, start_ns, inst) if events is None else events
    market = RecordedMarket(venue, inst.id, cp.id, stream, model, spec.impact, name=str(Path(spec.files[0]).name))
    venue.add_feed(market)
    return market


__all__ = ["FORMATS", "QUEUE_MODELS", "RecordedSpec", "attach", "mapped_events", "recorded_events", "scan"]
