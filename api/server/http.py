"""Small helpers every handler shares: JSON responses by schema version, signed-request identity."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from cefisim.engine.reference import ID_RE

from cefisim.api.server import versions
from cefisim.api.server.keys import CLIENT_ID, OPTIONS, SIM, VERSION
from cefisim.api.server.problems import Problem, bad_request
from cefisim.api.cefi.signing import H_SIGNATURE, H_TIMESTAMP, H_TOKEN, H_USERID, verify
from cefisim.api.cefi.validate import parse_json

JSON = "application/json"


def dumps(payload: Any) -> bytes:
    return orjson.dumps(payload)


def respond(payload: Any, status: int = 200) -> web.Response:
    return web.Response(body=dumps(payload), status=status, content_type=JSON)


def respond_list(request: web.Request, items: list[Any], size: int | None = None,
                 next_cursor: int | None = None) -> web.Response:
    """A list read: the v2026_01_23 envelope, or the raw array under v2024_01_01."""
    if request.get(VERSION) == versions.V2024:
        return respond(items)
    cursor = f"{next_cursor:019d}" if next_cursor is not None else None
    return respond({"data": items, "pagination": {"size": size if size is not None else len(items),
                                                   "next_cursor": cursor}})


async def read_json(request: web.Request) -> Any:
    return parse_json(await request.read())


async def signed_client(request: web.Request) -> int:
    """The client a signed CeFi request acts for; 401 problem when the signature does not hold."""
    return _verified(request, await request.read() if request.body_exists else b"")


async def signed_json(request: web.Request) -> tuple[int, Any]:
    """:func:`signed_client` and the JSON body it signed (read once, checked, then parsed)."""
    body = await request.read() if request.body_exists else b""
    return _verified(request, body), parse_json(body)


def _verified(request: web.Request, body: bytes) -> int:
    app = request.app
    opts = app[OPTIONS]
    h = request.headers
    outcome = verify(
        h.get(H_TOKEN), h.get(H_SIGNATURE), h.get(H_TIMESTAMP), h.get(H_USERID), app[SIM].scenario.hmac_keys,
        request.method, request.rel_url.raw_path, body, opts.wall_s(), opts.signature_layout,
    )
    if isinstance(outcome, int):
        request[CLIENT_ID] = outcome
        return outcome
    raise Problem(401, "unauthorized", outcome.detail)


def same_client(request: web.Request, acting: int, named: str | None, field: str) -> None:
    """A client id in a query or body must name the client the request acts for.

    Not an id: 400. No such client: 404. Another client: 403.
    """
    if named is None or named == str(acting):
        return
    if not ID_RE.fullmatch(named) or len(named) > 19:
        raise bad_request(field, "must match ^[1-9][0-9]*$")
    if int(named) not in request.app[SIM].venue.clients:
        raise Problem(404, "unknown-client", f"{field}: no client {named}")
    raise Problem(403, "forbidden", f"{field}: the request is signed for client {acting}, not {named}")
