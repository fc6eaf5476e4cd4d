"""The app's one middleware: request id, schema version, limits, control guard and faults, problems.

One layer, not a chain: each aiohttp middleware layer costs a coroutine and a call on every request,
and this one runs, in order, what used to be four:

- every request gets an ``X-Request-Id`` (the client's, when printable and at most 128 characters);
- its venue, resolved once (``api/web/control/isolated_venues.py``: by path or credential, the body's once it has
  arrived): the venue's state (``api/web/server/venue_state.py``) is stored under the ``VENUE`` request key,
  where handlers read it;
- CeFi routes (``/v1/cefi/``) get their schema version chosen before the handler runs; a refused
  version is a 400 problem of type ``.../unsupported-version``. Deprecated versions get the
  ``Deprecation`` (RFC 9745) and ``Sunset`` (RFC 8594) headers on every response, errors included;
- the limits of ``api/web/server/limits.py``: a ``Content-Length`` over the body limit (413, before any
  of the body is read), the body read timeout (408) and the per-key rate limit (429); a 413 or 408
  whose body is still arriving is sent with the connection closed (nothing more of it is read);
- a request for a venue whose long work is due or running (the copy a read lag answers from, or the
  one a snapshot is written from) waits until it is done, and the work a request made due starts, in
  steps, once it is answered (``api/web/server/venue_work.py``): other venues' requests are served between the steps;
- ``around(request, handler)``: what the app puts around every handler (``api/web/app/application.py`` passes
  the control plane's guard and the injected faults, ``api/web/control/faults.py``), then the handler;
- any :class:`Problem` raised on the way, and aiohttp's own 404/405/413, become RFC 7807 bodies:
  nested in ``error`` under v2026_01_23, bare under v2024_01_01 and on non-CeFi routes;
- a command for a venue deleted while the request was on its way (``SimulationEnded``) is a 404
  ``unknown-venue`` problem, nothing applied;
- a body aiohttp cannot decode as its ``Content-Encoding`` says is a 400 problem naming the header
  (connection closed);
- a client that hangs up before its request is whole (in the middle of its body) gets no answer:
  recorded as 499, nginx's "client closed request", and not logged;
- any other exception is a bug: it is logged with the request id and answered as a 500 problem that
  reveals nothing. No request ever gets a traceback.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from time import perf_counter
from typing import Any, Protocol

from aiohttp import hdrs, web
from aiohttp.typedefs import Handler, Middleware
from multidict import istr

from cefisim.api.edge import versions
from cefisim.api.edge.paths import CEFI_PREFIX
from cefisim.api.edge.problems import PROBLEM_CONTENT_TYPE, Problem, bad_request
from cefisim.api.runtime.simulation import JournalWriteError, Simulation, SimulationEnded
from cefisim.api.web.server.http import dumps
from cefisim.api.web.server.keys import CLIENT_ID, REQUEST_ID, VERSION
from cefisim.api.web.server.limits import body_pending, body_within, declared_too_large, limit_settings
from cefisim.api.web.server.request_log import RequestLog
from cefisim.api.web.server.venue_state import VENUE, VenueState
from cefisim.api.web.server.venue_work import VenueWork

log = logging.getLogger("cefisim.http")
_request_ids = itertools.count(1)
# istr: multidict skips folding the header name's case on every lookup
H_REQUEST_ID = istr("X-Request-Id")
H_VERSION = istr(versions.HEADER)
#: the status recorded for a request whose client closed the connection before it was whole (nginx's)
CLIENT_CLOSED = 499

Around = Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]


class VenueRouter(Protocol):
    """Finds the venue a request's credentials name (``api/web/control/isolated_venues.py``'s ``VenueHub``)."""

    @property
    def default(self) -> VenueState:
        """The default venue's state: the server's own (``--scenario``)."""

    def route(self, request: web.Request) -> VenueState | None:
        """The venue's state by what the path and headers say; None when the body must be read to decide."""

    async def route_body(self, request: web.Request) -> VenueState:
        """The venue's state by what the body says (after :meth:`route` answered None)."""


