"""api/openapi.py: the document covers exactly the served CeFi operations, is well formed, agrees with
the request validator, and real responses of every operation validate against it (both versions)."""

from __future__ import annotations

import copy
import inspect
import re
from datetime import datetime, timezone
from decimal import Decimal
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cefisim

from cefisim.api import cefi_account, cefi_market, cefi_orders
from cefisim.api.app import CEFI_ROUTES, create_app
from cefisim.api.client import V2024, V2026, CefiClient, RawResponse
from cefisim.api.keys import ServerOptions
from cefisim.api.openapi import CEFI, OPENAPI_PATH, openapi_document, openapi_routes
from cefisim.api.openapi_auth import AUTH_OPERATIONS
from cefisim.api.openapi_control import CONTROL_OPENAPI_PATH, CONTROL_OPERATIONS, control_document
from cefisim.api.openapi_operations import OPERATIONS, described
from cefisim.api.problems import Problem
from cefisim.api.scenario import parse_scenario
from cefisim.api.sim import Simulation
from cefisim.api.validate import DECIMAL_RE, POSITIVE_DECIMAL_RE, check_object
from cefisim.engine.units import parse_rate
from cefisim.api.versions import REMOVAL_NS
from tests.api.test_client import ALICE_KEY, BOB_KEY, DOC, FIAT, running

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
        if "if" in schema and not list(errors(value, schema["if"], where)):
            yield from errors(value, schema.get("then", {}), where)


def check(value: Any, schema: dict[str, Any]) -> None:
    problems = list(errors(value, schema))
    assert not problems, "\n".join(problems[:10])


def test_the_validator_catches_drift() -> None:
    """The checker used below is strict: a renamed, missing or extra field, a wrong type all fail."""
    trade = {"client_id": "100", "instrument_id": "1", "order_id": "3", "trade_price": "1.00", "trade_qty": "1",
             "trade_fee_rate": "0.001", "liq_flag": "MAKER", "match_id": "1", "timestamp": "1" * 19}
    listing = {"oneOf": [{"$ref": "#/components/schemas/TradeRecordPage"},
                         {"type": "array", "items": {"$ref": "#/components/schemas/TradeRecord"}}]}
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
    """The venue's document: every CeFi and Auth route (and nothing else but itself); the control
    plane's: every /_sim/ route, itself included."""
    sim = Simulation(parse_scenario(copy.deepcopy(DOC), "test_openapi"), clock="virtual")
    app = create_app(sim, ServerOptions())
    served = served_operations(app, (CEFI + "/", "/v1/auth/"))
    assert len(served - {("GET", OPENAPI_PATH)}) == len(CEFI_ROUTES) + len(AUTH_OPERATIONS) == 29
    assert documented_operations(DOCUMENT) == served - {("GET", OPENAPI_PATH)}
    assert set(OPERATIONS) == {(m, p) for m, p, _h, _s in CEFI_ROUTES}
    control = control_document("http://127.0.0.1:1")
    assert documented_operations(control) == served_operations(app, ("/_sim/",)) == \
        set(CONTROL_OPERATIONS) | {("GET", CONTROL_OPENAPI_PATH)}
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
    assert all(path.startswith((CEFI + "/", "/v1/auth/")) for path in DOCUMENT["paths"])
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
        "x-svc-auth-token", "x-svc-auth-signature", "x-svc-auth-timestamp", "x-svc-auth-userid"}
    assert all(s["in"] == "header" for s in schemes.values() if s["type"] == "apiKey")
    assert schemes["bearer"] == {"type": "http", "scheme": "bearer",
                                 "description": "an access token from POST /v1/auth/api-key/token"}
    for (method, path, _h, signed) in CEFI_ROUTES:
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
            assert op["security"] == [dict.fromkeys((n for n, s in schemes.items() if s["type"] == "apiKey"), [])]
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
    for helper in set(re.findall(r"\b(_\w+)\(", src)):
        for module in (cefi_orders, cefi_account, cefi_market):
            target = getattr(module, helper, None)
            if inspect.isfunction(target):
                names |= _query_names(target, seen)
    return names


@pytest.mark.parametrize(("method", "path", "handler"), [(m, p, h) for m, p, h, _ in CEFI_ROUTES],
                         ids=[f"{m} {p}" for m, p, _h, _s in CEFI_ROUTES])
