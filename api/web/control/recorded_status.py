"""``GET /_sim/recorded``: which recording each recorded instrument replays, where it is in it, and
the queue position of every resting order of the users on it (``docs/recorded.md``).

One item per recorded source, in the scenario's order::

    {"instrument_id": "1", "symbol": "BTC-USD", "files": ["busy_btcusd.jsonl.gz"], "format": "cefisim",
     "speed": "1", "offset_ns": "0", "queue_model": "risk_averse", "impact": true, "feed_latency_ms": "0",
     "events_applied": 1234, "done": false,
     "position_ns": "1793610012000000000", "recording_position_ns": "...", "next_ns": "...",
     "orders": [{"order_id": "7", "client_id": "100", "side": "BUY", "price": "30003.50",
                 "leaves_qty": "0.5000", "queue_ahead": "0.2000"}]}

``position_ns`` is the engine time of the last recorded event applied (null before the first),
``recording_position_ns`` the same instant in the recording's own time, ``next_ns`` the engine time of
the next one (null once the recording is over). Orders are the users' resting orders, oldest first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp import web

from cefisim.api.edge.serialize import ns
from cefisim.api.formats.recorded.source import RecordedSpec
from cefisim.api.web.server.http import respond
from cefisim.api.web.server.venue_state import VENUE
from cefisim.engine import queries
from cefisim.engine.recorded.market import RecordedMarket


def _speed(spec: RecordedSpec) -> str:
    num, den = spec.speed
    whole, frac = divmod(num, den)
    if not frac:
        return str(whole)
    scale = len(str(den)) - 1
    return f"{whole}.{frac * 10**scale // den:0{scale}d}".rstrip("0")


def _millis(ns_: int) -> str:
    whole, frac = divmod(ns_, 1_000_000)
    return f"{whole}.{frac:06d}".rstrip("0").rstrip(".")


def recording_ns(spec: RecordedSpec, start_ns: int, engine_ns: int) -> int:
    """The recording's own time at an engine time (the inverse of ``RecordedSpec.engine_ns``)."""
    num, den = spec.speed
    return spec.first_ts + spec.offset_ns + (engine_ns - start_ns) * num // den


def source_doc(spec: RecordedSpec, market: RecordedMarket, start_ns: int) -> dict[str, Any]:
    inst = market.instrument
    fmt_p, fmt_q = inst.price_grid.format, inst.qty_grid.format
    orders = []
    book = market.book
    for levels in (book.bids, book.asks):
        for level in levels.values():
            for order in level.orders.values():
                if order.account is market.counterparty:
                    continue
                ahead = market.queue_position(order)
                orders.append(
                    (
                        order.id,
                        {
                            "order_id": str(order.id),
                            "client_id": str(order.account.id),
                            "side": order.side,
                            "price": fmt_p(order.price),
                            "leaves_qty": fmt_q(order.remaining),
                            "queue_ahead": None if ahead is None else fmt_q(ahead),
                        },
                    )
                )
    orders.sort(key=lambda item: item[0])
    last = market.last_ts
    return {
        "instrument_id": str(inst.id),
        "symbol": inst.symbol,
        "files": [Path(f).name for f in spec.files],
        "format": spec.fmt,
        "speed": _speed(spec),
        "offset_ns": str(spec.offset_ns),
        "queue_model": market.model.name,
        "impact": market.impact,
        "feed_latency_ms": _millis(spec.feed_latency_ns),
        "events_applied": market.applied,
        "done": market.next_ts is None,
        "position_ns": None if last is None else ns(last),
        "recording_position_ns": None if last is None else ns(recording_ns(spec, start_ns, last)),
        "next_ns": None if market.next_ts is None else ns(market.next_ts),
        "orders": [doc for _, doc in orders],
    }


async def recorded_sources(request: web.Request) -> web.Response:
    sim = request[VENUE].sim
    markets = [f for f in queries.feeds(sim.venue) if isinstance(f, RecordedMarket)]
    return respond(
        [source_doc(spec, market, sim.start_ns) for spec, market in zip(sim.scenario.recorded, markets, strict=True)]
    )


def recorded_routes() -> list[web.RouteDef]:
    return [web.get("/_sim/recorded", recorded_sources)]


__all__ = ["recorded_routes", "recording_ns", "source_doc"]
