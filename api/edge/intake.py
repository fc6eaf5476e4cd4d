"""One intake per command kind: the fields a user gives become one engine command, or a
:class:`~api.edge.validate.FieldProblem` naming the field and the reason.

Orders, modifies, cancels and transfers come from three places, and each takes them here: the CeFi
handlers (``api/web/cefi/``), the backtest strategy's context (``api/cli/backtest/context.py``) and
scenario files (``api/formats/scenario/event_entries.py``). The venue faults have theirs beside their
state (``api/side_state/venue_faults.py``).

- The vocabulary is the CeFi request body's, shaped as the interface nests it (``info.qty``,
  ``external_id``): the HTTP handler hands its body over as it came; the context builds the same body
  from its arguments as the HTTP client does (``api/client/client_params.py``); a scenario event maps
  its own key names to these (``order_type`` -> ``info.type``) in one table at its edge. A problem
  names the field in this vocabulary, and each caller says it in its own.
- A table (``api.edge.validate.F``) states each field's syntax and, as a :class:`Fields`, the rules
  across fields (LIMIT needs a price, a modify names its order, a modify needs a price unless it
  converts to MARKET); the OpenAPI document is built from the same tables and states the rules as
  ``if``/``then`` (a test holds the two together).
- What needs the venue is not here: an unknown client or instrument is the engine's to say
  (``engine.entry.order_reject``), an unknown asset the caller's lookup; grids and balances are the
  venue's business rejections. An intake changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cefisim.api.edge.validate import (
    AtLeastOne,
    F,
    FieldProblem,
    Fields,
    RequiredWhen,
    is_external_id,
    problem_in,
)
from cefisim.engine.commands import CancelOrder, ModifyOrder, PlaceOrder, RequestTransfer
from cefisim.engine.reference import ID_RE, Asset
from cefisim.engine.vocabulary import (
    ExecInst,
    OrderFlag,
    OrderType,
    Platform,
    SelfTradePrevention,
    Side,
    TimeInForce,
    TransferType,
)

# the plain strings (engine/vocabulary.py says why): a request's own words are plain strings too
FIAT = Platform.FIAT.value
GTC = TimeInForce.GTC.value
LIMIT = OrderType.LIMIT.value
MARKET = OrderType.MARKET.value

# --- orders ---------------------------------------------------------------------------------------

#: an order needs a price unless it is a MARKET order (on one, a price is ignored)
PRICE_FOR_LIMIT = RequiredWhen("price", "type", LIMIT, "is required for LIMIT orders")
ORDER_INFO = Fields(
    {
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
        "hold_fee_rate": F("rate"),
        "stp": F("enum", values=tuple(SelfTradePrevention)),
    },
    PRICE_FOR_LIMIT,
)
POST_ORDER = {"external_id": F("external_id"), "info": F("object", required=True, fields=ORDER_INFO)}


def place_order(client_id: int, body: Any) -> PlaceOrder | FieldProblem:
    """The order ``body`` (``POST /orders``' shape) asks ``client_id`` to enter, or why it is no order
    request. ``info.client_id`` is checked for syntax only: whom a request may act for is its caller's."""
    problem = problem_in(body, POST_ORDER)
    if problem is not None:
        return problem
    info = body["info"]
    return PlaceOrder(
        client_id=client_id,
        instrument_id=int(info["instrument_id"]),
        side=info["side"],
        type=info["type"],
        qty=info["qty"],
        price=info.get("price"),
        tif=info.get("tif") or GTC,
        flags=tuple(info.get("flags") or ()),
        exec_inst=tuple(info.get("exec_inst_flags") or ()),
        stp=info.get("stp"),
        hold_fee_rate=info.get("hold_fee_rate"),
        external_id=body.get("external_id"),
        msg_id=info.get("msg_id"),
        parent_id=info.get("parent_id"),
    )


# --- modify -----------------------------------------------------------------------------------------

#: the interface's rule: a modify that stays a limit order says its price (a scenario's may keep it)
NEW_PRICE_UNLESS_MARKET = RequiredWhen(
    "new_price", "new_type", MARKET, "is required unless new_type is MARKET", unless=True
)
#: a modify finds its order by exchange id or by external id (given both, by id: docs/matching.md)
ORDER_NAMED = AtLeastOne("id", ("external_id",), "id or external_id is required")
MODIFY_FIELDS = {
    "msg_id": F("str"),
    "parent_id": F("id0"),
    "client_id": F("id", required=True),
    "prev_modify": F("str"),
    "new_qty": F("decimal", required=True),
    "new_price": F("decimal"),
    "new_type": F("enum", values=(MARKET,)),
}
MODIFY_INFO = Fields(MODIFY_FIELDS, NEW_PRICE_UNLESS_MARKET)
PATCH_ORDER = Fields(
    {"id": F("id"), "external_id": F("external_id"), "info": F("object", required=True, fields=MODIFY_INFO)},
    ORDER_NAMED,
)
#: a scenario file's modify: the same fields, but one without ``new_price`` keeps the order's price
#: (docs/scenarios.md; the engine reads an absent price so), as the format has always allowed
SCRIPTED_MODIFY = Fields(
    {**PATCH_ORDER, "info": F("object", required=True, fields=Fields(MODIFY_FIELDS))},
    ORDER_NAMED,
)


def modify_order(client_id: int, body: Any, table: Fields = PATCH_ORDER) -> ModifyOrder | FieldProblem:
    """The modify ``body`` (``PATCH /orders``' shape) asks ``client_id`` to make, or why it is none;
    ``table`` is the interface's (or :data:`SCRIPTED_MODIFY`)."""
    problem = problem_in(body, table)
    if problem is not None:
        return problem
    info = body["info"]
    order_id = body.get("id")
    return ModifyOrder(
        client_id=client_id,
        order_id=None if order_id is None else int(order_id),
        external_id=body.get("external_id"),
        new_qty=info["new_qty"],
        new_price=info.get("new_price"),
        new_type=info.get("new_type"),
        msg_id=info.get("msg_id"),
        parent_id=info.get("parent_id"),
        prev_modify=info.get("prev_modify"),
    )


# --- cancel (and the other reads of one order) -------------------------------------------------------

#: where an order reference is refused: ``DELETE /orders/{ref_id}`` names it so
REF_FIELD = "ref_id"


def order_ref(ref: Any) -> str | FieldProblem:
    """``ref`` as an order reference: an exchange order id (at most 19 digits) or an external id."""
    if isinstance(ref, str) and ((len(ref) <= 19 and ID_RE.fullmatch(ref)) or is_external_id(ref)):
        return ref
    return FieldProblem(REF_FIELD, "must be an exchange order id or an external id")


def cancel_order(client_id: int, ref: Any) -> CancelOrder | FieldProblem:
    """The cancel of the order ``ref`` names (exchange or external id), or why it is none."""
    checked = order_ref(ref)
    return checked if isinstance(checked, FieldProblem) else CancelOrder(client_id, checked)


# --- transfers ----------------------------------------------------------------------------------------

FIAT_INSTRUCTIONS = {
    "fiat_account_id": F("uuid", required=True),
    "identity_id": F("uuid", required=True),
    "account_id": F("uuid", required=True),
    "includes_fee": F("bool", required=True),
}
# The description does not show crypto instructions; these are the emulator's (docs/cefi.md).
CRYPTO_INSTRUCTIONS = {
    "address": F("str", required=True),
    "network": F("str", required=True),
    "memo": F("str"),
}
TRANSFER_REQUEST = {
    "amount": F("positive", required=True),
    "asset_id": F("id", required=True),
    "client_id": F("id", required=True),
    "type": F("enum", required=True, values=tuple(TransferType)),
    "platform": F("enum", required=True, values=tuple(Platform)),
    "instructions": F("object", required=True, open=True),
}
POST_TRANSFER = {"request": F("object", required=True, fields=TRANSFER_REQUEST)}


def request_transfer(
    client_id: int, body: Any, asset_of: Callable[[int], Asset | None], own_instructions: bool = False
) -> RequestTransfer | FieldProblem:
    """The transfer ``body`` (``POST /transfers``' shape) asks ``client_id`` to make, or why it is none.

    ``asset_of`` finds the asset ``request.asset_id`` names (None: no such asset), whose grid the amount
    must be exact on. The instructions are checked against the platform's table, unless the caller
    checked them its own way (``own_instructions``: a scenario's transfer may leave out what the venue
    never reads, docs/scenarios.md).
    """
    problem = problem_in(body, POST_TRANSFER)
    if problem is not None:
        return problem
    req = body["request"]
    asset = asset_of(int(req["asset_id"]))
    if asset is None:
        return FieldProblem("request.asset_id", f"unknown asset {req['asset_id']}")
    if asset.grid.to_units(req["amount"]) is None:
        return FieldProblem("request.amount", f"finer than the asset's {asset.decimals} decimals")
    instructions = req["instructions"]
    if not own_instructions:
        spec = FIAT_INSTRUCTIONS if req["platform"] == FIAT else CRYPTO_INSTRUCTIONS
        problem = problem_in(instructions, spec, "request.instructions")
        if problem is not None:
            return problem
    return RequestTransfer(
        client_id, asset.id, req["amount"], req["type"], req["platform"], tuple(sorted(instructions.items()))
    )