def render_problem(request: web.Request, problem: Problem) -> web.Response:
    body = problem.body()
    nested = request.path.startswith(CEFI_PREFIX) and request.get(VERSION, versions.V2026) != versions.V2024
    payload = {"error": body} if nested else body
    response = web.Response(body=dumps(payload), status=problem.status, content_type=PROBLEM_CONTENT_TYPE)
    for name, value in problem.headers.items():
        response.headers[name] = value
    return response


def _from_http_exception(exc: web.HTTPException, request: web.Request) -> Problem:
    if exc.status == 404:
        return Problem(404, "not-found", f"no such path: {request.method} {request.path}")
    if exc.status == 405:
        allowed = ", ".join(sorted(getattr(exc, "allowed_methods", ()) or ()))
        return Problem(
            405,
            "method-not-allowed",
            f"{request.method} is not allowed on {request.path}",
            headers={"Allow": allowed} if allowed else None,
        )
    if exc.status == 413:
        return Problem(413, "payload-too-large", "body: larger than the server accepts")
    return Problem(exc.status, "http-error", exc.reason or "request refused")


def _plain(request: web.Request, handler: Handler) -> Awaitable[web.StreamResponse]:
    return handler(request)


def _scenario_keys(request: web.Request) -> Mapping[str, Any]:
    return request[VENUE].sim.scenario.hmac_keys


def request_middleware(
    options: object,
    venues: VenueRouter,
    clock: Callable[[], float] = time.monotonic,
    requests: RequestLog | None = None,
    around: Around = _plain,
    work: VenueWork | None = None,
) -> Middleware:
    """The middleware for ``options`` (``ServerOptions``: read timeout, rate limits); every request
    goes to the venue its path or credentials name (``venues``, ``api/web/control/isolated_venues.py``)
    and every request it answers to ``requests`` (the access log and ``/_sim/requests``) when given;
    ``around`` runs the handler (it returns the handler's awaitable, so that it costs no coroutine of its
    own); ``work``: the venues' long work (the app's ``VENUE_WORK``, which handlers run work through),
    None: its own."""
    read_timeout_s, rate_check = limit_settings(options, _scenario_keys, clock)
    if work is None:
        work = VenueWork()  # long work of a venue, in steps, its requests held meanwhile
    running = work.running

    @web.middleware
    async def serve(request: web.Request, handler: Handler) -> web.StreamResponse:
        started = perf_counter()
        request_id = request.headers.get(H_REQUEST_ID) or f"req-{next(_request_ids)}"
        if len(request_id) > 128 or not request_id.isprintable():
            request_id = f"req-{next(_request_ids)}"
        request[REQUEST_ID] = request_id
        version = None  # the schema version of a CeFi request (nothing else sets it)
        try:
            # the venue, once, before anything reads its state (api/web/control/isolated_venues.py); a request
            # whose credential is in its body has the default one meanwhile
            routed = venues.route(request)
            venue = request[VENUE] = venues.default if routed is None else routed
            if request.path.startswith(CEFI_PREFIX):
                version, refusal = _negotiate(request, venue.sim)
                request[VERSION] = version
                # an unknown path or method is answered as such (404, 405 with Allow) whatever version
                # it names: the route is checked before the version
                if refusal is not None and getattr(request.match_info, "http_exception", None) is None:
                    raise refusal
            pending = body_pending(request)
            if pending and (too_large := declared_too_large(request)) is not None:
                response = await _send_and_close(request, too_large)
            elif pending and read_timeout_s is not None and not await body_within(request, read_timeout_s):
                response = await _send_and_close(request, _timeout(read_timeout_s))
            else:
                if routed is None:
                    venue = request[VENUE] = await venues.route_body(request)
                if rate_check is not None:
                    rate_check(request)
                sim = venue.sim
                # a venue's work runs (a snapshot's copy), or a read lag is on and its copy may be due
                # (api/web/server/venue_work.py)
                if running or sim.replica is not None:
                    await work.hold(sim)
                response = await around(request, handler)
                if sim.replica is not None:
                    work.start(sim)  # the copy of a lag this request switched on: in steps, from now
        except Problem as problem:
            response = await _answer(request, problem)
        except web.HTTPException as exc:
            if exc.status < 400:  # a redirect: aiohttp sends it
                if requests is not None:
                    requests.record(
                        request.method,
                        request.path,
                        exc.status,
                        started,
                        perf_counter(),
                        request.get(CLIENT_ID),
                        request_id,
                        exc,
                    )
                raise
            response = await _answer(request, _from_http_exception(exc, request))
        except web.RequestPayloadError:
            # aiohttp could not decode the body its Content-Encoding names (not gzip after all, say)
            response = await _send_and_close(request, _undecodable(request))
        except ConnectionResetError:
            response = _client_closed(request, request_id)
        except SimulationEnded:
            response = render_problem(
                request,
                Problem(
                    404, "unknown-venue", "the venue was deleted while this request was on its way; nothing was applied"
                ),
            )
        except JournalWriteError as exc:
            log.error("request %s refused: %s", request_id, exc)
            response = render_problem(
                request,
                Problem(503, "journal-unavailable", "the command journal cannot be written; nothing was changed"),
            )
        except Exception:
            response = _internal_error(request, request_id)
        response.headers[H_REQUEST_ID] = request_id
        if version is not None:
            deprecation = versions.deprecation_headers(version)
            if deprecation:
                response.headers.update(deprecation)
        if requests is not None:
            requests.record(
                request.method,
                request.path,
                response.status,
                started,
                perf_counter(),
                request.get(CLIENT_ID),
                request_id,
                response,
            )
        return response

    return serve