def test_documented_parameters_are_those_the_handler_reads(method: str, path: str, handler: Any) -> None:
    op = DOCUMENT["paths"][CEFI + path][method.lower()]
    documented = {resolve(p["$ref"])["name"] for p in op["parameters"]} - {"X-Svc-Version", "version"}
    assert documented == _query_names(handler)


# --- request bodies: the schema accepts exactly what the validator accepts ---------------------

VALID_BODIES = {
    "PostOrderRequest": (cefi_orders.POST_ORDER, {
        "external_id": "ext-1", "info": {
            "msg_id": "m", "parent_id": "0", "client_id": "100", "instrument_id": "1", "qty": "0.5",
            "price": "100.00", "flags": ["USE_AGGRESSIVE_PRICING"], "side": "BUY", "type": "LIMIT", "tif": "IOC",
            "exec_inst_flags": ["ALO", "AON"], "hold_fee_rate": "0.002", "stp": "CANCEL_BOTH"}}),
    "PatchOrderRequest": (cefi_orders.PATCH_ORDER, {
        "id": "5", "external_id": "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4b", "info": {
            "msg_id": "m", "parent_id": "7", "client_id": "100", "prev_modify": "p", "new_qty": "1",
            "new_price": "2.5", "new_type": "MARKET"}}),
    "PostTransferRequest": (cefi_account.POST_TRANSFER, {
        "request": {"amount": "1.5", "asset_id": "2", "client_id": "100", "type": "WITHDRAW",
                    "platform": "FIAT", "instructions": FIAT}}),
    "PatchClientRequest": (cefi_account.PATCH_CLIENT, {"id": "100", "info": {"self_trade_prevention": "NONE"}}),
    "MarketQuoteRequest": (cefi_market.MARKET_QUOTE, {"qty": "10", "instrument_id": "1"}),
    "MarketsQuoteRequest": (cefi_market.MARKETS_QUOTE,
                            {"qty": "10.0", "instrument_id": "1", "side": "SELL", "qty_unit": "QUOTE"}),
}
BAD_VALUES = [None, 1, 0, True, "", "x", "-1", "1.", "0", "01", "1" * 20, "a" * 300, [], ["ALO", "ALO"],
              ["NOPE"], {}, "GTC", "MARKET", "6F1C2B3A-4D5E-4F60-8A7B-9C8D7E6F5A4B", "with space", 1.5,
              "1\n", "1.5\n", "ext\n", "0.000", "00", "0.1234567891", "0.1234567890000"]


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
        if name == "PostOrderRequest" and expected and body["info"].get("hold_fee_rate") is not None:
            expected = parse_rate(body["info"]["hold_fee_rate"]) is not None  # post_order checks it next
        if name == "PostTransferRequest" and expected:  # instructions are checked per platform afterwards
            instr = body["request"]["instructions"]
            table = cefi_account.FIAT_INSTRUCTIONS if body["request"]["platform"] == "FIAT" \
                else cefi_account.CRYPTO_INSTRUCTIONS
            expected = _validator_accepts(table, instr)
        got = not list(errors(body, schema, conditionals=False))
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
    for method, path in (("POST", "/market/quote"), ("POST", "/markets/quote"), ("POST", "/orders"),
                         ("PATCH", "/orders"), ("POST", "/transfers"), ("PATCH", "/clients")):
        answer = DOCUMENT["paths"][CEFI + path][method.lower()]["responses"]["400"]
        assert "business rules: " in answer["description"], (method, path)
        assert answer["content"] == {"application/problem+json": {"schema": {"$ref": "#/components/schemas/ProblemResponse"}}}
    for method, path in (("PATCH", "/orders"), ("DELETE", "/orders/{ref_id}")):
        assert "halted" in DOCUMENT["paths"][CEFI + path][method.lower()]["responses"]["409"]["description"]


def test_cross_field_rules_are_stated() -> None:
    schemas = DOCUMENT["components"]["schemas"]
    limit = {"info": {"client_id": "1", "instrument_id": "1", "qty": "1", "side": "BUY", "type": "LIMIT"}}
    assert list(errors(limit, schemas["PostOrderRequest"]))
    limit["info"]["type"] = "MARKET"
    assert not list(errors(limit, schemas["PostOrderRequest"]))
    modify = {"info": {"client_id": "1", "new_qty": "1"}}
    assert any("anyOf" in e for e in errors(modify, schemas["PatchOrderRequest"]))
    modify["id"] = "3"
    assert any("new_price" in e for e in errors(modify, schemas["PatchOrderRequest"]))
    modify["info"]["new_type"] = "MARKET"
    assert not list(errors(modify, schemas["PatchOrderRequest"]))


