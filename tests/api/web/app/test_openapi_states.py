"""Every response, in every state the engine can reach, validates against the document the server serves
at that moment (issue #12 item 7).

hypothesis drives one venue through random sequences of what changes its state: orders of every type,
time in force, execution flag and self-trade setting from two clients (so they trade, self-trade,
rest, fill, expire), modifications and cancels, entry/modify/cancel latency (orders acknowledged late,
CANCEL_PENDING, late ALO_WOULD_TRADE/NO_LIQUIDITY/INSTRUMENT_HALTED cancels), instrument halts and
disables, transfers with a settlement delay, paper funds, and clock jumps (24-hour windows, settlement,
the 2026-11-01 removal of v2024_01_01 in the middle of a run). Each write's response and, after the
sequence, a read of every CeFi operation under each schema version served then, is checked against
``GET /v1/cefi/openapi.json`` fetched from the server for the current era: status code declared,
content type declared, body valid for that status's schema (schemathesis' validator), and every
declared header valid for its schema (``jsonschema``); the control plane's reads of the same state
(book, trades, latency, health, invariants) against ``GET /_sim/openapi.json``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cefisim.api.edge.signing import sign
from cefisim.api.edge.versions import REMOVAL_NS, V2024, V2026
from cefisim.api.web.app.openapi_documents import OPENAPI_PATH
from cefisim.api.web.control.openapi import CONTROL_OPENAPI_PATH
from cefisim.api.web.server.limit_flags import parse_rate_limits
from cefisim.engine.commands import (
    AdvanceClock,
    PaperFunds,
    SetInstrumentStatus,
    SetLatency,
    SetSettlementDelay,
)
from cefisim.engine.vocabulary import InstrumentStatus
from tests.api.conftest import SECRETS
from tests.fuzz.support import Served, examples, fuzz_doc, serve_sim

schemathesis = pytest.importorskip("schemathesis")
requests = pytest.importorskip("requests")
jsonschema = pytest.importorskip("jsonschema")

INSTRUMENT_STATUSES = tuple(InstrumentStatus)

CEFI = "/v1/cefi"
START = "2026-10-31T23:58:00Z"  # two minutes before v2024_01_01 is removed
FIAT = {
    "fiat_account_id": "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4b",
    "identity_id": "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4c",
    "account_id": "6f1c2b3a-4d5e-4f60-8a7b-9c8d7e6f5a4d",
    "includes_fee": False,
}


class Conformance:
    """Signed calls to the served app, each response checked against the document served now."""

    def __init__(self, served: Served, session: requests.Session) -> None:
        self.served = served
        self.session = session
        #: removed? -> the schemathesis schema of that era's venue document; "control" -> the control plane's
        self.documents: dict[bool | str, Any] = {}
        self.seen: set[tuple[str, str, int]] = set()

    def removed(self) -> bool:
        """Whether v2024_01_01 is gone at the engine's time now."""
        return self.served.sim.now_ns() >= REMOVAL_NS

    def schema(self) -> Any:
        era = self.removed()
        if era not in self.documents:
            raw = self.session.get(self.served.base + OPENAPI_PATH, timeout=10).json()
            self.documents[era] = schemathesis.openapi.from_dict(raw)
        return self.documents[era]

    def call(
        self,
        method: str,
        route: str,
        path: str | None = None,
        *,
        client: int = 100,
        json: Any = None,
        params: dict[str, str] | None = None,
        version: str | None = None,
    ) -> Any:
        path = CEFI + (path or route)
        body = orjson.dumps(json) if json is not None else b""
        key, secret = SECRETS[client]
        ts = str(int(time.time()))
        headers = {
            "x-svc-auth-token": key,
            "x-svc-auth-timestamp": ts,
            "x-svc-auth-userid": str(client),
            "x-svc-auth-signature": sign(secret, ts, method, path, body),
        }
        if json is not None:
            headers["Content-Type"] = "application/json"
        if version is not None:
            headers["X-Svc-Version"] = version
        response = self.session.request(
            method, self.served.base + path, data=body or None, params=params, headers=headers, timeout=10
        )
        self.check(method, CEFI + route, response)
        return response.json()

    def control(self, route: str, path: str | None = None) -> None:
        """A read of the control plane, checked against its own document (fetched once)."""
        if "control" not in self.documents:
            raw = self.session.get(self.served.base + CONTROL_OPENAPI_PATH, timeout=10).json()
            self.documents["control"] = schemathesis.openapi.from_dict(raw)
        response = self.session.get(self.served.base + (path or route), timeout=10)
        self.check("GET", route, response, self.documents["control"])

    def check(self, method: str, route: str, response: requests.Response, schema: Any = None) -> None:
        schema = schema or self.schema()
        declared = schema.raw_schema["paths"][route][method.lower()]["responses"]
        status = str(response.status_code)
        assert status in declared, f"{method} {route} answered {status}: not declared ({response.text[:300]})"
        schema[route][method].validate_response(response)  # content type and body, for that status
        definition = _resolve(schema.raw_schema, declared[status])
        for name, header in definition.get("headers", {}).items():
            header = _resolve(schema.raw_schema, header)
            value = response.headers.get(name)
            if value is None:
                assert not header.get("required"), f"{method} {route} {status}: {name} missing"
            else:
                jsonschema.validate(value, header["schema"])
        self.seen.add((method, route, response.status_code))


