"""Unsigned CeFi operations, schema versions, removed paths."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, scenario_doc


async def test_health(api: Api) -> None:
    status, body, _ = await api.call("GET", "/v1/cefi/health", client_id=None)
    assert status == 200
    assert body["status"] == "ok" and body["service"] == "cefi-direct"
    assert body["timestamp"] == "2026-11-02T09:00:00Z"


async def test_versions_after_removal_date(api: Api) -> None:
    status, body, headers = await api.call("GET", "/v1/cefi/versions", client_id=None)
    assert status == 200
    assert body == {
        "supported_versions": [{"version": "v2026_01_23", "deprecated": False}],
        "default_version": "v2026_01_23",
        "version_header": "X-Svc-Version",
    }
    assert "Deprecation" not in headers


async def test_versions_before_removal_date(api_factory) -> None:
    api = await api_factory(scenario_doc(start="2026-10-31T23:59:00Z"))
    status, body, headers = await api.call("GET", "/v1/cefi/versions", client_id=None)
    assert body["default_version"] == "v2024_01_01"
    old = body["supported_versions"][0]
    assert old["version"] == "v2024_01_01" and old["deprecated"] is True
    assert old["deprecation_date"].endswith("GMT")
    assert headers["Sunset"] == "Wed, 05 Aug 2026 00:00:00 GMT"
    assert headers["Deprecation"] == "@1769126400"  # RFC 9745: 2026-01-23, a structured-field date
    # the default switches when the engine clock passes 1 November 2026
    await api.advance(60)
    status, body, headers = await api.call("GET", "/v1/cefi/versions", client_id=None)
    assert status == 200 and body["default_version"] == "v2026_01_23"
    assert "Sunset" not in headers


async def test_explicit_v2024_after_removal_is_400(api: Api) -> None:
    for kwargs in ({"headers": {"X-Svc-Version": "v2024_01_01"}}, {"params": {"version": "v2024_01_01"}}):
        status, problem, _ = await api.call("GET", "/v1/cefi/assets", client_id=None, **kwargs)
        assert status == 400
        body = problem.get("error", problem)
        assert body["type"].endswith("unsupported-version")


async def test_unknown_version_is_400(api: Api) -> None:
    status, problem, _ = await api.call("GET", "/v1/cefi/assets", client_id=None, headers={"X-Svc-Version": "v9"})
    assert status == 400 and problem["error"]["type"].endswith("unsupported-version")


async def test_version_query_parameter_selects_the_version(api_factory) -> None:
    api = await api_factory(scenario_doc(start="2026-10-01T00:00:00Z"))
    status, body, _ = await api.call("GET", "/v1/cefi/assets", client_id=None, params={"version": "v2026_01_23"})
    assert status == 200 and isinstance(body, dict) and len(body["data"]) == 3


async def test_assets_filters(api: Api) -> None:
    status, body, _ = await api.call("GET", "/v1/cefi/assets", client_id=None)
    assert [a["id"] for a in body["data"]] == ["1", "2", "3"]
    assert body["data"][0]["status"] == "ACTIVE" and body["data"][0]["fields"]["name"] == "BTC"
    assert body["pagination"] == {"size": 3, "next_cursor": None}
    _, body, _ = await api.call("GET", "/v1/cefi/assets", client_id=None, params={"name": "USD"})
    assert [a["id"] for a in body["data"]] == ["2"]
    _, body, _ = await api.call("GET", "/v1/cefi/assets", client_id=None, params={"id": "3"})
    assert [a["fields"]["name"] for a in body["data"]] == ["ETH"]
    status, problem, _ = await api.call("GET", "/v1/cefi/assets", client_id=None, params={"id": "0"})
    assert status == 400 and problem["error"]["detail"].startswith("id")


async def test_instruments_symbol_is_substring_and_case_sensitive(api: Api) -> None:
    _, body, _ = await api.call("GET", "/v1/cefi/instruments", client_id=None, params={"symbol": "USD"})
    assert [i["id"] for i in body["data"]] == ["1", "2"]
    _, body, _ = await api.call("GET", "/v1/cefi/instruments", client_id=None, params={"symbol": "BTC-USD"})
    assert [i["id"] for i in body["data"]] == ["1"]
    _, body, _ = await api.call("GET", "/v1/cefi/instruments", client_id=None, params={"symbol": "btc"})
    assert body["data"] == []
    inst = (await api.call("GET", "/v1/cefi/instruments", client_id=None, params={"id": "1"}))[1]["data"][0]
    assert inst["status"] == "ACTIVE" and inst["info"]["symbol"] == "BTC-USD"
    assert inst["info"]["price_increment"] == "0.01" and inst["info"]["maker_fee"] == "0.001"


async def test_reference_data_can_require_signing(api_factory) -> None:
    api = await api_factory(sign_reference_data=True)
    status, _, _ = await api.call("GET", "/v1/cefi/assets", client_id=None)
    assert status == 401
    status, _, _ = await api.call("GET", "/v1/cefi/assets")
    assert status == 200


async def _book(api: Api) -> None:
    await api.order(101, side="SELL", qty="1", price="50000.00")
    await api.order(101, side="SELL", qty="2", price="50010.00")
    await api.order(101, side="BUY", qty="1", price="49990.00")


async def test_best_bid_offer(api: Api) -> None:
    await _book(api)
    status, body, _ = await api.call("GET", "/v1/cefi/market/quote", client_id=None, params={"instrument_id": "1"})
    assert status == 200
    entry = body["data"][0]
    assert entry["id"] == "1" and entry["symbol"] == "BTC-USD"
    assert entry["info"]["best_bid"] == "49990.00" and entry["info"]["best_ask"] == "50000.00"
    _, body, _ = await api.call("GET", "/v1/cefi/market/quote", client_id=None)
    assert [e["symbol"] for e in body["data"]] == ["BTC-USD", "ETH-USD"]
    status, problem, _ = await api.call("GET", "/v1/cefi/market/quote", client_id=None, params={"instrument_id": ""})
    assert status == 400 and problem["error"]["detail"].startswith("instrument_id")


async def test_vwap_quote_for_a_quote_amount(api: Api) -> None:
    await _book(api)
    status, body, _ = await api.call(
        "POST", "/v1/cefi/market/quote", client_id=None, json={"qty": "100010.00", "instrument_id": "1"}
    )
    assert status == 200, body
    assert body == {"quote": "50005.00", "buy_amount": "2.0000"}


async def test_markets_quote_base_and_quote(api: Api) -> None:
    await _book(api)
    req = {"qty": "1.5", "instrument_id": "1", "side": "BUY", "qty_unit": "BASE"}
    status, body, _ = await api.call("POST", "/v1/cefi/markets/quote", client_id=None, json=req)
    assert status == 200
    assert body == {"qty": "1.5", "price": "50003.333333", "notional": "75005.00", "notional_residual": "0.00"}
    req = {"qty": "60000", "instrument_id": "1", "side": "BUY", "qty_unit": "QUOTE"}
    status, body, _ = await api.call("POST", "/v1/cefi/markets/quote", client_id=None, json=req)
    # 1 BTC at 50000 leaves 10000.00, which buys 0.1999 BTC at 50010 (0.2 would cost 10002.00)
    assert body["qty"] == "1.1999"
    assert body["notional"] == "59997.00"
    assert body["notional_residual"] == "3.00"
    req = {"qty": "1", "instrument_id": "1", "side": "SELL", "qty_unit": "BASE"}
    _, body, _ = await api.call("POST", "/v1/cefi/markets/quote", client_id=None, json=req)
    assert body["price"] == "49990.00"


async def test_markets_quote_v2024_has_no_notional(api_factory) -> None:
    api = await api_factory(scenario_doc(start="2026-10-01T00:00:00Z"))
    await _book(api)
    req = {"qty": "1", "instrument_id": "1", "side": "BUY", "qty_unit": "BASE"}
    _, body, _ = await api.call("POST", "/v1/cefi/markets/quote", client_id=None, json=req)
    assert body == {"qty": "1", "price": "50000.00"}


@pytest.mark.parametrize(
    ("req", "field"),
    [
        ({"qty": "1", "instrument_id": "1", "side": "BUY"}, "qty_unit"),
        ({"qty": "1", "instrument_id": "1", "side": "HOLD", "qty_unit": "BASE"}, "side"),
        ({"qty": "1e3", "instrument_id": "1", "side": "BUY", "qty_unit": "BASE"}, "qty"),
        ({"qty": "1.00001", "instrument_id": "1", "side": "BUY", "qty_unit": "BASE"}, "qty"),
        ({"qty": "1", "instrument_id": "9", "side": "BUY", "qty_unit": "BASE"}, "instrument_id"),
        ({"qty": "100", "instrument_id": "1", "side": "BUY", "qty_unit": "BASE"}, "qty"),
    ],
)
async def test_markets_quote_errors_name_the_field(api: Api, req, field) -> None:
    await _book(api)
    status, problem, _ = await api.call("POST", "/v1/cefi/markets/quote", client_id=None, json=req)
    assert status == 400 and problem["error"]["detail"].startswith(field), problem


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/orders",
        "/api/v1/orders/list",
        "/api/v1/health",
        "/v1/cefi/order",
        "/v1/cefi/balance",
        "/v1/cefi/transfer",
        "/v1/cefi/client",
        "/v1/cefi/asset",
    ],
)
async def test_removed_and_singular_paths_are_404_without_redirect(api: Api, path) -> None:
    status, problem, headers = await api.call("GET", path, client_id=None)
    assert status == 404 and "Location" not in headers
    assert problem.get("error", problem)["status"] == 404


async def test_wrong_method_is_405_problem(api: Api) -> None:
    status, problem, headers = await api.call("PUT", "/v1/cefi/orders", client_id=None)
    assert status == 405 and "POST" in headers["Allow"]
    error = problem["error"]  # the CeFi problem shape: RFC 7807 members under "error"
    assert error["status"] == 405 and error["type"].endswith("/method-not-allowed") and "PUT" in error["detail"]


async def test_oversized_body_is_413(api_factory) -> None:
    api = await api_factory(max_body_bytes=1024)
    status, problem, _ = await api.call(
        "POST", "/v1/cefi/markets/quote", client_id=None, body=b"{" + b" " * 4096 + b"}"
    )
    assert status == 413 and problem["error"]["status"] == 413