# --- real responses validate against the document ----------------------------------------------

def response_schema(method: str, path: str, status: int, content_type: str) -> dict[str, Any]:
    op = DOCUMENT["paths"][CEFI + path][method.lower()]
    assert str(status) in op["responses"], f"{method} {path} answered {status}, which is not documented"
    response = op["responses"][str(status)]
    response = resolve(response["$ref"]) if "$ref" in response else response
    assert content_type in response["content"], f"{method} {path} {status}: content type {content_type}"
    return response["content"][content_type]["schema"]


class Conformance:
    def __init__(self, client: CefiClient) -> None:
        self.client = client
        self.seen: set[tuple[str, str, int]] = set()

    async def call(self, method: str, route: str, path: str | None = None, *, expect: int = 200,
                   **kwargs: Any) -> RawResponse:
        resp = await self.client.raw(method, CEFI + (path or route), **kwargs)
        assert resp.status == expect, (method, path or route, resp.status, resp.json)
        check(resp.json, response_schema(method, route, resp.status, resp.content_type))
        self.seen.add((method, route, resp.status))
        return resp


async def exercise(c: Conformance, bob: CefiClient) -> None:
    """Every operation at least once, with records of every kind the serialisers produce."""
    await c.call("GET", "/health", signed=False)
    await c.call("GET", "/versions", signed=False)
    await c.call("GET", "/assets", params={"name": "BTC"})
    await c.call("GET", "/instruments")
    await c.call("GET", "/market/quote", signed=False)
    await bob.place_order("1", "SELL", "LIMIT", "1", price="30000.00")
    await bob.place_order("1", "BUY", "LIMIT", "1", price="29990.00")
    await c.call("GET", "/market/quote", params={"instrument_id": "1"}, signed=False)
    await c.call("POST", "/market/quote", json={"qty": "1000", "instrument_id": "1"}, signed=False)
    await c.call("POST", "/markets/quote", json={"qty": "0.5", "instrument_id": "1", "side": "BUY",
                                                 "qty_unit": "BASE"}, signed=False)
    await c.call("POST", "/markets/quote", json={"qty": "100", "instrument_id": "1", "side": "SELL",
                                                 "qty_unit": "QUOTE"}, signed=False)
    await c.call("POST", "/markets/quote", expect=400, json={"qty": "500", "instrument_id": "1", "side": "BUY",
                                                             "qty_unit": "BASE"}, signed=False)
    await c.call("GET", "/clients", params={"mnemonic": "alice"})
    await c.call("PATCH", "/clients", json={"id": "100", "info": {"self_trade_prevention": "CANCEL_AGGRESSIVE"}})
    order = {"client_id": "100", "instrument_id": "1", "side": "BUY", "type": "LIMIT", "qty": "0.1",
             "price": "29000.00"}
    rest = (await c.call("POST", "/orders", json={"external_id": "r1", "info": order})).json
    await c.call("POST", "/orders", json={"info": {**order, "price": "29000.001"}})  # REJECTED record
    await c.call("POST", "/orders", json={"info": {**order, "msg_id": "m", "parent_id": "0", "tif": "IOC",
                                                   "exec_inst_flags": ["ALO"], "hold_fee_rate": "0.003",
                                                   "stp": "NONE"}})
    await c.call("POST", "/orders", json={"info": {**order, "type": "MARKET", "price": None, "qty": "0.3",
                                                   "flags": ["USE_AGGRESSIVE_PRICING"]}})
    await c.call("PATCH", "/orders", json={"id": rest["id"], "info": {"client_id": "100", "new_qty": "0.05",
                                                                      "new_price": "29000.00", "msg_id": "x"}})
    await c.call("GET", "/orders/status/{ref_id}", "/orders/status/r1")
    await c.call("GET", "/orders/active")
    await c.call("GET", "/orders/active", params={"id": rest["id"]})
    await c.call("DELETE", "/orders/{ref_id}", f"/orders/{rest['id']}")
    await c.call("DELETE", "/orders/{ref_id}", f"/orders/{rest['id']}", expect=409)
    await c.call("GET", "/orders", params={"timestamp": "9" * 19, "size": "2"})
    await c.call("GET", "/orders/all", params={"size": "3", "skip": "1"})
    await c.call("GET", "/orders/trade")
    await c.call("GET", "/orders/activity", params={"size": "100"})
    await c.call("GET", "/balances")
    await c.call("POST", "/transfers", json={"request": {
        "amount": "10.00", "asset_id": "2", "client_id": "100", "type": "DEPOSIT", "platform": "FIAT",
        "instructions": FIAT}})
    await c.call("POST", "/transfers", json={"request": {
        "amount": "100000", "asset_id": "1", "client_id": "100", "type": "WITHDRAW", "platform": "CRYPTO",
        "instructions": {"address": "bc1q", "network": "bitcoin", "memo": "m"}}})
    await c.call("GET", "/balances/activity", params={"size": "100"})
    await c.call("GET", "/transfers", params={"timestamp": "9" * 19})
    await c.call("GET", "/transfers/active")
    await c.call("GET", "/transfers/active", params={"transfer_id": "1"})
    # problems
    await c.call("GET", "/orders/status/{ref_id}", "/orders/status/77777", expect=404)
    await c.call("GET", "/transfers/active", params={"transfer_id": "999"}, expect=404)
    await c.call("GET", "/orders", expect=400)  # timestamp is required
    await c.call("GET", "/balances", params={"client_id": "200"}, expect=403)
    await c.call("GET", "/balances", expect=401, sign_path="/v1/cefi/other")
    await c.call("POST", "/orders", expect=400, json={"info": {**order, "qty": 1}})
    await c.call("POST", "/orders", expect=413, body=b"{" + b" " * 70_000 + b"}")
    await c.call("PATCH", "/orders", expect=404, json={"id": "99999", "info": {"client_id": "100", "new_qty": "1",
                                                                                "new_price": "1.00"}})
    await c.call("GET", "/health", expect=400, signed=False, params={"version": "v0"})