def _internal_error(request: web.Request, request_id: str) -> web.Response:
    """A bug (called while its exception is handled): logged with the request id and the traceback,
    answered as a 500 problem that reveals nothing."""
    log.exception("request %s (%s %s) failed", request_id, request.method, request.path)  # noqa: LOG004 - see above
    return render_problem(request, Problem(500, "internal-error", f"unexpected error; request id {request_id}"))


def _client_closed(request: web.Request, request_id: str) -> web.Response:
    """The client hung up before its request was whole: aiohttp's read of the body fails so. Nothing
    was done and no answer can be sent; the response (never sent) records 499, nginx's "client closed
    request", and nothing is logged: it is the client's doing. With the connection still up, the error
    came from elsewhere: a bug like any other."""
    if request.transport is not None:
        return _internal_error(request, request_id)
    return web.Response(status=CLIENT_CLOSED, reason="Client Closed Request")


def _undecodable(request: web.Request) -> Problem:
    encoding = request.headers.get(hdrs.CONTENT_ENCODING, "")
    return bad_request("body", f"cannot be decoded as its Content-Encoding {encoding!r} says")


def _timeout(seconds: float) -> Problem:
    return Problem(
        408,
        "request-timeout",
        f"body: not received within {seconds:g} s; the connection is closed",
        title="Request Timeout",
    )


async def _answer(request: web.Request, problem: Problem) -> web.StreamResponse:
    """The problem's response; a 413 whose body is still arriving is sent with the connection closed."""
    if problem.status == 413 and not request.content.is_eof():
        return await _send_and_close(request, problem)
    return render_problem(request, problem)


async def _send_and_close(request: web.Request, problem: Problem) -> web.StreamResponse:
    """``problem`` for a request whose body is not (all) read, written here with the connection closed
    at once: left to aiohttp, a response with an unread body is followed by up to 10 s of "lingering"
    reads of the rest, which is exactly what a trickling client would feed, and what a body over the
    limit would make the server read for nothing."""
    response = render_problem(request, problem)
    response.force_close()
    response.headers[H_REQUEST_ID] = request[REQUEST_ID]
    if request.get(VERSION) is not None:
        response.headers.update(versions.deprecation_headers(request[VERSION]))
    try:
        await response.prepare(request)
        await response.write_eof()
    except ConnectionError:
        pass  # the client left meanwhile: there is no one to answer
    if request.protocol is not None:
        request.protocol.force_close()  # no lingering read of the body's remainder
    return response


def _negotiate(request: web.Request, sim: Simulation) -> tuple[str, Problem | None]:
    """The schema version the request gets (on the engine clock of its venue's ``sim``), and the problem
    when it asked for one not served (it then gets the default, which decides how the problem is
    rendered)."""
    now = sim.now_ns()
    header = request.headers.get(H_VERSION)
    if header is None and not request.query_string:
        return versions.default(now), None  # the common case: nothing asked for
    choice = versions.choose(header, request.query.get(versions.QUERY), now)
    if choice.version is None:
        return versions.default(now), Problem(400, "unsupported-version", choice.problem or "unsupported version")
    return choice.version, None
