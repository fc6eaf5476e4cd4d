"""Small helpers every handler shares: JSON bodies in, JSON responses out by schema version.

Nothing here knows an interface: the CeFi signed identity is ``api/web/cefi/identity.py``, its paging
``api/web/cefi/paging.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from aiohttp import web

from cefisim.api.edge import versions
from cefisim.api.edge.problems import Problem, bad_request
from cefisim.api.runtime.json_steps import parse_steps
from cefisim.api.web.server.keys import VERSION
from cefisim.api.web.server.limits import declared_too_large

JSON = "application/json"


def dumps(payload: Any) -> bytes:
    """``payload`` as JSON. Text a request carried in a header whose bytes are not UTF-8 holds lone
    surrogates (aiohttp decodes header bytes with ``surrogateescape``), which JSON cannot carry: on
    that failure, and only then, every such character is written as a ``\\udcXX`` escape instead of
    the response failing."""
    try:
        return orjson.dumps(payload)
    except orjson.JSONEncodeError:
        return orjson.dumps(_escape_surrogates(payload))


def _escape_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode()
    if isinstance(value, dict):
        return {_escape_surrogates(k): _escape_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_escape_surrogates(v) for v in value]
    return value


def respond(payload: Any, status: int = 200) -> web.Response:
    return web.Response(body=dumps(payload), status=status, content_type=JSON)


def respond_list(
    request: web.Request, items: list[Any], size: int | None = None, next_cursor: int | None = None
) -> web.Response:
    """A list read: the v2026_01_23 envelope, or the raw array under v2024_01_01."""
    if request.get(VERSION) == versions.V2024:
        return respond(items)
    cursor = f"{next_cursor:019d}" if next_cursor is not None else None
    return respond(
        {"data": items, "pagination": {"size": size if size is not None else len(items), "next_cursor": cursor}}
    )


def parse_json(body: bytes) -> Any:
    """The JSON value of a request body; a 400 problem naming ``body`` when it is empty or not JSON."""
    if not body:
        raise _no_body()
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise _not_json(exc) from None


async def parse_json_in_steps(body: bytes) -> Any:
    """:func:`parse_json` of a large body, the event loop serving other requests between the steps of
    the parse (``api/runtime/json_steps.py``: the same value, the same problem)."""
    if not body:
        raise _no_body()
    steps = parse_steps(body)
    try:
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value
            await asyncio.sleep(0)
    except orjson.JSONDecodeError as exc:
        raise _not_json(exc) from None


def _no_body() -> Problem:
    return bad_request("body", "a JSON object is required")


def _not_json(exc: orjson.JSONDecodeError) -> Problem:
    return bad_request("body", f"not valid JSON ({exc.args[0] if exc.args else 'parse error'})")


async def read_json(request: web.Request) -> Any:
    """:func:`parse_json` of the request's body; a 413 problem, before anything is read, when its
    ``Content-Length`` is over the body limit (the middleware does the same for ``/v1/`` routes)."""
    too_large = declared_too_large(request)
    if too_large is not None:
        raise too_large
    return parse_json(await request.read())
