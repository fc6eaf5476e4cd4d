"""The operations of the OpenAPI document: parameters, the operations table, problem answers, security.

:data:`OPERATIONS` describes each (METHOD, path) of ``api.web.cefi.route_table.CEFI_ROUTES`` (the tests fail on a route
it lacks); :func:`operation` turns a row into the OpenAPI operation object, with the problem statuses
the route can answer and the signing it needs. The body and record schemas it names are in
``api/web/cefi/openapi_schemas.py``; ``api/web/app/openapi_documents.py`` assembles the document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cefisim.api.edge import versions
from cefisim.api.edge.openapi_blocks import ID_PATTERN, TIMESTAMP_PATTERN, ref
from cefisim.api.edge.problems import PROBLEM_CONTENT_TYPE
from cefisim.api.edge.signing import CHALLENGE, H_SIGNATURE, H_TIMESTAMP, H_TOKEN, H_USERID, MAX_AGE_S, MAX_AHEAD_S
from cefisim.api.edge.validate import MAX_QUERY_DIGITS
from cefisim.api.web.cefi.openapi_schemas import HTTP_DATE_PATTERN, REF_ID_PATTERN, list_of, versioned
from cefisim.api.web.cefi.paging import MAX_SKIP

SECURITY: dict[str, list[str]] = {
    "svcAuthToken": [],
    "svcAuthSignature": [],
    "svcAuthTimestamp": [],
    "svcAuthUserid": [],
}


def _q(name: str, description: str, schema: dict[str, Any], required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "description": description, "schema": schema}


def version_schema(served: Sequence[str]) -> dict[str, Any]:
    """The schema versions a request may name: ``served`` (the current one first), v2024_01_01 marked
    deprecated while it is served."""
    offered = sorted(served, reverse=True)
    # `enum` for client generators, `oneOf` of `const`s to carry JSON Schema's `deprecated` per value
    return {
        "type": "string",
        "default": versions.V2024 if versions.V2024 in served else versions.V2026,
        "enum": offered,
        "oneOf": [
            {"const": v, "deprecated": True, "description": "deprecated; removed on 2026-11-01"}
            if v == versions.V2024
            else {"const": v}
            for v in offered
        ],
    }


def parameters(served: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``components.parameters``: the schema version (header or query) of a document of ``served``
    versions, and every query and path parameter of :data:`OPERATIONS`."""
    default = "v2024_01_01 until 2026-11-01, then v2026_01_23" if versions.V2024 in served else versions.V2026
    return {
        "VersionHeader": {
            "name": versions.HEADER,
            "in": "header",
            "required": False,
            "description": f"schema version (default {default}, engine clock)",
            "schema": version_schema(served),
        },
        "VersionQuery": _q(
            versions.QUERY,
            f"schema version, when the {versions.HEADER} header is not sent (both given and different: 400)",
            version_schema(served),
        ),
        **PARAMETERS,
    }


