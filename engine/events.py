"""The venue's events: what a command (or the clock passing a timer) did, in order, in a ``Result``.

Contract:
- Each kind is a small immutable named type, defined here and nowhere else; :data:`Event` is their
  union. Fields are integers (ids, engine nanoseconds, ticks, lots, units) and status strings, as the
  engine holds them; ``ts`` is always the engine time the event happened at.
- ``kind`` (a class attribute, not a field) is the event's name in its serialised form. :func:`row`
  gives the positional form ``(kind, *fields)`` that the event digest (``engine/journal.py``) folds, so
  digests pinned before the events had types are unchanged.
- Each kind is a ``NamedTuple`` of its fields (``_OrderFields``, ...) and a slotted subclass of it that
  adds ``kind``: a type checker reads every assignment in a ``NamedTuple`` body as one more field, so
  ``kind`` lives one class down (same tuple, same speed: type checks, field reads and construction
  measured equal). The order-entry hot path builds them with
  ``tuple.__new__(Kind, (fields...))`` rather than ``Kind(fields...)``: the NamedTuple's generated
  ``__new__`` is a Python frame behind a C slot, about 100 ns more per event, and the mixed order
  stream makes one or two events per command (measured: a tuple literal 38 ns, ``tuple.__new__`` 125,
  a ``__slots__`` class 149, the NamedTuple call 217 ns per event; docs/events.md).

Readers dispatch on the type (``type(ev) is TradeEvent``) and read fields by name.
"""

from __future__ import annotations

from typing import NamedTuple

#: ``build_event(Kind, (fields...))``: an event built without the NamedTuple's ``__new__`` frame, for the
#: order-entry hot path (the module docstring says why); the fields go in their declared order
build_event = tuple.__new__


class _OrderFields(NamedTuple):
    ts: int
    order_id: int
    client_id: int
    status: str
    detail: str | None


class OrderEvent(_OrderFields):
    """An order's status changed (``detail``: the reject reason, the end reason (``EXPIRED``,
    ``STP``, ...), ``MODIFIED``, or None)."""

    __slots__ = ()
    kind = "order"


class _TradeFields(NamedTuple):
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
    maker_client_id: int
    taker_client_id: int


#: the fields of a trade the event digest folds: those it had before the clients were named, so that
#: pinned digests stay what they were (the client ids follow from the order ids)
TRADE_DIGESTED = 10


class TradeEvent(_TradeFields):
    """Two orders matched: ``lots`` at ``price`` ticks, ``quote_units`` of the quote asset, the fee
    each side paid (in its fee asset's units), and the client of each order, so that a reader finds
    the orders by their clients (``engine/queries.client_order``) instead of searching the books."""

    __slots__ = ()
    kind = "trade"


class _TransferFields(NamedTuple):
    ts: int
    transfer_id: int
    client_id: int
    status: str


class TransferEvent(_TransferFields):
    """A transfer was requested (INITIALIZED or REJECTED) or settled (COMPLETED)."""

    __slots__ = ()
    kind = "transfer"


class _InstrumentFields(NamedTuple):
    ts: int
    instrument_id: int
    status: str


class InstrumentEvent(_InstrumentFields):
    """An instrument's trading status changed."""

    __slots__ = ()
    kind = "instrument"


class _FundsFields(NamedTuple):
    ts: int
    client_id: int
    asset_id: int
    units: int


class FundsEvent(_FundsFields):
    """Paper funds: ``units`` (signed) of an asset credited to, or debited from, a client."""

    __slots__ = ()
    kind = "funds"


class _FeesSettledFields(NamedTuple):
    ts: int
    asset_id: int
    units: int


class FeesSettledEvent(_FeesSettledFields):
    """Housekeeping swept every client's unsettled fees of an asset to the venue's fee account."""

    __slots__ = ()
    kind = "fees_settled"


class _ClientFields(NamedTuple):
    ts: int
    client_id: int
    stp: str


class ClientEvent(_ClientFields):
    """A client's self-trade prevention setting changed."""

    __slots__ = ()
    kind = "client"


class _DepthFields(NamedTuple):
    ts: int
    instrument_id: int


class DepthEvent(_DepthFields):
    """A recorded market changed the book (``engine/recorded/market.py``)."""

    __slots__ = ()
    kind = "depth"


Event = (
    OrderEvent | TradeEvent | TransferEvent | InstrumentEvent | FundsEvent | FeesSettledEvent | ClientEvent | DepthEvent
)
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
    """The event's positional form ``(kind, *fields)``: what the digest folds and the journal tools print.
    A trade's client ids are left out (:data:`TRADE_DIGESTED`): the digest of a run is what it was before
    trades named their clients."""
    if type(event) is TradeEvent:
        return ("trade", *event[:TRADE_DIGESTED])
    return (event.kind, *event)


__all__ = [
    "EVENT_TYPES",
    "TRADE_DIGESTED",
    "ClientEvent",
    "DepthEvent",
    "Event",
    "FeesSettledEvent",
    "FundsEvent",
    "InstrumentEvent",
    "OrderEvent",
    "TradeEvent",
    "TransferEvent",
    "build_event",
    "row",
]
