"""Where the emulator follows the description to the letter, round three (issue 25), over real HTTP: a
modify to zero ends the order, the 24-hour listings apply their window when read, a withdrawal beyond
the balance is INITIALIZED and decided after the settlement delay."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api

DAY_S = 86_400


async def _patch(api: Api, order_id: str, new_qty: str, price: str = "50000.00") -> tuple[int, Any]:
    body = {"id": order_id, "info": {"client_id": "100", "new_qty": new_qty, "new_price": price}}
    status, rec, _ = await api.call("PATCH", "/v1/cefi/orders", json=body)
    return status, rec


# --- PATCH /orders with new_qty "0" -----------------------------------------------------------------


@pytest.mark.parametrize("filled", [None, "0.4"])
async def test_a_modify_to_zero_ends_the_order_as_one_at_or_below_the_executed_qty_does(
    api: Api, filled: str | None
) -> None:
    """Zero is at or below any executed quantity: the answer is the order, CANCELED, as for a new_qty
    equal to what was filled; the order trades no more."""
    order = await api.order(qty="1", price="50000.00", side="SELL")
    if filled is not None:
        await api.order(101, side="BUY", qty=filled, price="50000.00")
    status, rec = await _patch(api, order["id"], "0")
    assert status == 200, rec
    assert rec["status"] == "CANCELED" and rec["cancel_reason"] == "MODIFIED_TO_EXECUTED"
    assert rec["exeuted_qty"] == {None: "0.0000", "0.4": "0.4000"}[filled]
    taker = await api.order(101, side="BUY", qty="1", price="50000.00")
    assert taker["status"] == "ACTIVE" and taker["exeuted_qty"] == "0.0000"
    if filled is not None:  # the same answer as a new_qty equal to the executed quantity
        other = await api.order(qty="1", price="50001.00", side="SELL")
        await api.order(101, side="BUY", qty=filled, price="50001.00")
        status, same = await _patch(api, other["id"], filled, "50001.00")
        assert status == 200 and (same["status"], same["cancel_reason"]) == (rec["status"], rec["cancel_reason"])


# --- the 24-hour listings ------------------------------------------------------------------------------


async def _one_trade_a_day_and_a_second_ago(api: Api) -> None:
    await api.order(side="SELL", qty="1", price="50000.00")
    await api.order(101, side="BUY", qty="1", price="50000.00")
    # 24 h + 1 s later: the hourly housekeeping ran a second ago and kept the trade (not yet 24 h old then)
    await api.advance(DAY_S + 1)


@pytest.mark.parametrize("path", ["/v1/cefi/orders", "/v1/cefi/orders/trade", "/v1/cefi/balances/activity"])
async def test_a_trade_older_than_24_hours_is_not_listed_whenever_the_housekeeping_ran(api: Api, path: str) -> None:
    await _one_trade_a_day_and_a_second_ago(api)
    assert api.sim.venue.accounts[100].fills  # still retained: only the window hides it
    params = {"timestamp": str(api.sim.venue.clock.now + 1)}
    status, page, _ = await api.call("GET", path, params=params)
    assert status == 200 and page["data"] == [], page


async def test_a_trade_within_24_hours_is_listed_by_every_trade_listing(api: Api) -> None:
    await api.order(side="SELL", qty="1", price="50000.00")
    await api.order(101, side="BUY", qty="1", price="50000.00")
    await api.advance(DAY_S - 1)
    params = {"timestamp": str(api.sim.venue.clock.now + 1)}
    for path in ("/v1/cefi/orders", "/v1/cefi/orders/trade", "/v1/cefi/balances/activity"):
        status, page, _ = await api.call("GET", path, params=params)
        assert status == 200 and len(page["data"]) == 1, (path, page)


# --- a WITHDRAW beyond the balance -------------------------------------------------------------------


def _withdraw(amount: str) -> dict[str, Any]:
    return {
        "request": {
            "amount": amount,
            "asset_id": "2",
            "client_id": "100",
            "type": "WITHDRAW",
            "platform": "CRYPTO",
            "instructions": {"address": "addr", "network": "net"},
        }
    }


async def test_a_withdrawal_beyond_the_balance_is_initialized_then_rejected_after_the_delay(api: Api) -> None:
    status, _, _ = await api.call("POST", "/_sim/settlement-delay", client_id=None, json={"ms": 5000})
    assert status == 200
    status, rec, _ = await api.call("POST", "/v1/cefi/transfers", json=_withdraw("2000000"))
    assert status == 200 and rec["status"] == "INITIALIZED" and "reject_reason" not in rec, rec
    status, active, _ = await api.call("GET", "/v1/cefi/transfers/active")
    assert status == 200 and [t["id"] for t in active["data"]] == [rec["id"]]
    status, balances, _ = await api.call("GET", "/v1/cefi/balances", params={"asset_id": "2"})
    held = {b["type"]: b["amount"] for b in balances["data"][0]["balances"]}
    assert held["HOLD"] == "0.00" and held["AVAILABLE"] == "1000000.00"  # nothing held for it
    await api.advance(4.999)
    status, active, _ = await api.call("GET", "/v1/cefi/transfers/active")
    assert [t["id"] for t in active["data"]] == [rec["id"]]
    await api.advance(0.001)
    status, active, _ = await api.call("GET", "/v1/cefi/transfers/active")
    assert active["data"] == []
    status, listed, _ = await api.call(
        "GET", "/v1/cefi/transfers", params={"timestamp": str(api.sim.venue.clock.now + 1)}
    )
    assert status == 200
    (done,) = [t for t in listed["data"] if t["id"] == rec["id"]]
    assert done["status"] == "REJECTED" and done["reject_reason"] == "INSUFFICIENT_BALANCE"
    assert int(done["updated_timestamp"]) > int(done["timestamp"])


# --- the OpenAPI document declares what a client id answers ---------------------------------------------

#: the operations whose query names a client (``client_id``; ``id`` on /clients), with a valid query
NAMES_A_CLIENT = {
    "/v1/cefi/balances": {},
    "/v1/cefi/balances/activity": {},
    "/v1/cefi/clients": {},
    "/v1/cefi/orders": {"timestamp": "9" * 19},
    "/v1/cefi/orders/activity": {},
    "/v1/cefi/orders/all": {},
    "/v1/cefi/orders/trade": {},
    "/v1/cefi/orders/active": {},
    "/v1/cefi/transfers": {"timestamp": "9" * 19},
    "/v1/cefi/transfers/active": {},
}


@pytest.mark.parametrize("path", list(NAMES_A_CLIENT))
@pytest.mark.parametrize(("client", "status", "slug"), [("999", 404, "unknown-client"), ("101", 403, "forbidden")])
async def test_a_client_id_other_than_the_signers_is_answered_as_the_document_declares(
    api: Api, path: str, client: str, status: int, slug: str
) -> None:
    name = "id" if path == "/v1/cefi/clients" else "client_id"
    got, problem, _ = await api.call("GET", path, params={**NAMES_A_CLIENT[path], name: client})
    assert got == status and problem["error"]["type"].endswith(slug), problem
    _, document, _ = await api.call("GET", "/v1/cefi/openapi.json", client_id=None)
    responses = document["paths"][path]["get"]["responses"]
    assert str(status) in responses, f"{path} answers {status} without declaring it"
    if status == 404:
        assert "unknown-client" in responses["404"]["description"]