PARAMETERS: dict[str, dict[str, Any]] = {
    "id": _q("id", "record id", {"type": "string", "pattern": ID_PATTERN, "maxLength": 19}),
    "name": _q("name", "asset name, exact match", {"type": "string"}),
    "symbol": _q("symbol", "instrument symbol, exact or substring match, case-sensitive", {"type": "string"}),
    "instrument_id": _q(
        "instrument_id",
        "one instrument; omitted: all",
        {"type": "string", "pattern": ID_PATTERN, "minLength": 1, "maxLength": 19},
    ),
    "size": _q(
        "size",
        "page size, 1 to 100 (larger values are clamped)",
        {"type": "integer", "minimum": 1, "maximum": 10**MAX_QUERY_DIGITS - 1, "default": 10},
    ),
    "skip": _q("skip", "records to skip", {"type": "integer", "minimum": 0, "maximum": MAX_SKIP, "default": 0}),
    "timestamp": _q(
        "timestamp",
        "only records created strictly before this nanosecond timestamp (a cursor)",
        {"type": "string", "pattern": TIMESTAMP_PATTERN},
    ),
    "timestamp_required": _q(
        "timestamp",
        "only records created strictly before this nanosecond timestamp (a cursor); required",
        {"type": "string", "pattern": TIMESTAMP_PATTERN},
        required=True,
    ),
    "client_id": _q(
        "client_id",
        "must name the client the request is signed for (else 403; 404 when no client has this id)",
        {"type": "string", "pattern": ID_PATTERN},
    ),
    "client_id_self": _q(
        "id",
        "client id; must be the client the request is signed for (else 403; 404 when no client has this id)",
        {"type": "string", "pattern": ID_PATTERN},
    ),
    "mnemonic": _q("mnemonic", "client mnemonic, exact match", {"type": "string"}),
    "asset_id": _q("asset_id", "one asset", {"type": "string", "pattern": ID_PATTERN, "maxLength": 19}),
    "asset_name": _q("asset_name", "one asset, by name", {"type": "string"}),
    "transfer_id": _q(
        "transfer_id",
        "one transfer; omitted: every active transfer",
        {"type": "string", "pattern": ID_PATTERN, "maxLength": 19},
    ),
    "order_id": _q("order_id", "alias of `id`", {"type": "string", "pattern": ID_PATTERN, "maxLength": 19}),
    "active_id": _q(
        "id",
        "one order (404 when the client has no such order; an empty list when it has ended)",
        {"type": "string", "pattern": ID_PATTERN, "maxLength": 19},
    ),
    "ref_id": {
        "name": "ref_id",
        "in": "path",
        "required": True,
        "description": "the exchange order id or the order's external id",
        "schema": {"type": "string", "pattern": REF_ID_PATTERN},
    },
}

PAGE = ["size", "skip", "timestamp"]

_ERRORS = {
    400: "malformed request (the detail names the field), or an unsupported schema version",
    401: "missing, unknown or stale signing headers, or a signature that does not match the request",
    403: "a client id in the query or body names another client than the signed one",
    408: "the body did not arrive within the server's read timeout (--read-timeout)",
    404: "no such record for this client",
    409: "the record is not in a state that allows the request",
    413: "body larger than the server accepts",
    429: "the HMAC key named in x-svc-auth-token has spent its request budget (only when the server runs "
    "with --rate-limit); nothing was applied",
    500: "internal error (the detail carries the request id)",
    503: "the command journal cannot be written; nothing was changed",
}


#: headers a problem of that status carries besides the ones of every response
_EXTRA_HEADERS = {401: ("WWW-Authenticate",), 429: ("Retry-After",)}


def _op(
    op_id: str,
    summary: str,
    response: dict[str, Any] | str,
    *,
    params: Sequence[str] = (),
    body: str | None = None,
    errors: tuple[int, ...] = (),
    description: str = "",
    tags: tuple[str, ...] = (),
    rules: Mapping[int, str] | None = None,
) -> dict[str, Any]:
    """One operation; ``rules``: per status, the business rules behind it that no schema can state
    (grids, minimums, lookups, states), added to that answer's description."""
    return {
        "operationId": op_id,
        "summary": summary,
        "description": description,
        "tags": list(tags),
        "x-params": list(params),
        "x-body": body,
        "x-response": response,
        "x-errors": errors,
        "x-rules": dict(rules or {}),
    }


_ORDER_STATE = "the order has ended or has a request pending, or the instrument is halted or disabled"
#: what an operation whose query or body names a client id answers for one that is not the signer
#: (``api/web/cefi/identity.same_client``): declared on every such operation by :func:`operation`
_NAMES_A_CLIENT_PARAMS = ("client_id", "client_id_self")
_NAMES_A_CLIENT_BODIES = ("PatchClientRequest", "PostOrderRequest", "PatchOrderRequest", "PostTransferRequest")
_UNKNOWN_CLIENT = "a client id that names no client (unknown-client)"


