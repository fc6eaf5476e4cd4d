"""The emulator's control plane under ``/_sim/``: things a sandbox user drives that the venue has not.

Every route with its body, answer and examples: docs/control.md (and ``GET /_sim/openapi.json``).

Off in ``--environment production`` (every path 404); with ``--control-token`` every request needs
``Authorization: Bearer <token>``; without one, only loopback peers are served (403 otherwise). Bodies are
JSON; errors are bare RFC 7807 problems.

| Method | Path | What |
|---|---|---|
| GET | /_sim/health | scenario, clock mode, engine time, command count, engine build |
| POST | /_sim/reset | back to the loaded scenario (the journal starts anew) |
| GET | /_sim/clock | engine time (ns and ISO 8601) |
| POST | /_sim/clock/advance | ``{"seconds": "1.5"}`` or ``{"to": "2026-11-02T10:00:00Z"}`` or ``{"to_ns": "..."}`` |
| GET | /_sim/book/{instrument_id} | depth (``?depth=N``, default 10) and last trade price |
| GET | /_sim/trades/{instrument_id} | recent trades (``?limit=N``, default 50), newest first |
| GET | /_sim/instruments | the venue's instruments: id and symbol |
| GET, POST | /_sim/latency | acknowledgement delays ``{"entry_ms", "modify_ms", "cancel_ms"}`` |
| POST | /_sim/settlement-delay | ``{"ms": 250}``: transfer settlement delay |
| POST | /_sim/instruments/{instrument_id}/status | ``{"status": "HALTED"}`` |
| GET | /_sim/invariants | runs every engine invariant check; 200 ``{"ok": true}`` or 500 with the failure |
| GET | /_sim/journal | the journal file (when the server runs with ``--journal``) |
| GET | /_sim/snapshot | the whole state as JSON |
| POST | /_sim/snapshot | restore a snapshot of the same scenario (the journal starts anew from it) |
| POST | /_sim/api-keys/{key_id}/revoke | revoke an API key: its refresh tokens stop at once |
| GET, POST | /_sim/retention | ``{"status_retention": "86400"}`` (seconds); GET adds the caps, retained counts |
| GET | /_sim/requests | the last requests served (``?limit=N``), newest first (``api/web/server/request_log.py``) |
| GET, POST, DELETE | /_sim/faults | injected faults for the next N or a share of requests (``faults.py`` here) |
| GET | /_sim/recorded | recorded markets: the recording, the position in it, each own order's queue position |
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
from datetime import UTC, datetime

from aiohttp import web
from aiohttp.typedefs import Handler

from cefisim.api.edge import serialize
from cefisim.api.edge.problems import Problem, bad_request
from cefisim.api.edge.serialize import iso, ns
from cefisim.api.edge.validate import F, ascii_digits, check_object
from cefisim.api.formats.scenario.model import STATUS_RETENTION_RULE, status_retention_ns
from cefisim.api.runtime.simulation import JournalWriteError
from cefisim.api.runtime.snapshot import SnapshotError
from cefisim.api.web.control.recorded_status import recorded_routes
from cefisim.api.web.server.http import JSON, dumps, parse_json_in_steps, read_json, respond
from cefisim.api.web.server.keys import OPTIONS, VENUE_WORK
from cefisim.api.web.server.request_log import recent_requests
from cefisim.api.web.server.venue_state import VENUE
from cefisim.engine import build as engine_build
from cefisim.engine import queries
from cefisim.engine.clock import NS_PER_DAY, NS_PER_SECOND
from cefisim.engine.commands import SetInstrumentStatus, SetLatency, SetSettlementDelay
from cefisim.engine.core import Result
from cefisim.engine.reference import Instrument
from cefisim.engine.retention import ended_orders
from cefisim.engine.units import Grid
from cefisim.engine.vocabulary import InstrumentStatus

INSTRUMENT_STATUSES = tuple(InstrumentStatus)

MS = 1_000_000
MAX_ADVANCE_NS = 31 * NS_PER_DAY  # one advance: a GTC order's whole life (30 days) and a day
MAX_LATENCY_MS = 60_000  # an acknowledgement delay: a minute
MAX_SETTLEMENT_DELAY_MS = 86_400_000  # a transfer's settlement delay: a day
MAX_SNAPSHOT_BYTES = 256 << 20  # POST /_sim/snapshot: a week of the demo scenario is far below it
MAX_DURATION_CHARS = 40  # a duration given as a decimal string: longer text is refused unread
LAST_INSTANT_NS = int(datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()) * NS_PER_SECOND
CONTROL_CHALLENGE = 'Bearer realm="cefisim-control"'  # a 401 of the control plane (--control-token)
#: the live page's own files, the same bytes for everyone: a browser loads them without the control token,
#: which the page then sends itself (docs/stream.md); what they show comes from routes that need it
PAGE_FILES = frozenset(("/_sim/ui", "/_sim/ui/", "/_sim/ui/app.js", "/_sim/ui/style.css"))
_MS_GRID = Grid("0.001")  # latencies and delays in milliseconds with up to microsecond precision


@web.middleware
async def control_guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.path.startswith("/_sim/") or request.path == "/_sim":
        check_control(request)
    return await handler(request)


def check_control(request: web.Request) -> None:
    """The control plane's guard (a 404, 401 or 403 problem); the venue router runs it before it
    looks a venue id up, so that an id cannot be probed without the token."""
    opts = request.app[OPTIONS]
    if opts.environment == "production":
        raise Problem(404, "not-found", f"no such path: {request.method} {request.path}")
    if opts.control_token is not None:
        if request.method in ("GET", "HEAD") and request.path in PAGE_FILES:
            return
        # a header's bytes that are not UTF-8 arrive as surrogates: compared as the bytes they were
        given = request.headers.get("Authorization", "").encode("utf-8", "surrogateescape")
        if not given and request.path == "/_sim/stream" and "token" in request.query:
            # EventSource sends no header: the live page passes the token in the stream's query
            given = f"Bearer {request.query['token']}".encode("utf-8", "surrogateescape")
        if not hmac.compare_digest(given, f"Bearer {opts.control_token}".encode()):
            # RFC 6750 section 3.1: the error code only when a bearer token was presented
            wrong = ', error="invalid_token"' if given.strip().lower().startswith(b"bearer") else ""
            raise Problem(
                401,
                "unauthorized",
                "Authorization: the control plane needs its bearer token",
                headers={"WWW-Authenticate": CONTROL_CHALLENGE + wrong},
            )
    elif not _is_loopback(request.remote):
        raise Problem(
            403,
            "forbidden",
            "the control plane answers loopback peers only; start the server with --control-token to open it to others",
        )


def _is_loopback(peer: str | None) -> bool:
    """127.0.0.0/8, ::1 and IPv4-mapped loopback; a Unix socket (no address) counts as local."""
    if not peer:
        return True
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def _query_count(request: web.Request, name: str, default: int) -> int:
    """A whole number from 1 to 1000 in the query (``default`` when absent), else a 400 naming it."""
    raw = request.query.get(name)
    if raw is None:
        return default
    if not ascii_digits(raw) or len(raw) > 4 or not 1 <= int(raw) <= 1000:
        raise bad_request(name, "must be a whole number from 1 to 1000")
    return int(raw)


def _instrument(request: web.Request) -> Instrument:
    """The instrument the path names; 404 when it names none."""
    raw = request.match_info["instrument_id"]
    inst = queries.instrument(request[VENUE].sim.venue, int(raw)) if ascii_digits(raw) and len(raw) <= 19 else None
    if inst is None:
        raise Problem(404, "unknown-instrument", f"instrument_id: no instrument {raw!r}")
    return inst


def _ms(value: object, field: str, most_ms: int) -> int:
    """A duration in milliseconds (a whole number, or a decimal string to the microsecond) as
    nanoseconds, at most ``most_ms``; else a 400 naming the field."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= most_ms:
        return value * MS
    if isinstance(value, str) and len(value) <= MAX_DURATION_CHARS:
        units = _MS_GRID.to_units(value)
        if units is not None and units <= most_ms * 1000:
            return units * 1000
    raise bad_request(field, f"must be a number of milliseconds from 0 to {most_ms}")


