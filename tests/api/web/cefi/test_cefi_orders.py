"""Order entry, modify, cancel, status and listings over real HTTP."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api, scenario_doc


def _state(api: Api) -> tuple:
    v = api.sim.venue
    balances = tuple((c.id, a, b.total, b.hold) for c in v.accounts.values() for a, b in sorted(c.balances.items()))
    books = tuple((i, b.best_bid(), b.best_ask()) for i, b in v.books.items())
    return v.next_order_id, balances, books, tuple(len(c.orders) for c in v.accounts.values())


async def test_place_limit_order_returns_the_order_record(api: Api) -> None:
    rec = await api.order(qty="1.5", price="50000.5", external_id="my-order-1", msg_id="m1", parent_id="0")
    assert rec["status"] == "ACTIVE"
    assert rec["id"].isdigit()
    assert rec["external_id"] == "my-order-1"
    info = rec["order_info"]
    assert info["qty"] == "1.5" and info["price"] == "50000.5"  # the request's own spelling
    assert info["client_id"] == "100" and info["instrument_id"] == "1"
    assert info["side"] == "BUY" and info["type"] == "LIMIT" and info["tif"] == "GTC"
    assert info["msg_id"] == "m1" and info["parent_id"] == "0"
    assert rec["leaves_qty"] == "1.5000" and rec["exeuted_qty"] == "0.0000" and rec["pending_qty"] == "0.0000"
    assert rec["executed_vwap"] == "0.00"
    assert set(rec) >= {
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


async def test_trade_between_two_clients_and_vwap(api: Api) -> None:
    await api.order(101, side="SELL", qty="1", price="50000.00")
    await api.order(101, side="SELL", qty="1", price="50001.00")
    rec = await api.order(100, side="BUY", qty="1.5", price="50001.00")
    assert rec["status"] == "FILLED"
    assert rec["exeuted_qty"] == "1.5000"
    assert rec["executed_vwap"] == "50000.333333"
    status, page, _ = await api.call("GET", "/v1/cefi/orders", params={"timestamp": "9" * 19})
    assert status == 200
    trades = page["data"]
    assert [t["trade_qty"] for t in trades] == ["0.5000", "1.0000"]  # newest first
    t = trades[0]
    assert t["liq_flag"] == "TAKER" and t["trade_price"] == "50001.00" and t["trade_fee_rate"] == "0.002"
    assert len(t["timestamp"]) == 19 and t["match_id"].isdigit() and t["order_id"] == rec["id"]


async def test_business_rejection_is_a_rejected_record(api: Api) -> None:
    rec = await api.order(price="50000.001")
    assert rec["status"] == "REJECTED"
    assert rec["reject_reason"] == "PRICE_OFF_GRID"
    status, got, _ = await api.call("GET", f"/v1/cefi/orders/status/{rec['id']}")
    assert status == 200 and got["status"] == "REJECTED"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda b: b["info"].pop("qty"), "info.qty"),
        (lambda b: b["info"].update(qty=1), "info.qty"),
        (lambda b: b["info"].update(qty="-1"), "info.qty"),
        (lambda b: b["info"].update(side="buy"), "info.side"),
        (lambda b: b["info"].update(instrument_id="01"), "info.instrument_id"),
        (lambda b: b["info"].update(instrument_id="99"), "info.instrument_id"),
        (lambda b: b["info"].update(flags=["ALO"]), "info.flags[0]"),
        (lambda b: b["info"].update(exec_inst_flags=["ALO", "ALO"]), "info.exec_inst_flags[1]"),
        (lambda b: b["info"].update(colour="red"), "info.colour"),
        (lambda b: b.update(external_id="x" * 19), "external_id"),
        (lambda b: b.update(external_id="4f1d7c9e-8a3b-3c5d-9e6f-0a1b2c3d4e5f"), "external_id"),
        (lambda b: b["info"].pop("price"), "info.price"),
        (lambda b: b.update(extra=1), "extra"),
        (lambda b: b.pop("info"), "info"),
    ],
)
async def test_malformed_order_is_a_400_naming_the_field_and_changes_nothing(api: Api, mutate, field) -> None:
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
    mutate(body)
    before = _state(api)
    status, problem, headers = await api.call("POST", "/v1/cefi/orders", json=body)
    assert status == 400, problem
    assert headers["Content-Type"].startswith("application/problem+json")
    err = problem["error"]
    assert err["status"] == 400 and err["detail"].startswith(field), err
    assert set(err) == {"type", "title", "status", "detail"}
    assert _state(api) == before


@pytest.mark.parametrize(
    ("mutate", "detail"),
    [
        (lambda b: b["info"].update(qty="1" * 41), "info.qty: longer than 40 characters"),
        (lambda b: b["info"].update(price="1" * 38 + ".00"), "info.price: longer than 40 characters"),
        (lambda b: b["info"].update(instrument_id="1" * 20), "info.instrument_id: longer than 19 digits"),
        (lambda b: b["info"].update(parent_id="1" * 20), "info.parent_id: longer than 19 digits"),
    ],
)
async def test_a_value_that_fits_the_pattern_but_is_too_long_says_so(api: Api, mutate, detail: str) -> None:
    """The limits the OpenAPI document states as maxLength: the problem names the length, not the
    pattern the value matches."""
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
    mutate(body)
    status, problem, _ = await api.call("POST", "/v1/cefi/orders", json=body)
    assert status == 400 and problem["error"]["detail"] == detail, problem


async def test_not_json_is_a_400(api: Api) -> None:
    status, problem, _ = await api.call("POST", "/v1/cefi/orders", body=b"{not json")
    assert status == 400 and problem["error"]["detail"].startswith("body")


async def test_order_for_another_client_is_403(api: Api) -> None:
    body = {
        "info": {
            "client_id": "101",
            "instrument_id": "1",
            "side": "BUY",
            "type": "LIMIT",
            "qty": "1",
            "price": "50000.00",
        }
    }
    status, problem, _ = await api.call("POST", "/v1/cefi/orders", json=body)
    assert status == 403 and "info.client_id" in problem["error"]["detail"]


async def test_modify_keeps_or_loses_priority_and_reports_modify_info(api: Api) -> None:
    rec = await api.order(qty="2", price="49000.00", external_id="mod-1")
    body = {"id": rec["id"], "info": {"client_id": "100", "new_qty": "1", "new_price": "49000.00", "msg_id": "m2"}}
    status, got, _ = await api.call("PATCH", "/v1/cefi/orders", json=body)
    assert status == 200, got
    assert got["leaves_qty"] == "1.0000"
    assert got["modify_info"]["new_qty"] == "1" and got["modify_info"]["client_id"] == "100"
    assert got["order_info"]["qty"] == "2"  # the order as entered
    # by external id only
    body = {"external_id": "mod-1", "info": {"client_id": "100", "new_qty": "3", "new_price": "49001.00"}}
    status, got, _ = await api.call("PATCH", "/v1/cefi/orders", json=body)
    assert status == 200 and got["leaves_qty"] == "3.0000"


async def test_modify_unknown_order_is_404_and_ended_order_is_409(api: Api) -> None:
    body = {"id": "999", "info": {"client_id": "100", "new_qty": "1", "new_price": "1.00"}}
    status, problem, _ = await api.call("PATCH", "/v1/cefi/orders", json=body)
    assert status == 404
    rec = await api.order()
    await api.call("DELETE", f"/v1/cefi/orders/{rec['id']}")
    body = {"id": rec["id"], "info": {"client_id": "100", "new_qty": "1", "new_price": "50000.00"}}
    status, problem, _ = await api.call("PATCH", "/v1/cefi/orders", json=body)
    assert status == 409 and problem["error"]["type"].endswith("order-not-active")


async def test_modify_needs_an_id_and_a_price(api: Api) -> None:
    status, problem, _ = await api.call(
        "PATCH", "/v1/cefi/orders", json={"info": {"client_id": "100", "new_qty": "1", "new_price": "1"}}
    )
    assert status == 400 and problem["error"]["detail"].startswith("id")
    status, problem, _ = await api.call(
        "PATCH", "/v1/cefi/orders", json={"id": "1", "info": {"client_id": "100", "new_qty": "1"}}
    )
    assert status == 400 and problem["error"]["detail"].startswith("info.new_price")


async def test_cancel_by_exchange_id_and_by_external_id(api: Api) -> None:
    a = await api.order(external_id="cx-a")
    b = await api.order(external_id="cx-b")
    status, got, _ = await api.call("DELETE", f"/v1/cefi/orders/{a['id']}")
    assert status == 200 and got["status"] == "CANCELED" and got["leaves_qty"] == "0.0000"
    assert got["cancel_reason"] == "REQUESTED"  # the engine does not store it: the record derives it
    status, got, _ = await api.call("DELETE", "/v1/cefi/orders/cx-b")
    assert status == 200 and got["status"] == "CANCELED" and got["id"] == b["id"]
    status, problem, _ = await api.call("DELETE", "/v1/cefi/orders/cx-b")
    assert status == 409
    status, problem, _ = await api.call("DELETE", "/v1/cefi/orders/nope")
    assert status == 404
    status, problem, _ = await api.call("DELETE", "/v1/cefi/orders/bad%20id!")
    assert status == 400 and problem["error"]["detail"].startswith("ref_id")


async def test_other_clients_orders_are_not_found(api: Api) -> None:
    rec = await api.order(101)
    status, _, _ = await api.call("DELETE", f"/v1/cefi/orders/{rec['id']}", client_id=100)
    assert status == 404
    status, _, _ = await api.call("GET", f"/v1/cefi/orders/status/{rec['id']}", client_id=100)
    assert status == 404


async def test_listings_paginate_to_the_end_over_several_pages(api: Api) -> None:
    ids = [(await api.order(qty="0.1", price=f"{49000 + i}.00"))["id"] for i in range(23)]
    seen: list[str] = []
    cursor = "9" * 19
    pages = 0
    while cursor is not None:
        status, page, _ = await api.call("GET", "/v1/cefi/orders/all", params={"timestamp": cursor, "size": "10"})
        assert status == 200
        assert page["pagination"]["size"] == 10
        seen += [o["id"] for o in page["data"]]
        cursor = page["pagination"]["next_cursor"]
        pages += 1
        if not page["data"]:
            break
    assert seen == list(reversed(ids))
    assert pages == 3
    status, page, _ = await api.call("GET", "/v1/cefi/orders/active", params={"size": "5", "skip": "20"})
    assert [o["id"] for o in page["data"]] == list(reversed(ids))[20:]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "timestamp"),
        ({"timestamp": "123"}, "timestamp"),
        ({"timestamp": "9" * 19, "size": "0"}, "size"),
        ({"timestamp": "9" * 19, "size": "x"}, "size"),
        ({"timestamp": "9" * 19, "skip": "2147483648"}, "skip"),
        ({"timestamp": "9" * 19, "skip": "-1"}, "skip"),
    ],
)
async def test_listing_parameters_are_checked(api: Api, params, field) -> None:
    status, problem, _ = await api.call("GET", "/v1/cefi/orders", params=params)
    assert status == 400 and problem["error"]["detail"].startswith(field)


async def test_page_size_is_clamped_to_100(api: Api) -> None:
    status, page, _ = await api.call("GET", "/v1/cefi/orders", params={"timestamp": "9" * 19, "size": "1000"})
    assert status == 200 and page["pagination"]["size"] == 100


async def test_pagination_params_do_not_change_the_signature(api: Api) -> None:
    # the signature covers the path only; the query is added after signing
    status, _, _ = await api.call("GET", "/v1/cefi/transfers", params={"timestamp": "9" * 19, "size": "3", "skip": "1"})
    assert status == 200


async def test_activity_lists_confirms_trades_cancels_and_modifies(api: Api) -> None:
    rest = await api.order(qty="2", price="49000.00")
    await api.call(
        "PATCH",
        "/v1/cefi/orders",
        json={"id": rest["id"], "info": {"client_id": "100", "new_qty": "1", "new_price": "49000.00"}},
    )
    await api.order(101, side="SELL", qty="0.5", price="49000.00")
    await api.call("DELETE", f"/v1/cefi/orders/{rest['id']}")
    await api.order(price="1.00")  # outside the band: rejected
    status, page, _ = await api.call("GET", "/v1/cefi/orders/activity", params={"size": "100"})
    assert status == 200
    kinds = [item["type"] for item in page["data"]]
    assert kinds == ["REJECT", "CANCEL", "TRADE", "MODIFY", "CONFIRM"]
    assert page["data"][1]["detail"] == "REQUESTED"
    stamps = [item["timestamp"] for item in page["data"]]
    assert stamps == sorted(stamps, reverse=True)


async def test_trade_listing_is_the_last_24_hours(api: Api) -> None:
    await api.order(101, side="SELL", qty="1", price="50000.00")
    await api.order(100, side="BUY", qty="1", price="50000.00")
    status, page, _ = await api.call("GET", "/v1/cefi/orders/trade")
    assert len(page["data"]) == 1
    await api.advance(86_401)
    status, page, _ = await api.call("GET", "/v1/cefi/orders/trade")
    assert status == 200 and page["data"] == []


async def test_order_status_retention_is_limited(api: Api) -> None:
    rec = await api.order()
    await api.call("DELETE", f"/v1/cefi/orders/{rec['id']}")
    status, _, _ = await api.call("GET", f"/v1/cefi/orders/status/{rec['id']}")
    assert status == 200
    await api.advance(86_401)
    status, _, _ = await api.call("GET", f"/v1/cefi/orders/status/{rec['id']}")
    assert status == 404


async def test_latency_shows_pending_states(api_factory) -> None:
    api = await api_factory()
    status, _, _ = await api.call("POST", "/_sim/latency", client_id=None, json={"entry_ms": 100, "cancel_ms": 100})
    assert status == 200
    rec = await api.order()
    assert rec["status"] == "NEW_PENDING" and rec["pending_qty"] == "1.0000" and rec["leaves_qty"] == "0.0000"
    await api.advance(0.1)
    status, got, _ = await api.call("GET", f"/v1/cefi/orders/status/{rec['id']}")
    assert got["status"] == "ACTIVE"
    status, got, _ = await api.call("DELETE", f"/v1/cefi/orders/{rec['id']}")
    assert got["status"] == "CANCEL_PENDING"
    await api.advance(0.1)
    status, got, _ = await api.call("GET", f"/v1/cefi/orders/status/{rec['id']}")
    assert got["status"] == "CANCELED"


async def test_v2024_returns_raw_arrays_and_bare_problems(api_factory) -> None:
    api = await api_factory(scenario_doc(start="2026-10-01T09:00:00Z"))
    await api.order()
    status, body, headers = await api.call("GET", "/v1/cefi/orders/all")
    assert status == 200 and isinstance(body, list) and len(body) == 1
    assert "Deprecation" in headers and "Sunset" in headers
    status, problem, headers = await api.call("GET", "/v1/cefi/orders")
    assert status == 400 and problem["status"] == 400 and "error" not in problem
    assert "Sunset" in headers
    status, body, headers = await api.call("GET", "/v1/cefi/orders/all", headers={"X-Svc-Version": "v2026_01_23"})
    assert isinstance(body, dict) and body["pagination"]["next_cursor"] is None
    assert "Deprecation" not in headers


@pytest.mark.parametrize(
    ("mutate", "detail"),
    [
        (lambda info: info.pop("price"), "info.price: is required for LIMIT orders"),
        (lambda info: info.update(instrument_id="99"), "info.instrument_id: unknown instrument 99"),
        (lambda info: info.update(hold_fee_rate="0.0000000001"), "info.hold_fee_rate: has more than 9 decimals"),
        (lambda info: info.update(type="MARKET", price=None, hold_fee_rate="1.0000000001"), "info.hold_fee_rate"),
    ],
)
async def test_an_order_the_venue_refuses_as_a_request_is_a_400_and_never_journaled(
    api: Api, monkeypatch: pytest.MonkeyPatch, mutate, detail: str
) -> None:
    """The engine's ``order_reject`` decides, the handler names the field: nothing reaches
    ``Simulation.submit``, which journals every command it is given."""
    submitted: list[object] = []
    monkeypatch.setattr(api.sim, "submit", submitted.append)
    info = {"client_id": "100", "instrument_id": "1", "side": "BUY", "type": "LIMIT", "qty": "1", "price": "50000.00"}
    mutate(info)
    status, problem, _ = await api.call("POST", "/v1/cefi/orders", json={"info": info})
    assert status == 400 and submitted == []
    assert problem == {
        "error": {
            "type": "https://cefisim.dev/problems/invalid-request",
            "title": "Bad Request",
            "status": 400,
            "detail": problem["error"]["detail"],
        }
    }
    assert problem["error"]["detail"].startswith(detail), problem