#: (METHOD, path) -> the operation; every row of api.web.cefi.route_table.CEFI_ROUTES must have one
OPERATIONS: dict[tuple[str, str], dict[str, Any]] = {
    ("GET", "/health"): _op("health", "Service health", "Health", tags=("public",)),
    ("GET", "/versions"): _op("versions", "Supported schema versions", "Versions", tags=("public",)),
    ("GET", "/assets"): _op(
        "assets",
        "Assets",
        list_of("Asset"),
        params=["id", "name"],
        tags=("reference",),
        description="public unless the server runs with --sign-reference-data",
    ),
    ("GET", "/instruments"): _op(
        "instruments",
        "Instruments",
        list_of("Instrument"),
        params=["id", "symbol"],
        tags=("reference",),
        description="public unless the server runs with --sign-reference-data",
    ),
    ("GET", "/market/quote"): _op(
        "market_quote",
        "Best bid and offer per instrument",
        list_of("MarketDataEntry"),
        params=["instrument_id"],
        tags=("market",),
    ),
    ("POST", "/market/quote"): _op(
        "quote_vwap",
        "VWAP quote for a quote-asset amount",
        "VwapQuote",
        body="MarketQuoteRequest",
        errors=(413,),
        tags=("market",),
        rules={
            400: "an unknown instrument_id; qty finer than the quote asset's decimals; "
            "not-enough-liquidity (no asks); quote-depth-limit"
        },
    ),
    ("POST", "/markets/quote"): _op(
        "markets_quote",
        "Quote a base or quote quantity against visible depth",
        versioned(ref("MarketsQuote"), ref("MarketsQuoteV2024")),
        body="MarketsQuoteRequest",
        errors=(413,),
        tags=("market",),
        rules={
            400: "an unknown instrument_id; qty off the qty grid (BASE) or finer than "
            "the quote asset's decimals (QUOTE); not-enough-liquidity (an empty "
            "side, or a BASE qty beyond the visible depth); quote-depth-limit"
        },
        description="notional and notional_residual under v2026_01_23 only",
    ),
    ("GET", "/clients"): _op(
        "clients",
        "The signed client",
        list_of("Client"),
        params=["client_id_self", "mnemonic"],
        errors=(403,),
        tags=("account",),
    ),
    ("PATCH", "/clients"): _op(
        "set_self_trade_prevention",
        "Set the client's self-trade prevention",
        list_of("Client"),
        body="PatchClientRequest",
        errors=(403, 404, 409, 503),
        tags=("account",),
        rules={400: "info.mnemonic other than the current one (read-only)"},
    ),
    ("GET", "/orders"): _op(
        "trades",
        "The client's trade records",
        list_of("TradeRecord"),
        params=["client_id", "size", "skip", "timestamp_required"],
        errors=(403,),
        tags=("orders",),
        description="newest first; `timestamp` is required",
    ),
    ("POST", "/orders"): _op(
        "place_order",
        "Enter an order",
        "OrderRecord",
        body="PostOrderRequest",
        errors=(403, 404, 409, 503),
        tags=("orders",),
        rules={
            400: "an unknown instrument_id; every other business rule (grids, minimum "
            "quantity, balance, price band, flags, instrument state) is a 200 "
            "REJECTED record with reject_reason"
        },
        description="a business rejection is a 200 with a REJECTED record and reject_reason",
    ),
    ("PATCH", "/orders"): _op(
        "modify_order",
        "Modify an order",
        "OrderRecord",
        body="PatchOrderRequest",
        errors=(403, 404, 409, 503),
        tags=("orders",),
        rules={
            400: "the new quantity or price breaks a grid, minimum, band or balance rule",
            404: "no such order for this client",
            409: _ORDER_STATE,
        },
    ),
    ("GET", "/orders/all"): _op(
        "orders_all",
        "Orders of the last 24 hours",
        list_of("OrderRecord"),
        params=["client_id", *PAGE],
        errors=(403,),
        tags=("orders",),
    ),
    ("GET", "/orders/active"): _op(
        "orders_active",
        "Orders currently active",
        list_of("OrderRecord"),
        params=["client_id", "active_id", "order_id", *PAGE],
        errors=(403, 404),
        tags=("orders",),
    ),
    ("GET", "/orders/trade"): _op(
        "orders_trade",
        "Trades of the last 24 hours",
        list_of("TradeRecord"),
        params=["client_id", *PAGE],
        errors=(403,),
        tags=("orders",),
    ),
    ("GET", "/orders/activity"): _op(
        "orders_activity",
        "Confirms, rejects, trades, modifications, cancels",
        list_of("OrderActivity"),
        params=["client_id", *PAGE],
        errors=(403,),
        tags=("orders",),
    ),
    ("GET", "/orders/status/{ref_id}"): _op(
        "order_status",
        "One order's current status",
        "OrderRecord",
        params=["ref_id", "client_id"],
        errors=(403, 404),
        tags=("orders",),
    ),
    ("DELETE", "/orders/{ref_id}"): _op(
        "cancel_order",
        "Begin cancelling an order",
        "OrderRecord",
        params=["ref_id"],
        errors=(404, 409, 503),
        tags=("orders",),
        rules={404: "no such order for this client", 409: _ORDER_STATE},
        description="trades can still arrive while CANCEL_PENDING",
    ),
    ("GET", "/balances"): _op(
        "balances",
        "Balances per asset",
        list_of("BalanceRecord"),
        params=["client_id", "asset_id", "asset_name"],
        errors=(403,),
        tags=("account",),
    ),
    ("GET", "/balances/activity"): _op(
        "balances_activity",
        "Every change to the client's balances",
        list_of("BalanceActivity"),
        params=["client_id", "asset_id", *PAGE],
        errors=(403,),
        tags=("account",),
    ),
    ("GET", "/transfers"): _op(
        "transfers",
        "Transfers of the last 24 hours",
        list_of("TransferListing"),
        params=["client_id", "size", "skip", "timestamp_required"],
        errors=(403,),
        tags=("transfers",),
        description="newest first; `timestamp` is required",
    ),
    ("POST", "/transfers"): _op(
        "create_transfer",
        "Request a deposit or withdrawal",
        "Transfer",
        body="PostTransferRequest",
        errors=(403, 404, 409, 503),
        tags=("transfers",),
        rules={
            400: "an unknown asset_id; amount finer than the asset's decimals; "
            "instructions that are not those of the platform (a WITHDRAW beyond "
            "the available balance is a 200 INITIALIZED transfer, REJECTED at settlement unless "
            "the balance covers it then)"
        },
    ),
    ("GET", "/transfers/active"): _op(
        "transfers_active",
        "Active (INITIALIZED) transfers",
        list_of("TransferListing"),
        params=["client_id", "transfer_id"],
        errors=(403, 404),
        tags=("transfers",),
    ),
}