def clock_doc(request: web.Request) -> dict:
    sim = request[VENUE].sim
    now = queries.now(sim.venue)
    return {"now_ns": ns(now), "now": iso(now), "clock": sim.clock_mode}


async def health(request: web.Request) -> web.Response:
    sim = request[VENUE].sim
    counts = queries.counters(sim.venue)
    return respond(
        {
            "status": "ok",
            "scenario": str(sim.scenario.source),
            "clock": sim.clock_mode,
            "now_ns": ns(queries.now(sim.venue)),
            "orders": counts.orders,
            "matches": counts.matches,
            "retained_orders": counts.retained_orders,
            "build": engine_build(),
        }
    )


async def reset(request: web.Request) -> web.Response:
    venue = request[VENUE]
    venue.sim.reset()
    venue.auth_store.reset()
    return respond({"status": "reset", **clock_doc(request)})


async def get_clock(request: web.Request) -> web.Response:
    return respond(clock_doc(request))


def _parse_instant(text: object, field: str) -> int:
    if not isinstance(text, str):
        raise bad_request(field, "must be an ISO 8601 UTC time such as 2026-11-02T10:00:00Z")
    try:
        when = datetime.fromisoformat(text)  # 3.11 reads a Z suffix as UTC
    except ValueError:
        raise bad_request(field, "must be an ISO 8601 UTC time such as 2026-11-02T10:00:00Z") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return int(when.timestamp()) * NS_PER_SECOND + when.microsecond * 1000


