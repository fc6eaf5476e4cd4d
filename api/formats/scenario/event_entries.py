"""The ``events`` section: timed commands, each checked and turned into an engine command.

Contract: ``event`` returns ``(at, command)`` with ``at`` not before the start, or None once the
document has a problem (it is refused as a whole, so a partial command is never built). Order
prices and quantities are checked for syntax only (why: ``loader.py``); transfer amounts must be
exact in the asset. A ``venue_faults`` event's "command" is the ``faults.venue`` record it writes (a
:class:`SideStateRecord`: the faults are no engine state, ``api/side_state/venue_faults.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from cefisim.api.edge.validate import UUID_RE, is_external_id
from cefisim.api.formats.scenario.document import join_path, kind_of
from cefisim.api.formats.scenario.format_keys import (
    EVENT_COMMON,
    EVENT_KEYS,
    EXEC_INST,
    FIAT_INSTRUCTIONS,
    FLAGS,
    LATENCY_KEYS,
    ORDER_TYPES,
    PLATFORMS,
    SIDES,
    TIFS,
    TRANSFER_TYPES,
)
from cefisim.api.formats.scenario.parser import Parser
from cefisim.api.side_state.side_states import SideStateRecord
from cefisim.api.side_state.venue_faults import MAX_LAG_MS, MAX_SKEW_S, VENUE
from cefisim.engine.commands import (
    AdvanceClock,
    CancelOrder,
    Command,
    ModifyOrder,
    PaperFunds,
    PlaceOrder,
    RequestTransfer,
    SetClientInfo,
    SetInstrumentStatus,
    SetLatency,
    SetSettlementDelay,
    VenueCancel,
)
from cefisim.engine.reference import ID_RE, Asset
from cefisim.engine.rejects import VENUE_CANCEL_REASONS
from cefisim.engine.vocabulary import InstrumentStatus, OrderType, Platform, SelfTradePrevention, TimeInForce

GTC = TimeInForce.GTC
LIMIT = OrderType.LIMIT
MARKET = OrderType.MARKET
FIAT = Platform.FIAT
INSTRUMENT_STATUSES = tuple(InstrumentStatus)
STP_VALUES = tuple(SelfTradePrevention)


def event(parser: Parser, value: object, path: str) -> tuple[int, Command | SideStateRecord] | None:
    """One timed event as (at, command); None once the document has a problem (it is refused)."""
    if not isinstance(value, dict):
        parser.err(path, f"must be an object, got {kind_of(value)}")
        return None
    etype = value.get("type")
    if not isinstance(etype, str) or etype not in EVENT_KEYS:
        parser.obj(value, path, (EVENT_COMMON[0], tuple(value)))
        if "type" in value:
            parser.enum(etype, join_path(path, "type"), tuple(EVENT_KEYS))
        return None
    required, optional = EVENT_KEYS[etype]
    d = parser.obj(value, path, (EVENT_COMMON[0] + required, EVENT_COMMON[1] + optional))
    assert d is not None
    at = parser.get(d, "at", path, parser.time)
    parser.get(d, "note", path, parser.string)
    # each ev_ checks every field it reads, then builds its command only while nothing is wrong:
    # a document with any problem is refused as a whole, so a partial command is never needed
    cmd = EVENT_PARSERS[etype](parser, d, path, at)
    return None if parser.problems or cmd is None else (at, cmd)


def ev_order(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    client = parser.get(d, "client", path, parser.client_ref)
    inst = parser.get(d, "instrument", path, parser.instrument_ref)
    side = parser.get(d, "side", path, lambda v, p: parser.enum(v, p, SIDES))
    otype = parser.get(d, "order_type", path, lambda v, p: parser.enum(v, p, ORDER_TYPES))
    qty = parser.get(d, "qty", path, parser.decimal)
    price = parser.get(d, "price", path, parser.decimal)
    if otype == LIMIT and "price" not in d:
        parser.err(join_path(path, "price"), "a LIMIT order needs a price")
    tif = parser.get(d, "tif", path, lambda v, p: parser.enum(v, p, TIFS), default=GTC)
    flags = parser.get(d, "flags", path, lambda v, p: parser.unique_strings(v, p, FLAGS), default=())
    exec_inst = parser.get(d, "exec_inst", path, lambda v, p: parser.unique_strings(v, p, EXEC_INST), default=())
    stp = parser.get(d, "stp", path, lambda v, p: parser.enum(v, p, STP_VALUES))
    parser.get(d, "hold_fee_rate", path, parser.rate)
    ext = parser.get(d, "external_id", path, partial(external_id, parser))
    msg_id = parser.get(d, "msg_id", path, parser.string)
    parent_id = parser.get(d, "parent_id", path, parser.string)
    if parser.problems:
        return None
    return PlaceOrder(
        client_id=client.id,
        instrument_id=inst.id,
        side=side,
        type=otype,
        qty=qty,
        price=price,
        tif=tif,
        flags=flags,
        exec_inst=exec_inst,
        stp=stp,
        hold_fee_rate=d.get("hold_fee_rate"),
        external_id=ext,
        msg_id=msg_id,
        parent_id=parent_id,
    )


def external_id(parser: Parser, value: object, path: str) -> str | None:
    if not isinstance(value, str) or not is_external_id(value):
        parser.err(path, "not an external id (a lowercase UUID v4, or at most 18 of A-Z a-z 0-9 - _ . ~)")
        return None
    return value


def ev_modify(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    client = parser.get(d, "client", path, parser.client_ref)
    order_id = parser.get(d, "order_id", path, parser.id_)
    ext = parser.get(d, "external_id", path, partial(external_id, parser))
    if "order_id" not in d and "external_id" not in d:
        parser.err(path, "a modify names its order: order_id or external_id")
    new_qty = parser.get(d, "new_qty", path, parser.decimal)
    new_price = parser.get(d, "new_price", path, parser.decimal)
    new_type = parser.get(d, "new_type", path, lambda v, p: parser.enum(v, p, (MARKET,)))
    texts = {k: parser.get(d, k, path, parser.string) for k in ("msg_id", "parent_id", "prev_modify")}
    if parser.problems:
        return None
    return ModifyOrder(client.id, order_id, ext, new_qty, new_price, new_type, **texts)


def ev_cancel(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    client = parser.get(d, "client", path, parser.client_ref)
    ref = d.get("ref")
    if "ref" in d and (not isinstance(ref, str) or not (ID_RE.match(ref) or is_external_id(ref))):
        parser.err(join_path(path, "ref"), "must be an exchange order id or an external id")
    # ref is required (format_keys.py), so a missing one was reported too
    return None if parser.problems or not isinstance(ref, str) else CancelOrder(client.id, ref)


def ev_transfer(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    client = parser.get(d, "client", path, parser.client_ref)
    asset = parser.get(d, "asset", path, parser.asset_ref)
    ttype = parser.get(d, "transfer_type", path, lambda v, p: parser.enum(v, p, TRANSFER_TYPES))
    platform = parser.get(d, "platform", path, lambda v, p: parser.enum(v, p, PLATFORMS))
    amount = parser.get(d, "amount", path, lambda v, p: transfer_amount(parser, v, p, asset))
    instructions = parser.get(
        d, "instructions", path, lambda v, p: transfer_instructions(parser, v, p, platform), default=()
    )
    if parser.problems:
        return None
    return RequestTransfer(client.id, asset.id, amount, ttype, platform, instructions)


def transfer_amount(parser: Parser, value: object, path: str, asset: Asset | None) -> str | None:
    what = f"finer than {asset.name}'s {asset.decimals} decimals" if asset else ""
    units = parser.positive_units(value, path, asset.grid if asset else None, what)
    # units is None unless value is a decimal string
    return value if units is not None and isinstance(value, str) else None


def transfer_instructions(
    parser: Parser, value: object, path: str, platform: str | None
) -> tuple[tuple[str, object], ...] | None:
    if not isinstance(value, dict):
        parser.err(path, f"must be an object, got {kind_of(value)}")
        return None
    for key in getattr(value, "duplicates", ()):
        parser.err(join_path(path, key), "duplicate key")
    for key, item in value.items():
        p = join_path(path, key)
        if platform == FIAT:
            want = FIAT_INSTRUCTIONS.get(key)
            if want is None:
                parser.err(p, f"unknown key (FIAT instructions: {', '.join(FIAT_INSTRUCTIONS)})")
            elif want == "bool" and not isinstance(item, bool):
                parser.err(p, f"must be true or false, got {kind_of(item)}")
            elif want == "uuid" and not (isinstance(item, str) and UUID_RE.match(item)):
                parser.err(p, "must be a UUID string")
        elif not isinstance(item, (str, bool)):
            parser.err(p, f"must be a string or a boolean, got {kind_of(item)}")
    return tuple(sorted(value.items()))


def ev_instrument_status(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    inst = parser.get(d, "instrument", path, parser.instrument_ref)
    status = parser.get(d, "status", path, lambda v, p: parser.enum(v, p, INSTRUMENT_STATUSES))
    return None if parser.problems else SetInstrumentStatus(inst.id, status)


def ev_venue_cancel(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    reason = parser.get(d, "reason", path, lambda v, p: parser.enum(v, p, VENUE_CANCEL_REASONS))
    client = parser.get(d, "client", path, parser.client_ref) if "client" in d else None
    inst = parser.get(d, "instrument", path, parser.instrument_ref) if "instrument" in d else None
    if parser.problems:
        return None
    return VenueCancel(reason, client.id if client else None, inst.id if inst else None)


def ev_venue_faults(parser: Parser, d: dict, path: str, at: int) -> SideStateRecord | None:
    """Reads lagging, late fills and the clock skew from ``at`` on, all three (an absent one is 0)."""
    lag = parser.get(d, "read_lag_ms", path, lambda v, p: parser.integer(v, p, 0, MAX_LAG_MS), default=0)
    delay = parser.get(d, "fill_delay_ms", path, lambda v, p: parser.integer(v, p, 0, MAX_LAG_MS), default=0)
    skew = parser.get(d, "clock_skew_s", path, lambda v, p: parser.integer(v, p, -MAX_SKEW_S, MAX_SKEW_S), default=0)
    return None if parser.problems else SideStateRecord(VENUE, [lag, delay, skew])


def ev_latency(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    entry, modify, cancel = (parser.get(d, k, path, parser.millis, default=0) for k in LATENCY_KEYS[1])
    return None if parser.problems else SetLatency(entry, modify, cancel)


def ev_settlement_delay(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    delay = parser.get(d, "delay_ms", path, parser.millis)
    return None if parser.problems else SetSettlementDelay(delay)


def ev_clock(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    return None if parser.problems else AdvanceClock(at)


def ev_paper_funds(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    client = parser.get(d, "client", path, parser.client_ref)
    asset = parser.get(d, "asset", path, parser.asset_ref)
    amount = parser.get(d, "amount", path, lambda v, p: transfer_amount(parser, v, p, asset))
    remove = parser.get(d, "remove", path, parser.boolean, default=False)
    return None if parser.problems else PaperFunds(client.id, asset.id, amount, remove)


def ev_client_info(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    client = parser.get(d, "client", path, parser.client_ref)
    stp = parser.get(d, "self_trade_prevention", path, lambda v, p: parser.enum(v, p, STP_VALUES))
    return None if parser.problems else SetClientInfo(client.id, stp)


#: event type -> the function that checks its fields and builds its command
EVENT_PARSERS: dict[str, Callable[[Parser, dict, str, int], Command | SideStateRecord | None]] = {
    "order": ev_order,
    "modify": ev_modify,
    "cancel": ev_cancel,
    "transfer": ev_transfer,
    "instrument_status": ev_instrument_status,
    "latency": ev_latency,
    "settlement_delay": ev_settlement_delay,
    "clock": ev_clock,
    "paper_funds": ev_paper_funds,
    "client_info": ev_client_info,
    "venue_cancel": ev_venue_cancel,
    "venue_faults": ev_venue_faults,
}
