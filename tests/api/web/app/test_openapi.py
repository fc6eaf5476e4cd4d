"""api/web/app/openapi_documents.py against the code: the documents cover exactly the served operations, are well
formed,
document the parameters the handlers read, agree with the request validator, and state the business
rules. The served documents and real responses: test_openapi_served.py."""

from __future__ import annotations

import copy
import inspect
import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cefisim.api.client import CefiClient
from cefisim.api.edge import intake, versions
from cefisim.api.edge.openapi_blocks import described
from cefisim.api.edge.problems import Problem
from cefisim.api.edge.validate import DECIMAL_RE, POSITIVE_DECIMAL_RE, check_object
from cefisim.api.edge.versions import KNOWN, REMOVAL_NS
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.app.application import create_app
from cefisim.api.web.app.openapi_documents import CEFI, OPENAPI_PATH, openapi_document
from cefisim.api.web.cefi import account as cefi_account
from cefisim.api.web.cefi import orders as cefi_orders
from cefisim.api.web.cefi import paging as cefi_paging
from cefisim.api.web.cefi import public as cefi_public
from cefisim.api.web.cefi.openapi_auth import AUTH_OPERATIONS
from cefisim.api.web.cefi.openapi_operations import OPERATIONS
from cefisim.api.web.cefi.openapi_paper import PAPER_OPERATIONS
from cefisim.api.web.cefi.paper import PAPER_BODY
from cefisim.api.web.cefi.route_table import CEFI_ROUTES
from cefisim.api.web.control.openapi import CONTROL_OPENAPI_PATH, CONTROL_OPERATIONS, control_document
from cefisim.api.web.server.keys import ServerOptions
from cefisim.engine.queries import A_CANCEL, A_CONFIRM, A_FILLED, A_MODIFY, A_REJECT, A_TRADE
from cefisim.engine.rejects import CancelReason, Reject
from cefisim.engine.vocabulary import (
    ExecInst,
    LiquidityFlag,
    OrderFlag,
    OrderStatus,
    OrderType,
    SelfTradePrevention,
    Side,
    TimeInForce,
    TransferType,
    Word,
)
from tests.api.client.test_client import DOC, FIAT

ALO = ExecInst.ALO
AON = ExecInst.AON
BUY = Side.BUY
GTC = TimeInForce.GTC
IOC = TimeInForce.IOC
LIMIT = OrderType.LIMIT
MARKET = OrderType.MARKET
ORDER_STATUSES = tuple(OrderStatus)
SELL = Side.SELL
USE_AGGRESSIVE_PRICING = OrderFlag.USE_AGGRESSIVE_PRICING
MAKER = LiquidityFlag.MAKER
WITHDRAW = TransferType.WITHDRAW
STP_VALUES = tuple(SelfTradePrevention)

DOCUMENT = openapi_document()


