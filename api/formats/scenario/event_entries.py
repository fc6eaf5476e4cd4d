"""The ``events`` section: timed commands, each checked and turned into an engine command.

Contract: ``event`` returns ``(at, command)`` with ``at`` not before the start, or None once the
document has a problem (it is refused as a whole, so a partial command is never built). Order
prices and quantities are checked for syntax only (why: ``loader.py``); transfer amounts must be
exact in the asset. A ``venue_faults`` event's "command" is the ``faults.venue`` record it writes (a
:class:`SideStateRecord`: the faults are no engine state, ``api/side_state/venue_faults.py``).

Orders, modifies, cancels, transfers and venue faults are made by the intake every interface shares
(``api/edge/intake.py``, ``venue_faults.venue_faults_intake``): an event's keys map to the intake's
fields in one table each (:data:`ORDER_KEYS` ...; ``order_type`` is ``info.type``). Each field is checked
first in the file's words, every problem at once (:func:`intake_fields`: references by id or name, then
by its kind, :data:`FILE_WORDS`), then the intake makes the command, or says which field it refuses and
why, named by the event's own key (:func:`taken`; the file's words for a rule across fields:
:data:`RULE_WORDS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from cefisim.api.edge.intake import (
    ORDER_NAMED,
    POST_ORDER,
    POST_TRANSFER,
    PRICE_FOR_LIMIT,
    REF_FIELD,
    SCRIPTED_MODIFY,
    cancel_order,
    modify_order,
    place_order,
    request_transfer,
)
from cefisim.api.edge.validate import UUID_RE, F, FieldProblem, Rule, is_external_id
from cefisim.api.formats.scenario.document import join_path, kind_of
from cefisim.api.formats.scenario.format_keys import (
    EVENT_COMMON,
    EVENT_KEYS,
    FIAT_INSTRUCTIONS,
    LATENCY_KEYS,
)
from cefisim.api.formats.scenario.parser import Parser
from cefisim.api.side_state.side_states import SideStateRecord
from cefisim.api.side_state.venue_faults import SETTINGS, VENUE, venue_faults_intake
from cefisim.engine.commands import (
    AdvanceClock,
    Command,
    PaperFunds,
    SetClientInfo,
    SetInstrumentStatus,
    SetLatency,
    SetSettlementDelay,
    VenueCancel,
)
from cefisim.engine.reference import Asset
from cefisim.engine.rejects import VENUE_CANCEL_REASONS
from cefisim.engine.vocabulary import InstrumentStatus, Platform, SelfTradePrevention

FIAT = Platform.FIAT
INSTRUMENT_STATUSES = tuple(InstrumentStatus)
STP_VALUES = tuple(SelfTradePrevention)
T = TypeVar("T")

# --- the intake's fields, as the events name them -----------------------------------------------------

#: an event's key -> the intake's field (the CeFi body's, dotted as it nests); one table per kind
ORDER_KEYS = {
    "client": "info.client_id",
    "instrument": "info.instrument_id",
    "side": "info.side",
    "order_type": "info.type",
    "qty": "info.qty",
    "price": "info.price",
    "tif": "info.tif",
    "flags": "info.flags",
    "exec_inst": "info.exec_inst_flags",
    "stp": "info.stp",
    "hold_fee_rate": "info.hold_fee_rate",
    "external_id": "external_id",
    "msg_id": "info.msg_id",
    "parent_id": "info.parent_id",
}
MODIFY_KEYS = {
    "client": "info.client_id",
    "order_id": "id",
    "external_id": "external_id",
    "new_qty": "info.new_qty",
    "new_price": "info.new_price",
    "new_type": "info.new_type",
    "msg_id": "info.msg_id",
    "parent_id": "info.parent_id",
    "prev_modify": "info.prev_modify",
}
CANCEL_KEYS = {"client": "client_id", "ref": REF_FIELD}
TRANSFER_KEYS = {
    "client": "request.client_id",
    "asset": "request.asset_id",
    "amount": "request.amount",
    "transfer_type": "request.type",
    "platform": "request.platform",
    "instructions": "request.instructions",
}
VENUE_FAULT_KEYS = {name: name for name in SETTINGS}

#: a field's check in the file's words, by its kind (the words every section of the format uses);
#: the field's own check follows it (``api.edge.validate``), so the file takes what the interface takes
FILE_WORDS: dict[str, Callable[[Parser, Any, str, F], Any]] = {
    "enum": lambda parser, v, p, f: parser.enum(v, p, f.values),
    "enums": lambda parser, v, p, f: parser.unique_strings(v, p, f.values),
    "decimal": lambda parser, v, p, f: parser.decimal(v, p),
    "rate": lambda parser, v, p, f: parser.decimal(v, p),
    "external_id": lambda parser, v, p, f: external_id(parser, v, p),
    "whole": lambda parser, v, p, f: parser.integer(v, p, f.low, f.high),
}
#: the file's words for the intake's rules across fields: (the key it names, or "" for the event; words)
RULE_WORDS: dict[Rule, tuple[str, str]] = {
    PRICE_FOR_LIMIT: ("price", "a LIMIT order needs a price"),
    ORDER_NAMED: ("", "a modify names its order: order_id or external_id"),
}

Convert = Callable[[Any, str], Any]


def intake_fields(
    parser: Parser,
    d: dict,
    path: str,
    keys: Mapping[str, str],
    table: Mapping[str, F],
    own: Mapping[str, Convert] | None = None,
) -> dict[str, Any] | None:
    """The event's fields as the intake's body (nested as ``keys`` says), each checked on the way: by
    ``own[key]`` where the file has a rule of its own (a reference by id or name, an amount on its asset's
    grid), else in the file's words for its kind and by the field's own check. None when one did not
    pass or a required one is missing (every one is reported, the missing ones by the event's own check
    of its keys; a reference to a broken item is not reported again)."""
    body: dict[str, Any] = {}
    ok = True
    for key, where in keys.items():
        if key not in d:
            ok = ok and not _field_at(table, where).required
            continue
        p = join_path(path, key)
        convert = own.get(key) if own else None
        value = convert(d[key], p) if convert is not None else _checked(parser, _field_at(table, where), d[key], p)
        if value is None:
            ok = False
            continue
        *outer, last = where.split(".")
        node = body
        for name in outer:
            node = node.setdefault(name, {})
        node[last] = value
    return body if ok else None


def _field_at(table: Mapping[str, F], where: str) -> F:
    *outer, last = where.split(".")
    for name in outer:
        table = table[name].fields
    return table[last]


def _checked(parser: Parser, f: F, value: object, path: str) -> object:
    words = FILE_WORDS.get(f.kind)
    if words is not None and words(parser, value, path, f) is None:
        return None
    problem = f.check(value, f)
    if problem is not None:
        parser.err(path + problem[0], problem[1])
        return None
    return value


def taken(parser: Parser, made: T | FieldProblem, path: str, keys: Mapping[str, str]) -> T | None:
    """The intake's command, or None after reporting its problem at the event's own key."""
    if not isinstance(made, FieldProblem):
        return made
    words = RULE_WORDS.get(made.rule) if made.rule is not None else None
    if words is not None:
        key, reason = words
        parser.err(join_path(path, key) if key else path, reason)
        return None
    where, bracket, index = made.field.partition("[")
    key = next((k for k, w in keys.items() if w == where), "")
    parser.err((join_path(path, key) if key else path) + bracket + index, made.reason)
    return None


def _client_id(parser: Parser) -> Convert:
    """A client reference (id or mnemonic) as the client id the intake takes."""

    def convert(value: Any, path: str) -> str | None:
        client = parser.client_ref(value, path)
        return None if client is None else str(client.id)

    return convert


def _instrument_id(parser: Parser) -> Convert:
    """An instrument reference (id or symbol) as the instrument id the intake takes."""

    def convert(value: Any, path: str) -> str | None:
        inst = parser.instrument_ref(value, path)
        return None if inst is None else str(inst.id)

    return convert


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
    own = {"client": _client_id(parser), "instrument": _instrument_id(parser)}
    body = intake_fields(parser, d, path, ORDER_KEYS, POST_ORDER, own)
    if body is None:
        return None
    return taken(parser, place_order(int(body["info"]["client_id"]), body), path, ORDER_KEYS)


def external_id(parser: Parser, value: object, path: str) -> str | None:
    if not isinstance(value, str) or not is_external_id(value):
        parser.err(path, "not an external id (a lowercase UUID v4, or at most 18 of A-Z a-z 0-9 - _ . ~)")
        return None
    return value


def ev_modify(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    """A modify; without ``new_price`` it keeps the order's price (``intake.SCRIPTED_MODIFY``)."""
    body = intake_fields(parser, d, path, MODIFY_KEYS, SCRIPTED_MODIFY, {"client": _client_id(parser)})
    if body is None:
        return None
    return taken(parser, modify_order(int(body["info"]["client_id"]), body, SCRIPTED_MODIFY), path, MODIFY_KEYS)


