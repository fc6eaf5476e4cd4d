"""The control plane: clock, book, latency, status, invariants, snapshot and restore."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import orjson
import pytest

from cefisim.api.runtime import json_steps
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.server import http
from tests.api.conftest import Api


async def test_clock_read_and_advance(api: Api) -> None:
    status, clock, _ = await api.call("GET", "/_sim/clock", client_id=None)
    assert status == 200 and clock["now"] == "2026-11-02T09:00:00Z" and clock["clock"] == "virtual"
    status, clock, _ = await api.call(
        "POST", "/_sim/clock/advance", client_id=None, json={"to": "2026-11-02T10:00:00Z"}
    )
    assert status == 200 and clock["now"] == "2026-11-02T10:00:00Z"
    status, problem, _ = await api.call(
        "POST", "/_sim/clock/advance", client_id=None, json={"to": "2026-11-02T09:00:00Z"}
    )
    assert status == 400 and "never goes back" in problem["detail"]
    status, problem, _ = await api.call("POST", "/_sim/clock/advance", client_id=None, json={})
    assert status == 400


async def test_book_depth_and_trades(api: Api) -> None:
    await api.order(101, side="SELL", qty="1", price="50000.00")
    await api.order(101, side="SELL", qty="1", price="50000.00")
    await api.order(100, side="BUY", qty="0.5", price="49999.00")
    await api.order(100, side="BUY", qty="0.25", price="50000.00")
    status, book, _ = await api.call("GET", "/_sim/book/1", client_id=None, params={"depth": "5"})
    assert status == 200
    assert book["asks"] == [{"price": "50000.00", "qty": "1.7500", "orders": 2}]
    assert book["bids"] == [{"price": "49999.00", "qty": "0.5000", "orders": 1}]
    assert book["last_price"] == "50000.00"
    status, trades, _ = await api.call("GET", "/_sim/trades/1", client_id=None)
    assert [(t["price"], t["qty"], t["taker_side"]) for t in trades] == [("50000.00", "0.2500", "BUY")]
    status, _, _ = await api.call("GET", "/_sim/book/9", client_id=None)
    assert status == 404


async def test_instrument_status_and_invariants(api: Api) -> None:
    status, _, _ = await api.call("POST", "/_sim/instruments/1/status", client_id=None, json={"status": "HALTED"})
    assert status == 200
    rec = await api.order()
    assert rec["status"] == "REJECTED" and rec["reject_reason"] == "INSTRUMENT_HALTED"
    status, body, _ = await api.call("GET", "/_sim/invariants", client_id=None)
    assert status == 200 and body["ok"] is True and body["asset_totals"]["USD"] == "2000000.00"


async def test_reset(api: Api) -> None:
    await api.order()
    status, _, _ = await api.call("POST", "/_sim/reset", client_id=None)
    assert status == 200
    _, page, _ = await api.call("GET", "/v1/cefi/orders/all")
    assert page["data"] == []


async def test_control_token_and_production(api_factory) -> None:
    api = await api_factory(control_token="s3cret")
    status, problem, _ = await api.call("GET", "/_sim/clock", client_id=None)
    assert status == 401 and "s3cret" not in str(problem)
    status, _, _ = await api.call("GET", "/_sim/clock", client_id=None, headers={"Authorization": "Bearer s3cret"})
    assert status == 200
    prod = await api_factory(environment="production")
    status, _, _ = await prod.call("GET", "/_sim/clock", client_id=None)
    assert status == 404


async def _activity(api: Api) -> None:
    await api.order(101, side="SELL", qty="2", price="50000.00", external_id="s1")
    await api.order(100, side="BUY", qty="0.5", price="50000.00")
    await api.call("POST", "/_sim/latency", client_id=None, json={"cancel_ms": 5})
    await api.call("DELETE", "/v1/cefi/orders/s1", client_id=101)


async def test_snapshot_restore_continues_identically(api_factory) -> None:
    first = await api_factory()
    await _activity(first)
    status, snap, _ = await first.call("GET", "/_sim/snapshot", client_id=None)
    assert status == 200 and snap["format"] == "cefisim-snapshot/3"
    # memo caches (the grids' parse and format caches, a book's band bounds) are not state
    states = [o["state"] for o in snap["objects"] if isinstance(o, dict) and "state" in o]
    assert not any({"band", "_cache", "_texts"} & set(a) for a in states)
    # continue on the original
    await first.order(100, side="BUY", qty="0.5", price="50000.00")
    await first.advance(1)
    # restore into a second server and continue the same way
    second = await api_factory()
    status, body, _ = await second.call("POST", "/_sim/snapshot", client_id=None, body=orjson.dumps(snap))
    assert status == 200, body
    await second.order(100, side="BUY", qty="0.5", price="50000.00")
    await second.advance(1)
    for path in ("/v1/cefi/orders/all", "/v1/cefi/balances", "/v1/cefi/orders/activity"):
        a = (await first.call("GET", path, params={"size": "100"}))[1]
        b = (await second.call("GET", path, params={"size": "100"}))[1]
        assert a == b, path
    first.sim.venue.check_invariants()
    second.sim.venue.check_invariants()
    assert first.sim.snapshot()["objects"] == second.sim.snapshot()["objects"]


@pytest.mark.parametrize("reset_between", [False, True], ids=["installed", "read again after a reset"])
async def test_a_restore_is_rebuilt_off_the_loop(
    api: Api, monkeypatch: pytest.MonkeyPatch, reset_between: bool
) -> None:
    """The codec's reader and the invariant check run in a thread (``Simulation.read_snapshot``): held
    there on an event, the server answers other requests; the state read is installed once it is
    done, or read again on the loop when a reset came in between (the epoch moved)."""
    await api.order(100, side="BUY", qty="0.5", price="49999.00")
    snap = api.sim.snapshot()
    await api.order(100, side="BUY", qty="0.25", price="49998.00")
    inside, go = threading.Event(), threading.Event()
    read = Simulation.read_snapshot

    def held(self: Simulation, doc: Any) -> Any:
        inside.set()
        assert go.wait(60)
        return read(self, doc)

    monkeypatch.setattr(Simulation, "read_snapshot", held)
    restoring = asyncio.ensure_future(api.call("POST", "/_sim/snapshot", client_id=None, body=orjson.dumps(snap)))
    try:
        assert await asyncio.to_thread(inside.wait, 60)
        status, _, _ = await asyncio.wait_for(api.call("GET", "/_sim/health", client_id=None), timeout=60)
        assert status == 200 and not restoring.done()
        if reset_between:
            assert (await api.call("POST", "/_sim/reset", client_id=None))[0] == 200
    finally:
        go.set()
    status, body, _ = await restoring
    assert status == 200, body
    assert api.sim.snapshot()["objects"] == snap["objects"]


async def test_a_restore_is_parsed_in_steps(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """The posted snapshot is parsed in steps with the loop let through between them
    (``api/runtime/json_steps.py``): the parse, held after its first step until a health request has been
    answered, goes on (the request was served between two steps) and the restore succeeds; a body
    orjson refuses is still the 400 naming ``body``."""
    await api.order(100, side="BUY", qty="0.5", price="49999.00")
    snap = api.sim.snapshot()
    await api.order(100, side="BUY", qty="0.25", price="49998.00")
    answered = asyncio.Event()
    steps = []

    def held_after_first_step(body: bytes) -> json_steps.Steps:
        parse = json_steps.parse_steps(body, 256)
        next(parse)  # (the document is far longer than a step)
        steps.append("first")
        turns = 0
        while not answered.is_set():  # a loop turn per yield: nothing else would let the request through
            turns += 1
            assert turns < 1_000_000, "no request served between two steps of the parse"
            yield
        steps.append("after the request")
        return (yield from parse)

    monkeypatch.setattr(http, "parse_steps", held_after_first_step)
    restoring = asyncio.ensure_future(api.call("POST", "/_sim/snapshot", client_id=None, body=orjson.dumps(snap)))
    status, _, _ = await asyncio.wait_for(api.call("GET", "/_sim/health", client_id=None), timeout=60)
    assert status == 200 and steps == ["first"] and not restoring.done()
    answered.set()
    status, body, _ = await restoring
    assert status == 200, body
    assert steps == ["first", "after the request"]
    assert api.sim.snapshot()["objects"] == snap["objects"]
    broken = orjson.dumps(snap)[:-1] + b"NaN}"
    status, problem, _ = await api.call("POST", "/_sim/snapshot", client_id=None, body=broken)
    assert status == 400 and problem["detail"].startswith("body: not valid JSON (")


async def test_restore_refuses_foreign_documents(api: Api) -> None:
    status, problem, _ = await api.call("POST", "/_sim/snapshot", client_id=None, json={"format": "nope"})
    assert status == 400
    snap = api.sim.snapshot()
    snap["objects"][0] = {"cls": "os.system", "state": {}}
    status, problem, _ = await api.call("POST", "/_sim/snapshot", client_id=None, body=orjson.dumps(snap))
    assert status == 400 and "not engine state" in problem["detail"]


async def test_a_virtual_clock_with_a_speed_moves_by_itself(api_factory) -> None:
    import asyncio
    import time

    # the real time counts from before the server (and its ticker) starts: on a loaded machine the
    # ticker may already run a while before the factory returns
    started = time.monotonic()
    api = await api_factory(speed=3600.0)
    start = api.sim.venue.clock.now
    target = start + 10 * 60 * 10**9  # 10 engine minutes: about 0.17 s of real time at 3600x
    while api.sim.venue.clock.now < target:  # waits for the ticker, however slow the machine is
        await asyncio.sleep(0.01)
    moved, real = api.sim.venue.clock.now - start, time.monotonic() - started
    # the ticker moves engine time by speed x the real time that passed, never faster
    assert moved <= 3600 * real * 10**9 * 1.01, (moved, real)


async def test_an_advance_counts_the_events_the_scenario_made_happen() -> None:
    """``events`` of POST /_sim/clock/advance: every venue event of the advance (the agents' orders,
    acks and fills, the timers), as a Simulation's listener counts them offline; not only the closing
    advance's timers (it answered 0 for a minute of the demo's trading)."""
    import aiohttp

    from cefisim.api.formats.scenario import load_scenario
    from cefisim.api.pytest_plugin import serving
    from cefisim.api.runtime.simulation import Simulation
    from cefisim.api.web.server.keys import ServerOptions
    from tests.api.formats.scenario.replay_support import SCENARIOS

    counted: list[int] = []
    offline = Simulation(load_scenario(SCENARIOS / "demo.json"), on_result=lambda r: counted.append(len(r.events)))
    counted.clear()  # what loading the scenario applied is not the advance's
    offline.advance(offline.start_ns + 60 * 10**9)
    async with (
        serving(Simulation(load_scenario(SCENARIOS / "demo.json"), clock="virtual"), ServerOptions()) as server,
        aiohttp.ClientSession() as http,
    ):
        async with http.get(f"{server.url}/_sim/health") as resp:
            orders_before = (await resp.json())["orders"]
        async with http.post(f"{server.url}/_sim/clock/advance", json={"seconds": 60}) as resp:
            advanced = await resp.json()
        async with http.get(f"{server.url}/_sim/health") as resp:
            orders_after = (await resp.json())["orders"]
    assert orders_after > orders_before  # the demo's agents traded during the minute
    assert advanced["events"] == sum(counted) > orders_after - orders_before
