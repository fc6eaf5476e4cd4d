"""The served OpenAPI documents: real responses of every operation validate against the venue's
document (both schema versions, the shipped demo), the documents follow the engine clock, the address
asked and the package version, pass a real OpenAPI validator, and the control plane's is served
behind its guard. The document-versus-code checks are in test_openapi.py."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

import cefisim
from cefisim.api.client import V2024, V2026, CefiClient, RawResponse
from cefisim.api.edge.versions import REMOVAL_NS
from cefisim.api.web.app.openapi_documents import CEFI, OPENAPI_PATH, openapi_document, openapi_routes
from cefisim.api.web.cefi.route_table import CEFI_ROUTES
from cefisim.api.web.control.openapi import CONTROL_OPENAPI_PATH, control_document
from tests.api.client.test_client import ALICE_KEY, BOB_KEY, DOC, FIAT, running
from tests.api.web.app.test_openapi import DOCUMENT, check, errors, resolve

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

    async def call(
        self, method: str, route: str, path: str | None = None, *, expect: int = 200, **kwargs: Any
    ) -> RawResponse:
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
    await c.call(
        "POST",
        "/markets/quote",
        json={"qty": "0.5", "instrument_id": "1", "side": "BUY", "qty_unit": "BASE"},
        signed=False,
    )
    await c.call(
        "POST",
        "/markets/quote",
        json={"qty": "100", "instrument_id": "1", "side": "SELL", "qty_unit": "QUOTE"},
        signed=False,
    )
    await c.call(
        "POST",
        "/markets/quote",
        expect=400,
        json={"qty": "500", "instrument_id": "1", "side": "BUY", "qty_unit": "BASE"},
        signed=False,
    )
    await c.call("GET", "/clients", params={"mnemonic": "alice"})
    await c.call("PATCH", "/clients", json={"id": "100", "info": {"self_trade_prevention": "CANCEL_AGGRESSIVE"}})
    order = {
        "client_id": "100",
        "instrument_id": "1",
        "side": "BUY",
        "type": "LIMIT",
        "qty": "0.1",
        "price": "29000.00",
    }
    rest = (await c.call("POST", "/orders", json={"external_id": "r1", "info": order})).json
    await c.call("POST", "/orders", json={"info": {**order, "price": "29000.001"}})  # REJECTED record
    await c.call(
        "POST",
        "/orders",
        json={
            "info": {
                **order,
                "msg_id": "m",
                "parent_id": "0",
                "tif": "IOC",
                "exec_inst_flags": ["ALO"],
                "hold_fee_rate": "0.003",
                "stp": "NONE",
            }
        },
    )
    await c.call(
        "POST",
        "/orders",
        json={"info": {**order, "type": "MARKET", "price": None, "qty": "0.3", "flags": ["USE_AGGRESSIVE_PRICING"]}},
    )
    await c.call(
        "PATCH",
        "/orders",
        json={
            "id": rest["id"],
            "info": {"client_id": "100", "new_qty": "0.05", "new_price": "29000.00", "msg_id": "x"},
        },
    )
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
    await c.call(
        "POST",
        "/transfers",
        json={
            "request": {
                "amount": "10.00",
                "asset_id": "2",
                "client_id": "100",
                "type": "DEPOSIT",
                "platform": "FIAT",
                "instructions": FIAT,
            }
        },
    )
    await c.call(
        "POST",
        "/transfers",
        json={
            "request": {
                "amount": "100000",
                "asset_id": "1",
                "client_id": "100",
                "type": "WITHDRAW",
                "platform": "CRYPTO",
                "instructions": {"address": "bc1q", "network": "bitcoin", "memo": "m"},
            }
        },
    )
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
    await c.call(
        "PATCH",
        "/orders",
        expect=404,
        json={"id": "99999", "info": {"client_id": "100", "new_qty": "1", "new_price": "1.00"}},
    )
    await c.call("GET", "/health", expect=400, signed=False, params={"version": "v0"})


@pytest.mark.parametrize("version", [V2026, V2024])
async def test_real_responses_validate_against_the_document(version: str) -> None:
    async with (
        running(doc=copy.deepcopy(DOC)) as server,
        CefiClient(server.url, key=ALICE_KEY, secret="alice-secret", client_id="100", version=version) as alice,
        CefiClient(server.url, key=BOB_KEY, secret="bob-secret", client_id="200") as bob,
    ):
        c = Conformance(alice)
        await exercise(c, bob)
        server.advance(1)
        await c.call("GET", "/transfers", params={"timestamp": "9" * 19})
    assert {(m, p) for m, p, _ in c.seen} == {(m, p) for m, p, _h, _s in CEFI_ROUTES}
    assert {s for _m, _p, s in c.seen} >= {200, 400, 401, 403, 404, 409, 413}


async def test_demo_scenario_responses_validate() -> None:
    """The shipped demo (agents trading, v2026_01_23 only after 2026-11-01) conforms as well."""
    from cefisim.api.formats.scenario import load_scenario
    from cefisim.api.pytest_plugin import DEFAULT_SCENARIO

    doc = load_scenario(DEFAULT_SCENARIO).doc
    async with running(doc=doc) as server:
        server.advance(120)
        async with server.client() as alice:
            c = Conformance(alice)
            for route in (
                "/instruments",
                "/market/quote",
                "/balances",
                "/orders/all",
                "/orders/activity",
                "/balances/activity",
                "/orders/trade",
            ):
                await c.call("GET", route)
            await c.call("GET", "/assets", expect=400, params={"version": V2024})


async def test_openapi_json_is_served_for_the_engine_clock_and_the_address_asked() -> None:
    """Before 2026-11-01 (engine clock) both versions (v2024_01_01 deprecated, Deprecation and Sunset
    declared); from then on only v2026_01_23. ``servers`` is the address the request came to;
    ``info.version`` the package's."""
    async with running() as server, CefiClient(server.url, version=None) as c:
        before = await c.raw("GET", OPENAPI_PATH, signed=False)
        proxied = await c.raw("GET", OPENAPI_PATH, signed=False, headers={"Host": "venue.test:9443"})
        server.advance(int((datetime(2026, 11, 1, tzinfo=UTC) - datetime(2026, 6, 1, 9, tzinfo=UTC)).total_seconds()))
        after = await c.raw("GET", OPENAPI_PATH, signed=False)
        versions_after = await c.raw("GET", CEFI + "/versions", signed=False)
    assert before.status == 200 and before.content_type == "application/json"
    now_before = int(datetime(2026, 6, 1, 9, tzinfo=UTC).timestamp()) * 10**9
    assert before.json == openapi_document(now_before, server.url) == DOCUMENT | {"servers": before.json["servers"]}
    assert before.json["servers"][0]["url"] == server.url
    assert proxied.json["servers"][0]["url"] == "http://venue.test:9443"
    assert before.json["info"]["version"] == cefisim.__version__
    offered = before.json["components"]["parameters"]["VersionHeader"]["schema"]
    assert offered["enum"] == [V2026, V2024] and offered["default"] == V2024
    assert offered["oneOf"] == [
        {"const": V2026},
        {"const": V2024, "deprecated": True, "description": "deprecated; removed on 2026-11-01"},
    ]
    assert {"Deprecation", "Sunset"} <= set(before.json["components"]["headers"])

    doc = after.json
    assert doc == openapi_document(REMOVAL_NS, server.url)
    for name in ("VersionHeader", "VersionQuery"):
        assert doc["components"]["parameters"][name]["schema"]["oneOf"] == [{"const": V2026}]
        assert doc["components"]["parameters"][name]["schema"]["enum"] == [V2026]
    assert not {"Deprecation", "Sunset"} & set(doc["components"]["headers"])
    assert V2024 not in orjson.dumps(doc["paths"]).decode() + orjson.dumps(doc["components"]).decode()
    listing = doc["paths"][CEFI + "/orders/all"]["get"]["responses"]["200"]["content"]["application/json"]
    assert listing["schema"] == {"$ref": "#/components/schemas/OrderRecordPage"}
    assert versions_after.json["supported_versions"] == [{"version": V2026, "deprecated": False}]
    assert openapi_routes()[0].path == OPENAPI_PATH


