"""Where the emulator follows the interface description to the letter, over real HTTP (issue 12):
aggressive pricing, partial client updates, unique activity timestamps under latency, v2024 lists,
quote-unit quotes, the Deprecation and Sunset headers."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.api.conftest import Api, scenario_doc


async def _market(api: Api, client_id: int, side: str, qty: str, *flags: str) -> dict[str, Any]:
    info: dict[str, Any] = {
        "client_id": str(client_id),
        "instrument_id": "1",
        "side": side,
        "type": "MARKET",
        "qty": qty,
    }
    if flags:
        info["flags"] = list(flags)
    status, rec, _ = await api.call("POST", "/v1/cefi/orders", client_id=client_id, json={"info": info})
    assert status == 200, rec
    return rec


# --- USE_AGGRESSIVE_PRICING ------------------------------------------------------------------------


async def test_aggressive_market_buy_trades_where_a_plain_one_would(api: Api) -> None:
    # the repro: the best offer (31600) lies beyond the band around the last trade (30000)
    await api.order(100, side="SELL", qty="0.1", price="31600.00")
    await api.order(100, side="SELL", qty="0.1", price="30000.00")
    await api.order(101, side="BUY", qty="0.1", price="30000.00")
    rec = await _market(api, 101, "BUY", "0.05", "USE_AGGRESSIVE_PRICING")
    assert rec["status"] == "FILLED", rec
    assert rec["exeuted_qty"] == "0.0500" and rec["executed_vwap"] == "31600.00"


async def test_aggressive_market_buy_reaches_the_band_edge_above_the_last_trade(api: Api) -> None:
    await api.order(100, side="SELL", qty="1", price="30000.00")
    await api.order(101, side="BUY", qty="1", price="30000.00")  # last trade 30000
    await api.order(100, side="SELL", qty="1", price="31200.00")
    await api.order(100, side="SELL", qty="1", price="29000.00")  # plain reach: 29000 * 1.05 = 30450
    rec = await _market(api, 101, "BUY", "1.5", "USE_AGGRESSIVE_PRICING")  # reach 30000 * 1.05
    assert rec["status"] == "FILLED" and rec["executed_vwap"] == "29733.333333"


# --- unique timestamps on the delayed paths -------------------------------------------------------


async def _walk(api: Api, path: str) -> list[dict[str, Any]]:
    """Every record of a listing by pages of one, following ``next_cursor``."""
    seen: list[dict[str, Any]] = []
    params = {"size": "1"}
    while True:
        status, page, _ = await api.call("GET", path, params=params)
        assert status == 200, page
        seen += page["data"]
        cursor = page["pagination"]["next_cursor"]
        if cursor is None or not page["data"]:
            return seen
        params = {"size": "1", "timestamp": cursor}


async def test_a_walk_by_pages_of_one_sees_every_delayed_record(api: Api) -> None:
    for path, body in (
        ("/_sim/latency", {"entry_ms": 100, "modify_ms": 100, "cancel_ms": 100}),
        ("/_sim/settlement-delay", {"ms": 100}),
    ):
        status, got, _ = await api.call("POST", path, client_id=None, json=body)
        assert status == 200, got
    a = await api.order(qty="1", price="49000.00")
    b = await api.order(qty="1", price="48000.00")
    await api.order(instrument_id="2", qty="1", price="3000.00")  # rejected late: its instrument halts
    status, _, _ = await api.call("POST", "/_sim/instruments/2/status", client_id=None, json={"status": "HALTED"})
    assert status == 200
    await api.advance(0.1)  # three acknowledgements at one instant
    status, _, _ = await api.call(
        "PATCH",
        "/v1/cefi/orders",
        json={"id": a["id"], "info": {"client_id": "100", "new_qty": "0.5", "new_price": "49000.00"}},
    )
    assert status == 200
    status, _, _ = await api.call("DELETE", f"/v1/cefi/orders/{b['id']}")
    assert status == 200
    await api.order(qty="1", price="47000.00")
    for _ in range(2):
        status, got, _ = await api.call(
            "POST",
            "/v1/cefi/transfers",
            json={
                "request": {
                    "amount": "10",
                    "asset_id": "2",
                    "client_id": "100",
                    "type": "DEPOSIT",
                    "platform": "CRYPTO",
                    "instructions": {"address": "addr", "network": "net"},
                }
            },
        )
        assert status == 200, got
    await api.advance(0.1)  # a modify, a cancel, a confirm and two settlements at one instant

    for path, kinds in (("/v1/cefi/orders/activity", 7), ("/v1/cefi/balances/activity", 2)):
        status, page, _ = await api.call("GET", path, params={"size": "100"})
        assert status == 200
        stamps = [item["timestamp"] for item in page["data"]]
        assert len(stamps) == kinds
        assert stamps == sorted(set(stamps), reverse=True)  # unique, newest first
        assert await _walk(api, path) == page["data"]


# --- PATCH /clients: a partial update -------------------------------------------------------------


async def test_patch_clients_takes_back_what_get_clients_returns(api: Api) -> None:
    _, body, _ = await api.call("GET", "/v1/cefi/clients")
    record = body["data"][0]
    record["info"]["self_trade_prevention"] = "CANCEL_BOTH"
    status, body, _ = await api.call("PATCH", "/v1/cefi/clients", json={"id": record["id"], "info": record["info"]})
    assert status == 200, body
    assert body["data"] == [record]
    assert api.sim.venue.clients[100].self_trade_prevention == "CANCEL_BOTH"


async def test_patch_clients_with_empty_info_changes_nothing(api: Api) -> None:
    _, before, _ = await api.call("GET", "/v1/cefi/clients")
    state = len(api.sim.venue.accounts[100].orders), api.sim.venue.clock.last
    status, body, _ = await api.call("PATCH", "/v1/cefi/clients", json={"id": "100", "info": {}})
    assert status == 200 and body == before
    assert (len(api.sim.venue.accounts[100].orders), api.sim.venue.clock.last) == state


async def test_patch_clients_refuses_a_changed_read_only_field(api: Api) -> None:
    status, problem, _ = await api.call(
        "PATCH",
        "/v1/cefi/clients",
        json={"id": "100", "info": {"self_trade_prevention": "CANCEL_BOTH", "mnemonic": "mallory"}},
    )
    assert status == 400
    assert problem["error"]["detail"].startswith("info.mnemonic") and "read-only" in problem["error"]["detail"]
    assert api.sim.venue.clients[100].self_trade_prevention == "NONE"  # nothing changed
    status, problem, _ = await api.call("PATCH", "/v1/cefi/clients", json={"id": "100", "info": {"colour": "red"}})
    assert status == 400 and problem["error"]["detail"].startswith("info.colour")


# --- v2024_01_01 lists: every matching record --------------------------------------------------------


async def test_v2024_lists_answer_every_matching_record(api_factory) -> None:
    api = await api_factory(scenario_doc(start="2026-10-01T09:00:00Z"))  # v2024_01_01 is the default
    ids = [(await api.order(qty="0.1", price=f"{49000 + i}.00"))["id"] for i in range(12)]
    newest_first = list(reversed(ids))
    for path in ("/v1/cefi/orders/all", "/v1/cefi/orders/active"):
        status, body, headers = await api.call("GET", path)
        assert status == 200 and "Deprecation" in headers
        assert [o["id"] for o in body] == newest_first
        _, body, _ = await api.call("GET", path, params={"skip": "3"})  # skip still applies
        assert [o["id"] for o in body] == newest_first[3:]
        _, body, _ = await api.call("GET", path, params={"size": "2"})  # a valid size cuts nothing under v2024
        assert len(body) == 12
        status, problem, _ = await api.call("GET", path, params={"size": "-1"})  # but is still checked
        assert status == 400 and problem["detail"].startswith("size")
    _, body, _ = await api.call("GET", "/v1/cefi/orders/activity")
    assert len(body) == 12
    _, body, _ = await api.call("GET", "/v1/cefi/orders/all", params={"timestamp": body[4]["timestamp"]})
    assert [o["id"] for o in body] == newest_first[5:]  # created strictly before the timestamp
    await api.advance(86_401)
    _, body, _ = await api.call("GET", "/v1/cefi/orders/all")
    assert body == []  # the 24-hour window still applies
    # under v2026_01_23 the same list is paged
    _, body, _ = await api.call("GET", "/v1/cefi/orders/active", headers={"X-Svc-Version": "v2026_01_23"})
    assert len(body["data"]) == 10 and body["pagination"]["next_cursor"] is not None


# --- quote note 4: the largest base quantity whose cost fits ---------------------------------------


async def _two_asks(api: Api) -> None:
    await api.order(101, side="SELL", qty="0.1", price="30000.00")
    await api.order(101, side="SELL", qty="0.2", price="30001.00")


async def _quote(api: Api, qty: str, side: str = "BUY") -> tuple[int, Any]:
    status, body, _ = await api.call(
        "POST",
        "/v1/cefi/markets/quote",
        client_id=None,
        json={"qty": qty, "instrument_id": "1", "side": side, "qty_unit": "QUOTE"},
    )
    return status, body


async def test_quote_amount_beyond_the_book_answers_the_whole_side_and_the_shortfall(api: Api) -> None:
    await _two_asks(api)
    status, body = await _quote(api, "100000")
    assert status == 200, body
    assert body == {"qty": "0.3000", "price": "30000.666667", "notional": "9000.20", "notional_residual": "90999.80"}
    status, body, _ = await api.call(
        "POST", "/v1/cefi/market/quote", client_id=None, json={"qty": "100000", "instrument_id": "1"}
    )
    assert status == 200 and body == {"quote": "30000.666667", "buy_amount": "0.3000"}


async def test_quote_amount_below_one_lot_answers_zero_and_the_whole_amount(api: Api) -> None:
    await _two_asks(api)
    status, body = await _quote(api, "1")
    assert status == 200, body
    assert body == {"qty": "0.0000", "price": "0.00", "notional": "0.00", "notional_residual": "1.00"}
    status, body, _ = await api.call(
        "POST", "/v1/cefi/market/quote", client_id=None, json={"qty": "1", "instrument_id": "1"}
    )
    assert status == 200 and body == {"quote": "0.00", "buy_amount": "0.0000"}


async def test_quote_amount_against_an_empty_side_is_a_problem(api: Api) -> None:
    await _two_asks(api)
    status, problem = await _quote(api, "100", side="SELL")
    assert status == 400 and problem["error"]["type"].endswith("not-enough-liquidity")


# --- Deprecation (RFC 9745) and Sunset (RFC 8594) ------------------------------------------------------

_SF_DATE = re.compile(r"@(-?[0-9]{1,15})")  # RFC 9651 section 3.3.7: "@" sf-integer
_IMF_FIXDATE = re.compile(  # RFC 9110 section 5.6.7
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} "
    r"[0-9]{2}:[0-9]{2}:[0-9]{2} GMT"
)


def parse_deprecation(value: str) -> datetime:
    """A strict RFC 9745 ``Deprecation`` value: a structured-field Date and nothing else."""
    m = _SF_DATE.fullmatch(value)
    if m is None:
        raise ValueError(f"Deprecation: not a structured-field date: {value!r}")
    return datetime.fromtimestamp(int(m.group(1)), UTC)


def parse_sunset(value: str) -> datetime:
    """A strict RFC 8594 ``Sunset`` value: an IMF-fixdate whose weekday matches its date."""
    if _IMF_FIXDATE.fullmatch(value) is None:
        raise ValueError(f"Sunset: not an IMF-fixdate: {value!r}")
    when = datetime.strptime(value, "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)
    if when.strftime("%a") != value[:3]:
        raise ValueError(f"Sunset: the weekday does not match the date: {value!r}")
    return when


def test_the_strict_parsers_refuse_the_other_format() -> None:
    for parse, value, message in (
        (parse_deprecation, "Fri, 23 Jan 2026 00:00:00 GMT", "Deprecation: not a structured-field date"),
        (parse_sunset, "@1785888000", "Sunset: not an IMF-fixdate"),
        (parse_sunset, "Mon, 05 Aug 2026 00:00:00 GMT", "Sunset: the weekday does not match the date"),  # a Wed
    ):
        with pytest.raises(ValueError, match=f"^{re.escape(f'{message}: {value!r}')}$"):
            parse(value)


async def test_deprecated_version_headers_are_a_structured_date_and_an_http_date(api_factory) -> None:
    api = await api_factory(scenario_doc(start="2026-10-01T09:00:00Z"))
    for method, path in (("GET", "/v1/cefi/orders/all"), ("GET", "/v1/cefi/orders")):  # a 200 and a 400
        status, _, headers = await api.call(method, path)
        assert status in (200, 400)
        deprecated = parse_deprecation(headers["Deprecation"])
        sunset = parse_sunset(headers["Sunset"])
        assert deprecated == datetime(2026, 1, 23, tzinfo=UTC)
        assert sunset == datetime(2026, 8, 5, tzinfo=UTC)
        assert deprecated < sunset
