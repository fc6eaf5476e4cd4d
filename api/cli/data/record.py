"""``cefisim data record``: a scenario's market exported as recorded depth and trades.

Contract:
- The scenario runs as ``cefisim replay`` runs it: through the runtime's simulation on a virtual
  clock (``api/runtime/simulation.py``: same venue, same runner, same seed), its start instant left
  to the recording so that the first snapshot is the book before anything happened. One
  instrument is recorded: a snapshot of its book at the start, a ``trade`` per trade as it happens
  (aggressor side = the incoming order's side), and at the end of every engine instant an ``update``
  per price level whose total size changed across the instant, bids before asks, best first (as a
  feed publishes a diff per message: a market maker's cancel-and-replace is one change of size, not
  the level going and coming back).
- Exchange time of a trade is its engine timestamp; of a level update, the timestamp of the last event
  of the instant. A scenario has no network: ``local_ts`` equals ``ts``.
- The same scenario gives byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

from cefisim.api.formats.recorded.format import RecordingError, Writer, open_output
from cefisim.api.formats.scenario import Scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine import queries
from cefisim.engine.commands import Command
from cefisim.engine.events import TradeEvent
from cefisim.engine.recorded.feed import SNAPSHOT, TRADE, UPDATE
from cefisim.engine.venue import Result, Venue
from cefisim.engine.vocabulary import Side

BUY = Side.BUY
SELL = Side.SELL

Levels = dict[int, int]


def book_levels(venue: Venue, inst_id: int) -> tuple[Levels, Levels]:
    """Price -> total lots of every level of each side, best first."""
    book = queries.book(venue, inst_id)
    return ({lv.price: lv.qty for lv in book.bids.values()}, {lv.price: lv.qty for lv in book.asks.values()})


def _taker_side(venue: Venue, result: Result, trade: TradeEvent) -> str:
    """The side of a trade's incoming order: the command's own, else its client's (the trade names it),
    else the side facing the resting order: in a recorded market a recorded trade's taker is the
    recording's, no client's order, and it trades only against a client's resting order."""
    order, taker_id = result.order, trade.taker_order_id
    if order is not None and order.id == taker_id:
        return order.side
    found = queries.client_order(venue, trade.taker_client_id, taker_id)
    if found is not None:
        return found.side
    maker = queries.client_order(venue, trade.maker_client_id, trade.maker_order_id)
    if maker is not None:
        return SELL if maker.side == BUY else BUY
    raise AssertionError(f"taker order {taker_id} of a trade is unknown")  # the venue keeps it for a day


def record(scenario: Scenario, inst_id: int, until_ns: int, out: str | Path) -> int:
    """Run ``scenario`` to ``until_ns`` and write instrument ``inst_id``'s market to ``out``;
    returns the number of events written."""
    sim = Simulation(scenario, clock="virtual", start=False)
    venue = sim.venue
    inst = queries.listed_instrument(venue, inst_id)
    try:
        stream = open_output(out)
    except OSError as exc:
        raise RecordingError(f"{out}: {exc.strerror}") from None
    with stream:
        writer = Writer(stream, inst.price_grid, inst.qty_grid, symbol=inst.symbol, source="cefisim scenario")
        where = f"{scenario.source} (recording)"
        bids, asks = book_levels(venue, inst_id)
        start = queries.now(venue)
        writer.write((SNAPSHOT, start, start, tuple(bids.items()), tuple(asks.items())), where)
        last = [bids, asks]
        instant = [start, start]  # the engine time being recorded, and its last event's timestamp

        def flush() -> None:
            """The instant is over: one update per level whose total size changed across it."""
            now = book_levels(venue, inst_id)
            ts = instant[1]
            for side, old, new in ((BUY, last[0], now[0]), (SELL, last[1], now[1])):
                if old == new:
                    continue
                prices = sorted(set(old) | set(new), reverse=side == BUY)
                for price in prices:
                    lots = new.get(price, 0)
                    if old.get(price, 0) != lots:
                        writer.write((UPDATE, ts, ts, side, price, lots), where)
            last[0], last[1] = now

        def on_step(at: int, cmd: Command, result: Result) -> None:
            if at != instant[0]:
                flush()
                instant[0] = at
            events = result.events
            if not events:
                return
            for ev in events:
                if type(ev) is TradeEvent and ev.instrument_id == inst_id:
                    ts = ev.ts
                    writer.write((TRADE, ts, ts, _taker_side(venue, result, ev), ev.price, ev.lots), where)
            instant[1] = events[-1].ts

        sim.runner.run(until_ns, on_step, submit=sim.scenario_submit)
        flush()
        writer.close()
    return writer.count


__all__ = ["book_levels", "record"]