@pytest.mark.parametrize("version", [V2026, V2024])
async def test_real_responses_validate_against_the_document(version: str) -> None:
    async with running(doc=copy.deepcopy(DOC)) as server:
        async with CefiClient(server.url, key=ALICE_KEY, secret="alice-secret", client_id="100",
                              version=version) as alice, \
                CefiClient(server.url, key=BOB_KEY, secret="bob-secret", client_id="200") as bob:
            c = Conformance(alice)
            await exercise(c, bob)
            server.advance(1)
            await c.call("GET", "/transfers", params={"timestamp": "9" * 19})
    assert {(m, p) for m, p, _ in c.seen} == {(m, p) for m, p, _h, _s in CEFI_ROUTES}
    assert {s for _m, _p, s in c.seen} >= {200, 400, 401, 403, 404, 409, 413}


async def test_demo_scenario_responses_validate() -> None:
    """The shipped demo (agents trading, v2026_01_23 only after 2026-11-01) conforms as well."""
    from cefisim.api.pytest_plugin import DEFAULT_SCENARIO
    from cefisim.api.scenario import load_scenario

    doc = load_scenario(DEFAULT_SCENARIO).doc
    async with running(doc=doc) as server:
        server.advance(120)
        async with server.client() as alice:
            c = Conformance(alice)
            for route in ("/instruments", "/market/quote", "/balances", "/orders/all", "/orders/activity",
                          "/balances/activity", "/orders/trade"):
                await c.call("GET", route)
            await c.call("GET", "/assets", expect=400, params={"version": V2024})


