"""Paper trading: add and remove test funds (sandbox only; production answers 404 everywhere).

``POST /v1/paper-trading/funds`` and ``POST /v1/paper-trading/funds/remove``, bearer auth (a
key-exchange token; an organization token names the user in ``SVC-On-Behalf-Of``), JSON body
``{"asset": <asset id or name>, "amount": <positive decimal string>}``. The funds move on the
CeFi client of the user the token acts for, through the venue's ``paper_funds``
(``api/web/server/venue_state.py``):

    paper_funds(client_id, asset, amount, remove) -> balance record (dict)

which raises :class:`~api.edge.problems.Problem` for a business refusal (404 unknown asset, 400
``insufficient-funds`` when removing more than is available). The handler answers 200 with the
record it returns.

Order of checks: environment (404) -> method (405) -> bearer (401/403) -> body (400) -> funds.
"""

from __future__ import annotations

import orjson
from aiohttp import web

from cefisim.api.auth.bearer import require_bearer
from cefisim.api.edge.problems import Problem, bad_request
from cefisim.api.edge.validate import F, check_object
from cefisim.api.web.server.http import parse_json
from cefisim.api.web.server.keys import OPTIONS
from cefisim.api.web.server.venue_state import VENUE

PAPER_BODY = {"asset": F("str", required=True), "amount": F("decimal", required=True)}


def paper_routes() -> list[web.RouteDef]:
    return [
        web.route("*", "/v1/paper-trading/funds", add_funds),
        web.route("*", "/v1/paper-trading/funds/remove", remove_funds),
        web.route("*", "/v1/paper-trading", unknown_path),
        web.route("*", "/v1/paper-trading/{tail:.*}", unknown_path),
    ]


async def add_funds(request: web.Request) -> web.Response:
    return await _move(request, remove=False)


async def remove_funds(request: web.Request) -> web.Response:
    return await _move(request, remove=True)


async def unknown_path(request: web.Request) -> web.Response:
    _check_environment(request)
    raise Problem(404, "not-found", f"{request.path}: no such paper-trading operation")


async def _move(request: web.Request, *, remove: bool) -> web.Response:
    _check_environment(request)
    if request.method != "POST":
        raise Problem(405, "method-not-allowed", f"{request.method}: use POST", headers={"Allow": "POST"})
    venue = request[VENUE]
    principal = require_bearer(venue.auth_store, request)
    asset, amount = await _parse_body(request)
    result = venue.paper_funds(principal.client_id, asset, amount, remove)
    return web.Response(body=orjson.dumps(result), content_type="application/json")


def _check_environment(request: web.Request) -> None:
    if request.app[OPTIONS].environment == "production":
        raise Problem(404, "not-found", "paper trading does not exist in production")


async def _parse_body(request: web.Request) -> tuple[str, str]:
    body = check_object(parse_json(await request.read()), PAPER_BODY, "")
    asset, amount = body["asset"], body["amount"]
    if not asset:
        raise bad_request("asset", "must be a non-empty string (asset id or name)")
    if amount.strip("0.") == "":
        raise bad_request("amount", "must be greater than 0")
    return asset, amount
