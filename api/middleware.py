"""Middlewares: schema version negotiation, problem rendering, and the last line of defence.

- CeFi routes (``/v1/cefi/``) get their schema version chosen before the handler runs; a refused
  version is a 400 problem of type ``.../unsupported-version``. Deprecated versions get the RFC 8594
  ``Deprecation`` and ``Sunset`` headers on every response, errors included.
- Any :class:`Problem` raised by a handler, and aiohttp's own 404/405/413, become RFC 7807 bodies:
  nested in ``error`` under v2026_01_23, bare under v2024_01_01 and on non-CeFi routes.
- Any other exception is a bug: it is logged with the request id and answered as a 500 problem that
  reveals nothing. No request ever gets a traceback.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from . import versions
from .http import dumps
from .keys import REQUEST_ID, SIM, VERSION
from .problems import PROBLEM_CONTENT_TYPE, Problem
from .sim import JournalWriteError

log = logging.getLogger("cefisim.http")
CEFI_PREFIX = "/v1/cefi/"
_request_ids = itertools.count(1)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


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
        return Problem(405, "method-not-allowed", f"{request.method} is not allowed on {request.path}",
                       headers={"Allow": allowed} if allowed else None)
    if exc.status == 413:
        return Problem(413, "payload-too-large", "body: larger than the server accepts")
    return Problem(exc.status, "http-error", exc.reason or "request refused")


@web.middleware
async def problems_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    request_id = request.headers.get("X-Request-Id") or f"req-{next(_request_ids)}"
    if len(request_id) > 128 or not request_id.isprintable():
        request_id = f"req-{next(_request_ids)}"
    request[REQUEST_ID] = request_id
    try:
        if request.path.startswith(CEFI_PREFIX):
            _negotiate(request)
        response = await handler(request)
    except Problem as problem:
        response = render_problem(request, problem)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        response = render_problem(request, _from_http_exception(exc, request))
    except JournalWriteError as exc:
        log.error("request %s refused: %s", request_id, exc)
        response = render_problem(request, Problem(503, "journal-unavailable",
                                                   "the command journal cannot be written; nothing was changed"))
    except Exception:
        log.exception("request %s (%s %s) failed", request_id, request.method, request.path)
        response = render_problem(request, Problem(500, "internal-error",
                                                   f"unexpected error; request id {request_id}"))
    response.headers["X-Request-Id"] = request_id
    version = request.get(VERSION)
    if version is not None:
        response.headers.update(versions.deprecation_headers(version))
    return response


def _negotiate(request: web.Request) -> None:
    now = request.app[SIM].now_ns()
    header = request.headers.get(versions.HEADER)
    if header is None and not request.query_string:
        request[VERSION] = versions.default(now)  # the common case: nothing asked for
        return
    choice = versions.choose(header, request.query.get(versions.QUERY), now)
    if choice.version is None:
        request[VERSION] = versions.default(now)
        raise Problem(400, "unsupported-version", choice.problem or "unsupported version")
    request[VERSION] = choice.version
