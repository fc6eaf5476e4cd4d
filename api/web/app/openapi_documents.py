"""OpenAPI 3.1 description of the CeFi direct interface, built from the code that serves it.

``openapi_document()`` walks ``api.web.cefi.route_table.CEFI_ROUTES`` (so every served operation is described and
nothing else), derives each request-body schema from the handlers' own validation tables
(``api.edge.validate.F`` specs such as ``ORDER_INFO`` or ``TRANSFER_REQUEST``, so the document cannot drift
from the validator) and states the exact record shapes ``api/edge/serialize.py`` produces, for both schema
versions (v2026_01_23 envelopes and nested problems, v2024_01_01 raw arrays and bare problems, as
``oneOf`` while v2024_01_01 is served). Enumerations of record fields come from the engine's own
constants.

The document follows the engine clock: before 1 November 2026 it offers both schema versions
(v2024_01_01 marked deprecated, the ``Deprecation``/``Sunset`` headers declared), from then on only
v2026_01_23. ``servers`` names the address the request came to; ``info.version`` is the package
version (``cefisim.__version__``).

The Auth interface (``/v1/auth/``, ``api/web/cefi/openapi_auth.py``) is part of this document under the tag
``auth``, paper trading (``/v1/paper-trading/``, ``api/web/cefi/openapi_paper.py``) under ``paper-trading``; the
control plane has a document of its own at ``GET /_sim/openapi.json``
(``api/web/control/openapi.py``). This module assembles the venue's document and serves both; the CeFi
schemas are in ``api/web/cefi/openapi_schemas.py``, the operations, parameters, problem answers and security
schemes in ``api/web/cefi/openapi_operations.py``. docs/openapi.md describes the result.

Served at ``GET /v1/cefi/openapi.json`` (:func:`openapi_routes`). The tests hold the document to the
route table and validate real responses against it.
"""

from __future__ import annotations

import copy
import functools
import ipaddress
import re
from typing import Any

import orjson
from aiohttp import hdrs, web

import cefisim
from cefisim.api.auth.routes import auth_routes
from cefisim.api.edge import versions
from cefisim.api.edge.openapi_blocks import described, servers
from cefisim.api.edge.paths import CEFI
from cefisim.api.web.cefi.openapi_auth import AUTH_OPERATIONS, auth_schemas, auth_security_schemes, plain_responses
from cefisim.api.web.cefi.openapi_operations import (
    headers,
    operation,
    parameters,
    problem_responses,
    security_schemes,
)
from cefisim.api.web.cefi.openapi_paper import PAPER_OPERATIONS, PAPER_TAG, paper_schemas
from cefisim.api.web.cefi.openapi_schemas import (
    LIST_ITEMS,
    for_versions,
    page_name,
    page_schema,
    request_schemas,
    response_schemas,
)
from cefisim.api.web.cefi.route_table import CEFI_ROUTES
from cefisim.api.web.control.openapi import CONTROL_OPENAPI_PATH, control_template
from cefisim.api.web.server.venue_state import VENUE, auth_store_of

OPENAPI_PATH = CEFI + "/openapi.json"
INTERFACE_RELEASE = "1.0.8"  # the CeFi direct release this emulator follows
DEFAULT_SERVER = "http://127.0.0.1:8080"  # `cefisim serve` defaults; a served document names its own


def openapi_document(now_ns: int = 0, server_url: str = DEFAULT_SERVER) -> dict[str, Any]:
    """The OpenAPI 3.1 document of every CeFi direct operation the app serves at engine time
    ``now_ns`` (which schema versions it offers), naming ``server_url`` (a fresh copy)."""
    doc = copy.deepcopy(_document(tuple(versions.supported(now_ns))))
    doc["servers"] = servers(server_url)
    return doc