# --- a small JSON Schema validator (the subset the document uses) ------------------------------

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def resolve(ref: str, root: dict[str, Any] = DOCUMENT) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def errors(value: Any, schema: dict[str, Any], where: str = "$", conditionals: bool = True) -> Iterator[str]:
    """Why ``value`` does not satisfy ``schema`` (nothing when it does)."""
    if "$ref" in schema:
        yield from errors(value, resolve(schema["$ref"]), where, conditionals)
        return
    kind = schema.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else kind
        if not any(_TYPES[k](value) for k in kinds):
            yield f"{where}: {value!r} is not of type {kind}"
            return
    if "const" in schema and value != schema["const"]:
        yield f"{where}: {value!r} is not {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        yield f"{where}: {value!r} not in {schema['enum']}"
    if isinstance(value, str):
        # ECMA-262 semantics: `$` is the end of the input (Python's also matches before a final newline)
        if "pattern" in schema and not re.search(schema["pattern"].replace("$", r"\Z"), value):
            yield f"{where}: {value!r} does not match {schema['pattern']}"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            yield f"{where}: longer than {schema['maxLength']}"
        if "minLength" in schema and len(value) < schema["minLength"]:
            yield f"{where}: shorter than {schema['minLength']}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            yield f"{where}: below {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            yield f"{where}: above {schema['maximum']}"
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                yield f"{where}: missing {name!r}"
        for name, item in value.items():
            if name in props:
                yield from errors(item, props[name], f"{where}.{name}", conditionals)
            elif schema.get("additionalProperties") is False:
                yield f"{where}: unexpected {name!r}"
    if isinstance(value, list):
        if "items" in schema:
            for i, item in enumerate(value):
                yield from errors(item, schema["items"], f"{where}[{i}]", conditionals)
        if schema.get("uniqueItems") and len({repr(v) for v in value}) != len(value):
            yield f"{where}: items are not unique"
    if "oneOf" in schema:
        matching = [s for s in schema["oneOf"] if not list(errors(value, s, where, conditionals))]
        if len(matching) != 1:
            detail = [list(errors(value, s, where, conditionals)) for s in schema["oneOf"]]
            yield f"{where}: matches {len(matching)} of oneOf, not exactly 1: {detail}"
    if conditionals:
        if "anyOf" in schema and not any(not list(errors(value, s, where)) for s in schema["anyOf"]):
            yield f"{where}: matches none of anyOf"
        if "not" in schema and not list(errors(value, schema["not"], where)):
            yield f"{where}: matches the `not` schema"
        if "if" in schema:
            branch = "else" if list(errors(value, schema["if"], where)) else "then"
            yield from errors(value, schema.get(branch, {}), where)
        for part in schema.get("allOf", ()):
            yield from errors(value, part, where)


def check(value: Any, schema: dict[str, Any]) -> None:
    problems = list(errors(value, schema))
    assert not problems, "\n".join(problems[:10])


def test_the_validator_catches_drift() -> None:
    """The checker used below is strict: a renamed, missing or extra field, a wrong type all fail."""
    trade = {
        "client_id": "100",
        "instrument_id": "1",
        "order_id": "3",
        "trade_price": "1.00",
        "trade_qty": "1",
        "trade_fee_rate": "0.001",
        "liq_flag": "MAKER",
        "match_id": "1",
        "timestamp": "1" * 19,
    }
    listing = {
        "oneOf": [
            {"$ref": "#/components/schemas/TradeRecordPage"},
            {"type": "array", "items": {"$ref": "#/components/schemas/TradeRecord"}},
        ]
    }
    check([trade], listing)
    check({"data": [trade], "pagination": {"size": 10, "next_cursor": None}}, listing)
    bad = [
        {**trade, "extra": 1},
        {k: v for k, v in trade.items() if k != "match_id"},
        {**trade, "trade_qty": 1},
        {**trade, "liq_flag": "BOTH"},
        {**trade, "timestamp": "123"},
        {**trade, "order_id": "3\n"},
    ]
    for record in bad:
        assert list(errors([record], listing)), record
    assert list(errors({"data": [trade], "pagination": {"size": 10}}, listing))
    assert list(errors({"data": [trade]}, listing))
    order = DOCUMENT["components"]["schemas"]["OrderRecord"]
    assert "exeuted_qty" in order["required"] and "executed_qty" not in order["properties"]


# --- the document itself ------------------------------------------------------------------------


def served_operations(app: Any, prefixes: tuple[str, ...]) -> set[tuple[str, str]]:
    out = set()
    for route in app.router.routes():
        path = route.resource.canonical if route.resource is not None else ""
        if path.startswith(prefixes) and route.method != "HEAD":
            out.add((route.method, path))
    return out


def documented_operations(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in document["paths"].items() for method in item}


def test_documents_cover_exactly_the_served_operations() -> None:
    """The venue's document: every CeFi and Auth route and the two paper-trading operations (and nothing
    else but itself); the control plane's: every /_sim/ route, itself included."""
    sim = Simulation(parse_scenario(copy.deepcopy(DOC), "test_openapi"), clock="virtual")
    app = create_app(sim, ServerOptions())
    served = served_operations(app, (CEFI + "/", "/v1/auth/"))
    assert len(served - {("GET", OPENAPI_PATH)}) == len(CEFI_ROUTES) + len(AUTH_OPERATIONS) == 29
    # paper trading's routes take every method (a wrong one is a 405 naming POST): its two POSTs
    paper = {path for method, path in served_operations(app, ("/v1/paper-trading/",)) if method == "*"}
    assert {path for _m, path in PAPER_OPERATIONS} <= paper and {m for m, _p in PAPER_OPERATIONS} == {"POST"}
    assert documented_operations(DOCUMENT) == served - {("GET", OPENAPI_PATH)} | set(PAPER_OPERATIONS)
    assert set(OPERATIONS) == {(m, p) for m, p, _h, _s in CEFI_ROUTES}
    control = control_document("http://127.0.0.1:1")
    assert (
        documented_operations(control)
        == served_operations(app, ("/_sim/",))
        == set(CONTROL_OPERATIONS) | {("GET", CONTROL_OPENAPI_PATH)}
    )
    for document in (DOCUMENT, control):
        for item in document["paths"].values():
            for op in item.values():
                assert not op.get("x-undocumented"), op["operationId"]
    assert {t["name"] for t in DOCUMENT["tags"]} >= {"auth", "orders"}
    assert all(op["tags"] == ["auth"] for (_m, p), op in AUTH_OPERATIONS.items())


def test_a_route_without_a_description_is_marked() -> None:
    marker = described({}, "GET", "/_sim/new-thing")
    assert marker["x-undocumented"] is True and marker["operationId"] == "undocumented_get__sim_new-thing"


def test_document_is_well_formed_openapi_3_1() -> None:
    assert DOCUMENT["openapi"].startswith("3.1.")
    assert {"title", "version"} <= set(DOCUMENT["info"])
    assert set(DOCUMENT) >= {"openapi", "info", "paths", "components"}
    assert all(path.startswith((CEFI + "/", "/v1/auth/", "/v1/paper-trading/")) for path in DOCUMENT["paths"])
    seen_ids = set()
    refs = 0

    def walk(node: Any) -> None:
        nonlocal refs
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs += 1
                resolve(node["$ref"])  # raises KeyError when it does not resolve
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(DOCUMENT)
    assert refs > 100
    schemes = DOCUMENT["components"]["securitySchemes"]
    assert {s["name"] for s in schemes.values() if s["type"] == "apiKey"} == {
        "x-svc-auth-token",
        "x-svc-auth-signature",
        "x-svc-auth-timestamp",
        "x-svc-auth-userid",
    }
    assert all(s["in"] == "header" for s in schemes.values() if s["type"] == "apiKey")
    assert schemes["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "an access token from POST /v1/auth/api-key/token",
    }
    for method, path, _h, signed in CEFI_ROUTES:
        op = DOCUMENT["paths"][CEFI + path][method.lower()]
        assert op["operationId"] not in seen_ids
        seen_ids.add(op["operationId"])
        for p in op["parameters"]:
            param = resolve(p["$ref"])
            assert param["in"] in ("query", "header", "path")
            if param["in"] == "path":
                assert "{" + param["name"] + "}" in path and param["required"] is True
        assert "200" in op["responses"] and {"400", "500"} <= set(op["responses"])
        if signed:
            assert op["security"] == [{n: [] for n, s in schemes.items() if s["type"] == "apiKey"}]
            assert "401" in op["responses"]
        for code, response in op["responses"].items():
            if code != "200":
                response = resolve(response["$ref"]) if "$ref" in response else response
                assert list(response["content"]) == ["application/problem+json"]
        assert any(resolve(p["$ref"])["name"] == "X-Svc-Version" for p in op["parameters"])
    # each operation is a method of the client, under the same name
    assert seen_ids <= {name for name, _ in inspect.getmembers(CefiClient, inspect.iscoroutinefunction)}


def _query_names(fn: Any, seen: set[str] | None = None) -> set[str]:
    """The query (and path) parameter names a handler reads, following the module helpers it calls."""
    seen = seen if seen is not None else set()
    if fn.__name__ in seen:
        return set()
    seen.add(fn.__name__)
    src = inspect.getsource(fn)
    names = set(re.findall(r"request\.query\.get\(\"(\w+)\"\)", src))
    names |= set(re.findall(r"query_(?:id|int|timestamp)\((?:request\.query|q), \"(\w+)\"", src))
    names |= set(re.findall(r"match_info\[\"(\w+)\"\]", src))
    helpers = (cefi_orders, cefi_account, cefi_public, cefi_paging)
    for helper in set(re.findall(r"\b(\w+)\(", src)):
        for module in helpers:
            target = getattr(module, helper, None)
            if inspect.isfunction(target) and target.__module__ in {m.__name__ for m in helpers}:
                names |= _query_names(target, seen)
    return names


@pytest.mark.parametrize(
    ("method", "path", "handler"),
    [(m, p, h) for m, p, h, _ in CEFI_ROUTES],
    ids=[f"{m} {p}" for m, p, _h, _s in CEFI_ROUTES],
)
def test_documented_parameters_are_those_the_handler_reads(method: str, path: str, handler: Any) -> None:
    op = DOCUMENT["paths"][CEFI + path][method.lower()]
    documented = {resolve(p["$ref"])["name"] for p in op["parameters"]} - {"X-Svc-Version", "version"}
    assert documented == _query_names(handler)


# --- request bodies: the schema accepts exactly what the validator accepts ---------------------

VALID_BODIES = {
    "PostOrderRequest": (
        intake.POST_ORDER,
        {
            "external_id": "ext-1",
            "info": {
                "msg_id": "m",
                "parent_id": "0",
                "client_id": "100",
                "instrument_id": "1",
                "qty": "0.5",
                "price": "100.00",
                "flags": ["USE_AGGRESSIVE_PRICING"],
                "side": "BUY",
                "type": "LIMIT",
                "tif": "IOC",
                "exec_inst_flags": ["ALO", "AON"],
                "hold_fee_rate": "0.002",
                "stp": "CANCEL_BOTH",
            },
        },
    ),
    "PatchOrderRequest": (
        intake.PATCH_ORDER,
        {
            "id": "5",
            "external_id": "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4b",
            "info": {
                "msg_id": "m",
                "parent_id": "7",
                "client_id": "100",
                "prev_modify": "p",
                "new_qty": "1",
                "new_price": "2.5",
                "new_type": "MARKET",
            },
        },
    ),
    "PostTransferRequest": (
        intake.POST_TRANSFER,
        {
            "request": {
                "amount": "1.5",
                "asset_id": "2",
                "client_id": "100",
                "type": "WITHDRAW",
                "platform": "FIAT",
                "instructions": FIAT,
            }
        },
    ),
    "PatchClientRequest": (cefi_account.PATCH_CLIENT, {"id": "100", "info": {"self_trade_prevention": "NONE"}}),
    "MarketQuoteRequest": (cefi_public.MARKET_QUOTE, {"qty": "10", "instrument_id": "1"}),
    "MarketsQuoteRequest": (
        cefi_public.MARKETS_QUOTE,
        {"qty": "10.0", "instrument_id": "1", "side": "SELL", "qty_unit": "QUOTE"},
    ),
    "PaperFundsRequest": (PAPER_BODY, {"asset": "BTC", "amount": "1.5"}),
}
BAD_VALUES = [
    None,
    1,
    0,
    True,
    "",
    "x",
    "-1",
    "1.",
    "0",
    "01",
    "1" * 20,
    "a" * 300,
    [],
    ["ALO", "ALO"],
    ["NOPE"],
    {},
    "GTC",
    "MARKET",
    "6F1C2B3A-4D5E-4F60-8A7B-9C8D7E6F5A4B",
    "with space",
    1.5,
    "1\n",
    "1.5\n",
    "ext\n",
    "0.000",
    "00",
    "0.1234567891",
    "0.1234567890000",
]


def _mutations(body: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    yield "as is", body
    yield "unknown field", {**body, "surprise": "1"}
    for name, value in body.items():
        yield f"without {name}", {k: v for k, v in body.items() if k != name}
        for bad in BAD_VALUES:
            yield f"{name}={bad!r}", {**body, name: bad}
        if isinstance(value, dict):
            for label, inner in _mutations(value):
                yield f"{name}: {label}", {**body, name: inner}


def _validator_accepts(spec: Any, body: Any) -> bool:
    try:
        check_object(body, spec, "")
    except Problem:
        return False
    return True


@pytest.mark.parametrize("name", sorted(VALID_BODIES))
def test_request_schema_agrees_with_the_validator(name: str) -> None:
    spec, valid = VALID_BODIES[name]
    schema = DOCUMENT["components"]["schemas"][name]
    count = 0
    for label, body in _mutations(valid):
        expected = _validator_accepts(spec, body)
        if name == "PaperFundsRequest" and expected:  # api/web/cefi/paper.py then wants an asset and an amount above 0
            expected = body["asset"] != "" and Decimal(body["amount"]) > 0
        if name == "PostTransferRequest" and expected:  # instructions are checked per platform afterwards
            instr = body["request"]["instructions"]
            table = intake.FIAT_INSTRUCTIONS if body["request"]["platform"] == "FIAT" else intake.CRYPTO_INSTRUCTIONS
            expected = _validator_accepts(table, instr)
        got = not list(errors(body, schema))
        assert got == expected, f"{name} {label}: schema says {got}, validator says {expected}"
        count += 1
    assert count > 40


@given(st.from_regex(r"\A[0-9]{1,4}(\.[0-9]{1,4})?\Z") | st.text("0123456789.", max_size=8))
@settings(max_examples=300, derandomize=True, database=None)
def test_a_positive_decimal_is_a_decimal_above_zero(text: str) -> None:
    """The rule the schema's pattern and the validator share for amounts to move or quote."""
    positive = bool(DECIMAL_RE.fullmatch(text)) and Decimal(text) > 0
    assert bool(POSITIVE_DECIMAL_RE.fullmatch(text)) == positive
    pattern = DOCUMENT["components"]["schemas"]["MarketQuoteRequest"]["properties"]["qty"]["pattern"]
    assert pattern == POSITIVE_DECIMAL_RE.pattern


def test_business_rules_are_declared_on_their_operations() -> None:
    """What no schema can state (lookups, grids, minimums, states) is named on the answer it gives."""
    for method, path in (
        ("POST", "/market/quote"),
        ("POST", "/markets/quote"),
        ("POST", "/orders"),
        ("PATCH", "/orders"),
        ("POST", "/transfers"),
        ("PATCH", "/clients"),
    ):
        answer = DOCUMENT["paths"][CEFI + path][method.lower()]["responses"]["400"]
        assert "business rules: " in answer["description"], (method, path)
        assert answer["content"] == {
            "application/problem+json": {"schema": {"$ref": "#/components/schemas/ProblemResponse"}}
        }
    for method, path in (("PATCH", "/orders"), ("DELETE", "/orders/{ref_id}")):
        assert "halted" in DOCUMENT["paths"][CEFI + path][method.lower()]["responses"]["409"]["description"]


def test_cross_field_rules_are_stated() -> None:
    schemas = DOCUMENT["components"]["schemas"]
    limit = {"info": {"client_id": "1", "instrument_id": "1", "qty": "1", "side": "BUY", "type": "LIMIT"}}
    assert list(errors(limit, schemas["PostOrderRequest"]))
    limit["info"]["type"] = "MARKET"
    assert not list(errors(limit, schemas["PostOrderRequest"]))
    modify: dict[str, Any] = {"info": {"client_id": "1", "new_qty": "1", "new_type": "MARKET"}}
    assert list(errors(modify, schemas["PatchOrderRequest"])) == ["$: missing 'external_id'"]
    assert list(errors({**modify, "id": None}, schemas["PatchOrderRequest"])) == ["$: missing 'external_id'"]
    assert not list(errors({**modify, "external_id": "e-1"}, schemas["PatchOrderRequest"]))
    del modify["info"]["new_type"]
    modify["id"] = "3"
    assert any("new_price" in e for e in errors(modify, schemas["PatchOrderRequest"]))
    modify["info"]["new_type"] = "MARKET"
    assert not list(errors(modify, schemas["PatchOrderRequest"]))


def _enums(node: Any) -> Iterator[list[Any]]:
    if isinstance(node, dict):
        if isinstance(node.get("enum"), list):
            yield node["enum"]
        for value in node.values():
            yield from _enums(value)
    elif isinstance(node, list):
        for value in node:
            yield from _enums(value)


def test_every_enumeration_is_the_engines_vocabulary() -> None:
    """Every enum value of the venue's document is an engine constant (order, instrument, transfer and
    activity states, sides, types, flags, STP values, reject and cancel reasons), or one of the few
    words the HTTP layer adds (schema versions, balance kinds, quote units); and the record enums hold
    every value the engine can put there."""
    vocabulary = {word for kind in Word.__subclasses__() for word in kind}  # engine/vocabulary.py
    engine_words = {
        *vocabulary,
        *(r.value for r in Reject),
        *(r.value for r in CancelReason),
        A_CONFIRM,
        A_REJECT,
        A_TRADE,
        A_CANCEL,
        A_MODIFY,
        A_FILLED,
    }
    http_words = {
        *KNOWN,
        versions.HEADER,
        "ok",
        "TOTAL",
        "AVAILABLE",
        "HOLD",
        "PAPER_FUNDS",
        "BASE",
        "QUOTE",
        "approve",
        "deny",
        "authorization_code",
        "refresh_token",
        None,
    }
    for document in (openapi_document(0), openapi_document(REMOVAL_NS)):
        for values in _enums(document):
            assert set(values) <= engine_words | http_words, set(values) - engine_words - http_words
    schemas = DOCUMENT["components"]["schemas"]
    record = schemas["OrderRecord"]["properties"]
    assert set(record["cancel_reason"]["enum"]) >= {r.value for r in CancelReason} | {
        "ALO_WOULD_TRADE",
        "NO_LIQUIDITY",
        "INSTRUMENT_HALTED",
        "INSTRUMENT_DISABLED",
    }
    assert set(record["status"]["enum"]) == set(ORDER_STATUSES)
    assert set(record["reject_reason"]["enum"]) - {None} == {r.value for r in Reject}
    info = schemas["OrderInfo"]["properties"]
    assert set(info["side"]["enum"]) == {BUY, SELL} and set(info["type"]["enum"]) == {LIMIT, MARKET}
    assert set(info["tif"]["enum"]) - {None} == {GTC, IOC}
    assert set(info["exec_inst_flags"]["items"]["enum"]) == {ALO, AON}
    assert set(info["stp"]["enum"]) - {None} == set(STP_VALUES)
    assert set(schemas["OrderActivity"]["properties"]["type"]["enum"]) == {
        A_CONFIRM,
        A_REJECT,
        A_TRADE,
        A_CANCEL,
        A_MODIFY,
        A_FILLED,
    }


def test_venue_in_the_query_is_a_parameter_of_the_stream_and_the_page_alone() -> None:
    """docs/venues.md: every other control route answers ``?venue=`` with a 400, which it declares."""
    control = control_document("http://127.0.0.1:1")
    takes = set()
    for path, item in control["paths"].items():
        for method, op in item.items():
            if any(p["name"] == "venue" and p["in"] == "query" for p in op.get("parameters", ())):
                takes.add(path.removeprefix("/_sim/venues/{venue_id}").removeprefix("/_sim"))
            if path != CONTROL_OPENAPI_PATH:
                assert "400" in op["responses"], (method, path)
    assert takes == {"/stream", "/ui/", "/ui/{name}"}