@pytest.mark.parametrize(
    "document",
    [openapi_document(0), openapi_document(REMOVAL_NS), control_document("http://127.0.0.1:8080")],
    ids=["CeFi and Auth, both versions", "CeFi and Auth, v2026 only", "control plane"],
)
def test_documents_pass_a_real_openapi_validator(document: dict[str, Any]) -> None:
    validate_spec = pytest.importorskip("openapi_spec_validator").validate
    validate_spec(document)


async def test_the_control_plane_document_is_served_behind_its_guard() -> None:
    async with running(control_token="sesame") as server, CefiClient(server.url, version=None) as c:
        refused = await c.raw("GET", CONTROL_OPENAPI_PATH, signed=False)
        served = await c.raw(
            "GET",
            CONTROL_OPENAPI_PATH,
            signed=False,
            headers={"Authorization": "Bearer sesame", "Host": "sandbox.test:1234"},
        )
    assert refused.status == 401
    assert served.status == 200 and served.json == control_document("http://sandbox.test:1234")
    assert served.json["info"]["version"] == cefisim.__version__


def test_a_real_validator_catches_a_broken_document() -> None:
    validate_spec = pytest.importorskip("openapi_spec_validator").validate
    broken = openapi_document()
    broken["paths"][CEFI + "/health"]["get"]["responses"]["200"]["content"]["application/json"]["schema"] = {
        "type": "no-such-type"
    }
    with pytest.raises(Exception, match="no-such-type"):
        validate_spec(broken)


