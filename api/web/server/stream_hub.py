"""The live stream's hub: what the venue did, as server-sent events, for every open stream.

The hub is the simulation's one listener (``Simulation.set_listener``): it sees the result of every
command the simulation applies (requests, the control plane, the scenario's agents and events), in
order, synchronously, and turns it into stream events of the instruments someone watches.

Event ids (``docs/stream.md``) come from the engine's event sequence, never from a clock: ``n`` counts
the engine events the simulation applied since the server started (every command's ``Result.events``),
so the events of one command end at ``n``. Each command gives, per watched instrument, an ordered list:
its trades (one ``trade`` event each, in match order), then one ``order`` event per order of the
instrument the command changed (client-scoped), then one ``depth`` event when the instrument's top
``DEPTH_LEVELS`` levels, status or last price changed (coalesced: one per command, not one per fill).
The k-th item of that list has the id ``n-k``. A snapshot (``snapshot`` event) has the id ``n``: the
state after every event up to ``n``. Ids therefore increase along a stream and are the same for every
stream that carries the event; a resume (``Last-Event-ID``) replays the events after the id from the
instrument's ring, or, when the ring no longer reaches back that far, sends a fresh snapshot instead.

Cost: with no stream open the listener adds one counter per command; the per-instrument work runs
only for instruments being watched (and ``linger_s`` after their last stream closed, so a reconnecting
client resumes instead of starting over).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from cefisim.api.edge.serialize import book_doc, ns, order_record, sim_trade
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine import queries
from cefisim.engine.events import Event, InstrumentEvent, OrderEvent, TradeEvent
from cefisim.engine.records import Order
from cefisim.engine.venue import Result, Venue
from cefisim.engine.vocabulary import Side

BUY = Side.BUY
SELL = Side.SELL

log = logging.getLogger("cefisim.stream")

#: price levels a side in depth events and snapshots (the page shows them all)
DEPTH_LEVELS = 25
#: the ``k`` of a snapshot's position: after every event of its ``n``
_AFTER_ALL = 1 << 62

EventId = tuple[int, int]


@dataclass
class StreamSettings:
    """The stream's limits (``docs/limits.md``)."""

    max_streams: int = 32  # open streams per server; one more is a 429 problem
    queue_events: int = 2048  # events waiting to be written to one stream; one more drops the stream
    ring_events: int = 4096  # recent events kept per watched instrument for Last-Event-ID resume
    heartbeat_s: float = 15.0  # a comment line on an idle stream, so proxies keep it open
    linger_s: float = 60.0  # how long an instrument's ring keeps recording after its last stream closed
    retry_ms: int = 1000  # the reconnection delay the stream asks browsers for


@dataclass
class OpenStreams:
    """The streams open on a whole server: the venues' hubs share one, so ``max_streams`` is per server."""

    count: int = 0


def format_id(event_id: EventId) -> str:
    n, k = event_id
    return str(n) if k == _AFTER_ALL else f"{n}-{k}"


def parse_id(text: str | None) -> EventId | None:
    """``n-k`` (an event) or ``n`` (a snapshot); None for anything else (a client's stale or foreign id)."""
    if not text or len(text) > 40 or not text.isascii():
        return None
    n, sep, k = text.partition("-")
    if not n.isdigit() or (sep and not k.isdigit()):
        return None
    return (int(n), int(k)) if sep else (int(n), _AFTER_ALL)


def encode(event_id: EventId | None, kind: str, data: Any) -> bytes:
    """One server-sent event (``data`` as one line of JSON)."""
    head = b"id: %s\n" % format_id(event_id).encode() if event_id is not None else b""
    return head + b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


