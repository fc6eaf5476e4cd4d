"""CeFi direct public operations: health, versions, reference data and quotes.

Health, versions and the quote operations need no authentication. Assets and instruments are public
unless the server runs with ``--sign-reference-data``.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from cefisim.api.edge import versions
from cefisim.api.edge.problems import bad_request
from cefisim.api.edge.serialize import asset_record, instrument_record, iso, ns
from cefisim.api.edge.validate import F, check_object, query_id
from cefisim.api.web.cefi.identity import signed_client
from cefisim.api.web.cefi.reject_problems import problem_for
from cefisim.api.web.server.http import read_json, respond, respond_list
from cefisim.api.web.server.keys import OPTIONS, VERSION
from cefisim.api.web.server.venue_state import VENUE
from cefisim.engine import queries
from cefisim.engine.quotes import QuoteResult, bbo, format_vwap, quote_base, quote_notional
from cefisim.engine.reference import Instrument
from cefisim.engine.vocabulary import Side

MARKET_QUOTE = {"qty": F("positive", required=True), "instrument_id": F("id", required=True)}
MARKETS_QUOTE = {
    "qty": F("positive", required=True),
    "instrument_id": F("id", required=True),
    "side": F("enum", required=True, values=tuple(Side)),
    "qty_unit": F("enum", required=True, values=("BASE", "QUOTE")),
}


async def get_health(request: web.Request) -> web.Response:
    return respond({"status": "ok", "timestamp": iso(request[VENUE].sim.now_ns()), "service": "cefi-direct"})


async def get_versions(request: web.Request) -> web.Response:
    return respond(versions.versions_document(request[VENUE].sim.now_ns()))


async def _reference_read(request: web.Request) -> None:
    if request.app[OPTIONS].sign_reference_data:
        await signed_client(request)


async def get_assets(request: web.Request) -> web.Response:
    await _reference_read(request)
    venue = request[VENUE].sim.venue
    wanted = query_id(request.query, "id")
    name = request.query.get("name")
    found = [
        asset_record(a)
        for a in queries.assets(venue)
        if (wanted is None or a.id == wanted) and (name is None or a.name == name)
    ]
    return respond_list(request, found)


def instrument_stats(request: web.Request, inst: Instrument) -> dict[str, Any]:
    venue = request[VENUE].sim.venue
    bid, bid_qty, ask, ask_qty = bbo(venue, inst.id)
    last = queries.last_price(venue, inst.id)
    fmt = inst.price_grid.format
    return {
        "last_price": fmt(last) if last is not None else None,
        "best_bid": fmt(bid) if bid is not None else None,
        "best_bid_qty": inst.qty_grid.format(bid_qty) if bid is not None else None,
        "best_ask": fmt(ask) if ask is not None else None,
        "best_ask_qty": inst.qty_grid.format(ask_qty) if ask is not None else None,
    }


async def get_instruments(request: web.Request) -> web.Response:
    await _reference_read(request)
    venue = request[VENUE].sim.venue
    wanted = query_id(request.query, "id")
    symbol = request.query.get("symbol")
    found = [
        instrument_record(i, instrument_stats(request, i))
        for i in queries.instruments(venue)
        if (wanted is None or i.id == wanted) and (symbol is None or symbol in i.symbol)
    ]
    return respond_list(request, found)


async def get_market_quote(request: web.Request) -> web.Response:
    venue = request[VENUE].sim.venue
    raw = request.query.get("instrument_id")
    if raw is not None and raw == "":
        raise bad_request("instrument_id", "must not be empty")
    wanted = query_id(request.query, "instrument_id")
    entries = []
    now = queries.now(venue)
    for inst in queries.instruments(venue):
        if wanted is not None and inst.id != wanted:
            continue
        stats = instrument_stats(request, inst)
        stats["timestamp"] = ns(now)
        entries.append({"id": str(inst.id), "symbol": inst.symbol, "info": stats})
    return respond_list(request, entries)


def _quoted_instrument(request: web.Request, text: str) -> Instrument:
    inst = queries.instrument(request[VENUE].sim.venue, int(text))
    if inst is None:
        raise bad_request("instrument_id", f"unknown instrument {text}")
    return inst


async def post_market_quote(request: web.Request) -> web.Response:
    """VWAP quote for spending a quote-asset amount on the asks: ``quote`` and ``buy_amount``."""
    body = check_object(await read_json(request), MARKET_QUOTE, "")
    inst = _quoted_instrument(request, body["instrument_id"])
    amount = inst.quote.grid.to_units(body["qty"])
    if amount is None:
        raise bad_request("qty", f"finer than the quote asset's {inst.quote.decimals} decimals")
    found = quote_notional(request[VENUE].sim.venue, inst, Side.BUY, amount, request.app[OPTIONS].quote_max_levels)
    if not isinstance(found, QuoteResult):
        raise problem_for(found, "qty")
    return respond(
        {"quote": format_vwap(inst, found.sum_lt, found.lots), "buy_amount": inst.qty_grid.format(found.lots)}
    )


async def post_markets_quote(request: web.Request) -> web.Response:
    body = check_object(await read_json(request), MARKETS_QUOTE, "")
    inst = _quoted_instrument(request, body["instrument_id"])
    venue = request[VENUE].sim.venue
    max_levels = request.app[OPTIONS].quote_max_levels
    if body["qty_unit"] == "BASE":
        lots = inst.qty_grid.to_units(body["qty"])
        if lots is None:
            raise bad_request("qty", f"not a multiple of the qty increment {inst.qty_grid.text}")
        found = quote_base(venue, inst, body["side"], lots, max_levels)
        qty_text = body["qty"]
    else:
        amount = inst.quote.grid.to_units(body["qty"])
        if amount is None:
            raise bad_request("qty", f"finer than the quote asset's {inst.quote.decimals} decimals")
        found = quote_notional(venue, inst, body["side"], amount, max_levels)
        qty_text = None
    if not isinstance(found, QuoteResult):
        raise problem_for(found, "qty")
    out = {
        "qty": qty_text if qty_text is not None else inst.qty_grid.format(found.lots),
        "price": format_vwap(inst, found.sum_lt, found.lots),
    }
    if request.get(VERSION) != versions.V2024:
        grid = inst.quote.grid
        out["notional"] = grid.format(found.notional)
        out["notional_residual"] = grid.format(found.residual)
    return respond(out)
