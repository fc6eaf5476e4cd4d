"""The one table from the engine's typed reject reasons to HTTP problems.

Order entry is different: a business rejection there is a 200 with a REJECTED order record (as on the
real venue). Every other command refused by the engine becomes a problem: lookups 404, state
conflicts 409, the rest 400. The slug is the reason in lower case with dashes.
"""

from __future__ import annotations

from typing import Any

from cefisim.api.edge.problems import Problem, bad_request
from cefisim.engine.rejects import Reject, Stage

_STATUS = {
    Stage.LOOKUP: 404,
    Stage.STATE: 409,
    Stage.VALIDATION: 400,
    Stage.RISK: 400,
    Stage.MATCHING: 400,
}

_DETAIL = {
    Reject.UNKNOWN_ORDER: "no such order for this client",
    Reject.UNKNOWN_CLIENT: "no such client",
    Reject.UNKNOWN_ASSET: "no such asset",
    Reject.UNKNOWN_TRANSFER: "no such transfer for this client",
    Reject.UNKNOWN_INSTRUMENT: "no such instrument",
    Reject.ORDER_NOT_ACTIVE: "the order has ended (filled, canceled or rejected)",
    Reject.ORDER_PENDING: "the order has a request pending; retry after its acknowledgement",
    Reject.INSTRUMENT_HALTED: "the instrument is halted: only cancels are accepted",
    Reject.INSTRUMENT_DISABLED: "the instrument is disabled",
    Reject.INSTRUMENT_OPENING: "the instrument is opening: orders rest but do not trade yet",
    Reject.INSUFFICIENT_BALANCE: "insufficient available balance",
    Reject.NOT_ENOUGH_LIQUIDITY: "the visible order book cannot fill the requested quantity",
    Reject.QUOTE_DEPTH_LIMIT: "the quote would walk more price levels than the server allows",
    Reject.NO_LIQUIDITY: "no opposite liquidity to price a market order",
}


def problem_for(reason: Reject, field: str = "") -> Problem:
    status = _STATUS[reason.stage]
    text = _DETAIL.get(reason, reason.value.lower().replace("_", " "))
    detail = f"{field}: {text}" if field else text
    return Problem(status, reason.value.lower().replace("_", "-"), f"{detail} ({reason.value})")


def refusal_problem(reason: Reject, instrument_ref: Any) -> Problem:
    """The problem for an order request the venue refuses before it is an order (the engine's
    ``order_reject``): a 400 naming the field, as for a malformed one. ``instrument_ref``: the
    instrument as the request named it. (A LIMIT order without a price, the engine's third such
    reason, never gets this far: the order intake refuses it, ``api/edge/intake.py``.)"""
    if reason == Reject.UNKNOWN_INSTRUMENT:
        return bad_request("info.instrument_id", f"unknown instrument {instrument_ref}")
    return problem_for(reason, "info")
