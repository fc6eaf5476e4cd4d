"""Injected faults, so a client's retry and timeout logic can be tested against the sandbox.

HTTP faults: an HTTP fault plan (``POST /_sim/faults``) hits the next ``count`` requests, or a
``share`` of requests chosen by a generator seeded from the scenario's seed (the same requests in the
same order meet the same faults), optionally only under a path prefix. A hit request is delayed by
``delay_ms``, then:

- ``status`` (e.g. 503): answered with that status as a problem, the command NOT applied;
- ``drop``: the connection is closed without an answer, the command NOT applied;
- with ``"after": true`` the command IS applied first and then the answer is replaced (status) or
  lost (drop) — the case that tests idempotent retries (e.g. by external id).

The control plane itself is never faulted. ``GET /_sim/faults`` shows the plan and what it has hit;
``DELETE /_sim/faults`` ends it.

The venue's own faults (``docs/faults.md``):

- ``POST /_sim/faults/venue-cancel`` ``{"reason", "client_id"?, "instrument_id"?}``: the venue cancels
  resting orders (all, one client's, one instrument's) with a venue cancel reason: a ``VenueCancel``
  command, journaled like any other;
- ``POST /_sim/faults/venue`` ``{"read_lag_ms"?, "fill_delay_ms"?, "clock_skew_s"?}`` sets reads lagging
  the engine, fills reported late and a skewed server clock (an absent key is 0: off); ``GET`` shows
  them, ``DELETE`` ends them (``api/side_state/venue_faults.py``). A change is a ``faults.venue`` record,
  journaled before the answer like a command.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Awaitable

from aiohttp import web
from aiohttp.typedefs import Handler

from cefisim.api.edge.problems import Problem, bad_request
from cefisim.api.edge.validate import F, FieldProblem, check_object
from cefisim.api.side_state.venue_faults import venue_faults_intake
from cefisim.api.web.control.plane import control_guard
from cefisim.api.web.server.http import read_json, respond
from cefisim.api.web.server.http_faults import HttpFaultPlan
from cefisim.api.web.server.venue_state import VENUE
from cefisim.engine import queries
from cefisim.engine.commands import VenueCancel
from cefisim.engine.events import OrderEvent
from cefisim.engine.rejects import VENUE_CANCEL_REASONS

HTTP_FAULTS_SPEC = {
    "count": F("whole", low=1, high=1_000_000),
    "share": F("decimal"),
    "status": F("whole", low=400, high=599),
    "delay_ms": F("whole", low=0, high=60_000),
    "drop": F("bool"),
    "after": F("bool"),
    "path_prefix": F("str"),
}


async def set_http_faults(request: web.Request) -> web.Response:
    body = check_object(await read_json(request), HTTP_FAULTS_SPEC, "")
    if (body.get("count") is None) == (body.get("share") is None):
        raise bad_request("count", "give exactly one of count and share")
    if body.get("status") is None and not body.get("drop") and body.get("delay_ms") is None:
        raise bad_request("status", "a fault needs a status, drop or a delay_ms")
    plan = HttpFaultPlan(path_prefix=body.get("path_prefix") or "/v1/")
    if body.get("count") is not None:
        plan.count = int(body["count"])
    else:
        share = body["share"]
        whole, _, frac = share.partition(".")
        if len(frac) > 6 or int(whole or "0") > 1:
            raise bad_request("share", "must be a fraction from 0 to 1 with at most 6 decimals")
        plan.share_ppm = int(whole or "0") * 1_000_000 + int((frac or "0").ljust(6, "0"))
        if plan.share_ppm > 1_000_000:
            raise bad_request("share", "must be a fraction from 0 to 1 with at most 6 decimals")
    if body.get("status") is not None:
        plan.status = int(body["status"])
    plan.delay_ms = int(body.get("delay_ms") or 0)
    plan.drop = bool(body.get("drop", False))
    plan.after = bool(body.get("after", False))
    venue = request[VENUE]
    seed = venue.sim.scenario.seed
    plan.rng = random.Random(int.from_bytes(hashlib.sha256(f"cefisim-faults:{seed}".encode()).digest()[:8], "big"))
    venue.http_faults = plan
    return respond(plan.describe())


async def get_http_faults(request: web.Request) -> web.Response:
    plan = request[VENUE].http_faults
    return respond(plan.describe() if plan is not None else None)


async def clear_http_faults(request: web.Request) -> web.Response:
    request[VENUE].http_faults = None
    return respond(None)


VENUE_CANCEL_SPEC = {
    "reason": F("enum", required=True, values=VENUE_CANCEL_REASONS),
    "client_id": F("id"),
    "instrument_id": F("id"),
}


async def venue_cancel(request: web.Request) -> web.Response:
    """The venue cancels resting orders on its own; answers the ids it canceled, oldest first per
    instrument. An unknown client or instrument is a 404 and cancels nothing."""
    body = check_object(await read_json(request), VENUE_CANCEL_SPEC, "")
    client = int(body["client_id"]) if body.get("client_id") is not None else None
    inst = int(body["instrument_id"]) if body.get("instrument_id") is not None else None
    sim = request[VENUE].sim
    if client is not None and not queries.has_client(sim.venue, client):
        raise Problem(404, "unknown-client", f"client_id: no client {client}")
    if inst is not None and queries.instrument(sim.venue, inst) is None:
        raise Problem(404, "unknown-instrument", f"instrument_id: no instrument {inst}")
    result = sim.submit(VenueCancel(body["reason"], client, inst))
    canceled = [str(e.order_id) for e in result.events if type(e) is OrderEvent]
    return respond({"reason": body["reason"], "canceled": canceled})


async def set_venue_faults(request: web.Request) -> web.Response:
    """Set reads lagging, late fills and the clock skew at once (an absent key is 0: off)."""
    values = venue_faults_intake(await read_json(request))
    if isinstance(values, FieldProblem):
        raise values.http()
    sim = request[VENUE].sim
    sim.set_venue_faults(*values)
    return respond(sim.faults.describe())


async def get_venue_faults(request: web.Request) -> web.Response:
    return respond(request[VENUE].sim.faults.describe())


async def clear_venue_faults(request: web.Request) -> web.Response:
    sim = request[VENUE].sim
    sim.set_venue_faults(0, 0, 0)
    return respond(sim.faults.describe())


def _fail(request: web.Request, plan: HttpFaultPlan) -> web.StreamResponse:
    if plan.drop:
        if request.transport is not None:
            request.transport.abort()
        raise asyncio.CancelledError  # nothing is sent: the client sees the connection drop
    raise Problem(plan.status or 503, "injected-fault", "fault injected by the sandbox's control plane")


async def _with_http_faults(request: web.Request, handler: Handler, plan: HttpFaultPlan) -> web.StreamResponse:
    if not plan.decide(request.path):
        return await handler(request)
    if plan.delay_ms:
        await asyncio.sleep(plan.delay_ms / 1000)
    if plan.status is None and not plan.drop:
        return await handler(request)  # a pure delay
    if plan.after:
        await handler(request)
    return _fail(request, plan)


def dispatch(request: web.Request, handler: Handler) -> Awaitable[web.StreamResponse]:
    """The control plane's guard or the fault plan, whichever applies, around ``handler``.

    Returns the awaitable rather than awaiting it: the app's middleware awaits it, so the common
    request (no fault plan) costs no coroutine of its own here.
    """
    if request.path.startswith("/_sim"):
        return control_guard(request, handler)
    plan = request[VENUE].http_faults
    if plan is not None:
        return _with_http_faults(request, handler, plan)
    return handler(request)


def fault_routes() -> list[web.RouteDef]:
    return [
        web.get("/_sim/faults", get_http_faults),
        web.post("/_sim/faults", set_http_faults),
        web.delete("/_sim/faults", clear_http_faults),
        web.post("/_sim/faults/venue-cancel", venue_cancel),
        web.get("/_sim/faults/venue", get_venue_faults),
        web.post("/_sim/faults/venue", set_venue_faults),
        web.delete("/_sim/faults/venue", clear_venue_faults),
    ]