class Connection:
    """One open stream: what waits to be written, bounded. A stream that falls ``queue_events`` behind
    is dropped (its connection aborted): a slow client never makes the server hold more for it."""

    __slots__ = ("_abort", "_limit", "client_id", "closed", "dropped", "instrument_id", "pending", "wake")

    def __init__(self, instrument_id: int, client_id: int | None, limit: int, abort: Callable[[], None]) -> None:
        self.instrument_id = instrument_id
        self.client_id = client_id
        self.pending: deque[bytes] = deque()
        self.wake = asyncio.Event()
        self.closed = False
        self.dropped = False
        self._limit = limit
        self._abort = abort

    def push(self, data: bytes) -> None:
        if self.closed:
            return
        if len(self.pending) >= self._limit:
            self.dropped = True
            self.close()
            self._abort()  # the writer may sit in a drain the client never empties
            return
        self.pending.append(data)
        self.wake.set()

    def close(self) -> None:
        self.closed = True
        self.pending.clear()
        self.wake.set()


class _Watch:
    """One watched instrument: its streams, its ring of recent events, the depth it last published."""

    __slots__ = ("conns", "depth_key", "floor", "idle_since", "instrument_id", "ring")

    def __init__(self, instrument_id: int, ring_events: int) -> None:
        self.instrument_id = instrument_id
        self.conns: list[Connection] = []
        self.ring: deque[tuple[EventId, int | None, bytes]] = deque(maxlen=ring_events)
        self.floor: EventId = (0, _AFTER_ALL)  # every event after it is in the ring
        self.depth_key: tuple | None = None
        self.idle_since: float | None = None