async def test_openapi_json_is_served_for_the_engine_clock_and_the_address_asked() -> None:
    """Before 2026-11-01 (engine clock) both versions (v2024_01_01 deprecated, Deprecation and Sunset
    declared); from then on only v2026_01_23. ``servers`` is the address the request came to;
    ``info.version`` the package's."""
    async with running() as server:
        async with CefiClient(server.url, version=None) as c:
            before = await c.raw("GET", OPENAPI_PATH, signed=False)
            proxied = await c.raw("GET", OPENAPI_PATH, signed=False, headers={"Host": "venue.test:9443"})
            server.advance(int((datetime(2026, 11, 1, tzinfo=timezone.utc)
                                - datetime(2026, 6, 1, 9, tzinfo=timezone.utc)).total_seconds()))
            after = await c.raw("GET", OPENAPI_PATH, signed=False)
            versions_after = await c.raw("GET", CEFI + "/versions", signed=False)
    assert before.status == 200 and before.content_type == "application/json"
    now_before = int(datetime(2026, 6, 1, 9, tzinfo=timezone.utc).timestamp()) * 10**9
    assert before.json == openapi_document(now_before, server.url) == DOCUMENT | {"servers": before.json["servers"]}
    assert before.json["servers"][0]["url"] == server.url
    assert proxied.json["servers"][0]["url"] == "http://venue.test:9443"
    assert before.json["info"]["version"] == cefisim.__version__
    offered = before.json["components"]["parameters"]["VersionHeader"]["schema"]["oneOf"]
    assert offered == [{"const": V2026}, {"const": V2024, "deprecated": True,
                                          "description": "deprecated; removed on 2026-11-01"}]
    assert {"Deprecation", "Sunset"} <= set(before.json["components"]["headers"])

    doc = after.json
    assert doc == openapi_document(REMOVAL_NS, server.url)
    for name in ("VersionHeader", "VersionQuery"):
        assert doc["components"]["parameters"][name]["schema"]["oneOf"] == [{"const": V2026}]
    assert not {"Deprecation", "Sunset"} & set(doc["components"]["headers"])
    assert V2024 not in orjson.dumps(doc["paths"]).decode() + orjson.dumps(doc["components"]).decode()
    listing = doc["paths"][CEFI + "/orders/all"]["get"]["responses"]["200"]["content"]["application/json"]
    assert listing["schema"] == {"$ref": "#/components/schemas/OrderRecordPage"}
    assert versions_after.json["supported_versions"] == [{"version": V2026, "deprecated": False}]
    assert openapi_routes()[0].path == OPENAPI_PATH


@pytest.mark.parametrize("document", [openapi_document(0), openapi_document(REMOVAL_NS),
                                      control_document("http://127.0.0.1:8080")],
                         ids=["CeFi and Auth, both versions", "CeFi and Auth, v2026 only", "control plane"])
def test_documents_pass_a_real_openapi_validator(document: dict[str, Any]) -> None:
    validate_spec = pytest.importorskip("openapi_spec_validator").validate
    validate_spec(document)


async def test_the_control_plane_document_is_served_behind_its_guard() -> None:
    async with running(control_token="sesame") as server:
        async with CefiClient(server.url, version=None) as c:
            refused = await c.raw("GET", CONTROL_OPENAPI_PATH, signed=False)
            served = await c.raw("GET", CONTROL_OPENAPI_PATH, signed=False,
                                 headers={"Authorization": "Bearer sesame", "Host": "sandbox.test:1234"})
    assert refused.status == 401
    assert served.status == 200 and served.json == control_document("http://sandbox.test:1234")
    assert served.json["info"]["version"] == cefisim.__version__


def test_a_real_validator_catches_a_broken_document() -> None:
    validate_spec = pytest.importorskip("openapi_spec_validator").validate
    broken = openapi_document()
    broken["paths"][CEFI + "/health"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] = \
        {"type": "no-such-type"}
    with pytest.raises(Exception, match="no-such-type"):
        validate_spec(broken)


async def test_an_undeclared_method_is_405_whatever_version_it_names() -> None:
    """The route and method are checked before the schema version: 405 with Allow, not 400."""
    async with running() as server:
        server.advance(int((datetime(2026, 11, 2, tzinfo=timezone.utc)
                            - datetime(2026, 6, 1, 9, tzinfo=timezone.utc)).total_seconds()))
        async with CefiClient(server.url, version=None) as c:
            trace = await c.raw("TRACE", CEFI + "/health", signed=False, params={"version": V2024})
            unknown = await c.raw("GET", CEFI + "/nowhere", signed=False, params={"version": V2024})
            refused = await c.raw("GET", CEFI + "/health", signed=False, params={"version": V2024})
    assert trace.status == 405 and trace.headers["Allow"] == "GET, HEAD"
    assert unknown.status == 404
    assert refused.status == 400 and refused.json["error"]["type"].endswith("/unsupported-version")
