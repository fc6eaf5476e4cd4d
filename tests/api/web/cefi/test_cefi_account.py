"""Clients, balances, balance activity and transfers over real HTTP."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api

FIAT = {
    "fiat_account_id": "0d5c8a3e-1f2b-4c6d-8e9f-0a1b2c3d4e5f",
    "identity_id": "1d5c8a3e-1f2b-4c6d-8e9f-0a1b2c3d4e5f",
    "account_id": "2d5c8a3e-1f2b-4c6d-8e9f-0a1b2c3d4e5f",
    "includes_fee": False,
}


def transfer(amount: str = "100.00", type_: str = "DEPOSIT", platform: str = "FIAT", instructions=None, **kw):
    req = {
        "amount": amount,
        "asset_id": "2",
        "client_id": "100",
        "type": type_,
        "platform": platform,
        "instructions": FIAT if instructions is None else instructions,
    }
    req.update(kw)
    return {"request": req}


def amounts(record: dict) -> dict[str, str]:
    return {b["type"]: b["amount"] for b in record["balances"]}


async def _usd(api: Api) -> dict:
    _, body, _ = await api.call("GET", "/v1/cefi/balances", params={"asset_name": "USD"})
    return body["data"][0]


async def test_balances_show_total_available_hold(api: Api) -> None:
    rec = await _usd(api)
    assert rec["id"] == "2" and rec["status"] == "ACTIVE"
    assert amounts(rec) == {"TOTAL": "1000000.00", "AVAILABLE": "1000000.00", "HOLD": "0.00"}
    await api.order(qty="1", price="50000.00")
    rec = await _usd(api)
    # 50000.00 plus the fee hold at the taker rate 0.002
    assert amounts(rec)["HOLD"] == "50100.00" and rec["fees_hold"] == "100.00"
    assert amounts(rec)["AVAILABLE"] == "949900.00"


async def test_fees_accrue_as_unsettled(api: Api) -> None:
    await api.order(101, side="SELL", qty="1", price="50000.00")
    await api.order(100, side="BUY", qty="1", price="50000.00")
    rec = await _usd(api)
    assert rec["unsettled_fees"] == "100.00"
    assert amounts(rec)["TOTAL"] == "949900.00"


async def test_deposit_and_withdraw(api: Api) -> None:
    status, t, _ = await api.call("POST", "/v1/cefi/transfers", json=transfer("250.50"))
    assert status == 200, t
    assert t["status"] == "INITIALIZED" and t["id"].isdigit()
    assert t["request"]["amount"] == "250.50" and t["request"]["instructions"] == FIAT
    assert amounts(await _usd(api))["TOTAL"] == "1000250.50"
    status, t, _ = await api.call("POST", "/v1/cefi/transfers", json=transfer("0.50", "WITHDRAW"))
    assert amounts(await _usd(api))["TOTAL"] == "1000250.00"
    status, page, _ = await api.call("GET", "/v1/cefi/transfers", params={"timestamp": "9" * 19})
    assert [x["status"] for x in page["data"]] == ["COMPLETED", "COMPLETED"]
    assert page["data"][0]["request"]["type"] == "WITHDRAW"
    assert len(page["data"][0]["timestamp"]) == 19 and "updated_timestamp" in page["data"][0]


async def test_withdraw_more_than_available_is_rejected(api: Api) -> None:
    """Answered INITIALIZED like any transfer; without a settlement delay it is decided at once."""
    status, t, _ = await api.call("POST", "/v1/cefi/transfers", json=transfer("2000000.00", "WITHDRAW"))
    assert status == 200 and t["status"] == "INITIALIZED"
    status, page, _ = await api.call("GET", "/v1/cefi/transfers", params={"timestamp": "9" * 19})
    assert page["data"][0]["status"] == "REJECTED" and page["data"][0]["reject_reason"] == "INSUFFICIENT_BALANCE"
    assert amounts(await _usd(api))["TOTAL"] == "1000000.00"


async def test_settlement_delay_keeps_transfers_active(api: Api) -> None:
    await api.call("POST", "/_sim/settlement-delay", client_id=None, json={"ms": 1000})
    _, t, _ = await api.call("POST", "/v1/cefi/transfers", json=transfer("10.00", "WITHDRAW"))
    status, page, _ = await api.call("GET", "/v1/cefi/transfers/active")
    assert [x["id"] for x in page["data"]] == [t["id"]]
    rec = await _usd(api)
    assert amounts(rec)["HOLD"] == "10.00"
    status, page, _ = await api.call("GET", "/v1/cefi/transfers/active", params={"transfer_id": t["id"]})
    assert len(page["data"]) == 1
    await api.advance(1)
    _, page, _ = await api.call("GET", "/v1/cefi/transfers/active")
    assert page["data"] == []
    assert amounts(await _usd(api))["TOTAL"] == "999990.00"
    status, _, _ = await api.call("GET", "/v1/cefi/transfers/active", params={"transfer_id": "999"})
    assert status == 404


async def test_crypto_instructions(api: Api) -> None:
    body = transfer("1.00", platform="CRYPTO", instructions={"address": "bc1qexample", "network": "bitcoin"})
    status, t, _ = await api.call("POST", "/v1/cefi/transfers", json=body)
    assert status == 200 and t["request"]["platform"] == "CRYPTO"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (transfer(platform="CRYPTO"), "request.instructions.fiat_account_id"),
        (transfer(instructions={"address": "x", "network": "y"}), "request.instructions.address"),
        (transfer(instructions={**FIAT, "includes_fee": "no"}), "request.instructions.includes_fee"),
        (transfer(instructions={**FIAT, "account_id": "nope"}), "request.instructions.account_id"),
        (transfer(amount="1.001"), "request.amount"),
        (transfer(amount="0"), "request.amount"),
        (transfer(asset_id="77"), "request.asset_id"),
        (transfer(type_="MOVE"), "request.type"),
        ({"request": {"amount": "1"}}, "request.asset_id"),
    ],
)
async def test_bad_transfers_are_400_naming_the_field(api: Api, body, field) -> None:
    status, problem, _ = await api.call("POST", "/v1/cefi/transfers", json=body)
    assert status == 400 and problem["error"]["detail"].startswith(field), problem
    _, page, _ = await api.call("GET", "/v1/cefi/transfers", params={"timestamp": "9" * 19})
    assert page["data"] == []


async def test_transfer_for_another_client_is_403(api: Api) -> None:
    status, _, _ = await api.call("POST", "/v1/cefi/transfers", json=transfer(client_id="101"))
    assert status == 403


async def test_clients_read_and_patch(api: Api) -> None:
    status, body, _ = await api.call("GET", "/v1/cefi/clients")
    assert body["data"] == [
        {"id": "100", "status": "ACTIVE", "info": {"self_trade_prevention": "NONE", "mnemonic": "alice"}}
    ]
    _, body, _ = await api.call("GET", "/v1/cefi/clients", params={"mnemonic": "bob"})
    assert body["data"] == []
    status, _, _ = await api.call("GET", "/v1/cefi/clients", params={"id": "101"})
    assert status == 403
    status, body, _ = await api.call(
        "PATCH", "/v1/cefi/clients", json={"id": "100", "info": {"self_trade_prevention": "CANCEL_BOTH"}}
    )
    assert status == 200 and body["data"][0]["info"]["self_trade_prevention"] == "CANCEL_BOTH"
    status, problem, _ = await api.call(
        "PATCH", "/v1/cefi/clients", json={"id": "100", "info": {"self_trade_prevention": "SOMETIMES"}}
    )
    assert status == 400 and problem["error"]["detail"].startswith("info.self_trade_prevention")
    status, _, _ = await api.call(
        "PATCH", "/v1/cefi/clients", json={"id": "101", "info": {"self_trade_prevention": "NONE"}}
    )
    assert status == 403


async def test_client_stp_applies_to_orders(api: Api) -> None:
    await api.call(
        "PATCH", "/v1/cefi/clients", json={"id": "100", "info": {"self_trade_prevention": "CANCEL_AGGRESSIVE"}}
    )
    resting = await api.order(side="SELL", qty="1", price="50000.00")
    rec = await api.order(side="BUY", qty="1", price="50000.00")
    assert rec["status"] == "CANCELED" and rec["cancel_reason"] == "SELF_TRADE_PREVENTION"
    _, got, _ = await api.call("GET", f"/v1/cefi/orders/status/{resting['id']}")
    assert got["status"] == "ACTIVE"


async def test_balance_activity(api: Api) -> None:
    await api.call("POST", "/v1/cefi/transfers", json=transfer("5.00"))
    await api.order(101, side="SELL", qty="1", price="50000.00")
    await api.order(100, side="BUY", qty="1", price="50000.00")
    status, page, _ = await api.call("GET", "/v1/cefi/balances/activity")
    assert status == 200
    kinds = [e["type"] for e in page["data"]]
    assert kinds == ["TRADE", "DEPOSIT"]
    trade = page["data"][0]
    assert {"asset_id": "1", "amount": "1.00000000"} in trade["changes"]
    assert {"asset_id": "2", "amount": "-50000.00"} in trade["changes"]
    assert {"asset_id": "2", "amount": "-100.00"} in trade["changes"]


async def test_naming_a_client_that_does_not_exist_is_404_and_a_bad_id_400(api: Api) -> None:
    status, _, _ = await api.call("GET", "/v1/cefi/balances", params={"client_id": "555"})
    assert status == 404
    status, problem, _ = await api.call("GET", "/v1/cefi/balances", params={"client_id": "abc"})
    assert status == 400 and problem["error"]["detail"].startswith("client_id")
