"""Where the emulator follows the interface description to the letter, over real HTTP (issue 12):
aggressive pricing, partial client updates, unique activity timestamps under latency, v2024 lists,
quote-unit quotes."""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api


async def _market(api: Api, client_id: int, side: str, qty: str, *flags: str) -> dict[str, Any]:
    info: dict[str, Any] = {"client_id": str(client_id), "instrument_id": "1", "side": side,
                            "type": "MARKET", "qty": qty}
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