class StreamHub:
    """The streams of one simulation (``docs/stream.md``)."""

    def __init__(
        self,
        sim: Simulation,
        settings: StreamSettings | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        venue: str = "default",
        server: OpenStreams | None = None,
    ) -> None:
        """``server``: the count of the server's open streams, shared with the other venues' hubs
        (None: this hub's own, a server of one venue)."""
        self.sim = sim
        self.server = server or OpenStreams()
        self.venue = venue  # the venue's id, in each snapshot (docs/venues.md)
        self.settings = settings or StreamSettings()
        self.seq = 0  # engine events applied since the hub attached (the server started)
        self.open = 0  # open streams
        self.dropped = 0  # streams dropped for falling behind
        self._venue: Venue = sim.venue
        # the n of the last reset or restore seen: a snapshot id ``n`` equal to it may show the state
        # before (a reset that applied no event leaves n as it was), so it never resumes
        self._reset_seq: int | None = None
        self._watches: dict[int, _Watch] = {}
        self._monotonic = monotonic
        self._task: asyncio.Task[None] | None = None
        sim.set_listener(self.on_result)

    # --- the listener ------------------------------------------------------------------------------

    def on_result(self, result: Result) -> None:
        events = result.events
        if events:
            self.seq += len(events)
            if self._watches:
                try:
                    self._publish(result)
                except Exception:  # a bug here must not fail the command, which has applied
                    log.exception("stream events of a command could not be made; every stream starts over")
                    self._restart()

    def _restart(self) -> None:
        """Close every stream and forget the rings: clients reconnect and get a snapshot."""
        self.close_all()
        self._watches.clear()

    def _publish(self, result: Result) -> None:
        venue = self.sim.venue
        if venue is not self._venue:  # reset or restored: every stream starts over from a snapshot
            self.resync()
            return
        n = self.seq
        for inst_id, items in _changes(venue, result, self._watches).items():
            watch = self._watches[inst_id]
            out = items
            key = _depth_key(venue, inst_id)
            if key != watch.depth_key:
                watch.depth_key = key
                out.append(("depth", None, self._depth(inst_id)))
            for k, (kind, client, data) in enumerate(out):
                event_id = (n, k)
                raw = encode(event_id, kind, data)
                ring = watch.ring
                if len(ring) == ring.maxlen:
                    watch.floor = ring[0][0]
                ring.append((event_id, client, raw))
                for conn in watch.conns:
                    if client is None or client == conn.client_id:
                        conn.push(raw)

    def resync(self) -> None:
        """The simulation's state was replaced: forget the rings, send every stream a snapshot."""
        self._venue = self.sim.venue
        self._reset_seq = self.seq
        for inst_id, watch in list(self._watches.items()):
            if queries.instrument(self._venue, inst_id) is None:
                for conn in watch.conns:
                    conn.close()
                del self._watches[inst_id]
                continue
            watch.ring.clear()
            watch.floor = (self.seq, _AFTER_ALL)
            watch.depth_key = _depth_key(self._venue, inst_id)
            for conn in watch.conns:
                conn.push(self._snapshot(conn, "reset"))

    # --- streams -----------------------------------------------------------------------------------

    def subscribe(
        self, instrument_id: int, client_id: int | None, last_event_id: str | None, abort: Callable[[], None]
    ) -> Connection:
        """A new stream, its first events already queued: the events after ``last_event_id`` when the
        ring still holds them all (and they are fewer than a stream may queue), else a snapshot. The
        caller checked the limit (:meth:`full`)."""
        if self.sim.venue is not self._venue:
            self.resync()
        watch = self._watches.get(instrument_id)
        if watch is None:
            watch = self._watches[instrument_id] = _Watch(instrument_id, self.settings.ring_events)
            watch.floor = (self.seq, _AFTER_ALL)
            watch.depth_key = _depth_key(self._venue, instrument_id)
        watch.idle_since = None
        conn = Connection(instrument_id, client_id, self.settings.queue_events, abort)
        last = parse_id(last_event_id)
        missed: list[bytes] | None = None
        if last is not None and watch.floor <= last <= (self.seq, _AFTER_ALL) and last != (self._reset_seq, _AFTER_ALL):
            missed = [
                raw
                for event_id, client, raw in watch.ring
                if event_id > last and (client is None or client == client_id)
            ]
        if missed is not None and len(missed) < self.settings.queue_events:
            for raw in missed:
                conn.push(raw)
        else:  # nothing to resume from, or more missed than the stream may queue: start over
            conn.push(self._snapshot(conn, "resume-gap" if last_event_id else "connect"))
        watch.conns.append(conn)
        self.open += 1
        self.server.count += 1
        self._ensure_housekeeping()
        return conn

    def unsubscribe(self, conn: Connection) -> None:
        watch = self._watches.get(conn.instrument_id)
        conn.close()
        if conn.dropped:
            self.dropped += 1
            log.info(
                "stream of instrument %s dropped: %d events behind", conn.instrument_id, self.settings.queue_events
            )
        self.open -= 1
        self.server.count -= 1
        if watch is not None and conn in watch.conns:
            watch.conns.remove(conn)
            if not watch.conns:
                watch.idle_since = self._monotonic()

    def full(self) -> bool:
        return self.server.count >= self.settings.max_streams

    def close_all(self) -> None:
        """Server shutdown: every stream ends (its handler returns)."""
        for watch in self._watches.values():
            for conn in watch.conns:
                conn.close()

    def watched(self) -> list[int]:
        """The instruments whose events the hub records now (open streams and lingering rings)."""
        return sorted(self._watches)

    def _ensure_housekeeping(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._housekeeping())

    async def _housekeeping(self) -> None:
        """Once a second while anything is watched: notice a reset or restore that no command followed
        yet, and stop recording instruments nobody has watched for ``linger_s``."""
        while self._watches:
            await asyncio.sleep(1.0)
            self.expire()
            if self.sim.venue is not self._venue:
                self.resync()

    def expire(self) -> None:
        """Forget instruments whose last stream closed more than ``linger_s`` ago."""
        now = self._monotonic()
        for inst_id, watch in list(self._watches.items()):
            if not watch.conns and watch.idle_since is not None and now - watch.idle_since >= self.settings.linger_s:
                del self._watches[inst_id]

    async def stop(self) -> None:
        self.close_all()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    # --- documents ---------------------------------------------------------------------------------

    def _depth(self, inst_id: int) -> dict[str, Any]:
        venue = self._venue
        inst, book = queries.listed_instrument(venue, inst_id), queries.book(venue, inst_id)
        return book_doc(inst, book, DEPTH_LEVELS, queries.now(venue))

    def _snapshot(self, conn: Connection, reason: str) -> bytes:
        doc: dict[str, Any] = {"venue": self.venue, "reason": reason, "depth": self._depth(conn.instrument_id)}
        if conn.client_id is not None:
            doc["client_id"] = str(conn.client_id)
            doc["orders"] = [
                order_record(o) for o in queries.open_orders_on(self._venue, conn.client_id, conn.instrument_id)
            ]
        return encode((self.seq, _AFTER_ALL), "snapshot", doc)