def ev_cancel(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    client = parser.get(d, "client", path, parser.client_ref)
    # ref is required (format_keys.py), so a missing one was reported; a bad one is, whoever the client
    made = cancel_order(0 if client is None else client.id, d.get("ref"))
    command = taken(parser, made, path, CANCEL_KEYS) if "ref" in d else None
    return None if client is None else command


def ev_transfer(parser: Parser, d: dict, path: str, at: int) -> Command | None:
    asset = parser.get(d, "asset", path, parser.asset_ref)
    platform = d.get("platform")
    own: dict[str, Convert] = {
        "client": _client_id(parser),
        "asset": lambda v, p: None if asset is None else str(asset.id),
        "amount": lambda v, p: transfer_amount(parser, v, p, asset),
        "instructions": lambda v, p: None if transfer_instructions(parser, v, p, platform) is None else v,
    }
    body = intake_fields(parser, d, path, TRANSFER_KEYS, POST_TRANSFER, own)
    if body is None or asset is None:
        return None
    body["request"].setdefault("instructions", {})  # optional in a file: what the venue never reads
    # the instructions are the file's own (a FIAT transfer may leave out what the venue never reads)
    made = request_transfer(int(body["request"]["client_id"]), body, {asset.id: asset}.get, own_instructions=True)
    return taken(parser, made, path, TRANSFER_KEYS)


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
    """Reads lagging, late fills and the clock skew from ``at`` on, all three (an absent one is 0);
    whole numbers within the bounds ``venue_faults.SETTINGS`` holds."""
    fields = intake_fields(parser, d, path, VENUE_FAULT_KEYS, SETTINGS)
    if fields is None:
        return None
    values = taken(parser, venue_faults_intake(fields), path, VENUE_FAULT_KEYS)
    return None if values is None else SideStateRecord(VENUE, list(values))


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