def _resolve(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = root
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = target
    return node


# --- what can happen --------------------------------------------------------------------------------

CLIENTS = st.sampled_from([100, 101])
PRICES = st.sampled_from(["49990.00", "50000.00", "50010.00", "52000.00", "47000.00"])
QTYS = st.sampled_from(["0.0001", "0.01", "0.05", "0.5", "20"])
ORDER = st.fixed_dictionaries(
    {
        "client": CLIENTS,
        "side": st.sampled_from(["BUY", "SELL"]),
        "type": st.sampled_from(["LIMIT", "MARKET"]),
        "qty": QTYS,
        "price": PRICES,
        "tif": st.sampled_from(["GTC", "IOC"]),
        "exec": st.sampled_from([[], ["ALO"], ["AON"]]),
        "aggressive": st.booleans(),
        "stp": st.sampled_from([None, "NONE", "CANCEL_AGGRESSIVE", "CANCEL_BOTH", "INVALID"]),
    }
)
ACTIONS = st.one_of(
    st.tuples(st.just("order"), ORDER),
    st.tuples(st.just("modify"), st.integers(0, 7), QTYS, PRICES, st.booleans()),
    st.tuples(st.just("cancel"), st.integers(0, 7)),
    st.tuples(st.just("latency"), st.sampled_from([0, 0, 5, 200]), st.sampled_from([0, 5]), st.sampled_from([0, 5])),
    st.tuples(st.just("status"), st.sampled_from(list(INSTRUMENT_STATUSES))),
    st.tuples(
        st.just("transfer"),
        st.sampled_from(["DEPOSIT", "WITHDRAW"]),
        st.sampled_from(["1", "5000000"]),
        st.sampled_from([0, 1000]),
    ),
    st.tuples(st.just("funds"), st.booleans()),
    st.tuples(st.just("advance"), st.sampled_from([0.001, 0.3, 90, 86_400])),
    st.tuples(st.just("stp"), st.sampled_from(["NONE", "CANCEL_AGGRESSIVE", "CANCEL_BOTH"])),
)


def apply(c: Conformance, action: tuple[Any, ...], orders: list[tuple[int, str]]) -> None:
    sim = c.served.sim
    kind = action[0]
    if kind == "order":
        o = action[1]
        info: dict[str, Any] = {
            "client_id": str(o["client"]),
            "instrument_id": "1",
            "side": o["side"],
            "type": o["type"],
            "qty": o["qty"],
            "tif": o["tif"],
            "exec_inst_flags": o["exec"],
        }
        if o["type"] == "LIMIT":
            info["price"] = o["price"]
        if o["aggressive"]:
            info["flags"] = ["USE_AGGRESSIVE_PRICING"]
        if o["stp"] is not None:
            info["stp"] = o["stp"]
        record = c.call("POST", "/orders", client=o["client"], json={"info": info})
        orders.append((o["client"], record["id"]))
    elif kind in ("modify", "cancel") and orders:
        client, order_id = orders[action[1] % len(orders)]
        if kind == "cancel":
            c.call("DELETE", "/orders/{ref_id}", f"/orders/{order_id}", client=client)
        else:
            modify: dict[str, Any] = {"client_id": str(client), "new_qty": action[2]}
            if action[4]:
                modify["new_type"] = "MARKET"
            else:
                modify["new_price"] = action[3]
            c.call("PATCH", "/orders", client=client, json={"id": order_id, "info": modify})
    elif kind == "latency":
        c.served.on_loop(lambda: sim.submit(SetLatency(*(ms * 1_000_000 for ms in action[1:]))))
    elif kind == "status":
        c.served.on_loop(lambda: sim.submit(SetInstrumentStatus(1, action[1])))
    elif kind == "transfer":
        c.served.on_loop(lambda: sim.submit(SetSettlementDelay(action[3] * 1_000_000)))
        c.call(
            "POST",
            "/transfers",
            json={
                "request": {
                    "amount": action[2],
                    "asset_id": "2",
                    "client_id": "100",
                    "type": action[1],
                    "platform": "FIAT",
                    "instructions": FIAT,
                }
            },
        )
    elif kind == "funds":
        c.served.on_loop(lambda: sim.submit(PaperFunds(100, 1, "0.5", remove=action[1])))
    elif kind == "advance":
        c.served.on_loop(lambda: sim.submit(AdvanceClock(sim.now_ns() + int(action[1] * 1e9))))
    elif kind == "stp":
        c.call("PATCH", "/clients", json={"id": "100", "info": {"self_trade_prevention": action[1]}})


def read_everything(c: Conformance, orders: list[tuple[int, str]]) -> None:
    """Every read operation, under every schema version served now (and the default), and the control
    plane's reads of the same state."""
    for route in ("/_sim/health", "/_sim/clock", "/_sim/latency", "/_sim/invariants", "/_sim/faults", "/_sim/requests"):
        c.control(route)
    for route in ("/_sim/book/{instrument_id}", "/_sim/trades/{instrument_id}"):
        c.control(route, route.replace("{instrument_id}", "1"))
    before = str(c.served.sim.now_ns() + 1).zfill(19)
    for version in (None, V2026) if c.removed() else (None, V2024, V2026):
        for route in (
            "/health",
            "/versions",
            "/assets",
            "/instruments",
            "/market/quote",
            "/clients",
            "/orders/all",
            "/orders/active",
            "/orders/trade",
            "/orders/activity",
            "/balances",
            "/balances/activity",
            "/transfers/active",
        ):
            c.call("GET", route, version=version)
        for route in ("/orders", "/transfers"):
            c.call("GET", route, params={"timestamp": before}, version=version)
        for client, order_id in orders[-3:]:
            c.call("GET", "/orders/status/{ref_id}", f"/orders/status/{order_id}", client=client, version=version)
        c.call("POST", "/market/quote", json={"qty": "100", "instrument_id": "1"}, version=version)
        for unit in ("BASE", "QUOTE"):
            c.call(
                "POST",
                "/markets/quote",
                json={"qty": "0.01", "instrument_id": "1", "side": "BUY", "qty_unit": unit},
                version=version,
            )


@pytest.fixture(scope="module")
def conformance() -> Iterator[Conformance]:
    with serve_sim(fuzz_doc(start=START)) as served, requests.Session() as session:
        yield Conformance(served, session)


@given(actions=st.lists(ACTIONS, min_size=1, max_size=14))
@settings(
    max_examples=examples(20),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_every_response_in_every_reachable_state_validates(
    conformance: Conformance, actions: list[tuple[Any, ...]]
) -> None:
    c = conformance
    c.served.on_loop(c.served.sim.reset)
    orders: list[tuple[int, str]] = []
    for side, price in (("SELL", "50005.00"), ("BUY", "49995.00")):
        record = c.call(
            "POST",
            "/orders",
            client=101,
            json={
                "info": {
                    "client_id": "101",
                    "instrument_id": "1",
                    "side": side,
                    "type": "LIMIT",
                    "qty": "0.2",
                    "price": price,
                }
            },
        )
        orders.append((101, record["id"]))
    for action in actions:
        apply(c, action, orders)
    read_everything(c, orders)


def test_the_run_reaches_both_eras_and_the_late_cancel_reasons(conformance: Conformance) -> None:
    """The exploration above is not vacuous: a fixed walk through the states the issue names (orders
    acknowledged late and cancelled for each reason the engine gives then) validates too."""
    c = conformance
    sim = c.served.sim
    c.served.on_loop(sim.reset)
    orders: list[tuple[int, str]] = []
    seen_reasons: set[str] = set()
    place = {"instrument_id": "1", "qty": "0.01", "type": "LIMIT"}
    ask = c.call(
        "POST", "/orders", client=101, json={"info": {**place, "client_id": "101", "side": "SELL", "price": "50010.00"}}
    )
    c.served.on_loop(lambda: sim.submit(SetLatency(5_000_000, 0, 0)))
    # an ALO order that would not trade when entered, and would once acknowledged (the ask moved)
    alo = c.call(
        "POST",
        "/orders",
        json={"info": {**place, "client_id": "100", "side": "BUY", "price": "50000.00", "exec_inst_flags": ["ALO"]}},
    )
    c.call(
        "PATCH",
        "/orders",
        client=101,
        json={"id": ask["id"], "info": {"client_id": "101", "new_qty": "0.01", "new_price": "50000.00"}},
    )
    c.served.on_loop(lambda: sim.submit(AdvanceClock(sim.now_ns() + 10_000_000)))
    seen_reasons.add(c.call("GET", "/orders/status/{ref_id}", f"/orders/status/{alo['id']}")["cancel_reason"])
    # orders acknowledged after their instrument was halted or disabled
    for status in ("HALTED", "DISABLED"):
        record = c.call(
            "POST", "/orders", json={"info": {**place, "client_id": "100", "side": "BUY", "price": "49000.00"}}
        )
        c.served.on_loop(lambda status=status: sim.submit(SetInstrumentStatus(1, status)))
        c.served.on_loop(lambda: sim.submit(AdvanceClock(sim.now_ns() + 10_000_000)))
        after = c.call("GET", "/orders/status/{ref_id}", f"/orders/status/{record['id']}")
        seen_reasons.add(after["cancel_reason"])
        c.served.on_loop(lambda: sim.submit(SetInstrumentStatus(1, "ACTIVE")))
        orders.append((100, record["id"]))
    # a MARKET order whose liquidity is gone by the time it is acknowledged
    ask = c.call(
        "POST", "/orders", client=101, json={"info": {**place, "client_id": "101", "side": "SELL", "price": "50000.00"}}
    )
    c.served.on_loop(lambda: sim.submit(AdvanceClock(sim.now_ns() + 10_000_000)))
    record = c.call("POST", "/orders", json={"info": {**place, "client_id": "100", "side": "BUY", "type": "MARKET"}})
    c.call("DELETE", "/orders/{ref_id}", f"/orders/{ask['id']}", client=101)
    c.served.on_loop(lambda: sim.submit(AdvanceClock(sim.now_ns() + 10_000_000)))
    seen_reasons.add(c.call("GET", "/orders/status/{ref_id}", f"/orders/status/{record['id']}")["cancel_reason"])
    assert seen_reasons == {"ALO_WOULD_TRADE", "INSTRUMENT_HALTED", "INSTRUMENT_DISABLED", "NO_LIQUIDITY"}
    read_everything(c, orders)
    assert not c.removed()
    c.served.on_loop(lambda: sim.submit(AdvanceClock(REMOVAL_NS + 1)))
    read_everything(c, orders)
    assert set(c.documents) == {False, True, "control"}


def test_a_rate_limited_answer_is_as_documented() -> None:
    """429 with a required ``Retry-After`` (whole seconds), declared on every CeFi operation."""
    with (
        serve_sim(fuzz_doc(start=START), rate_limits=parse_rate_limits(["0.001:1"])) as served,
        requests.Session() as session,
    ):
        c = Conformance(served, session)
        c.call("GET", "/balances")
        c.call(
            "POST",
            "/orders",
            json={
                "info": {
                    "client_id": "100",
                    "instrument_id": "1",
                    "side": "BUY",
                    "type": "LIMIT",
                    "qty": "0.01",
                    "price": "1.00",
                }
            },
        )
    assert {(m, s) for m, _r, s in c.seen} == {("GET", 200), ("POST", 429)}
