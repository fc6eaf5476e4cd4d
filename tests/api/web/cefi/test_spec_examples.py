"""The interface description's own tables, pinned as literal expected values.

The conformance tests compare answers with our OpenAPI document, which our code also produces. These
tests copy the field names, formats and status codes out of the description
(``spec/platform-interfaces.md``: Resources and their fields, Errors, Limits, Versioning) as literals,
so a renamed or dropped field, a different status or a changed format fails here even when the OpenAPI
document changed with it. Fields the emulator adds (docs/cefi.md) are allowed next to the
description's; the description's own fields must all be there, spelled as it spells them.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.api.conftest import Api, scenario_doc

ID = re.compile(r"^[1-9][0-9]*$")  # "All identifiers of CeFi records are strings of decimal digits"
NS19 = re.compile(r"^[0-9]{19}$")  # "Nanosecond timestamps are 19-digit strings"
DECIMAL = re.compile(r"^[0-9]+(\.[0-9]+)?$")

ORDER_RECORD = {
    "id",
    "status",
    "order_info",
    "modify_info",
    "external_id",
    "ref_external_id",
    "pending_qty",
    "leaves_qty",
    "exeuted_qty",
    "executed_vwap",
}
ORDER_INFO = {
    "msg_id",
    "parent_id",
    "client_id",
    "instrument_id",
    "qty",
    "price",
    "flags",
    "side",
    "type",
    "tif",
    "exec_inst_flags",
    "hold_fee_rate",
    "stp",
}
MODIFY_INFO = {"msg_id", "parent_id", "client_id", "prev_modify", "new_qty", "new_price", "new_type"}
TRADE_RECORD = {
    "client_id",
    "instrument_id",
    "order_id",
    "trade_price",
    "trade_qty",
    "trade_fee_rate",
    "liq_flag",
    "match_id",
    "timestamp",
}
TRANSFER = {"id", "status", "request"}
TRANSFER_LISTED = TRANSFER | {"timestamp", "updated_timestamp"}
TRANSFER_REQUEST = {"amount", "asset_id", "client_id", "type", "platform", "instructions"}
FIAT = {"fiat_account_id", "identity_id", "account_id", "includes_fee"}
BALANCE = {"id", "status", "unsettled_fees", "fees_hold", "balances"}
PROBLEM = {"type", "title", "status", "detail"}
ORDER_STATES = {
    "INITIALIZED",
    "NEW_PENDING",
    "REJECTED",
    "ACTIVE",
    "FILLED",
    "CANCEL_PENDING",
    "CANCELED",
    "MODIFY_PENDING",
}

UUID = "0b1c2d3e-4f50-4a1b-8c2d-3e4f5a6b7c8d"
FIAT_INSTRUCTIONS = {"fiat_account_id": UUID, "identity_id": UUID, "account_id": UUID, "includes_fee": False}


def _has(record: dict[str, Any], fields: set[str]) -> None:
    assert fields <= set(record), sorted(fields - set(record))


async def _place(api: Api, client_id: int, side: str, qty: str, price: str, **extra: Any) -> dict[str, Any]:
    info = {
        "client_id": str(client_id),
        "instrument_id": "1",
        "side": side,
        "type": "LIMIT",
        "qty": qty,
        "price": price,
    }
    status, rec, _ = await api.call("POST", "/v1/cefi/orders", client_id=client_id, json={"info": info, **extra})
    assert status == 200, rec
    return rec


async def test_order_record_and_order_info_fields(api: Api) -> None:
    rec = await _place(api, 100, "BUY", "1", "50000.00", external_id="spec-1")
    _has(rec, ORDER_RECORD)
    _has(rec["order_info"], {"client_id", "instrument_id", "qty", "price", "side", "type"})
    assert set(rec["order_info"]) <= ORDER_INFO
    assert ID.match(rec["id"]) and rec["status"] in ORDER_STATES and rec["status"] == "ACTIVE"
    assert rec["external_id"] == "spec-1"
    for field in ("pending_qty", "leaves_qty", "exeuted_qty"):
        assert DECIMAL.match(rec[field]), field
    assert (rec["order_info"]["side"], rec["order_info"]["type"]) == ("BUY", "LIMIT")
    status, modified, _ = await api.call(
        "PATCH",
        "/v1/cefi/orders",
        json={"id": rec["id"], "info": {"client_id": "100", "new_qty": "0.5", "new_price": "50000.00"}},
    )
    assert status == 200, modified
    _has(modified, ORDER_RECORD)
    _has(modified["modify_info"], {"client_id", "new_qty", "new_price"})
    assert set(modified["modify_info"]) <= MODIFY_INFO


async def test_trade_record_fields_and_liq_flags(api: Api) -> None:
    await _place(api, 101, "SELL", "1", "50000.00")
    await _place(api, 100, "BUY", "1", "50000.00")
    status, page, _ = await api.call("GET", "/v1/cefi/orders", params={"timestamp": "9" * 19})
    assert status == 200
    (trade,) = page["data"]
    _has(trade, TRADE_RECORD)
    assert trade["liq_flag"] == "TAKER" and trade["client_id"] == "100"
    assert ID.match(trade["match_id"]) and ID.match(trade["order_id"]) and NS19.match(trade["timestamp"])
    status, page, _ = await api.call("GET", "/v1/cefi/orders", client_id=101, params={"timestamp": "9" * 19})
    assert page["data"][0]["liq_flag"] == "MAKER"


async def test_pagination_envelope_and_cursor(api: Api) -> None:
    for price in ("49000.00", "49001.00", "49002.00"):
        await _place(api, 100, "BUY", "0.1", price)
    status, page, _ = await api.call("GET", "/v1/cefi/orders/all", params={"size": "2", "timestamp": "9" * 19})
    assert status == 200 and set(page) == {"data", "pagination"} and set(page["pagination"]) == {"size", "next_cursor"}
    assert page["pagination"]["size"] == 2 and len(page["data"]) == 2
    cursor = page["pagination"]["next_cursor"]
    assert isinstance(cursor, str) and NS19.match(cursor)
    status, rest, _ = await api.call("GET", "/v1/cefi/orders/all", params={"size": "2", "timestamp": cursor})
    assert [o["order_info"]["price"] for o in rest["data"]] == ["49000.00"]
    assert rest["pagination"]["next_cursor"] is None


@pytest.mark.parametrize(("size", "expected"), [(None, 10), ("1", 1), ("100", 100), ("101", 100), ("5000", 100)])
async def test_page_size_default_and_clamp(api: Api, size: str | None, expected: int) -> None:
    params = {"timestamp": "9" * 19} | ({} if size is None else {"size": size})
    status, page, _ = await api.call("GET", "/v1/cefi/orders/all", params=params)
    assert status == 200 and page["pagination"]["size"] == expected


@pytest.mark.parametrize(("skip", "status"), [("0", 200), ("2147483647", 200), ("2147483648", 400), ("-1", 400)])
async def test_skip_range(api: Api, skip: str, status: int) -> None:
    got, _, _ = await api.call("GET", "/v1/cefi/orders", params={"timestamp": "9" * 19, "skip": skip})
    assert got == status


async def test_transfer_fields(api: Api) -> None:
    request = {
        "amount": "10.00",
        "asset_id": "2",
        "client_id": "100",
        "type": "DEPOSIT",
        "platform": "FIAT",
        "instructions": FIAT_INSTRUCTIONS,
    }
    status, transfer, _ = await api.call("POST", "/v1/cefi/transfers", json={"request": request})
    assert status == 200, transfer
    _has(transfer, TRANSFER)
    assert ID.match(transfer["id"]) and transfer["status"] == "INITIALIZED"
    _has(transfer["request"], TRANSFER_REQUEST)
    assert set(transfer["request"]["instructions"]) == FIAT
    status, page, _ = await api.call("GET", "/v1/cefi/transfers", params={"timestamp": "9" * 19})
    listed = page["data"][0]
    _has(listed, TRANSFER_LISTED)
    assert NS19.match(listed["timestamp"]) and NS19.match(listed["updated_timestamp"])


async def test_balance_client_asset_instrument_and_market_data_fields(api: Api) -> None:
    _, page, _ = await api.call("GET", "/v1/cefi/balances")
    for record in page["data"]:
        _has(record, BALANCE)
        assert isinstance(record["balances"], list)
    _, page, _ = await api.call("GET", "/v1/cefi/clients")
    (client,) = page["data"]
    _has(client, {"id", "status", "info"})
    assert client["status"] == "ACTIVE" and "self_trade_prevention" in client["info"]
    _, page, _ = await api.call("GET", "/v1/cefi/assets", client_id=None)
    assert all({"id", "status", "fields"} <= set(a) and a["status"] == "ACTIVE" for a in page["data"])
    _, page, _ = await api.call("GET", "/v1/cefi/instruments", client_id=None)
    for inst in page["data"]:
        _has(inst, {"id", "status", "info", "stats"})
        assert inst["status"] in {"DISABLED", "OPENING", "ACTIVE", "HALTED"}
    _, page, _ = await api.call("GET", "/v1/cefi/market/quote", client_id=None)
    for entry in page["data"]:
        _has(entry, {"id", "symbol", "info"})
        assert len(entry["symbol"]) <= 31


async def test_health_and_versions_fields(api: Api) -> None:
    _, health, _ = await api.call("GET", "/v1/cefi/health", client_id=None)
    _has(health, {"status", "timestamp", "service"})
    _, versions, _ = await api.call("GET", "/v1/cefi/versions", client_id=None)
    _has(versions, {"supported_versions", "default_version", "version_header"})
    assert versions["version_header"] == "X-Svc-Version" and versions["default_version"] == "v2026_01_23"


async def test_quote_fields_per_version(api_factory: Any) -> None:
    for start, expected in (
        ("2026-11-02T09:00:00Z", {"qty", "price", "notional", "notional_residual"}),
        ("2026-10-02T09:00:00Z", {"qty", "price"}),
    ):
        api = await api_factory(scenario_doc(start=start))
        await _place(api, 101, "SELL", "1", "50000.00")
        status, quote, _ = await api.call(
            "POST",
            "/v1/cefi/markets/quote",
            client_id=None,
            json={"qty": "0.5", "instrument_id": "1", "side": "BUY", "qty_unit": "BASE"},
        )
        assert status == 200 and set(quote) == expected, quote
        assert quote["qty"] == "0.5" or quote["qty"].rstrip("0") == "0.5"  # BASE: qty echoes the request
        status, vwap, _ = await api.call(
            "POST", "/v1/cefi/market/quote", client_id=None, json={"qty": "100.00", "instrument_id": "1"}
        )
        assert status == 200 and {"quote", "buy_amount"} <= set(vwap)


async def test_problem_shape_per_version(api_factory: Any) -> None:
    api = await api_factory()
    status, body, headers = await api.call("GET", "/v1/cefi/orders")  # timestamp omitted
    assert status == 400 and set(body) == {"error"} and set(body["error"]) >= PROBLEM
    assert body["error"]["status"] == 400 and isinstance(body["error"]["status"], int)
    assert headers["Content-Type"].startswith("application/problem+json")
    old = await api_factory(scenario_doc(start="2026-10-02T09:00:00Z"))
    status, body, headers = await old.call("GET", "/v1/cefi/orders")
    assert status == 400 and set(body) >= PROBLEM and body["status"] == 400
    assert headers["Sunset"] == "Wed, 05 Aug 2026 00:00:00 GMT" and "Deprecation" in headers
    status, raw, _ = await old.call("GET", "/v1/cefi/assets", client_id=None)
    assert status == 200 and isinstance(raw, list)  # v2024_01_01: the raw array


# --- the Errors table -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/cefi/orders", "/v1/cefi/transfers"])
async def test_400_list_read_without_timestamp(api: Api, path: str) -> None:
    status, _, _ = await api.call("GET", path)
    assert status == 400


async def test_401_signature_for_another_path(api: Api) -> None:
    headers = api.headers(100, "GET", "/v1/cefi/orders/active", b"")
    resp = await api.client.get("/v1/cefi/balances", headers=headers)
    assert resp.status == 401


@pytest.mark.parametrize(
    "path", ["/api/v1/orders", "/api/v1/orders/list", "/api/v1/cefi/health", "/v1/cefi/order", "/v1/cefi/balance"]
)
async def test_404_removed_prefix_and_singular_aliases(api: Api, path: str) -> None:
    resp = await api.client.get(path, allow_redirects=False)
    assert resp.status == 404


async def test_404_paper_trading_in_production(api_factory: Any) -> None:
    api = await api_factory(environment="production")
    resp = await api.client.post("/v1/paper-trading/funds", json={"asset": "USD", "amount": "1"})
    assert resp.status == 404


@pytest.mark.parametrize(
    ("ext", "status"),
    [("a" * 18, 200), ("a" * 19, 400), ("Az09-_.~", 200), (UUID, 200), (UUID.upper(), 400), ("bad id", 400)],
)
async def test_external_id_format(api: Api, ext: str, status: int) -> None:
    info = {"client_id": "100", "instrument_id": "1", "side": "BUY", "type": "LIMIT", "qty": "0.1", "price": "40000.00"}
    got, body, _ = await api.call("POST", "/v1/cefi/orders", json={"external_id": ext, "info": info})
    assert got == status, body


@pytest.mark.parametrize("bad", ["0", "01", "1.0", "-1", "abc"])
async def test_ids_must_match_the_pattern(api: Api, bad: str) -> None:
    status, _, _ = await api.call("GET", "/v1/cefi/market/quote", client_id=None, params={"instrument_id": bad})
    assert status == 400


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/v1/auth/api-key/token", {"key_id": "k-x"}, 400),  # missing fields
        ("/v1/auth/api-key/token", {"key_id": "k-x", "timestamp": 1793610000, "signature": "AAAA"}, 401),  # unknown key
        ("/v1/auth/token/refresh", {}, 400),  # missing token
        ("/v1/auth/token/refresh", {"refresh_token": "not-a-token"}, 401),
    ],
)
async def test_auth_error_statuses(api: Api, path: str, body: dict[str, Any], status: int) -> None:
    resp = await api.client.post(path, json=body)
    assert resp.status == status


async def test_bearer_route_without_a_token_is_401(api: Api) -> None:
    resp = await api.client.post("/v1/paper-trading/funds", json={"asset": "USD", "amount": "1"})
    assert resp.status == 401
