"""Injected faults: status, delay, dropped connections, before or after the command applies."""

from __future__ import annotations

import time

import aiohttp
import pytest

from tests.api.conftest import Api


async def _orders(api: Api) -> int:
    return len(api.sim.venue.accounts[100].orders)


async def test_next_n_requests_get_a_status_and_nothing_applies(api: Api) -> None:
    status, plan, _ = await api.call("POST", "/_sim/faults", client_id=None, json={"count": 2, "status": 503})
    assert status == 200 and plan["count"] == 2
    for _ in range(2):
        body = {
            "info": {
                "client_id": "100",
                "instrument_id": "1",
                "side": "BUY",
                "type": "LIMIT",
                "qty": "1",
                "price": "50000.00",
            }
        }
        status, problem, _ = await api.call("POST", "/v1/cefi/orders", json=body)
        assert status == 503 and problem["error"]["type"].endswith("injected-fault")
    assert await _orders(api) == 0
    await api.order()  # the third goes through
    _, plan, _ = await api.call("GET", "/_sim/faults", client_id=None)
    assert plan["hits"] == 2 and plan["seen"] == 3


async def test_after_applies_the_command_then_loses_the_answer(api: Api) -> None:
    await api.call("POST", "/_sim/faults", client_id=None, json={"count": 1, "status": 502, "after": True})
    body = {
        "external_id": "retry-me",
        "info": {
            "client_id": "100",
            "instrument_id": "1",
            "side": "BUY",
            "type": "LIMIT",
            "qty": "1",
            "price": "50000.00",
        },
    }
    status, _, _ = await api.call("POST", "/v1/cefi/orders", json=body)
    assert status == 502
    assert await _orders(api) == 1
    # the client's retry with the same external id is refused as a duplicate: no double order
    rec = await api.order(external_id="retry-me")
    assert rec["status"] == "REJECTED" and rec["reject_reason"] == "DUPLICATE_EXTERNAL_ID"


async def test_share_is_deterministic_from_the_seed(api_factory) -> None:
    hits = []
    for _ in range(2):
        api = await api_factory()
        await api.call("POST", "/_sim/faults", client_id=None, json={"share": "0.3", "status": 500})
        pattern = [(await api.call("GET", "/v1/cefi/health", client_id=None))[0] for _ in range(40)]
        hits.append(pattern)
        assert 0 < pattern.count(500) < 40
    assert hits[0] == hits[1]


async def test_drop_closes_the_connection(api: Api) -> None:
    await api.call("POST", "/_sim/faults", client_id=None, json={"count": 1, "drop": True})
    with pytest.raises(aiohttp.ClientError):
        await api.client.get("/v1/cefi/health")
    status, _, _ = await api.call("GET", "/v1/cefi/health", client_id=None)
    assert status == 200


async def test_delay(api: Api) -> None:
    await api.call("POST", "/_sim/faults", client_id=None, json={"count": 1, "delay_ms": 200})
    t0 = time.monotonic()
    status, _, _ = await api.call("GET", "/v1/cefi/health", client_id=None)
    assert status == 200 and time.monotonic() - t0 >= 0.2


async def test_control_plane_is_never_faulted_and_faults_can_be_cleared(api: Api) -> None:
    await api.call("POST", "/_sim/faults", client_id=None, json={"share": "1", "status": 503})
    status, _, _ = await api.call("GET", "/_sim/clock", client_id=None)
    assert status == 200
    await api.call("DELETE", "/_sim/faults", client_id=None)
    status, _, _ = await api.call("GET", "/v1/cefi/health", client_id=None)
    assert status == 200


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"count": 1},
        {"count": 1, "share": "0.5", "status": 500},
        {"share": "1.5", "status": 500},
        {"count": 1, "status": 200},
    ],
)
async def test_bad_plans_are_400(api: Api, body) -> None:
    status, _, _ = await api.call("POST", "/_sim/faults", client_id=None, json=body)
    assert status == 400


async def test_a_null_optional_number_is_absent_as_the_document_says(api: Api) -> None:
    """The control document's optional fields accept null (the validator reads it as absent): a null
    ``delay_ms`` is no delay, a null ``count`` leaves ``share`` to choose."""
    status, plan, _ = await api.call(
        "POST", "/_sim/faults", client_id=None, json={"count": 1, "status": 503, "delay_ms": None}
    )
    assert status == 200 and plan["delay_ms"] == 0, plan
    status, plan, _ = await api.call(
        "POST", "/_sim/faults", client_id=None, json={"count": None, "share": "1", "status": 503}
    )
    assert status == 200 and plan["count"] is None and plan["share"] == "1", plan
