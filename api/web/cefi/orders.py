"""CeFi direct order operations: entry, modify, cancel, status and the order listings.

Each handler: authenticate (signed), parse strictly, submit one engine command or run one read,
serialise. A business rejection of a new order is a 200 with a REJECTED record; a refused modify or
cancel is a problem (``api/web/cefi/reject_problems.py``).
"""

from __future__ import annotations

from aiohttp import web

from cefisim.api.edge.problems import Problem, bad_request
from cefisim.api.edge.serialize import activity_item, order_record, trade_record
from cefisim.api.edge.validate import F, check_object, is_external_id, query_id
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.cefi.identity import same_client, signed_client, signed_json
from cefisim.api.web.cefi.paging import fills_before, listing_client, paging, trades_cursor
from cefisim.api.web.cefi.reject_problems import problem_for, refusal_problem
from cefisim.api.web.server.http import respond, respond_list
from cefisim.api.web.server.venue_state import VENUE
from cefisim.engine.commands import CancelOrder, ModifyOrder, PlaceOrder
from cefisim.engine.entry import order_reject
from cefisim.engine.queries import activity, client_order, order_status, orders, trades
from cefisim.engine.records import Order
from cefisim.engine.reference import ID_RE
from cefisim.engine.units import parse_rate
from cefisim.engine.vocabulary import (
    WORKING,
    ExecInst,
    OrderFlag,
    OrderStatus,
    OrderType,
    SelfTradePrevention,
    Side,
    TimeInForce,
)

MARKET = OrderType.MARKET

ORDER_INFO = {
    "msg_id": F("str"),
    "parent_id": F("id0"),
    "client_id": F("id", required=True),
    "instrument_id": F("id", required=True),
    "qty": F("decimal", required=True),
    "price": F("decimal"),
    "flags": F("enums", values=tuple(OrderFlag)),
    "side": F("enum", required=True, values=tuple(Side)),
    "type": F("enum", required=True, values=tuple(OrderType)),
    "tif": F("enum", values=tuple(TimeInForce)),
    "exec_inst_flags": F("enums", values=tuple(ExecInst)),
    "hold_fee_rate": F("decimal"),
    "stp": F("enum", values=tuple(SelfTradePrevention)),
}
POST_ORDER = {"external_id": F("external_id"), "info": F("object", required=True, fields=ORDER_INFO)}

MODIFY_INFO = {
    "msg_id": F("str"),
    "parent_id": F("id0"),
    "client_id": F("id", required=True),
    "prev_modify": F("str"),
    "new_qty": F("decimal", required=True),
    "new_price": F("decimal"),
    "new_type": F("enum", values=(OrderType.MARKET,)),
}
PATCH_ORDER = {"id": F("id"), "external_id": F("external_id"), "info": F("object", required=True, fields=MODIFY_INFO)}


async def post_order(request: web.Request) -> web.Response:
    client_id, body = await signed_json(request)
    body = check_object(body, POST_ORDER, "")
    info = body["info"]
    same_client(request, client_id, info["client_id"], "info.client_id")
    # the rate's syntax (at most 9 decimals: the OpenAPI pattern) is the field's; the engine parses it alike
    if info.get("hold_fee_rate") is not None and parse_rate(info["hold_fee_rate"]) is None:
        raise bad_request("info.hold_fee_rate", "has more than 9 decimals")
    cmd = PlaceOrder(
        client_id=client_id,
        instrument_id=int(info["instrument_id"]),
        side=info["side"],
        type=info["type"],
        qty=info["qty"],
        price=info.get("price"),
        tif=info.get("tif") or "GTC",
        flags=tuple(info.get("flags") or ()),
        exec_inst=tuple(info.get("exec_inst_flags") or ()),
        stp=info.get("stp"),
        hold_fee_rate=info.get("hold_fee_rate"),
        external_id=body.get("external_id"),
        msg_id=info.get("msg_id"),
        parent_id=info.get("parent_id"),
    )
    sim = request[VENUE].sim
    refused = order_reject(sim.venue, cmd)
    if refused is not None:  # before the journal: a refused request leaves no trace
        raise refusal_problem(refused, info["instrument_id"])
    result = sim.submit(cmd)
    if result.order is None:
        assert result.reject is not None
        raise problem_for(result.reject, "info")
    return respond(order_record(result.order, result.snapshot_status))