def _depth_key(venue: Venue, inst_id: int) -> tuple:
    """What a depth event shows, in engine units: a change of it is a depth event."""
    book = queries.book(venue, inst_id)
    return (
        queries.listed_instrument(venue, inst_id).status,
        book.last_price,
        tuple(book.depth(BUY, DEPTH_LEVELS)),
        tuple(book.depth(SELL, DEPTH_LEVELS)),
    )


def _changes(venue: Venue, result: Result, watched: dict[int, Any]) -> dict[int, list[tuple[str, int | None, Any]]]:
    """The trade and order events of one command, by watched instrument (``(kind, client or None,
    data)``, trades first), plus an empty entry for a watched instrument the command touched otherwise
    (its status), so its depth is looked at."""
    orders: dict[int, Order] = {}  # the orders this command named, by id
    if result.order is not None:
        orders[result.order.id] = result.order
    changes: dict[int, list[dict[str, Any]]] = {}  # order id -> what happened to it, in order
    out: dict[int, list[tuple[str, int | None, Any]]] = {}
    events: list[Event] = result.events
    for ev in events:  # the orders the command names, so that its trades find them
        if isinstance(ev, OrderEvent):
            order = queries.client_order(venue, ev.client_id, ev.order_id) or orders.get(ev.order_id)
            if order is not None:
                orders[order.id] = order
    for ev in events:
        if isinstance(ev, OrderEvent):
            order = orders.get(ev.order_id)
            if order is not None and order.instrument.id in watched:
                changes.setdefault(order.id, []).append(
                    {"status": ev.status, "detail": ev.detail, "timestamp": ns(ev.ts)}
                )
        elif isinstance(ev, InstrumentEvent):
            if ev.instrument_id in watched:
                out.setdefault(ev.instrument_id, [])
        elif isinstance(ev, TradeEvent) and ev.instrument_id in watched:
            ts, match_id, inst_id, price, lots = ev.ts, ev.match_id, ev.instrument_id, ev.price, ev.lots
            maker = _trade_order(venue, orders, ev.maker_order_id, ev.maker_client_id)
            taker = _trade_order(venue, orders, ev.taker_order_id, ev.taker_client_id)
            inst = queries.listed_instrument(venue, inst_id)
            if taker is not None:
                out.setdefault(inst_id, []).append(
                    (
                        "trade",
                        None,
                        {**sim_trade(inst, match_id, price, lots, taker, ts), "instrument_id": str(inst_id)},
                    )
                )
            for order, flag in ((maker, "MAKER"), (taker, "TAKER")):
                if order is not None:
                    changes.setdefault(order.id, []).append(
                        {
                            "trade": {
                                "match_id": str(match_id),
                                "price": inst.price_grid.format(price),
                                "qty": inst.qty_grid.format(lots),
                                "liq_flag": flag,
                            },
                            "timestamp": ns(ts),
                        }
                    )
    for order_id, what in changes.items():
        order = orders[order_id]
        inst_id = order.instrument.id
        out.setdefault(inst_id, []).append(
            (
                "order",
                order.account.id,
                {
                    "client_id": str(order.account.id),
                    "instrument_id": str(inst_id),
                    "changes": what,
                    "order": order_record(order),
                },
            )
        )
    return out


def _trade_order(venue: Venue, known: dict[int, Order], order_id: int, client_id: int) -> Order | None:
    """A trade's order: one the command named, else its client's (the trade names both clients)."""
    order = known.get(order_id) or queries.client_order(venue, client_id, order_id)
    if order is not None:
        known[order_id] = order
    return order
