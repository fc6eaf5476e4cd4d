"""Hostile input on every CeFi direct route: never a 5xx, every 4xx a problem, a 4xx changes nothing.

Each route of ``api.web.cefi.route_table.CEFI_ROUTES`` (so a new route is fuzzed without touching this file) gets
arbitrary bodies (mostly near-valid mutations of a valid one), query strings, extra headers and path
segments, sent over a real socket. Signed routes are signed correctly for the body actually sent
(so the request reaches the validators and the engine), or signed for the wrong client, stale, with a
bad signature, or not at all. Before each request the state (``sim.snapshot()["objects"]``) is taken;
after a 4xx it must be unchanged. Business rejections of ``POST /orders`` are a 200 with a REJECTED
record and do change the state, as they should.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cefisim.api.web.cefi.route_table import CEFI_ROUTES
from cefisim.engine.commands import PlaceOrder
from tests.fuzz.strategies import extra_headers, json_body, path_segment, query_string
from tests.fuzz.support import Client, Served, check_answer, examples, serve_sim, signed_headers

FUZZ = settings(
    max_examples=examples(25),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
UUID = "0f8fad5b-d9cb-469f-a165-70867728950e"
MAX_ORDERS = 60  # reset the venue past this many orders: snapshots stay cheap

TEMPLATES: dict[tuple[str, str], Any] = {
    ("POST", "/orders"): {
        "external_id": "x1",
        "info": {
            "client_id": "100",
            "instrument_id": "1",
            "side": "BUY",
            "type": "LIMIT",
            "qty": "0.01",
            "price": "49000.00",
            "tif": "GTC",
            "stp": "NONE",
            "exec_inst_flags": ["ALO"],
            "msg_id": "m",
            "parent_id": "0",
            "hold_fee_rate": "0.002",
        },
    },
    ("PATCH", "/orders"): {
        "external_id": "b1",
        "info": {"client_id": "100", "new_qty": "0.005", "new_price": "49001.00"},
    },
    ("PATCH", "/clients"): {"id": "100", "info": {"self_trade_prevention": "CANCEL_BOTH"}},
    ("POST", "/transfers"): {
        "request": {
            "amount": "1.00",
            "asset_id": "2",
            "client_id": "100",
            "type": "WITHDRAW",
            "platform": "FIAT",
            "instructions": {"fiat_account_id": UUID, "identity_id": UUID, "account_id": UUID, "includes_fee": False},
        }
    },
    ("POST", "/market/quote"): {"qty": "100.00", "instrument_id": "1"},
    ("POST", "/markets/quote"): {"qty": "0.01", "instrument_id": "1", "side": "BUY", "qty_unit": "BASE"},
}
REF_IDS = ["1", "2", "3", "b1", "s1", UUID, "999999"]
SIGNING = ["valid", "valid", "valid", "other-client", "none", "stale", "future", "bad-signature", "wrong-key"]


def _seed(served: Served) -> None:
    """Keep a small venue with a resting buy (``b1``, id 1 after a reset) and sell (``s1``)."""

    def run() -> None:
        sim = served.sim
        if sim.venue.next_order_id <= MAX_ORDERS:
            return
        sim.reset()
        sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.01", "49000.00", external_id="b1"))
        sim.submit(PlaceOrder(101, 1, "SELL", "LIMIT", "0.01", "51000.00", external_id="s1"))

    served.on_loop(run)


@pytest.fixture(scope="module")
def cefi() -> Iterator[tuple[Served, Client]]:
    with serve_sim() as served:
        served.sim.venue.next_order_id = MAX_ORDERS + 1  # first _seed resets and seeds (the loop is idle)
        client = Client(served.port)
        try:
            yield served, client
        finally:
            client.close()


def _auth(mode: str, method: str, raw_path: str, body: bytes) -> dict[str, str]:
    if mode == "none":
        return {}
    if mode == "other-client":
        return signed_headers(101, method, raw_path, body)
    if mode == "stale":
        return signed_headers(100, method, raw_path, body, ts=_now() - 100)
    if mode == "future":
        return signed_headers(100, method, raw_path, body, ts=_now() + 100)
    if mode == "bad-signature":
        return {**signed_headers(100, method, raw_path, body), "x-svc-auth-signature": "AAAA" * 11}
    if mode == "wrong-key":
        headers = signed_headers(101, method, raw_path, body)
        return {**headers, "x-svc-auth-userid": "100"}
    return signed_headers(100, method, raw_path, body)


def _now() -> int:
    import time

    return int(time.time())


def exchange(
    served: Served, client: Client, method: str, raw_path: str, query: str, body: bytes, headers: dict[str, str]
) -> None:
    """Send one request; check the answer, and that a 4xx left the state alone."""
    _seed(served)
    before = served.snapshot()
    if body:
        headers.setdefault("Content-Type", "application/json")
    reply = client.request(method, raw_path + (f"?{query}" if query else ""), body, headers)
    check_answer(method, raw_path, reply)
    if 400 <= reply.status < 500:
        assert served.snapshot() == before, (method, raw_path, reply.status, reply.body[:300])
    elif reply.status == 200 and reply.content_type == "application/json" and method != "HEAD":
        reply.json()


def _fill(path: str, segment: str) -> str:
    return path.replace("{ref_id}", segment)


# Strategies are built once: hypothesis analyses each new strategy object, which costs more than a request.
BODIES = {
    (m, p): json_body(TEMPLATES[(m, p)]) if (m, p) in TEMPLATES else st.one_of(st.just(b""), json_body(None))
    for m, p, _, _ in CEFI_ROUTES
}
REF_ID = path_segment(REF_IDS)
QUERY = query_string()
HEADERS = extra_headers()
SIGNED_MODES = st.sampled_from(SIGNING)
PUBLIC_MODES = st.sampled_from(["none", "none", "valid"])
ANY_BODY = json_body(None)


@pytest.mark.parametrize(
    ("method", "path", "signed"),
    [(m, p, s) for m, p, _, s in CEFI_ROUTES],
    ids=[f"{m} {p}" for m, p, _, _ in CEFI_ROUTES],
)
@FUZZ
@given(data=st.data())
def test_cefi_route_survives_hostile_input(
    cefi: tuple[Served, Client], method: str, path: str, signed: bool, data: st.DataObject
) -> None:
    served, client = cefi
    raw_path = "/v1/cefi" + _fill(path, data.draw(REF_ID, label="ref_id"))
    body = data.draw(BODIES[(method, path)], label="body")
    query = data.draw(QUERY, label="query")
    mode = data.draw(SIGNED_MODES if signed else PUBLIC_MODES, label="signing")
    headers = {**data.draw(HEADERS, label="headers"), **_auth(mode, method, raw_path, body)}
    exchange(served, client, method, raw_path, query, body, headers)


OTHER_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
PATHS = sorted({p for _, p, _, _ in CEFI_ROUTES})


@pytest.mark.parametrize("path", PATHS)
@settings(FUZZ, max_examples=examples(8))
@given(data=st.data())
def test_methods_a_route_does_not_serve_are_405_problems(
    cefi: tuple[Served, Client], path: str, data: st.DataObject
) -> None:
    served, client = cefi
    served_methods = {m for m, p, _, _ in CEFI_ROUTES if p == path}
    method = data.draw(st.sampled_from([m for m in OTHER_METHODS if m not in served_methods]))
    raw_path = "/v1/cefi" + _fill(path, "1")
    body = data.draw(ANY_BODY)
    exchange(served, client, method, raw_path, "", body, signed_headers(100, method, raw_path, body))


@settings(FUZZ, max_examples=examples(40))
@given(
    path=st.lists(
        path_segment(["orders", "v1", "cefi", "api", "order", "balance", "_sim", "health"]), min_size=1, max_size=4
    ),
    method=st.sampled_from(OTHER_METHODS),
    body=ANY_BODY,
    headers=HEADERS,
)
def test_unknown_paths_are_404_problems(
    cefi: tuple[Served, Client], path: list[str], method: str, body: bytes, headers: dict[str, str]
) -> None:
    served, client = cefi
    for prefix in ("/v1/cefi/", "/api/v1/", "/v1/"):
        raw_path = prefix + "/".join(path)
        exchange(served, client, method, raw_path, "", body, {**headers, **signed_headers(100, method, raw_path, body)})
