"""The venue's own faults (docs/faults.md): its cancels, reads behind the engine, late fills, a
skewed clock; from the control plane and from scenario events."""

from __future__ import annotations

import time
from typing import Any

import orjson

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine.commands import PlaceOrder
from tests.api.conftest import Api, scenario_doc

SIM_FAULTS = "/_sim/faults/venue"


async def _data(api: Api, path: str, client_id: int = 100) -> list[dict[str, Any]]:
    status, body, _ = await api.call("GET", path, client_id=client_id)
    assert status == 200, body
    return body["data"]


async def _set(api: Api, **faults: Any) -> dict[str, Any]:
    status, body, _ = await api.call("POST", SIM_FAULTS, client_id=None, json=faults)
    assert status == 200, body
    return body


async def test_venue_cancel_by_client_ends_its_resting_orders_with_the_reason(api: Api) -> None:
    mine = [await api.order(price=p) for p in ("49000.00", "49100.00")]
    other = await api.order(client_id=101, side="SELL", price="51000.00")
    status, body, _ = await api.call(
        "POST", "/_sim/faults/venue-cancel", client_id=None, json={"reason": "RISK_EVENT", "client_id": "100"}
    )
    assert status == 200 and body == {"reason": "RISK_EVENT", "canceled": [o["id"] for o in mine]}
    for order in mine:
        _, rec, _ = await api.call("GET", f"/v1/cefi/orders/status/{order['id']}")
        assert rec["status"] == "CANCELED" and rec["cancel_reason"] == "RISK_EVENT"
    _, rec, _ = await api.call("GET", f"/v1/cefi/orders/status/{other['id']}", client_id=101)
    assert rec["status"] == "ACTIVE"
    cancels = [i for i in await _data(api, "/v1/cefi/orders/activity") if i["type"] == "CANCEL"]
    assert {i["detail"] for i in cancels} == {"RISK_EVENT"}


async def test_venue_cancel_by_instrument_and_its_bad_input(api: Api) -> None:
    btc = await api.order(price="49000.00")
    eth = await api.order(instrument_id="2", price="2000.00")
    status, body, _ = await api.call(
        "POST", "/_sim/faults/venue-cancel", client_id=None, json={"reason": "INSTRUMENT_HALT", "instrument_id": "2"}
    )
    assert status == 200 and body["canceled"] == [eth["id"]]
    for bad, field in (
        ({"reason": "BORED"}, "reason"),
        ({}, "reason"),
        ({"reason": "RISK_EVENT", "client_id": "x"}, "client_id"),
        ({"reason": "RISK_EVENT", "colour": "red"}, "colour"),
    ):
        status, problem, _ = await api.call("POST", "/_sim/faults/venue-cancel", client_id=None, json=bad)
        assert status == 400 and field in problem["detail"], problem
    for body, status_wanted in (
        ({"reason": "RISK_EVENT", "client_id": "999"}, 404),
        ({"reason": "RISK_EVENT", "instrument_id": "9"}, 404),
    ):
        status, _, _ = await api.call("POST", "/_sim/faults/venue-cancel", client_id=None, json=body)
        assert status == status_wanted
    _, rec, _ = await api.call("GET", f"/v1/cefi/orders/status/{btc['id']}")
    assert rec["status"] == "ACTIVE"  # nothing else was canceled


async def test_venue_cancel_from_a_scenario_event(api_factory) -> None:
    events = [
        {"at": "+1", "type": "order", "client": "alice", "instrument": "BTC-USD", "side": "BUY",
         "order_type": "LIMIT", "qty": "1", "price": "49000.00", "external_id": "bid"},
        {"at": "+2", "type": "venue_cancel", "reason": "INSTRUMENT_HALT", "instrument": "BTC-USD"},
    ]  # fmt: skip
    api = await api_factory(doc=scenario_doc(events=events))
    await api.advance(3)
    _, rec, _ = await api.call("GET", "/v1/cefi/orders/status/bid")
    assert rec["status"] == "CANCELED" and rec["cancel_reason"] == "INSTRUMENT_HALT"


