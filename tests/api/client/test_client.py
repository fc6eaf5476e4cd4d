"""api.client.CefiClient against a real in-process server on a free port (virtual clock).

Every operation round-trips once; signing holds for both payload layouts; paginate() follows cursors
to the end; ProblemError carries the unwrapped problem under both schema versions.
"""

from __future__ import annotations

import asyncio
import copy
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from cefisim.api.client import NEWEST, PAGED, V2024, V2026, CefiClient, ProblemError
from cefisim.api.formats.scenario import load_scenario, parse_scenario
from cefisim.api.pytest_plugin import DEFAULT_SCENARIO, CefisimServer, serving
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.cefi.route_table import CEFI_ROUTES
from cefisim.api.web.server.keys import ServerOptions
from tests.scenario_docs import assets, btc_usd, client, scenario

ALICE_KEY = "2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f"
BOB_KEY = "5b0c7a3e-1d2f-4a6b-9c8d-7e6f5a4b3c2d"
UUID_A = "0b6c2a4e-8f1d-4c3b-9a7e-5d6f4e3c2b1a"

#: starts before 2026-11-01 (engine clock), so both schema versions are served
DOC: dict[str, Any] = scenario(
    seed=11,
    start="2026-06-01T09:00:00Z",
    assets=assets("BTC", "USD"),
    instruments=[btc_usd()],
    clients=[
        client("100", "alice", {"BTC": "10", "USD": "1000000"}, key=ALICE_KEY, secret="alice-secret"),
        client("200", "bob", {"BTC": "10", "USD": "1000000"}, key=BOB_KEY, secret="bob-secret"),
        client("900", "maker", {"BTC": "100", "USD": "10000000"}),
    ],
)
FIAT = {"fiat_account_id": UUID_A, "identity_id": UUID_A, "account_id": UUID_A, "includes_fee": False}


@asynccontextmanager
async def running(doc: dict[str, Any] | None = None, **options: Any) -> AsyncIterator[CefisimServer]:
    """The emulator on 127.0.0.1 and a free port."""
    sim = Simulation(parse_scenario(copy.deepcopy(doc or DOC), "test_client"), clock="virtual")
    async with serving(sim, ServerOptions(**options)) as server:
        yield server


@pytest.fixture
async def server() -> AsyncIterator[CefisimServer]:
    async with running() as s:
        yield s


@pytest.fixture
async def alice(server: CefisimServer) -> AsyncIterator[CefiClient]:
    async with CefiClient(server.url, key=ALICE_KEY, secret="alice-secret", client_id="100") as c:
        yield c


@pytest.fixture
async def bob(server: CefisimServer) -> AsyncIterator[CefiClient]:
    async with CefiClient(server.url, key=BOB_KEY, secret="bob-secret", client_id=200) as c:
        yield c


