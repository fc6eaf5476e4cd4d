"""The venue's events: what a command (or the clock passing a timer) did, in order, in a ``Result``.

Contract:
- Each kind is a small immutable named type, defined here and nowhere else; :data:`Event` is their
  union. Fields are integers (ids, engine nanoseconds, ticks, lots, units) and status strings, as the
  engine holds them; ``ts`` is always the engine time the event happened at.
- ``kind`` (a class attribute, not a field) is the event's name in its serialised form. :func:`row`
  gives the positional form ``(kind, *fields)`` that the event digest (``engine/journal.py``) folds, so
  digests pinned before the events had types are unchanged.
- Events are ``NamedTuple`` subclasses. The order-entry hot path builds them with
  ``tuple.__new__(Kind, (fields...))`` rather than ``Kind(fields...)``: the NamedTuple's generated
  ``__new__`` is a Python frame behind a C slot, about 100 ns more per event, and the mixed order
  stream makes one or two events per command (measured: a tuple literal 38 ns, ``tuple.__new__`` 125,
  a ``__slots__`` class 149, the NamedTuple call 217 ns per event; docs/events.md).

Readers dispatch on the type (``type(ev) is TradeEvent``) and read fields by name.
"""

from __future__ import annotations

from typing import NamedTuple, Union


class OrderEvent(NamedTuple):
    """An order's status changed (``detail``: the reject reason, the end reason (``EXPIRED``,
    ``STP``, ...), ``MODIFIED``, or None)."""

    ts: int
    order_id: int
    client_id: int
    status: str
    detail: str | None
    kind = "order"


class TradeEvent(NamedTuple):
    """Two orders matched: ``lots`` at ``price`` ticks, ``quote_units`` of the quote asset, and the fee
    each side paid (in its fee asset's units)."""

    ts: int
    match_id: int
    instrument_id: int
    price: int
    lots: int
    maker_order_id: int
    taker_order_id: int
    quote_units: int
    maker_fee: int
    taker_fee: int
    kind = "trade"


class TransferEvent(NamedTuple):
    """A transfer was requested (INITIALIZED or REJECTED) or settled (COMPLETED)."""

    ts: int
    transfer_id: int
    client_id: int
    status: str
    kind = "transfer"


class InstrumentEvent(NamedTuple):
    """An instrument's trading status changed."""

    ts: int
    instrument_id: int
    status: str
    kind = "instrument"


class FundsEvent(NamedTuple):
    """Paper funds: ``units`` (signed) of an asset credited to, or debited from, a client."""

    ts: int
    client_id: int
    asset_id: int
    units: int
    kind = "funds"


class FeesSettledEvent(NamedTuple):
    """Housekeeping swept every client's unsettled fees of an asset to the venue's fee account."""

    ts: int
    asset_id: int
    units: int
    kind = "fees_settled"


class ClientEvent(NamedTuple):
    """A client's self-trade prevention setting changed."""

    ts: int
    client_id: int
    stp: str
    kind = "client"


class DepthEvent(NamedTuple):
    """A recorded market changed the book (``engine/recorded.py``)."""

    ts: int
    instrument_id: int
    kind = "depth"


Event = Union[
    OrderEvent,
    TradeEvent,
    TransferEvent,
    InstrumentEvent,
    FundsEvent,
    FeesSettledEvent,
    ClientEvent,
    DepthEvent,
]
EVENT_TYPES: tuple[type[Event], ...] = (
    OrderEvent,
    TradeEvent,
    TransferEvent,
    InstrumentEvent,
    FundsEvent,
    FeesSettledEvent,
    ClientEvent,
    DepthEvent,
)


def row(event: Event) -> tuple[object, ...]:
    """The event's positional form ``(kind, *fields)``: what the digest folds and the journal tools print."""
    return (event.kind, *event)


__all__ = [
    "EVENT_TYPES",
    "ClientEvent",
    "DepthEvent",
    "Event",
    "FeesSettledEvent",
    "FundsEvent",
    "InstrumentEvent",
    "OrderEvent",
    "TradeEvent",
    "TransferEvent",
    "row",
]
