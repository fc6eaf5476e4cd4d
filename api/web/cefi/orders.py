"""CeFi direct order operations: entry, modify, cancel, status and the order listings.

Each handler: authenticate (signed), turn the body into one engine command through its intake
(``api/edge/intake.py``) or run one read, serialise. A business rejection of a new order is a 200 with
a REJECTED record; a refused modify or cancel is a problem (``api/web/cefi/reject_problems.py``).
What the venue answers an order command (:func:`entered`, :func:`modified`, :func:`canceled`) is
shared with the backtest strategy's context, which applies the same commands in-process.
"""

from __future__ import annotations

from typing import Any, Protocol

from aiohttp import web

from cefisim.api.edge.intake import cancel_order, modify_order, order_ref, place_order
from cefisim.api.edge.problems import Problem
from cefisim.api.edge.serialize import activity_item, order_record, trade_record
from cefisim.api.edge.validate import FieldProblem, query_id
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.cefi.identity import same_client, signed_client, signed_json
from cefisim.api.web.cefi.paging import fills_before, listing_client, paging, trades_cursor
from cefisim.api.web.cefi.reject_problems import problem_for, refusal_problem
from cefisim.api.web.server.http import respond, respond_list
from cefisim.api.web.server.venue_state import VENUE
from cefisim.engine.commands import CancelOrder, Command, ModifyOrder, PlaceOrder
from cefisim.engine.entry import order_reject
from cefisim.engine.queries import activity, client_order, order_status, orders, trades
from cefisim.engine.records import Order
from cefisim.engine.venue import Result, Venue
from cefisim.engine.vocabulary import WORKING, OrderStatus


class Applier(Protocol):
    """What applies a caller's commands to its venue: the Simulation (the handlers), or the backtest
    harness (the strategy's context). ``venue`` is read as the command is applied."""

    venue: Venue

    def submit(self, cmd: Command) -> Result: ...


# --- what the venue answers an order command: shared by the handlers and the backtest's context ---


def entered(applier: Applier, cmd: PlaceOrder, instrument_ref: Any) -> dict[str, Any]:
    """The order record of ``cmd`` entered (REJECTED with its reason when the venue refuses the order),
    or the Problem of a request that is no order (``order_reject``: asked before the command is
    journaled, so a refused request leaves no trace). ``instrument_ref``: as the request named it."""
    refused = order_reject(applier.venue, cmd)
    if refused is not None:
        raise refusal_problem(refused, instrument_ref)
    result = applier.submit(cmd)
    if result.order is None:
        assert result.reject is not None
        raise problem_for(result.reject, "info")
    return order_record(result.order, result.snapshot_status)


def modified(applier: Applier, cmd: ModifyOrder) -> dict[str, Any]:
    """The order record after ``cmd``, or the Problem of the reason the venue refused it."""
    result = applier.submit(cmd)
    if result.reject is not None:
        raise problem_for(result.reject, "id" if cmd.order_id is not None else "external_id")
    assert result.order is not None
    return order_record(result.order, result.snapshot_status)


def canceled(applier: Applier, cmd: CancelOrder) -> dict[str, Any]:
    """The order record after ``cmd`` (CANCELED, or CANCEL_PENDING under latency), or the Problem."""
    result = applier.submit(cmd)
    if result.reject is not None:
        raise problem_for(result.reject, "ref_id")
    assert result.order is not None
    return order_record(result.order, result.snapshot_status)


# --- handlers ---------------------------------------------------------------------------------------


async def post_order(request: web.Request) -> web.Response:
    client_id, body = await signed_json(request)
    cmd = place_order(client_id, body)
    if isinstance(cmd, FieldProblem):
        raise cmd.http()
    info = body["info"]
    same_client(request, client_id, info["client_id"], "info.client_id")
    return respond(entered(request[VENUE].sim, cmd, info["instrument_id"]))


async def patch_order(request: web.Request) -> web.Response:
    client_id, body = await signed_json(request)
    cmd = modify_order(client_id, body)
    if isinstance(cmd, FieldProblem):
        raise cmd.http()
    same_client(request, client_id, body["info"]["client_id"], "info.client_id")
    return respond(modified(request[VENUE].sim, cmd))


def _ref(request: web.Request) -> str:
    ref = order_ref(request.match_info["ref_id"])
    if isinstance(ref, FieldProblem):
        raise ref.http()
    return ref


async def delete_order(request: web.Request) -> web.Response:
    client_id = await signed_client(request)
    cmd = cancel_order(client_id, request.match_info["ref_id"])
    if isinstance(cmd, FieldProblem):
        raise cmd.http()
    return respond(canceled(request[VENUE].sim, cmd))


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