async def test_an_undeclared_method_is_405_whatever_version_it_names() -> None:
    """The route and method are checked before the schema version: 405 with Allow, not 400."""
    async with running() as server:
        server.advance(int((datetime(2026, 11, 2, tzinfo=UTC) - datetime(2026, 6, 1, 9, tzinfo=UTC)).total_seconds()))
        async with CefiClient(server.url, version=None) as c:
            trace = await c.raw("TRACE", CEFI + "/health", signed=False, params={"version": V2024})
            unknown = await c.raw("GET", CEFI + "/nowhere", signed=False, params={"version": V2024})
            refused = await c.raw("GET", CEFI + "/health", signed=False, params={"version": V2024})
    assert trace.status == 405 and trace.headers["Allow"] == "GET, HEAD"
    assert unknown.status == 404
    assert refused.status == 400 and refused.json["error"]["type"].endswith("/unsupported-version")


CONTROL_VALUES = [
    0,
    1,
    5,
    400,
    599,
    600,
    60_000,
    60_001,
    1_000_000,
    1_000_001,
    -1,
    True,
    None,
    "0",
    "1",
    "1.5",
    "1.0005",
    "1.5000",
    "0.5",
    "1.0",
    "1.000001",
    "0.1234567",
    "01",
    "",
    "x",
    "450",
    "99999999",
    "0450",
    "060000",
    "1000000.0",
]


@pytest.mark.parametrize(
    ("path", "schema", "field", "base"),
    [
        ("/_sim/faults", "FaultRequest", "count", {"status": 503}),
        ("/_sim/faults", "FaultRequest", "share", {"status": 503}),
        ("/_sim/faults", "FaultRequest", "status", {"count": 1}),
        ("/_sim/faults", "FaultRequest", "delay_ms", {"count": 1}),
        ("/_sim/latency", "LatencyRequest", "entry_ms", {}),
        ("/_sim/settlement-delay", "SettlementDelayRequest", "ms", {}),
        ("/_sim/clock/advance", "AdvanceRequest", "seconds", {}),
    ],
)
async def test_control_schemas_admit_what_the_control_plane_parses(
    path: str, schema: str, field: str, base: dict[str, Any]
) -> None:
    """A value the control document's schema admits is applied (200); one it refuses is a 400."""
    body_schema = control_document("http://127.0.0.1:1")["components"]["schemas"][schema]
    async with running() as server, CefiClient(server.url, version=None) as c:
        for value in CONTROL_VALUES:
            if field == "share" and not isinstance(value, str):
                continue  # share's schema is a string; numbers are refused by both (covered by status)
            body = {**base, field: value}
            admitted = not list(errors(body, body_schema))
            answer = await c.raw("POST", path, json=body, signed=False)
            assert answer.status == (200 if admitted else 400), (body, answer.status, answer.json)


async def test_a_zero_amount_is_refused_by_the_schema_rule() -> None:
    """A zero amount to move or quote is a syntactic 400 naming the field (the schema's positive decimal),
    before any instrument or asset is looked up."""
    async with (
        running(doc=copy.deepcopy(DOC)) as server,
        CefiClient(server.url, key=ALICE_KEY, secret="alice-secret", client_id="100", version=V2026) as alice,
    ):
        answers = [
            ("qty", await alice.raw("POST", CEFI + "/market/quote", json={"qty": "0.00", "instrument_id": "9"})),
            (
                "qty",
                await alice.raw(
                    "POST",
                    CEFI + "/markets/quote",
                    json={"qty": "0", "instrument_id": "9", "side": "BUY", "qty_unit": "BASE"},
                ),
            ),
            (
                "request.amount",
                await alice.raw(
                    "POST",
                    CEFI + "/transfers",
                    json={
                        "request": {
                            "amount": "0.000",
                            "asset_id": "99",
                            "client_id": "100",
                            "type": "DEPOSIT",
                            "platform": "FIAT",
                            "instructions": FIAT,
                        }
                    },
                ),
            ),
        ]
    for field, answer in answers:
        assert answer.status == 400
        assert answer.json["error"]["detail"] == f"{field}: must be a decimal string greater than zero"
