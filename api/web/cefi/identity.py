"""Who a signed CeFi request acts for: the HMAC signature's client, and the client ids it may name.

``signed_client`` checks the request's signature (``api/edge/signing.py``) against the scenario's
HMAC keys and the wall clock (skewed when that fault is injected: ``docs/faults.md``) and stores the
client id on the request (``CLIENT_ID``, for the access log); a signature that does not hold is a
401 problem with the scheme's challenge (``signing.CHALLENGE``). ``same_client`` checks a client id
the query or body names against the signed one.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from cefisim.api.edge.problems import Problem, bad_request
from cefisim.api.edge.signing import CHALLENGE, H_SIGNATURE, H_TIMESTAMP, H_TOKEN, H_USERID, verify
from cefisim.api.web.server.http import parse_json
from cefisim.api.web.server.keys import CLIENT_ID, OPTIONS
from cefisim.api.web.server.venue_state import VENUE
from cefisim.engine import queries
from cefisim.engine.reference import ID_RE


async def signed_client(request: web.Request) -> int:
    """The client a signed CeFi request acts for; 401 problem when the signature does not hold."""
    return _verified(request, await request.read() if request.body_exists else b"")


async def signed_json(request: web.Request) -> tuple[int, Any]:
    """:func:`signed_client` and the JSON body it signed (read once, checked, then parsed)."""
    body = await request.read() if request.body_exists else b""
    return _verified(request, body), parse_json(body)


def _verified(request: web.Request, body: bytes) -> int:
    opts = request.app[OPTIONS]
    sim = request[VENUE].sim
    h = request.headers
    outcome = verify(
        h.get(H_TOKEN),
        h.get(H_SIGNATURE),
        h.get(H_TIMESTAMP),
        h.get(H_USERID),
        sim.scenario.hmac_keys,
        request.method,
        request.rel_url.raw_path,
        body,
        sim.faults.skewed_s(opts.wall_s()),  # the server's clock: skewed by a venue fault (docs/faults.md)
        opts.signature_layout,
    )
    if isinstance(outcome, int):
        request[CLIENT_ID] = outcome
        return outcome
    raise Problem(401, "unauthorized", outcome.detail, headers={"WWW-Authenticate": CHALLENGE})


def same_client(request: web.Request, acting: int, named: str | None, field: str) -> None:
    """A client id in a query or body must name the client the request acts for.

    Not an id: 400. No such client: 404. Another client: 403.
    """
    if named is None or named == str(acting):
        return
    if not ID_RE.fullmatch(named) or len(named) > 19:
        raise bad_request(field, "must match ^[1-9][0-9]*$")
    if not queries.has_client(request[VENUE].sim.venue, int(named)):
        raise Problem(404, "unknown-client", f"{field}: no client {named}")
    raise Problem(403, "forbidden", f"{field}: the request is signed for client {acting}, not {named}")