@functools.cache
def _document(served: tuple[str, ...]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for method, path, _handler, signed in CEFI_ROUTES:
        paths.setdefault(CEFI + path, {})[method.lower()] = operation(method, path, signed, served)
    for route in auth_routes(auth_store_of):
        paths.setdefault(route.path, {})[route.method.lower()] = described(AUTH_OPERATIONS, route.method, route.path)
    for method, path in PAPER_OPERATIONS:  # api/web/cefi/paper.py's routes take every method: the two it serves
        paths.setdefault(path, {})[method.lower()] = described(PAPER_OPERATIONS, method, path)
    schemas = {**request_schemas(), **response_schemas(served), **auth_schemas(), **paper_schemas()}
    for item in LIST_ITEMS:
        schemas[page_name(item)] = page_schema(item)
    if versions.V2024 not in served:
        del schemas["MarketsQuoteV2024"]
    if versions.V2024 in served:
        offered = (
            "Two schema versions, chosen with the X-Svc-Version header (or the `version` query "
            "parameter): v2026_01_23 wraps lists in {data, pagination:{size, next_cursor}} and nests "
            "problems in `error`; v2024_01_01 (the default, deprecated) returns raw arrays and bare problems "
            "and is removed on 2026-11-01 (engine clock): from then on this document offers v2026_01_23 only."
        )
    else:
        offered = (
            "Schema version v2026_01_23 (X-Svc-Version header or `version` query parameter): lists are "
            "wrapped in {data, pagination:{size, next_cursor}}, problems nested in `error`. v2024_01_01 was "
            "removed on 2026-11-01 (engine clock) and is refused with 400 unsupported-version."
        )
    return for_versions(
        {
            "openapi": "3.1.0",
            "info": {
                "title": "CeFi direct (cefisim emulator)",
                "version": cefisim.__version__,
                "description": (
                    f"Order entry, balances, transfers and market data of the centralised venue (CeFi direct "
                    f"release {INTERFACE_RELEASE}), as served by the cefisim emulator. {offered} Follow next_cursor "
                    "by sending it back as `timestamp` until it is null; treat an empty page with a cursor as the end."
                ),
                "license": {"name": "MIT", "identifier": "MIT"},
                "x-interface-release": INTERFACE_RELEASE,
            },
            "servers": servers(DEFAULT_SERVER),
            "tags": [
                *({"name": n} for n in ("public", "reference", "market", "account", "orders", "transfers")),
                {"name": "auth", "description": "API-key exchange and OAuth (/v1/auth/): bearer tokens"},
                PAPER_TAG,
            ],
            "paths": paths,
            "components": {
                "schemas": schemas,
                "parameters": parameters(served),
                "responses": {**problem_responses(served), **plain_responses()},
                "headers": headers(served),
                "securitySchemes": {**security_schemes(), **auth_security_schemes()},
            },
        },
        served,
    )


#: an RFC 3986 ``host [":" port]``: an IP literal (IPv6, checked by ``ipaddress``) or a reg-name (which
#: covers IPv4 addresses), and a port of at most five digits
_HOST = re.compile(
    r"(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+)(?::(?P<port>[0-9]{1,5}))?"
)


def server_url(request: web.Request) -> str:
    """The address ``request`` came to (scheme and Host), the ``servers`` entry of a served document;
    ``/`` (relative: the server the document was read from, OpenAPI 3.1 section 4.8.5) when the request
    sent no Host or one that is not a ``host[:port]``, whatever its bytes."""
    host = request.headers.get(hdrs.HOST)
    match = _HOST.fullmatch(host) if host else None
    if match is None or int(match["port"] or 0) > 65535 or (match["ipv6"] and not _ipv6(match["ipv6"])):
        return "/"
    return f"{request.scheme}://{host}"


def _ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def serve_document(request: web.Request, document: dict[str, Any]) -> web.Response:
    """``document`` with ``servers`` naming the address the request came to, as JSON."""
    body = orjson.dumps({**document, "servers": servers(server_url(request))})
    return web.Response(body=body, content_type="application/json")


async def get_openapi(request: web.Request) -> web.Response:
    """GET /v1/cefi/openapi.json: this document, as of the engine clock."""
    return serve_document(request, _document(tuple(versions.supported(request[VENUE].sim.now_ns()))))


async def get_control_openapi(request: web.Request) -> web.Response:
    """GET /_sim/openapi.json: the control plane's document (behind the control plane's guard)."""
    return serve_document(request, control_template())


def openapi_routes() -> list[web.RouteDef]:
    return [web.get(OPENAPI_PATH, get_openapi), web.get(CONTROL_OPENAPI_PATH, get_control_openapi)]
