"""``GET /_sim/stream`` (server-sent events of depth, trades and a client's orders) and ``GET /_sim/ui/``
(the live page that shows them). Both sit behind the control plane's guard (``api/web/control/plane.py``):
loopback peers only, or the control token.

| Query | Meaning |
|---|---|
| ``venue`` | ``default`` or empty: the default venue; a created venue's id (``/_sim/venues``); else a 404 |
| ``instrument`` | the instrument id (required on the stream; 404 ``unknown-instrument`` when there is none) |
| ``client`` | optional client id: the stream also carries that client's ``order`` events (404 ``unknown-client``) |
| ``once`` | ``1``: send the snapshot and end the stream (a bounded answer: screenshots, ``--virtual-time-budget``) |

The event format, ids and resume rules are in ``api/web/server/stream_hub.py`` and ``docs/stream.md``. A stream
starts with a snapshot (or, with a ``Last-Event-ID`` header the instrument's ring still covers, the
events after it), sends a comment line when idle for ``heartbeat_s``, and ends when the client goes,
when it falls ``queue_events`` behind (dropped) or when the server shuts down. Beyond ``max_streams``
open streams a new one is a 429 problem.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from aiohttp import web

from cefisim.api.edge.problems import Problem, bad_request
from cefisim.api.web.server.keys import REQUEST_ID
from cefisim.api.web.server.stream_hub import Connection
from cefisim.api.web.server.venue_state import VENUE
from cefisim.engine import queries

UI_DIR = Path(__file__).parent / "ui"
#: the page's files: name in the URL -> (file, content type). Nothing else under /_sim/ui/ is served.
UI_FILES = {
    "": ("index.html", "text/html"),
    "app.js": ("app.js", "text/javascript"),
    "style.css": ("style.css", "text/css"),
}
#: the page loads nothing from elsewhere: no CDN, no external font, no inline script
UI_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}
_POLL_S = 1.0  # how often an idle stream looks whether its client went away


def check_venue(request: web.Request) -> str:
    """The venue a /_sim/ request names (``venue=``): the server routed it there
    (``api/web/control/isolated_venues.py``)
    when the venue exists; any other name is a 404 problem."""
    name = request.query.get("venue", "")
    own = request[VENUE].venue_id
    if name not in ("", own):
        raise Problem(404, "unknown-venue", f"venue: no venue {name!r} (GET /_sim/venues lists them)")
    return own


def _query_id(request: web.Request, name: str, known: Callable[[int], bool], slug: str, required: bool) -> int | None:
    raw = request.query.get(name)
    if raw is None or raw == "":
        if required:
            raise bad_request(name, "required: an id such as 1")
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 19:
        raise bad_request(name, "must be a whole number (an id)")
    if not known(int(raw)):
        raise Problem(404, slug, f"{name}: no {name} {raw!r}")
    return int(raw)


def _query_flag(request: web.Request, name: str) -> bool:
    """``name=1`` (or ``true``, or bare ``name``) True; absent, ``0`` or ``false`` False; else a 400."""
    raw = request.query.get(name)
    if raw is None or raw in ("0", "false"):
        return False
    if raw in ("", "1", "true"):
        return True
    raise bad_request(name, "must be 1 or 0")


async def stream(request: web.Request) -> web.StreamResponse:
    state = request[VENUE]
    hub = state.stream_hub
    check_venue(request)
    venue = state.sim.venue
    instrument_id = _query_id(
        request, "instrument", lambda i: queries.instrument(venue, i) is not None, "unknown-instrument", required=True
    )
    client_id = _query_id(request, "client", lambda i: queries.has_client(venue, i), "unknown-client", required=False)
    once = _query_flag(request, "once")
    assert instrument_id is not None
    settings = hub.settings
    if hub.full():
        raise Problem(
            429,
            "too-many-streams",
            f"at most {settings.max_streams} streams are open at once; close one or retry later",
            headers={"Retry-After": "5"},
        )
    transport = request.transport
    if transport is None:  # the client is already gone
        return web.Response(status=204)
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",
            "X-Request-Id": request[REQUEST_ID],
        }
    )
    conn = hub.subscribe(
        instrument_id, client_id, None if once else request.headers.get("Last-Event-ID"), transport.abort
    )
    try:
        await response.prepare(request)
        await response.write(b"retry: %d\n\n" % settings.retry_ms)
        if once:  # the snapshot subscribe queued, and the end
            await response.write(b"".join(conn.pending))
        else:
            await _pump(conn, response, transport, settings.heartbeat_s)
    except ConnectionError:
        pass  # the client went away (or was dropped) while we wrote
    finally:
        hub.unsubscribe(conn)
    return response


async def _pump(
    conn: Connection, response: web.StreamResponse, transport: asyncio.BaseTransport, heartbeat_s: float
) -> None:
    """Write what the hub queued, all of it in one write each time the stream wakes; a comment line
    when nothing was written for ``heartbeat_s``. Ends when the connection is closed or the client left."""
    last_write = time.monotonic()
    while not conn.closed:
        if conn.pending:
            chunk = b"".join(conn.pending)
            conn.pending.clear()
            await response.write(chunk)
            last_write = time.monotonic()
            continue
        conn.wake.clear()
        try:
            async with asyncio.timeout(_POLL_S):
                await conn.wake.wait()
        except TimeoutError:
            if transport.is_closing():
                return
            if time.monotonic() - last_write >= heartbeat_s:
                await response.write(b": keep-alive\n\n")
                last_write = time.monotonic()


async def ui_root(request: web.Request) -> web.StreamResponse:
    """``/_sim/ui`` -> ``/_sim/ui/`` (the page's files are relative to it), keeping the query."""
    query = request.query_string
    raise web.HTTPFound("/_sim/ui/" + ("?" + query if query else ""))


async def ui_file(request: web.Request) -> web.Response:
    check_venue(request)
    name = request.match_info.get("name", "")
    if name not in UI_FILES:
        raise Problem(404, "not-found", f"no such path: {request.method} {request.path}")
    file, content_type = UI_FILES[name]
    body = (UI_DIR / file).read_bytes()
    return web.Response(body=body, content_type=content_type, charset="utf-8", headers=UI_HEADERS)


def stream_routes() -> list[web.RouteDef]:
    """The stream and the page (described in ``api/web/control/openapi.py``)."""
    return [
        web.get("/_sim/stream", stream),
        web.get("/_sim/ui", ui_root),
        web.get("/_sim/ui/", ui_file),
        web.get("/_sim/ui/{name}", ui_file),
    ]