async def advance_clock(request: web.Request) -> web.Response:
    sim = request[VENUE].sim
    if sim.clock_mode != "virtual":
        raise Problem(409, "wall-clock", "the server runs on the wall clock; start it with --clock virtual")
    body = check_object(await read_json(request), {"seconds": F("number"), "to": F("str"), "to_ns": F("id")}, "")
    given = [k for k in ("seconds", "to", "to_ns") if body.get(k) is not None]
    if len(given) != 1:
        raise bad_request("seconds", "give exactly one of seconds, to, to_ns")
    now = queries.now(sim.venue)
    if given[0] == "seconds":
        # n "ms" of a thousandth are n seconds
        target = now + _ms(body["seconds"], "seconds", LAST_INSTANT_NS // MS) * 1000
    elif given[0] == "to":
        target = _parse_instant(body["to"], "to")
    else:
        target = int(body["to_ns"])
    if target < now:
        raise bad_request(given[0], "the engine clock never goes back")
    if target > LAST_INSTANT_NS:
        raise bad_request(given[0], "past 9999-12-31T23:59:59Z, the last instant timestamps can show")
    if target - now > MAX_ADVANCE_NS:
        raise bad_request(given[0], f"at most {MAX_ADVANCE_NS // NS_PER_DAY} days per advance; advance again for more")
    # the scenario runs in slices, with the event loop let through between them: other requests (health,
    # reads, orders, which apply at the instant the advance has reached) are answered meanwhile
    epoch, before = sim.epoch, sim.scenario_events
    try:
        for _ in sim.advance_slices(target):
            await asyncio.sleep(0)
            if sim.epoch != epoch:
                raise Problem(409, "superseded", "the simulation was reset or restored during the advance")
        # the closing advance (a recorded venue's whole recording, timers) in steps too, the venue's own
        # requests held until it is done and the other venues served between (api/web/server/venue_work.py)
        result = Result()
        await request.config_dict[VENUE_WORK].run(sim, sim.finish_advance_steps(target, result))
    except JournalWriteError:
        reached = queries.now(sim.venue)
        if reached == now:
            raise  # nothing of the advance applied: the edge's 503, nothing changed
        raise Problem(
            503,
            "journal-unavailable",
            f"the command journal cannot be written: the advance stopped at {iso(reached)}, where its slices "
            "before the failure brought the clock; nothing of the failed slice was applied",
        ) from None
    # the venue events the advance made happen: the scenario's commands' (agents, scheduled events,
    # the timers they passed) and the closing advance's timers; not those of requests served meanwhile
    events = sim.scenario_events - before + len(result.events)
    return respond({**clock_doc(request), "events": events})


async def book(request: web.Request) -> web.Response:
    venue = request[VENUE].sim.venue
    inst = _instrument(request)
    depth = _query_count(request, "depth", 10)
    return respond(serialize.book_doc(inst, queries.book(venue, inst.id), depth, queries.now(venue)))


async def recent_trades(request: web.Request) -> web.Response:
    inst = _instrument(request)
    limit = _query_count(request, "limit", 50)
    fills = queries.recent_trades(request[VENUE].sim.venue, inst.id, limit)
    return respond([serialize.sim_trade(inst, f.match_id, f.price, f.qty, f.order, f.timestamp) for f in fills])


async def list_instruments(request: web.Request) -> web.Response:
    """The venue's instruments (the live page of a created venue lists them: ``/v1/cefi/instruments``
    without a key reads the default venue)."""
    return respond(
        [{"instrument_id": str(i.id), "symbol": i.symbol} for i in queries.instruments(request[VENUE].sim.venue)]
    )


async def get_latency(request: web.Request) -> web.Response:
    entry_ns, modify_ns, cancel_ns = queries.latency(request[VENUE].sim.venue)
    return respond({"entry_ms": _fmt_ms(entry_ns), "modify_ms": _fmt_ms(modify_ns), "cancel_ms": _fmt_ms(cancel_ns)})


def _fmt_ms(value_ns: int) -> str:
    return _MS_GRID.format(value_ns // 1000)


async def set_latency(request: web.Request) -> web.Response:
    body = await read_json(request)
    check_object(body, {"entry_ms": F("number"), "modify_ms": F("number"), "cancel_ms": F("number")}, "")
    entry_ns, modify_ns, cancel_ns = queries.latency(request[VENUE].sim.venue)
    cmd = SetLatency(
        entry_ns=_ms(body["entry_ms"], "entry_ms", MAX_LATENCY_MS) if body.get("entry_ms") is not None else entry_ns,
        modify_ns=_ms(body["modify_ms"], "modify_ms", MAX_LATENCY_MS)
        if body.get("modify_ms") is not None
        else modify_ns,
        cancel_ns=_ms(body["cancel_ms"], "cancel_ms", MAX_LATENCY_MS)
        if body.get("cancel_ms") is not None
        else cancel_ns,
    )
    request[VENUE].sim.submit(cmd)
    return await get_latency(request)


async def set_settlement_delay(request: web.Request) -> web.Response:
    body = check_object(await read_json(request), {"ms": F("number", required=True)}, "")
    request[VENUE].sim.submit(SetSettlementDelay(_ms(body["ms"], "ms", MAX_SETTLEMENT_DELAY_MS)))
    return respond({"ms": body["ms"]})


async def set_instrument_status(request: web.Request) -> web.Response:
    inst_id = _instrument(request).id
    body = check_object(await read_json(request), {"status": F("enum", required=True, values=INSTRUMENT_STATUSES)}, "")
    request[VENUE].sim.submit(SetInstrumentStatus(inst_id, body["status"]))
    return respond({"instrument_id": str(inst_id), "status": body["status"]})


async def invariants(request: web.Request) -> web.Response:
    venue = request[VENUE].sim.venue
    try:
        queries.check_invariants(venue)
    except AssertionError as exc:
        raise Problem(500, "invariant-broken", str(exc)) from None
    totals = {}
    for asset_id, units in sorted(queries.asset_totals(venue).items()):
        asset = queries.asset(venue, asset_id)
        assert asset is not None  # the totals are of the venue's assets
        totals[asset.name] = asset.grid.format(units)
    return respond({"ok": True, "asset_totals": totals})


async def journal(request: web.Request) -> web.StreamResponse:
    sim = request[VENUE].sim
    if sim.journal_path is None:
        raise Problem(404, "no-journal", "the server runs without --journal")
    return web.FileResponse(sim.journal_path, headers={"Content-Type": "application/x-ndjson"})


async def get_snapshot(request: web.Request) -> web.Response:
    # the state copied at this instant in steps of a few milliseconds, the venue's requests held and
    # the others served between them (api/web/server/venue_work.py); the document written and dumped from
    # the copy in a thread, the loop serving every venue meanwhile (the codec is Python and the dump is
    # in pieces: the loop gets the GIL back every switch interval; api/runtime/snapshot_steps.py)
    sim = request[VENUE].sim
    try:
        taking = sim.snapshot_steps()
        await request.config_dict[VENUE_WORK].run(sim, taking.steps())
        body = await asyncio.to_thread(taking.written, dumps)
    except SnapshotError as exc:
        raise Problem(409, "conflict", str(exc)) from None
    return web.Response(body=body, content_type=JSON)


async def restore_snapshot(request: web.Request) -> web.Response:
    # a snapshot is far larger than any API body: read it past the app's body limit, up to its own, and
    # parsed in steps (one orjson call would hold the loop ~0.3 s for 30 MB)
    doc = await parse_json_in_steps(await read_bounded(request, MAX_SNAPSHOT_BYTES))
    sim = request[VENUE].sim
    epoch = sim.epoch
    try:
        # rebuilt and checked in a thread, the loop serving other requests meanwhile; installed here, in
        # one step of the loop (read again here if a reset or restore came in between)
        state = await asyncio.to_thread(sim.read_snapshot, doc)
        sim.restore(doc, state if sim.epoch == epoch else None)
    except SnapshotError as exc:
        raise bad_request("body", str(exc)) from None
    return respond({"status": "restored", **clock_doc(request)})


async def read_bounded(request: web.Request, most: int) -> bytes:
    """The body, refused with a 413 as soon as it is known to exceed ``most`` bytes (by its
    Content-Length, or while it streams in): nothing past the limit is read."""
    too_large = Problem(413, "payload-too-large", f"body: larger than {most} bytes")
    if request.content_length is not None and request.content_length > most:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_any():
        size += len(chunk)
        if size > most:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _retention_doc(request: web.Request) -> dict:
    venue = request[VENUE].sim.venue
    config = queries.config(venue)
    ended = ended_orders(venue)
    return {
        "status_retention": _seconds_text(config.status_retention_ns),
        "max_ended_orders_per_client": config.max_ended_orders_per_client,
        "max_ended_orders": config.max_ended_orders,
        "ended_orders": sum(ended.values()),
        "ended_orders_by_client": {str(cid): n for cid, n in ended.items()},
        "fills": queries.counters(venue).fills,
    }


def _seconds_text(value_ns: int) -> str:
    whole, frac = divmod(value_ns, NS_PER_SECOND)
    return f"{whole}.{frac:09d}".rstrip("0").rstrip(".")


async def get_retention(request: web.Request) -> web.Response:
    return respond(_retention_doc(request))


async def set_retention(request: web.Request) -> web.Response:
    body = check_object(await read_json(request), {"status_retention": F("number", required=True)}, "")
    retention = status_retention_ns(body["status_retention"])
    if retention is None:
        raise bad_request("status_retention", STATUS_RETENTION_RULE)
    request[VENUE].sim.set_status_retention(retention)
    return respond(_retention_doc(request))


async def revoke_key(request: web.Request) -> web.Response:
    key_id = request.match_info["key_id"]
    if not request[VENUE].auth_store.revoke_key(key_id):
        raise Problem(404, "unknown-key", "key_id: no such API key in the scenario")
    return respond({"key_id": key_id, "revoked": True})


def control_routes() -> list[web.RouteDef]:
    return [
        web.get("/_sim/health", health),
        web.post("/_sim/reset", reset),
        web.get("/_sim/clock", get_clock),
        web.post("/_sim/clock/advance", advance_clock),
        web.get("/_sim/book/{instrument_id}", book),
        web.get("/_sim/trades/{instrument_id}", recent_trades),
        web.get("/_sim/instruments", list_instruments),
        web.get("/_sim/latency", get_latency),
        web.post("/_sim/latency", set_latency),
        web.post("/_sim/settlement-delay", set_settlement_delay),
        web.post("/_sim/instruments/{instrument_id}/status", set_instrument_status),
        web.get("/_sim/invariants", invariants),
        web.get("/_sim/journal", journal),
        web.get("/_sim/snapshot", get_snapshot),
        web.post("/_sim/api-keys/{key_id}/revoke", revoke_key),
        web.post("/_sim/snapshot", restore_snapshot),
        web.get("/_sim/retention", get_retention),
        web.post("/_sim/retention", set_retention),
        *recorded_routes(),
        web.get("/_sim/requests", recent_requests),
    ]
