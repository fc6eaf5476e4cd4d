"""Commands: everything that changes the venue's state, as plain values.

Each command is applied by ``Venue.submit(command, at=ns)`` at a point in engine time, and the pair
(at, command) is what the journal records. Commands are not frozen only because a frozen dataclass
pays for every field it sets on the order-entry hot path; nothing changes a command once made. Numbers
travel as the venue's decimal strings (the API has already checked their syntax); the engine puts them
on the instrument's grid, so an off-grid price is a business rejection with a record, as on the real
venue. ``kind`` names the command in the journal.

The journal record of each kind is documented in ``docs/journal.md``; ``to_record``/``from_record``
in ``engine/journal.py`` convert without loss.

The order-entry commands (``PlaceOrder``, ``ModifyOrder``, ``CancelOrder``) are C types in the compiled
build (``commands.pxd``, docs/build.md) and spell out their field values in ``values()``: compiled, it
reads them as struct fields, where the journal's generated getter, interpreted code, would read a C
type's fields through descriptors at twice the cost. ``tests/engine/test_journal_wire.py`` checks each
against the fields.
"""

from __future__ import annotations

from dataclasses import dataclass

try:
    import cython
except ImportError:  # the pure package, without Cython (engine/nocython.py)
    from cefisim.engine import nocython as cython  # type: ignore[no-redef]  # the same names as cython

from cefisim.engine.state import saves_fields
from cefisim.engine.vocabulary import TimeInForce


@cython.no_gc  # values only: never part of a cycle (docs/build.md)
@cython.cclass
@dataclass  # a C type in the compiled build (commands.pxd), which takes no slots=True
class PlaceOrder:
    kind = "place"
    client_id: int
    instrument_id: int
    side: str  # BUY | SELL
    type: str  # LIMIT | MARKET
    qty: str
    price: str | None = None
    # the plain string, not the member: an order stores it, and the order path compares it with the
    # vocabulary's strings by identity first (a member is another object, compared character by character)
    tif: str = TimeInForce.GTC.value
    flags: tuple[str, ...] = ()  # USE_AGGRESSIVE_PRICING
    exec_inst: tuple[str, ...] = ()  # ALO | AON
    stp: str | None = None  # INVALID | NONE | CANCEL_AGGRESSIVE | CANCEL_BOTH; None: client's setting
    hold_fee_rate: str | None = None
    external_id: str | None = None
    msg_id: str | None = None
    parent_id: str | None = None

    def values(self) -> tuple[object, ...]:
        """The fields in declaration order: the command's journal values (the module docstring says why
        this is written out)."""
        return (
            self.client_id,
            self.instrument_id,
            self.side,
            self.type,
            self.qty,
            self.price,
            self.tif,
            self.flags,
            self.exec_inst,
            self.stp,
            self.hold_fee_rate,
            self.external_id,
            self.msg_id,
            self.parent_id,
        )


@cython.no_gc  # values only: never part of a cycle (docs/build.md)
@cython.cclass
@dataclass  # a C type in the compiled build (commands.pxd), which takes no slots=True
class ModifyOrder:
    """Modify an order found by exchange id (``order_id``) or external id (``external_id``).

    When both are given and ``external_id`` is not the order's current external id, it becomes the
    order's new external id and the old one is kept as ``ref_external_id`` (FIX-style chaining).
    """

    kind = "modify"
    client_id: int
    order_id: int | None
    external_id: str | None
    new_qty: str
    new_price: str | None = None
    new_type: str | None = None  # MARKET
    msg_id: str | None = None
    parent_id: str | None = None
    prev_modify: str | None = None

    def values(self) -> tuple[object, ...]:
        """The fields in declaration order: the command's journal values (the module docstring says why
        this is written out)."""
        return (
            self.client_id,
            self.order_id,
            self.external_id,
            self.new_qty,
            self.new_price,
            self.new_type,
            self.msg_id,
            self.parent_id,
            self.prev_modify,
        )


@cython.no_gc  # values only: never part of a cycle (docs/build.md)
@cython.cclass
@dataclass  # a C type in the compiled build (commands.pxd), which takes no slots=True
class CancelOrder:
    """Cancel by reference: the exchange order id or the external id."""

    kind = "cancel"
    client_id: int
    ref: str

    def values(self) -> tuple[object, ...]:
        """The fields in declaration order: the command's journal values (the module docstring says why
        this is written out)."""
        return (self.client_id, self.ref)


@dataclass(slots=True)
class SetClientInfo:
    kind = "client_info"
    client_id: int
    self_trade_prevention: str


@dataclass(slots=True)
class RequestTransfer:
    kind = "transfer"
    client_id: int
    asset_id: int
    amount: str
    type: str  # DEPOSIT | WITHDRAW
    platform: str  # FIAT | CRYPTO
    instructions: tuple[tuple[str, object], ...] = ()  # sorted (key, value) pairs, already validated


@dataclass(slots=True)
class PaperFunds:
    """Add (or with ``remove``, take away) test funds: the gateway's paper trading."""

    kind = "paper_funds"
    client_id: int
    asset_id: int
    amount: str
    remove: bool = False


@dataclass(slots=True)
class SetInstrumentStatus:
    kind = "instrument_status"
    instrument_id: int
    status: str


@dataclass(slots=True)
class SetLatency:
    """Acknowledgement delays in engine nanoseconds (0: commands complete before their response)."""

    kind = "latency"
    entry_ns: int = 0
    modify_ns: int = 0
    cancel_ns: int = 0


@dataclass(slots=True)
class SetSettlementDelay:
    """How long transfers stay INITIALIZED before they complete, in engine nanoseconds."""

    kind = "settlement_delay"
    delay_ns: int


@dataclass(slots=True)
class SetStatusRetention:
    """How long an ended order stays visible to status lookups, in engine nanoseconds."""

    kind = "status_retention"
    retention_ns: int


@dataclass(slots=True)
class VenueCancel:
    """The venue cancels resting orders on its own, as on a risk event or an instrument halt: every
    resting order, or only one client's (``client_id``), or only on one instrument (``instrument_id``),
    or both; each ends CANCELED with ``reason`` (``rejects.VENUE_CANCEL_REASONS``)."""

    kind = "venue_cancel"
    reason: str
    client_id: int | None = None
    instrument_id: int | None = None


@cython.no_gc  # a value only: never part of a cycle (docs/build.md)
@cython.cclass
@dataclass  # a C type in the compiled build (commands.pxd): every command asks whether it is one
class AdvanceClock:
    """Move engine time to ``to_ns`` (virtual clock), firing every timer due on the way."""

    kind = "advance"
    to_ns: int


Command = (
    PlaceOrder
    | ModifyOrder
    | CancelOrder
    | SetClientInfo
    | RequestTransfer
    | PaperFunds
    | SetInstrumentStatus
    | SetLatency
    | SetSettlementDelay
    | SetStatusRetention
    | VenueCancel
    | AdvanceClock
)
COMMAND_TYPES: dict[str, type[Command]] = {
    c.kind: c
    for c in (
        PlaceOrder,
        ModifyOrder,
        CancelOrder,
        SetClientInfo,
        RequestTransfer,
        PaperFunds,
        SetInstrumentStatus,
        SetLatency,
        SetSettlementDelay,
        SetStatusRetention,
        VenueCancel,
        AdvanceClock,
    )
}
for _command in COMMAND_TYPES.values():  # calls: a C type (commands.pxd) takes no other decorator
    saves_fields(_command)