async def test_reads_lag_the_engine_until_the_lag_has_passed(api: Api) -> None:
    assert await _set(api, read_lag_ms=500) == {"read_lag_ms": 500, "fill_delay_ms": 0, "clock_skew_s": 0}
    order = await api.order()
    assert await _data(api, "/v1/cefi/orders/all") == []
    status, _, _ = await api.call("GET", f"/v1/cefi/orders/status/{order['id']}")
    assert status == 404
    await api.advance(0.5)
    assert [o["id"] for o in await _data(api, "/v1/cefi/orders/all")] == [order["id"]]
    assert (await api.call("GET", f"/v1/cefi/orders/status/{order['id']}"))[0] == 200
    second = await api.order(price="49000.00")
    status, body, _ = await api.call("DELETE", SIM_FAULTS, client_id=None)
    assert status == 200 and body["read_lag_ms"] == 0
    assert [o["id"] for o in await _data(api, "/v1/cefi/orders/all")] == [second["id"], order["id"]]


async def test_a_late_fill_trades_at_once_and_is_reported_after_the_delay(api: Api) -> None:
    await _set(api, fill_delay_ms=1000)
    await api.order(client_id=101, side="SELL", price="50000.00")
    buy = await api.order()
    assert buy["status"] == "FILLED"  # the trade has happened: the order and the balances moved
    assert await _data(api, "/v1/cefi/orders/trade") == []
    assert [i for i in await _data(api, "/v1/cefi/orders/activity") if i["type"] == "TRADE"] == []
    status, body, _ = await api.call("GET", "/v1/cefi/orders", params={"timestamp": str(2**62)})
    assert status == 200 and body["data"] == []
    await api.advance(0.999)
    assert await _data(api, "/v1/cefi/orders/trade") == []
    await api.advance(0.002)  # (the trade's timestamp is a few nanoseconds past the order's instant)
    assert [t["order_id"] for t in await _data(api, "/v1/cefi/orders/trade")] == [buy["id"]]
    assert [i["order_id"] for i in await _data(api, "/v1/cefi/orders/activity") if i["type"] == "TRADE"] == [buy["id"]]


async def test_a_skewed_clock_moves_the_signing_window(api: Api) -> None:
    await _set(api, clock_skew_s=3600)
    status, problem, _ = await api.call("GET", "/v1/cefi/orders/all")  # signed with the true time
    assert status == 401, problem
    ahead = str(int(time.time()) + 3600)
    status, _, _ = await api.call(
        "GET", "/v1/cefi/orders/all", headers=api.headers(100, "GET", "/v1/cefi/orders/all", b"", ts=int(ahead))
    )
    assert status == 200
    assert (await _set(api, clock_skew_s="-60"))["clock_skew_s"] == -60
    for bad in ("1.5", "999999", "x", True):
        status, problem, _ = await api.call("POST", SIM_FAULTS, client_id=None, json={"clock_skew_s": bad})
        assert status == 400 and "clock_skew_s" in problem["detail"]
    status, problem, _ = await api.call("POST", SIM_FAULTS, client_id=None, json={"read_lag_ms": "-1"})
    assert status == 400 and "read_lag_ms" in problem["detail"]
    await api.call("DELETE", SIM_FAULTS, client_id=None)
    assert (await api.call("GET", "/v1/cefi/orders/all"))[0] == 200


def test_a_skewed_clock_moves_wall_clock_engine_time() -> None:
    wall = [1_793_610_000 * 10**9]
    sim = Simulation(parse_scenario(scenario_doc(), "s.json"), clock="wall", wall_ns=lambda: wall[0])
    sim.skew_clock(5 * 10**9)
    assert sim.now_ns() == wall[0] + 5 * 10**9
    order = sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "49000.00")).order
    assert order is not None and order.created >= wall[0] + 5 * 10**9  # stamped by the skewed clock
    sim.skew_clock(-60 * 10**9)
    assert sim.now_ns() == sim.venue.clock.now >= wall[0] + 5 * 10**9  # never backwards
    sim.skew_clock(0)
    wall[0] += 10 * 10**9
    assert sim.now_ns() == wall[0]


def test_a_pending_venue_cancel_event_survives_a_snapshot() -> None:
    events = [{"at": "+5", "type": "venue_cancel", "reason": "RISK_EVENT", "client": "alice"}]
    scenario = parse_scenario(scenario_doc(events=events), "s.json")
    sim = Simulation(scenario, clock="virtual")
    order = sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "49000.00")).order
    assert order is not None
    doc = orjson.loads(orjson.dumps(sim.snapshot()))
    again = Simulation(scenario, clock="virtual")
    again.restore(doc)
    again.advance(again.venue.clock.now + 6 * 10**9)
    assert again.venue.accounts[100].orders[order.id].cancel_reason == "RISK_EVENT"