async def patch_order(request: web.Request) -> web.Response:
    client_id, body = await signed_json(request)
    body = check_object(body, PATCH_ORDER, "")
    info = body["info"]
    same_client(request, client_id, info["client_id"], "info.client_id")
    if body.get("id") is None and body.get("external_id") is None:
        raise bad_request("id", "id or external_id is required")
    if info.get("new_type") != MARKET and info.get("new_price") is None:
        raise bad_request("info.new_price", "is required unless new_type is MARKET")
    cmd = ModifyOrder(
        client_id=client_id,
        order_id=int(body["id"]) if body.get("id") is not None else None,
        external_id=body.get("external_id"),
        new_qty=info["new_qty"],
        new_price=info.get("new_price"),
        new_type=info.get("new_type"),
        msg_id=info.get("msg_id"),
        parent_id=info.get("parent_id"),
        prev_modify=info.get("prev_modify"),
    )
    result = request[VENUE].sim.submit(cmd)
    if result.reject is not None:
        raise problem_for(result.reject, "id" if cmd.order_id is not None else "external_id")
    assert result.order is not None
    return respond(order_record(result.order, result.snapshot_status))


def _ref(request: web.Request) -> str:
    ref = request.match_info["ref_id"]
    if not (ID_RE.fullmatch(ref) and len(ref) <= 19) and not is_external_id(ref):
        raise bad_request("ref_id", "must be an exchange order id or an external id")
    return ref


async def delete_order(request: web.Request) -> web.Response:
    client_id = await signed_client(request)
    result = request[VENUE].sim.submit(CancelOrder(client_id, _ref(request)))
    if result.reject is not None:
        raise problem_for(result.reject, "ref_id")
    assert result.order is not None
    return respond(order_record(result.order, result.snapshot_status))


def _visible(sim: Simulation, order: Order | None) -> Order | None:
    """``order``, or None when it was placed after the state a lagging read sees (``docs/faults.md``)."""
    if order is not None and sim.faults.read_lag_ns and sim.faults.hides(sim.now_ns(), order.created):
        return None
    return order


async def get_order_status(request: web.Request) -> web.Response:
    client_id = await signed_client(request)
    same_client(request, client_id, request.query.get("client_id"), "client_id")
    sim = request[VENUE].sim
    order = _visible(sim, order_status(sim.read_venue(), client_id, _ref(request)))
    if order is None:
        raise Problem(
            404, "unknown-order", "ref_id: no such order for this client (or its status is no longer retained)"
        )
    return respond(order_record(order))


async def get_orders(request: web.Request) -> web.Response:
    """GET /orders: the client's trade records of the last 24 hours, newest first (timestamp required)."""
    client_id = await listing_client(request)
    size, skip, before = paging(request, timestamp_required=True)
    fills, cursor = trades(request[VENUE].sim.read_venue(), client_id, trades_cursor(request, before), skip, size)
    return respond_list(request, [trade_record(f) for f in fills], size, cursor)


async def get_orders_trade(request: web.Request) -> web.Response:
    client_id = await listing_client(request)
    size, skip, before = paging(request, timestamp_required=False)
    fills, cursor = trades(request[VENUE].sim.read_venue(), client_id, trades_cursor(request, before), skip, size)
    return respond_list(request, [trade_record(f) for f in fills], size, cursor)


async def get_orders_all(request: web.Request) -> web.Response:
    client_id = await listing_client(request)
    size, skip, before = paging(request, timestamp_required=False)
    found, cursor = orders(request[VENUE].sim.read_venue(), client_id, before, skip, size)
    return respond_list(request, [order_record(o) for o in found], size, cursor)


async def get_orders_active(request: web.Request) -> web.Response:
    client_id = await listing_client(request)
    sim = request[VENUE].sim
    venue = sim.read_venue()
    wanted = query_id(request.query, "id")
    if wanted is None:
        wanted = query_id(request.query, "order_id")
    size, skip, before = paging(request, timestamp_required=False)
    if wanted is not None:
        order = _visible(sim, client_order(venue, client_id, wanted))
        if order is None:
            raise Problem(404, "unknown-order", "id: no such order for this client")
        active = order.status in WORKING or order.status == OrderStatus.NEW_PENDING
        return respond_list(request, [order_record(order)] if active else [], size, None)
    found, cursor = orders(venue, client_id, before, skip, size, active_only=True)
    return respond_list(request, [order_record(o) for o in found], size, cursor)


async def get_orders_activity(request: web.Request) -> web.Response:
    client_id = await listing_client(request)
    size, skip, before = paging(request, timestamp_required=False)
    items, cursor = activity(
        request[VENUE].sim.read_venue(), client_id, before, skip, size, fills_before(request, before)
    )
    return respond_list(request, [activity_item(*item) for item in items], size, cursor)
