"""Fixtures for HTTP tests: a small scenario, an in-process server on a virtual clock, a signer."""

from __future__ import annotations

import copy
import os
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from cefisim.api.edge.signing import sign
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.app.application import create_app
from cefisim.api.web.server.keys import ServerOptions
from tests.scenario_docs import assets, btc_usd, client, eth_usd, scenario

ALICE_KEY = "2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f"
BOB_KEY = "7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d"

BALANCES = {"BTC": "10", "USD": "1000000", "ETH": "100"}
BASE_DOC: dict[str, Any] = scenario(
    seed=7,
    start="2026-11-02T09:00:00Z",
    assets=assets("BTC", "USD", "ETH"),
    instruments=[btc_usd(), eth_usd()],
    clients=[
        client("100", "alice", BALANCES, key=ALICE_KEY, secret="alice-secret", self_trade_prevention="NONE"),
        client("101", "bob", BALANCES, key=BOB_KEY, secret="bob-secret", self_trade_prevention="NONE"),
    ],
    api_keys=[],
    oauth_clients=[],
    events=[],
)

SECRETS = {100: (ALICE_KEY, "alice-secret"), 101: (BOB_KEY, "bob-secret")}


def scenario_doc(**overrides: Any) -> dict[str, Any]:
    doc = copy.deepcopy(BASE_DOC)
    doc.update(overrides)
    return doc


class Api:
    """A test client that signs like a real one: wall-clock timestamp, path without query, raw body."""

    def __init__(self, client: TestClient, sim: Simulation, layout: str = "concat") -> None:
        self.client = client
        self.sim = sim
        self.layout = layout

    def headers(
        self,
        client_id: int,
        method: str,
        path: str,
        body: bytes,
        ts: int | None = None,
        key: str | None = None,
        secret: str | None = None,
    ) -> dict[str, str]:
        k, s = SECRETS[client_id]
        ts_text = str(int(time.time()) if ts is None else ts)
        return {
            "x-svc-auth-token": key or k,
            "x-svc-auth-signature": sign(secret or s, ts_text, method, path, body, self.layout),
            "x-svc-auth-timestamp": ts_text,
            "x-svc-auth-userid": str(client_id),
        }

    async def call(
        self,
        method: str,
        path: str,
        *,
        client_id: int | None = 100,
        json: Any = None,
        body: bytes | None = None,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any, Any]:
        raw = body if body is not None else (orjson.dumps(json) if json is not None else b"")
        hdrs = dict(headers or {})
        if client_id is not None:
            hdrs = {**self.headers(client_id, method, path, raw), **hdrs}
        if raw:
            hdrs.setdefault("Content-Type", "application/json")
        resp = await self.client.request(method, path, data=raw or None, params=params, headers=hdrs)
        payload = await resp.read()
        parsed = orjson.loads(payload) if payload and resp.content_type.endswith("json") else payload
        return resp.status, parsed, resp.headers

    async def order(self, client_id: int = 100, **info: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "info": {
                "client_id": str(client_id),
                "instrument_id": "1",
                "side": "BUY",
                "type": "LIMIT",
                "qty": "1",
                "price": "50000.00",
                **info,
            }
        }
        if "external_id" in info:
            body["external_id"] = body["info"].pop("external_id")
        status, rec, _ = await self.call("POST", "/v1/cefi/orders", client_id=client_id, json=body)
        assert status == 200, rec
        return rec

    async def advance(self, seconds: float) -> None:
        status, body, _ = await self.call("POST", "/_sim/clock/advance", client_id=None, json={"seconds": str(seconds)})
        assert status == 200, body


@pytest_asyncio.fixture
async def api_factory() -> AsyncIterator[Callable[..., Any]]:
    """Factory: ``await api_factory(doc=None, layout="concat", **server_options)`` -> Api on a fresh server."""
    made: list[Api] = []

    async def factory(doc: dict[str, Any] | None = None, layout: str = "concat", **options: Any) -> Api:
        scenario = parse_scenario(doc or scenario_doc(), "test-scenario.json")
        sim = Simulation(scenario, clock="virtual")
        app = create_app(sim, ServerOptions(signature_layout=layout, **options))
        client = TestClient(TestServer(app))
        await client.start_server()
        made.append(Api(client, sim, layout))
        return made[-1]

    yield factory
    for api in made:
        await api.client.close()


@pytest_asyncio.fixture
async def api(api_factory: Callable[..., Any]) -> Api:
    return await api_factory()


def journal_on_a_full_disk(sim: Simulation) -> Callable[[], None]:
    """From now on every write of ``sim``'s journal fails as on a full disk (its file descriptor is
    pointed at /dev/full); returns the function that points it back at the journal file."""
    fd = sim._journal._raw.fileno()  # type: ignore[union-attr]
    path = sim._journal.path  # type: ignore[union-attr]
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, fd)
    os.close(full)

    def mend() -> None:
        again = os.open(path, os.O_RDWR | os.O_APPEND)
        os.dup2(again, fd)
        os.close(again)

    return mend
