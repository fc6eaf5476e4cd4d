"""Engine records to the description's JSON shapes (field names exactly as the venue spells them).

Amounts, prices and quantities are decimal strings on their grid; ids are decimal strings; record
timestamps are 19-digit nanosecond strings. Absent optional strings are ``null``; arrays are always
present. ``order_info`` is the order as entered (the request's own spelling of qty and price),
``modify_info`` the last modification as received.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cefisim.engine.book import Book
from cefisim.engine.queries import A_TRADE
from cefisim.engine.quotes import format_vwap
from cefisim.engine.records import Balance, Fill, Order, OrderExtra, Transfer
from cefisim.engine.reference import Asset, Client, Instrument
from cefisim.engine.units import format_rate
from cefisim.engine.vocabulary import WORKING, OrderStatus, OrderType, Side, TransferStatus

BUY = Side.BUY
LIMIT = OrderType.LIMIT
MARKET = OrderType.MARKET
NEW_PENDING = OrderStatus.NEW_PENDING
SELL = Side.SELL


_NS_19_DIGITS = 10**18


def ns(ts: int) -> str:
    # str() of a 19-digit number (every timestamp since 2001) costs half the zero-padding format
    return str(ts) if ts >= _NS_19_DIGITS else f"{ts:019d}"


def iso(ts_ns: int) -> str:
    dt = datetime.fromtimestamp(ts_ns // 1_000_000_000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


#: the details of an order without any (``order.extra is None``): every field at its default
_NO_EXTRA = OrderExtra()


def order_info(order: Order) -> dict[str, Any]:
    inst = order.instrument
    extra = order.extra or _NO_EXTRA
    if extra.qty_given is not None:  # spelling of the request, or pre-modify terms
        qty, price = extra.qty_given, extra.price_given
    else:
        qty = inst.qty_grid.format(order.qty)
        price = inst.price_grid.format(order.price) if order.type == LIMIT else None
    modify_info = extra.modify_info
    converted = modify_info is not None and modify_info.get("new_type") == MARKET
    return {
        "msg_id": extra.msg_id,
        "parent_id": extra.parent_id,
        "client_id": str(order.account.id),
        "instrument_id": str(inst.id),
        "qty": qty,
        "price": price,
        "flags": list(extra.flags),
        "side": order.side,
        "type": LIMIT if converted else order.type,
        "tif": order.tif,
        "exec_inst_flags": list(extra.exec_inst),
        "hold_fee_rate": extra.hold_fee_rate_given,
        "stp": extra.stp,
    }


def order_record(order: Order, status: str | None = None) -> dict[str, Any]:
    inst = order.instrument
    qgrid = inst.qty_grid
    extra = order.extra or _NO_EXTRA
    status = status or order.status
    open_lots = order.remaining  # = qty - executed
    executed = order.executed
    zero = qgrid.zero
    return {
        "id": str(order.id),
        "status": status,
        "order_info": order_info(order),
        "modify_info": extra.modify_info,
        "external_id": order.external_id,
        "ref_external_id": extra.ref_external_id,
        "pending_qty": qgrid.format(open_lots) if status == NEW_PENDING else zero,
        "leaves_qty": qgrid.format(open_lots) if status in WORKING else zero,
        "exeuted_qty": qgrid.format(executed) if executed else zero,
        "executed_vwap": format_vwap(inst, order.cum_lt, executed) if executed else inst.price_grid.zero,
        "reject_reason": extra.reject_reason,
        "cancel_reason": order.cancel_reason,  # derived: REQUESTED is not stored
        "timestamp": ns(order.created),
        "updated_timestamp": ns(order.updated),
    }


def trade_record(fill: Fill) -> dict[str, Any]:
    order = fill.order
    inst = order.instrument
    return {
        "client_id": str(order.account.id),
        "instrument_id": str(inst.id),
        "order_id": str(order.id),
        "trade_price": inst.price_grid.format(fill.price),
        "trade_qty": inst.qty_grid.format(fill.qty),
        "trade_fee_rate": format_rate(fill.fee_rate),
        "liq_flag": fill.liq_flag,
        "match_id": str(fill.match_id),
        "timestamp": ns(fill.timestamp),
    }


def activity_item(kind: str, ts: int, order: Order, fill: Fill | None, detail: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": kind,
        "timestamp": ns(ts),
        "order_id": str(order.id),
        "external_id": order.external_id,
        "client_id": str(order.account.id),
        "instrument_id": str(order.instrument.id),
        "side": order.side,
        "status": order.status,
        "detail": detail,
    }
    if kind == A_TRADE and fill is not None:
        item["trade"] = trade_record(fill)
    return item


def balance_record(asset: Asset, bal: Balance | None) -> dict[str, Any]:
    grid = asset.grid
    total = bal.total if bal else 0
    hold = bal.hold if bal else 0
    return {
        "id": str(asset.id),
        "status": "ACTIVE",
        "unsettled_fees": grid.format(bal.unsettled_fees if bal else 0),
        "fees_hold": grid.format(bal.fees_hold if bal else 0),
        "balances": [
            {"type": "TOTAL", "amount": grid.format(total)},
            {"type": "AVAILABLE", "amount": grid.format(total - hold)},
            {"type": "HOLD", "amount": grid.format(hold)},
        ],
    }


def transfer_record(t: Transfer, listing: bool, status: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": str(t.id),
        "status": status or t.status,
        "request": {
            "amount": t.amount_text,
            "asset_id": str(t.asset.id),
            "client_id": str(t.account.id),
            "type": t.type,
            "platform": t.platform,
            "instructions": dict(t.instructions),
        },
    }
    if t.reject_reason is not None and out["status"] == TransferStatus.REJECTED:  # INITIALIZED: not decided yet
        out["reject_reason"] = t.reject_reason
    if listing:
        out["timestamp"] = ns(t.created)
        out["updated_timestamp"] = ns(t.updated)
    return out


def client_record(c: Client) -> dict[str, Any]:
    return {
        "id": str(c.id),
        "status": c.status,
        "info": {"self_trade_prevention": c.self_trade_prevention, "mnemonic": c.mnemonic},
    }


def asset_record(a: Asset) -> dict[str, Any]:
    return {"id": str(a.id), "status": a.status, "fields": {"name": a.name, "decimals": a.decimals}}


def instrument_record(inst: Instrument, stats: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": str(inst.id),
        "status": inst.status,
        "info": {
            "symbol": inst.symbol,
            "base_asset_id": str(inst.base.id),
            "quote_asset_id": str(inst.quote.id),
            "price_increment": inst.price_grid.text,
            "qty_increment": inst.qty_grid.text,
            "min_qty": inst.qty_grid.format(inst.min_qty),
            "price_band": format_rate(inst.price_band),
            "maker_fee": format_rate(inst.maker_fee),
            "taker_fee": format_rate(inst.taker_fee),
        },
        "stats": stats,
    }


def book_doc(inst: Instrument, book: Book, levels: int, now: int) -> dict[str, Any]:
    """``GET /_sim/book/{id}`` and the live stream's depth: up to ``levels`` price levels a side, best
    first, each ``{"price", "qty", "orders"}``, the last trade price and the engine time."""
    fmt_p, fmt_q = inst.price_grid.format, inst.qty_grid.format

    def side(name: str) -> list[dict[str, Any]]:
        return [{"price": fmt_p(p), "qty": fmt_q(q), "orders": n} for p, q, n in book.depth(name, levels)]

    return {
        "instrument_id": str(inst.id),
        "symbol": inst.symbol,
        "status": inst.status,
        "bids": side(BUY),
        "asks": side(SELL),
        "last_price": fmt_p(book.last_price) if book.last_price is not None else None,
        "timestamp": ns(now),
    }


def sim_trade(inst: Instrument, match_id: int, price: int, lots: int, taker: Order, ts: int) -> dict[str, Any]:
    """A trade as ``GET /_sim/trades/{id}`` and the live stream show it (the taker's side and order)."""
    return {
        "match_id": str(match_id),
        "price": inst.price_grid.format(price),
        "qty": inst.qty_grid.format(lots),
        "taker_side": taker.side,
        "taker_order_id": str(taker.id),
        "timestamp": ns(ts),
    }
