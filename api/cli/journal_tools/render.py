"""One journal record as one line of text, or as one JSON object (``cefisim journal show``).

A line is the record's number, its engine time (ISO 8601, UTC), source, kind, client and a short
summary: for an order its side, quantity, type, price, time in force and ids; for every other kind its
fields as ``name=value``. A kind this version does not know (a newer cefisim's) is shown generically,
its values as they are, never refused.
"""

from __future__ import annotations

from typing import Any

from cefisim.api.cli.journal_tools.reader import Record
from cefisim.api.formats.scenario import format_time
from cefisim.api.side_state.venue_faults import FIELDS as VENUE_FAULT_FIELDS
from cefisim.api.side_state.venue_faults import VENUE
from cefisim.engine.journal import FIELD_NAMES

#: the field names of side-state records (``docs/journal.md``) whose values read well as ``name=value``
_SIDE_STATE_FIELD_NAMES = {VENUE: VENUE_FAULT_FIELDS}
#: ids shown on an order's line, in this order, when given
_ORDER_IDS = ("external_id", "msg_id", "parent_id")


def fields(record: Record) -> dict[str, Any] | None:
    """The record's values by field name, or None for a kind this version does not know (or whose
    values do not fit it)."""
    names = FIELD_NAMES.get(record.kind) or _SIDE_STATE_FIELD_NAMES.get(record.kind)
    if names is None or len(names) != len(record.values):
        return None
    return dict(zip(names, record.values, strict=True))


def client_of(record: Record) -> str | None:
    """The client the record acts for, as text, or None (the control plane's commands, clock moves)."""
    named = fields(record)
    if named is not None:
        client = named.get("client_id")
        return None if client is None else str(client)
    return None


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ",".join(_text(v) for v in value) + "]"
    return "-" if value is None else str(value)


def summary(record: Record) -> str:
    """The short, human part of a record's line."""
    named = fields(record)
    if named is None:
        return " ".join(_text(v) for v in record.values)
    kind = record.kind
    if kind == "place":
        parts = [named["side"], named["qty"], named["type"]]
        if named["price"] is not None:
            parts += ["@", named["price"]]
        parts.append(f"inst={named['instrument_id']}")
        parts.append(named["tif"])
        parts += [str(flag) for flag in (*named["flags"], *named["exec_inst"])]
        parts += [f"{name.removesuffix('_id')}={named[name]}" for name in _ORDER_IDS if named[name] is not None]
        return " ".join(str(p) for p in parts)
    if kind == "modify":
        ref = f"order={named['order_id']}" if named["order_id"] is not None else f"ext={named['external_id']}"
        parts = [ref, f"qty={named['new_qty']}"]
        if named["new_price"] is not None:
            parts.append(f"price={named['new_price']}")
        if named["new_type"] is not None:
            parts.append(f"type={named['new_type']}")
        return " ".join(parts)
    if kind == "cancel":
        return f"ref={named['ref']}"
    if kind == "advance":
        return f"to {format_time(named['to_ns'])}" if isinstance(named["to_ns"], int) else _text(named["to_ns"])
    return " ".join(f"{name}={_text(value)}" for name, value in named.items() if name != "client_id")


def line(record: Record) -> str:
    """``number  time  src kind  client  summary``: one record, one line."""
    client = client_of(record)
    who = f"client={client}" if client is not None else "-"
    return (
        f"{record.number:>7}  {format_time(record.at):<30}  {record.src} {record.kind:<17} {who:<12} {summary(record)}"
    )


def as_json(record: Record) -> dict[str, Any]:
    """The record as an object: number, at (ns), time (ISO), src, kind, client, and the values by
    field name (``fields``), or as a list for a kind this version does not know."""
    named = fields(record)
    return {
        "number": record.number,
        "at": record.at,
        "time": format_time(record.at),
        "src": record.src,
        "kind": record.kind,
        "client": client_of(record),
        "summary": summary(record),
        "fields": named if named is not None else record.values,
    }
