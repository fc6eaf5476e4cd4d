"""``cefisim data convert``: other formats to the cefisim market-data format.

Contract:
- Inputs are read twice, each time as a stream (constant memory in their length): the first pass
  finds the finest price and size decimals used (the grids, unless given), the second merges the
  inputs' events by exchange time (stable: at one time, the order of the inputs on the command line)
  and writes them, checked by the loader's rules (``api/formats/recorded/format.py``).
- Any problem is a :class:`~api.formats.recorded.format.RecordingError` naming the input file and line.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from pathlib import Path

from cefisim.api.formats.recorded.format import LineParser, RecordingError, Writer, open_output
from cefisim.api.formats.recorded.importers import IMPORTERS, Sourced
from cefisim.engine.recorded.feed import SNAPSHOT, UPDATE
from cefisim.engine.units import Grid, parse_decimal
from cefisim.engine.vocabulary import Side

BUY = Side.BUY
SELL = Side.SELL

MAX_DECIMALS = 18


def _decimals(text: object) -> int:
    """Decimals of a decimal string without its trailing zeros (0 for anything else: the second
    pass reports it)."""
    if not isinstance(text, str):
        return 0
    parsed = parse_decimal(text.lstrip("-"))
    if parsed is None:
        return 0
    coef, scale = parsed
    while scale and coef % 10 == 0:
        coef //= 10
        scale -= 1
    return scale


def grids_of(streams: Iterable[Iterator[Sourced]]) -> tuple[Grid, Grid]:
    """The coarsest grids every price and size of the streams lies on (10**-decimals)."""
    dp = dq = 0
    for stream in streams:
        for _, ev in stream:
            if ev[0] == SNAPSHOT:
                for side in (ev[3], ev[4]):
                    for p, q in side:
                        dp, dq = max(dp, _decimals(p)), max(dq, _decimals(q))
            else:
                dp, dq = max(dp, _decimals(ev[4])), max(dq, _decimals(ev[5]))
    return Grid.of_decimals(min(dp, MAX_DECIMALS)), Grid.of_decimals(min(dq, MAX_DECIMALS))


def on_grid(parser: LineParser, where: str, ev: tuple) -> tuple:
    """A raw event (decimal strings) as an engine tuple on the parser's grids."""
    try:
        if ev[0] == SNAPSHOT:
            return (
                SNAPSHOT,
                ev[1],
                ev[2],
                parser.levels(list(ev[3]), "bids", BUY),
                parser.levels(list(ev[4]), "asks", SELL),
            )
        return (ev[0], ev[1], ev[2], ev[3], parser.price(ev[4]), parser.size(ev[5], ev[0] != UPDATE))
    except ValueError as exc:
        raise RecordingError(f"{where}: {exc}") from None


def convert(
    inputs: list[str],
    fmt: str,
    out: str | Path,
    price_increment: str | None = None,
    qty_increment: str | None = None,
    symbol: str | None = None,
) -> int:
    """Convert ``inputs`` of format ``fmt`` into ``out``; returns the number of events written."""
    importer = IMPORTERS[fmt]
    if price_increment is None or qty_increment is None:
        pg, qg = grids_of(importer(p) for p in inputs)
    if price_increment is not None:
        pg = Grid(price_increment)
    if qty_increment is not None:
        qg = Grid(qty_increment)
    parser = LineParser(pg, qg)
    merged = heapq.merge(*(importer(p) for p in inputs), key=lambda item: item[1][1])
    try:
        stream = open_output(out)
    except OSError as exc:
        raise RecordingError(f"{out}: {exc.strerror}") from None
    with stream:
        writer = Writer(stream, pg, qg, source=fmt, symbol=symbol)
        for where, raw in merged:
            writer.write(on_grid(parser, where, raw), where)
        writer.close()
    return writer.count


__all__ = ["convert", "grids_of"]
