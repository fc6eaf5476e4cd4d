"""OpenAPI 3.1 description of the CeFi direct interface, built from the code that serves it.

``openapi_document()`` walks ``api.app.CEFI_ROUTES`` (so every served operation is described and
nothing else), derives each request-body schema from the handlers' own validation tables
(``api.validate.F`` specs such as ``ORDER_INFO`` or ``TRANSFER_REQUEST``, so the document cannot drift
from the validator) and states the exact record shapes ``api/serialize.py`` produces, for both schema
versions (v2026_01_23 envelopes and nested problems, v2024_01_01 raw arrays and bare problems, as
``oneOf``). Enumerations of record fields come from the engine's own constants.

This module assembles the document and serves it; the schemas are in ``api/openapi_schemas.py``, the
operations, parameters, problem answers and security schemes in ``api/openapi_operations.py``.

Served at ``GET /v1/cefi/openapi.json`` (:func:`openapi_routes`). The tests hold the document to the
route table and validate real responses against it.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

import orjson
from aiohttp import web

from .keys import CEFI
from .openapi_operations import HEADERS, PARAMETERS, operation, problem_responses, security_schemes
from .openapi_schemas import LIST_ITEMS, page_name, page_schema, request_schemas, response_schemas

OPENAPI_PATH = CEFI + "/openapi.json"
API_VERSION = "1.0.8"  # the CeFi direct release this emulator follows


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of every CeFi direct operation the app serves (a fresh copy)."""
    return copy.deepcopy(_document())


@functools.cache
def _document() -> dict[str, Any]:
    from .app import CEFI_ROUTES  # api.app adds this module's routes: import it late

    paths: dict[str, dict[str, Any]] = {}
    for method, path, _handler, signed in CEFI_ROUTES:
        paths.setdefault(CEFI + path, {})[method.lower()] = operation(method, path, signed)
    schemas = {**request_schemas(), **response_schemas()}
    for item in LIST_ITEMS:
        schemas[page_name(item)] = page_schema(item)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "CeFi direct (cefisim emulator)",
            "version": API_VERSION,
            "description": (
                "Order entry, balances, transfers and market data of the centralised venue, as served by the "
                "cefisim emulator. Two schema versions, chosen with the X-Svc-Version header (or the `version` "
                "query parameter): v2026_01_23 wraps lists in {data, pagination:{size, next_cursor}} and nests "
                "problems in `error`; v2024_01_01 returns raw arrays and bare problems and is removed on "
                "2026-11-01 (engine clock). Follow next_cursor by sending it back as `timestamp` until it is "
                "null; treat an empty page with a cursor as the end."),
            "license": {"name": "MIT", "identifier": "MIT"},
        },
        "servers": [{"url": "http://127.0.0.1:8080", "description": "cefisim serve (default host and port)"}],
        "tags": [{"name": n} for n in ("public", "reference", "market", "account", "orders", "transfers")],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "parameters": copy.deepcopy(PARAMETERS),
            "responses": problem_responses(),
            "headers": copy.deepcopy(HEADERS),
            "securitySchemes": security_schemes(),
        },
    }


@functools.cache
def _document_bytes() -> bytes:
    return orjson.dumps(_document())


async def get_openapi(request: web.Request) -> web.Response:
    """GET /v1/cefi/openapi.json: this document."""
    return web.Response(body=_document_bytes(), content_type="application/json")


def openapi_routes() -> list[web.RouteDef]:
    return [web.get(OPENAPI_PATH, get_openapi)]