def headers(served: Sequence[str]) -> dict[str, Any]:
    """``components.headers``: what responses carry; ``Deprecation`` and ``Sunset`` only while
    v2024_01_01 is served (``served``: the schema versions of the document)."""
    out: dict[str, Any] = {
        "X-Request-Id": {
            "description": "the request's id (echoed from the request, or assigned)",
            "schema": {"type": "string", "minLength": 1, "maxLength": 128},
        },
        "WWW-Authenticate": {
            "description": "on every 401 (RFC 9110 section 15.5.2): the x-svc-auth signature scheme and its headers",
            "required": True,
            "schema": {"type": "string", "const": CHALLENGE},
        },
        "Retry-After": {
            "description": "whole seconds until the key's bucket holds a token again",
            "required": True,
            "schema": {"type": "string", "pattern": "^[1-9][0-9]*$"},
        },
    }
    if versions.V2024 in served:
        out["Deprecation"] = {
            "description": "RFC 9745, on every response of schema v2024_01_01: when it was "
            "deprecated, as a structured-field date (@ Unix seconds)",
            "schema": {"type": "string", "pattern": "^@[0-9]+$"},
        }
        out["Sunset"] = {
            "description": "RFC 8594, on every response of schema v2024_01_01: when it is removed (an HTTP-date)",
            "schema": {"type": "string", "pattern": HTTP_DATE_PATTERN},
        }
    return out


def _headers(served: Sequence[str], *extra: str) -> dict[str, Any]:
    names = [n for n in ("X-Request-Id", "Deprecation", "Sunset") if n in headers(served)]
    return {name: {"$ref": f"#/components/headers/{name}"} for name in [*names, *extra]}


def _problem(description: str, served: Sequence[str], *extra: str) -> dict[str, Any]:
    return {
        "description": description,
        "headers": _headers(served, *extra),
        "content": {PROBLEM_CONTENT_TYPE: {"schema": ref("ProblemResponse")}},
    }