class RecordingClient(CefiClient):
    """Remembers which (method, route) each call hit."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.hits: set[tuple[str, str]] = set()

    async def request(self, method: str, path: str, **kwargs: Any) -> Any:
        for m, route, _h, _s in CEFI_ROUTES:
            pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", route) + "$"
            if m == method and re.match(pattern, path):
                self.hits.add((m, route))
        return await super().request(method, path, **kwargs)


# --- every operation once -----------------------------------------------------------------------


async def test_every_method_round_trips(server: CefisimServer, bob: CefiClient) -> None:
    async with RecordingClient(server.url, key=ALICE_KEY, secret="alice-secret", client_id="100") as c:
        assert (await c.health())["status"] == "ok"
        versions = await c.versions()
        assert {v["version"] for v in versions["supported_versions"]} == {V2024, V2026}
        assert [a["fields"]["name"] for a in (await c.assets())["data"]] == ["BTC", "USD"]
        assert (await c.assets(name="USD"))["data"][0]["id"] == "2"
        assert (await c.instruments(symbol="BTC"))["data"][0]["info"]["symbol"] == "BTC-USD"
        assert (await c.instruments(id=1))["data"][0]["id"] == "1"

        ask = await bob.place_order("1", "SELL", "LIMIT", "1", price="30000.00")
        assert ask["status"] == "ACTIVE"
        entry = (await c.market_quote(instrument_id=1))["data"][0]
        assert entry["info"]["best_ask"] == "30000.00" and entry["symbol"] == "BTC-USD"
        assert await c.quote_vwap(1, "3000") == {"quote": "30000.00", "buy_amount": "0.1000"}
        q = await c.markets_quote("1", Decimal("0.5"), "BUY", "BASE")
        assert q == {"qty": "0.5", "price": "30000.00", "notional": "15000.00", "notional_residual": "0.00"}

        assert (await c.clients())["data"][0]["info"]["mnemonic"] == "alice"
        assert (await c.clients(id="100", mnemonic="alice"))["data"][0]["id"] == "100"
        patched = await c.set_self_trade_prevention("CANCEL_BOTH")
        assert patched["data"][0]["info"]["self_trade_prevention"] == "CANCEL_BOTH"

        rest = await c.place_order(
            1,
            "BUY",
            "LIMIT",
            "0.2",
            price="29000.00",
            tif="GTC",
            stp="NONE",
            hold_fee_rate="0.002",
            external_id="bid-1",
            msg_id="m1",
            parent_id="0",
        )
        assert rest["status"] == "ACTIVE" and rest["external_id"] == "bid-1"
        assert rest["order_info"]["client_id"] == "100" and rest["order_info"]["msg_id"] == "m1"
        assert (await c.order_status("bid-1"))["id"] == rest["id"]
        assert (await c.order_status(rest["id"]))["external_id"] == "bid-1"
        modified = await c.modify_order("0.1", "29000.00", id=rest["id"], msg_id="m2")
        assert modified["leaves_qty"] == "0.1000" and modified["modify_info"]["new_qty"] == "0.1"
        modified = await c.modify_order("0.1", "29001.00", external_id="bid-1")
        assert modified["modify_info"]["new_price"] == "29001.00"
        active = await c.orders_active()
        assert [o["id"] for o in active["data"]] == [rest["id"]]
        assert (await c.orders_active(id=rest["id"]))["data"][0]["id"] == rest["id"]
        canceled = await c.cancel_order("bid-1")
        assert canceled["status"] == "CANCELED"

        taker = await c.place_order(1, "BUY", "MARKET", "0.3", flags=["USE_AGGRESSIVE_PRICING"])
        assert taker["status"] == "FILLED" and taker["exeuted_qty"] == "0.3000"
        trades = await c.trades()
        assert [t["order_id"] for t in trades["data"]] == [taker["id"]]
        assert (await c.trades(timestamp=NEWEST, size=1, skip=0))["data"] == trades["data"]
        assert (await c.orders_trade())["data"] == trades["data"]
        assert [o["id"] for o in (await c.orders_all())["data"]] == [taker["id"], rest["id"]]
        kinds = [a["type"] for a in (await c.orders_activity(size=100))["data"]]
        assert {"CONFIRM", "MODIFY", "CANCEL", "TRADE", "FILLED"} <= set(kinds)

        btc = (await c.balances(asset_id=1))["data"][0]
        assert btc["id"] == "1" and btc["balances"][0] == {"type": "TOTAL", "amount": "10.30000000"}
        assert (await c.balances(asset_name="USD"))["data"][0]["id"] == "2"
        moves = (await c.balances_activity(asset_id=1))["data"]
        assert moves[0]["type"] == "TRADE" and moves[0]["order_id"] == taker["id"]

        t = await c.create_transfer(2, "100.00", "DEPOSIT", "FIAT", FIAT)
        assert t["status"] == "INITIALIZED" and t["request"]["client_id"] == "100"
        assert (await c.transfers())["data"][0]["id"] == t["id"]
        assert (await c.transfers(size=1))["data"][0]["id"] == t["id"]
        assert (await c.transfers_active())["data"] == []  # settled at once (no settlement delay)
        assert (await c.transfers_active(transfer_id=t["id"]))["data"] == []

    assert c.hits == {(m, p) for m, p, _h, _s in CEFI_ROUTES}


async def test_pending_transfer_is_listed_as_active(server: CefisimServer, alice: CefiClient) -> None:
    async with CefiClient(server.url) as admin:
        r = await admin.raw("POST", "/_sim/settlement-delay", json={"ms": 1000}, signed=False)
        assert r.status == 200, r.json
    t = await alice.create_transfer("1", "0.5", "WITHDRAW", "CRYPTO", {"address": "bc1qxyz", "network": "bitcoin"})
    assert [x["id"] for x in (await alice.transfers_active())["data"]] == [t["id"]]
    assert (await alice.transfers_active(transfer_id=t["id"]))["data"][0]["status"] == "INITIALIZED"
    server.advance(2)
    assert (await alice.transfers_active())["data"] == []


async def test_values_are_exact_decimal_strings(alice: CefiClient) -> None:
    with pytest.raises(TypeError, match="qty"):
        await alice.place_order("1", "BUY", "LIMIT", 0.1, price="1.00")
    with pytest.raises(TypeError, match="price"):
        await alice.place_order("1", "BUY", "LIMIT", "0.1", price=True)
    order = await alice.place_order("1", "BUY", "LIMIT", Decimal("0.1000"), price=Decimal("29000.5"))
    assert order["order_info"]["qty"] == "0.1000" and order["order_info"]["price"] == "29000.5"


# --- signing ------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["concat", "newline"])
async def test_signing_layouts(layout: str) -> None:
    other = "newline" if layout == "concat" else "concat"
    async with running(signature_layout=layout) as s:
        async with CefiClient(s.url, key=ALICE_KEY, secret="alice-secret", client_id="100", layout=layout) as c:
            # a body, a query string and a path parameter are all covered by the signature
            o = await c.place_order("1", "BUY", "LIMIT", "0.01", price="29000.00", external_id="x.y~z_1")
            assert (await c.orders_all(size=5, skip=0))["data"][0]["id"] == o["id"]
            assert (await c.cancel_order("x.y~z_1"))["status"] == "CANCELED"
        async with CefiClient(s.url, key=ALICE_KEY, secret="alice-secret", client_id="100", layout=other) as c:
            with pytest.raises(ProblemError) as err:
                await c.balances()
            assert err.value.status == 401 and err.value.slug == "unauthorized"
            assert "signature" in (err.value.detail or "")


async def test_server_accepting_either_layout() -> None:
    async with running(signature_layout="either") as s:
        for layout in ("concat", "newline"):
            async with CefiClient(s.url, key=ALICE_KEY, secret="alice-secret", client_id="100", layout=layout) as c:
                assert (await c.balances(asset_id=1))["data"][0]["id"] == "1"


async def test_signature_covers_path_not_query(alice: CefiClient) -> None:
    ok = await alice.raw("GET", "/v1/cefi/orders/all", params={"size": "3"})
    assert ok.status == 200
    tampered = await alice.raw("GET", "/v1/cefi/orders/all", sign_path="/v1/cefi/orders/active")
    assert tampered.status == 401 and tampered.json["error"]["type"].endswith("/unauthorized")
    stale = await alice.raw("GET", "/v1/cefi/balances", timestamp=str(int(time.time()) - 60))
    assert stale.status == 401 and "older" in stale.json["error"]["detail"]
    missing = await alice.raw("GET", "/v1/cefi/balances", headers={"x-svc-auth-signature": None})
    assert missing.status == 401 and "x-svc-auth-signature" in missing.json["error"]["detail"]
    unsigned = await alice.raw("GET", "/v1/cefi/balances", signed=False)
    assert unsigned.status == 401


async def test_reference_data_signed_when_the_server_requires_it() -> None:
    async with running(sign_reference_data=True) as s:
        async with CefiClient(s.url, key=ALICE_KEY, secret="alice-secret", client_id="100") as c:
            assert len((await c.assets())["data"]) == 2
            assert len((await c.instruments())["data"]) == 1
        async with CefiClient(s.url) as anonymous:
            with pytest.raises(ProblemError) as err:
                await anonymous.assets()
            assert err.value.status == 401
            assert (await anonymous.health())["status"] == "ok"  # public operations stay public


async def test_signing_without_credentials_is_refused_locally() -> None:
    c = CefiClient("http://127.0.0.1:9")
    with pytest.raises(ValueError, match="sign"):
        c.signing_headers("GET", "/v1/cefi/balances", b"")
    with pytest.raises(ValueError, match="layout"):
        CefiClient("http://127.0.0.1:9", layout="either")


# --- pagination ---------------------------------------------------------------------------------


async def _trade_many(alice: CefiClient, bob: CefiClient, n: int) -> list[str]:
    """n fills for alice (taker) against bob's asks; returns alice's order ids, oldest first."""
    ids = []
    for _ in range(n):
        await bob.place_order("1", "SELL", "LIMIT", "0.01", price="30000.00")
        ids.append((await alice.place_order("1", "BUY", "LIMIT", "0.01", price="30000.00"))["id"])
    return ids


async def test_paginate_walks_every_page(server: CefisimServer, alice: CefiClient, bob: CefiClient) -> None:
    ids = await _trade_many(alice, bob, 5)
    for i in range(2):
        ids.append((await alice.place_order("1", "BUY", "LIMIT", "0.01", price=f"2900{i}.00"))["id"])
    newest_first = list(reversed(ids))

    pages: list[Any] = []
    original = alice.request

    async def spy(method: str, path: str, **kwargs: Any) -> Any:
        page = await original(method, path, **kwargs)
        pages.append((dict(kwargs.get("params") or {}), page))
        return page

    alice.request = spy  # type: ignore[method-assign]
    walked = [o["id"] async for o in alice.paginate("orders_all", size=2)]
    assert walked == newest_first
    assert len(pages) == 4 and pages[-1][1]["pagination"]["next_cursor"] is None
    assert all(p[1]["pagination"]["size"] == 2 for p in pages)
    assert "timestamp" not in pages[0][0] and pages[1][0]["timestamp"] == pages[0][1]["pagination"]["next_cursor"]

    pages.clear()
    walked = [o["id"] async for o in alice.paginate("/v1/cefi/orders/all", size=3, skip=1)]
    assert walked == newest_first[1:]
    assert "skip" in pages[0][0] and all("skip" not in p[0] for p in pages[1:])

    trades = [t["order_id"] async for t in alice.paginate("trades", size=2)]  # GET /orders needs a timestamp
    assert trades == list(reversed(ids[:5]))
    assert [t["order_id"] async for t in alice.paginate("/orders/trade", size=4)] == trades
    activity = [a async for a in alice.paginate("orders_activity", size=3)]
    assert len(activity) == len({(a["type"], a["timestamp"]) for a in activity}) > 10
    moves = [m["timestamp"] async for m in alice.paginate("balances_activity", size=2, asset_id=1)]
    assert len(moves) == 5 and moves == sorted(moves, reverse=True)
    active = [o["id"] async for o in alice.paginate("orders_active", size=1)]
    assert active == newest_first[:2]

    for _ in range(3):
        await alice.create_transfer("2", "1.00", "DEPOSIT", "FIAT", FIAT)
    assert len([t async for t in alice.paginate("transfers", size=2)]) == 3


async def test_paginate_stops_on_an_empty_page_with_a_cursor() -> None:
    calls: list[dict[str, str]] = []

    async def handler(request: web.Request) -> web.Response:
        calls.append(dict(request.query))
        if "timestamp" not in request.query:
            return web.json_response(
                {"data": [{"n": 1}], "pagination": {"size": 1, "next_cursor": "0000000000000000005"}}
            )
        return web.json_response({"data": [], "pagination": {"size": 1, "next_cursor": "0000000000000000004"}})

    app = web.Application()
    app.router.add_get("/v1/cefi/orders/all", handler)
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    try:
        async with CefiClient(str(server.make_url("/v1/cefi"))) as c:
            got = [r async for r in c.paginate("orders_all", size=1)]
    finally:
        await server.close()
    assert got == [{"n": 1}]
    assert calls == [{"size": "1"}, {"size": "1", "timestamp": "0000000000000000005"}]


async def test_paginate_takes_a_v2024_list_whole(server: CefisimServer, alice: CefiClient) -> None:
    ids = [(await alice.place_order("1", "BUY", "LIMIT", "0.01", price=f"2900{i}.00"))["id"] for i in range(12)]
    async with CefiClient(server.url, key=ALICE_KEY, secret="alice-secret", client_id="100", version=V2024) as c:
        assert [r["id"] async for r in c.paginate("orders_all")] == list(reversed(ids))
        assert [r["id"] async for r in c.paginate("orders_all", skip=2)] == list(reversed(ids))[2:]
    async with CefiClient(server.url, key=ALICE_KEY, secret="alice-secret", client_id="100") as c:
        with pytest.raises(ValueError, match="unknown list read"):
            [r async for r in c.paginate("place_order")]
    assert set(PAGED) <= {name for name in dir(CefiClient) if not name.startswith("_")}


# --- problems and versions ----------------------------------------------------------------------


@pytest.mark.parametrize("version", [V2026, V2024])
async def test_problem_error_is_unwrapped(server: CefisimServer, version: str) -> None:
    async with CefiClient(server.url, key=ALICE_KEY, secret="alice-secret", client_id="100", version=version) as c:
        with pytest.raises(ProblemError) as err:
            await c.order_status("424242")
        e = err.value
        assert (e.status, e.slug, e.title) == (404, "unknown-order", "Not Found")
        assert e.type == "https://cefisim.dev/problems/unknown-order" and e.detail.startswith("ref_id:")
        nested = e.body if version == V2024 else e.body["error"]
        assert nested == {"type": e.type, "title": e.title, "status": 404, "detail": e.detail}
        assert ("error" in e.body) is (version == V2026)

        with pytest.raises(ProblemError) as err:
            await c.place_order("1", "BUY", "LIMIT", "-1", price="1.00")
        assert err.value.status == 400 and err.value.detail.startswith("info.qty:")
        with pytest.raises(ProblemError) as err:
            await c.request("GET", "/clients", params={"id": "200"})
        assert err.value.status == 403 and err.value.slug == "forbidden"
        if version == V2024:
            assert "Deprecation" in e.headers and "Sunset" in e.headers
        assert str(e).startswith("404 Not Found: ref_id:")


async def test_versions_and_raw_responses(server: CefisimServer) -> None:
    async with CefiClient(
        server.url + "/v1/cefi/", key=ALICE_KEY, secret="alice-secret", client_id="100", version=None
    ) as c:
        assets = await c.assets()
        assert isinstance(assets, list)  # the server's default before 2026-11-01 is v2024_01_01
        raw = await c.raw("GET", "/v1/cefi/balances", headers={"X-Request-Id": "req-test-1"})
        assert raw.status == 200 and raw.content_type == "application/json"
        assert raw.headers["X-Request-Id"] == "req-test-1" and "Sunset" in raw.headers
        assert raw.body_bytes == raw.body and raw.json == __import__("orjson").loads(raw.body)
        bad = await c.raw("GET", "/v1/cefi/assets", params={"version": "v1999_01_01"}, signed=False)
        assert bad.status == 400 and bad.content_type == "application/problem+json"
        assert bad.problem().slug == "unsupported-version"
        gone = await c.raw("GET", "/api/v1/orders/list", signed=False)
        assert gone.status == 404
        text = await c.raw("POST", "/v1/cefi/orders", body=b"{not json")
        assert text.status == 400 and "not valid JSON" in text.text


def doc_examples(page: str = "client.md") -> list[str]:
    """The Python code blocks of docs/``page``."""
    text = (Path(__file__).resolve().parents[3] / "docs" / page).read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


async def test_the_documented_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    example = doc_examples()[0]
    assert "asyncio.run(main())" in example and "http://127.0.0.1:8080" in example
    async with running(doc=load_scenario(DEFAULT_SCENARIO).doc) as s:
        code = example.replace("http://127.0.0.1:8080", s.url)
        await asyncio.to_thread(exec, compile(code, "docs/client.md", "exec"), {"__name__": "example"})
    out = capsys.readouterr().out
    assert "ACTIVE" in out and "404 unknown-order ref_id:" in out


async def test_shared_session_is_left_open(server: CefisimServer) -> None:
    async with aiohttp.ClientSession() as session:
        async with CefiClient(server.url, session=session) as c:
            assert (await c.health())["service"]
        assert not session.closed
        async with CefiClient(server.url, session=session) as c:
            await asyncio.gather(c.health(), c.versions(), c.market_quote())