def problem_responses(served: Sequence[str]) -> dict[str, Any]:
    """``components.responses``: one problem answer per status of :data:`_ERRORS`."""
    return {f"Problem{code}": _problem(text, served, *_EXTRA_HEADERS.get(code, ())) for code, text in _ERRORS.items()}


def operation(method: str, path: str, signed: bool, served: Sequence[str]) -> dict[str, Any]:
    """The OpenAPI operation object of one row of ``api.web.cefi.route_table.CEFI_ROUTES`` for a document of the
    schema versions ``served``."""
    spec = OPERATIONS.get((method, path))
    if spec is None:  # a route the document does not know yet: the tests fail on this marker
        return {
            "operationId": f"undocumented_{method.lower()}_{path.strip('/').replace('/', '_')}",
            "summary": "undocumented",
            "x-undocumented": True,
            "responses": {"default": {"description": "undocumented"}},
        }
    body_read = signed or spec["x-body"] is not None
    reference = path in ("/assets", "/instruments")
    op: dict[str, Any] = {k: v for k, v in spec.items() if not k.startswith("x-") and v not in ("", [])}
    op["parameters"] = [
        {"$ref": "#/components/parameters/VersionHeader"},
        {"$ref": "#/components/parameters/VersionQuery"},
    ]
    op["parameters"] += [{"$ref": f"#/components/parameters/{name}"} for name in spec["x-params"]]
    if spec["x-body"] is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": ref(spec["x-body"])}}}
    response = spec["x-response"]
    schema = ref(response) if isinstance(response, str) else response
    responses: dict[str, Any] = {
        "200": {"description": "OK", "headers": _headers(served), "content": {"application/json": {"schema": schema}}}
    }
    codes = {400, 429, 500, *spec["x-errors"]}
    if signed or reference:
        codes |= {401}
    if body_read or reference:
        codes |= {413}
    if spec["x-body"] is not None:
        codes |= {408}
    rules = dict(spec["x-rules"])
    if spec["x-body"] in _NAMES_A_CLIENT_BODIES or any(p in _NAMES_A_CLIENT_PARAMS for p in spec["x-params"]):
        codes |= {403, 404}  # another client's id, an id no client has
        rules[404] = f"{rules[404]}; {_UNKNOWN_CLIENT}" if 404 in rules else _UNKNOWN_CLIENT
    for code in sorted(codes):
        text = _ERRORS[code]
        if reference and code in (401, 413):
            text += " (only when the server runs with --sign-reference-data)"
        if code in rules:
            text += "; business rules: " + rules[code]
        responses[str(code)] = (
            {"$ref": f"#/components/responses/Problem{code}"}
            if text == _ERRORS[code]
            else _problem(text, served, *_EXTRA_HEADERS.get(code, ()))
        )
    op["responses"] = responses
    if signed:
        op["security"] = [dict(SECURITY)]
    elif reference:
        op["security"] = [{}, dict(SECURITY)]
    else:
        op["security"] = []
    return op


def security_schemes() -> dict[str, Any]:
    """``components.securitySchemes``: the four ``x-svc-auth-*`` headers of a signed request."""
    layout = (
        "Signature = base64(HMAC-SHA256(secret, payload)). Payload layout (server option "
        "--signature-layout): `concat` (default) = timestamp + METHOD + path + body; `newline` = METHOD, "
        "path, timestamp, body joined by \\n. The path is the one requested, without the query string; "
        "the body is the exact raw body (empty when none). All four headers are required together."
    )
    return {
        "svcAuthToken": {"type": "apiKey", "in": "header", "name": H_TOKEN, "description": "UUID of the HMAC key"},
        "svcAuthSignature": {"type": "apiKey", "in": "header", "name": H_SIGNATURE, "description": layout},
        "svcAuthTimestamp": {
            "type": "apiKey",
            "in": "header",
            "name": H_TIMESTAMP,
            "description": f"Unix seconds; at most {MAX_AGE_S} s old and {MAX_AHEAD_S} s ahead "
            "of the server's wall clock",
        },
        "svcAuthUserid": {
            "type": "apiKey",
            "in": "header",
            "name": H_USERID,
            "description": "the client id the request acts for; the key must belong to it",
        },
    }
