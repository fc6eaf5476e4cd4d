"""The records of an account: its balances, its orders (with what trading did to them), its fills
and its transfers, and the :class:`Account` that keeps them.

A client is reference data (``engine/reference.py``: who it is, its STP setting, its fee rates); its
:class:`Account` is the venue's state for it, owned and changed only by the venue. An order, a fill and
a transfer belong to an account, and the account lists them: the classes refer to each other, so they
share this module.

An :class:`Order` is kept lean because one exists per resting order (the book's memory budget is
about 300 bytes per resting order; 14 slots, 144 bytes with the collector's header): integers in ticks
and lots, references to shared objects, the rarely used request details in an :class:`OrderExtra` that
exists only when one of them is set, and what trading did to it in an :class:`Execution` that exists
only once the order has traded (most orders never do).

Quantities (lots):
- ``remaining`` is what the order has not traded (an ended order keeps what it left untraded): the
  quantity the book, the matching loop and the holds work with, hence the one stored.
- ``executed`` (what has traded, kept by the execution) and ``qty`` = remaining + executed (the
  order's current total quantity; a modify replaces it) are derived.
- ``leaves`` = remaining while the order is working (ACTIVE, MODIFY_PENDING, CANCEL_PENDING),
  0 otherwise; ``pending`` = remaining while NEW_PENDING, 0 otherwise.

Money (see ``engine/ledger.py``), on the execution: ``cum_lt`` is the sum of lots x ticks over all
fills (exact, for VWAP and for the cost bound), ``cum_quote`` the quote units paid (BUY) or received
(SELL), ``cum_fee`` the sum of quote units x fee rate (units of 1e-9) and ``fees_paid`` the fee charged
so far: ceil(cum_fee / 1e9). The order exposes them read-only (0 before the first fill).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

try:
    import cython
except ImportError:  # the pure package, without Cython (engine/nocython.py)
    from cefisim.engine import nocython as cython  # type: ignore[no-redef]  # the same names as cython

from cefisim.engine.rejects import CancelReason
from cefisim.engine.vocabulary import WORKING, ExecInst, OrderStatus, TransferStatus

if TYPE_CHECKING:
    from cefisim.engine.reference import Asset, Client, Instrument

# module-level names for the statuses tested on every order (engine/vocabulary.py says why)
INITIALIZED = OrderStatus.INITIALIZED.value
NEW_PENDING = OrderStatus.NEW_PENDING.value
CANCELED = OrderStatus.CANCELED.value
ALO = ExecInst.ALO.value
_REQUESTED = CancelReason.REQUESTED.value


@cython.cclass  # a C type in the compiled build (records.pxd): an acknowledged order and an order with a
# request detail make one each, and the order path reads its fields
class OrderExtra:
    """Request details that most orders do not carry, and the history of the few that change."""

    __slots__ = (
        "acked",
        "cancel_reason",
        "exec_inst",
        "flags",
        "hold_fee_rate_given",
        "hold_rate",
        "modifications",
        "modify_info",
        "msg_id",
        "parent_id",
        "price_given",
        "qty_given",
        "ref_external_id",
        "reject_reason",
        "stp",
    )

    SNAPSHOT: ClassVar[tuple[str, ...]] = __slots__  # every slot is state (api/runtime/snapshot.py)

    def __init__(self) -> None:
        self.msg_id: str | None = None
        self.parent_id: str | None = None
        self.flags: tuple[str, ...] = ()
        self.exec_inst: tuple[str, ...] = ()
        self.stp: str | None = None  # as given on the order; None: the client's setting applies
        self.hold_rate: int | None = None  # fee rate (1e-9) the BUY hold covers, when given
        self.hold_fee_rate_given: str | None = None
        self.ref_external_id: str | None = None
        self.modify_info: dict[str, str] | None = None  # the last ModifyInfo as received (wire strings)
        self.modifications: list[tuple[int, str]] | None = None  # (timestamp, MODIFIED|MODIFY_REJECTED:..)
        self.reject_reason: str | None = None
        self.cancel_reason: str | None = None  # None on a CANCELED order: REQUESTED (Order.cancel_reason)
        self.price_given: str | None = None  # raw strings of a rejected order that never reached the grid
        self.qty_given: str | None = None
        self.acked: int | None = None  # when a NEW_PENDING order was acknowledged


@cython.no_gc  # numbers only: never part of a cycle (docs/build.md)
@cython.cclass
class Execution:
    """What trading has done to an order: lots executed and the exact money sums of its fills.

    Created by the order's first fill (``engine/matching.py``); never shrinks.
    """

    __slots__ = ("cum_fee", "cum_lt", "cum_quote", "executed", "fees_paid")

    SNAPSHOT: ClassVar[tuple[str, ...]] = __slots__  # every slot is state (api/runtime/snapshot.py)

    def __init__(self) -> None:
        self.executed = 0
        self.cum_lt = 0
        self.cum_quote = 0
        self.cum_fee = 0
        self.fees_paid = 0


#: the execution of an order that has not traded (read only: never assign to it)
NO_FILLS = Execution()


def _execution_sum(name: str, doc: str) -> property:
    def get(order: Order) -> int:
        value: int = getattr(order.execution or NO_FILLS, name)  # every field of Execution is an int
        return value

    return property(get, doc=doc)


# orders and fills close reference cycles (an account lists them, they name it): out of the collector
# all the same, because the venue breaks those cycles when it goes (Account.release, docs/build.md)
@cython.no_gc
@cython.cclass
class Order:
    __slots__ = (
        "account",
        "created",
        "execution",
        "external_id",
        "extra",
        "id",
        "instrument",
        "price",
        "remaining",
        "side",
        "status",
        "tif",
        "type",
        "updated",
    )

    SNAPSHOT: ClassVar[tuple[str, ...]] = __slots__  # every slot is state (api/runtime/snapshot.py)

    def __init__(
        self,
        id: int,
        account: Account,
        instrument: Instrument,
        side: str,
        type: str,
        tif: str,
        price: int,
        qty: int,
        created: int,
        external_id: str | None,
        extra: OrderExtra | None,
    ) -> None:
        self.id = id
        self.account = account
        self.instrument = instrument
        self.side = side
        self.type = type
        self.tif = tif
        self.price = price
        self.remaining = qty
        self.status = INITIALIZED
        self.created = created
        self.updated = created
        self.external_id = external_id
        self.extra = extra
        self.execution: Execution | None = None

    executed = _execution_sum("executed", "Lots traded so far.")
    cum_lt = _execution_sum("cum_lt", "Sum of lots x ticks over the fills.")
    cum_quote = _execution_sum("cum_quote", "Quote units paid (BUY) or received (SELL) so far.")
    cum_fee = _execution_sum("cum_fee", "Sum of quote units x fee rate (1e-9) over the fills.")
    fees_paid = _execution_sum("fees_paid", "Fee units charged so far: ceil(cum_fee / 1e9).")

    @property
    def qty(self) -> int:
        """The order's current total quantity in lots: remaining + executed."""
        return self.remaining + (self.execution or NO_FILLS).executed

    @property
    def leaves(self) -> int:
        return self.remaining if self.status in WORKING else 0

    @property
    def pending(self) -> int:
        return self.remaining if self.status == NEW_PENDING else 0

    @property
    def cancel_reason(self) -> str | None:
        """Why the order ended CANCELED, else None.

        REQUESTED, by far the most common reason, is not stored: a plain cancel allocates no
        :class:`OrderExtra` (which would be kept for the status retention time) just to say so.
        """
        extra = self.extra
        if extra is not None and extra.cancel_reason is not None:
            return extra.cancel_reason
        return _REQUESTED if self.status == CANCELED else None

    @property
    def is_alo(self) -> bool:
        return self.extra is not None and ALO in self.extra.exec_inst

    def ex(self) -> OrderExtra:
        """The order's extra details, created on first use."""
        if self.extra is None:
            self.extra = OrderExtra()
        return self.extra

    def __repr__(self) -> str:
        return (
            f"Order(id={self.id}, client={self.account.id}, {self.side} {self.type} {self.tif} "
            f"qty={self.qty} price={self.price} executed={self.executed} status={self.status})"
        )


@cython.no_gc  # numbers only: never part of a cycle (docs/build.md)
@cython.cclass
class Balance:
    """An account's holding of one asset (``engine/ledger.py`` says what each part means)."""

    __slots__ = ("fees_hold", "hold", "total", "unsettled_fees")

    SNAPSHOT: ClassVar[tuple[str, ...]] = __slots__  # every slot is state (api/runtime/snapshot.py)

    def __init__(self, total: int = 0) -> None:
        self.total = total
        self.hold = 0
        self.fees_hold = 0
        self.unsettled_fees = 0

    @property
    def available(self) -> int:
        return self.total - self.hold

    def change_hold(self, units: int, fee_units: int) -> None:
        """Hold ``units`` more (fewer when negative), ``fee_units`` of them for fees. Every change of a
        hold goes through here, so that a balance nothing is held against can drop it."""
        self.hold += units
        self.fees_hold += fee_units

    def __repr__(self) -> str:
        return (
            f"Balance(total={self.total}, hold={self.hold}, fees_hold={self.fees_hold}, "
            f"unsettled_fees={self.unsettled_fees})"
        )


@cython.no_gc
@cython.cclass
class UnheldBalance(Balance):
    """A balance nothing is held against: the recorded market counterparty's, in the instrument's base
    and quote (``engine/recorded/market.py``). Its resting depth stands for the recording's liquidity, not
    for funds set aside, so ``hold`` and ``fees_hold`` stay 0: :meth:`change_hold` drops every change.
    The venue's ledger code (fills, ended orders) runs unchanged for it, and its totals move with every
    fill, so every asset stays conserved. Not snapshot state (a venue with a recorded market is
    never snapshotted: ``api/runtime/simulation.py``)."""

    __slots__ = ()

    SNAPSHOT = None  # type: ignore[assignment]  # never in a snapshot

    @classmethod
    def replacing(cls, bal: Balance) -> UnheldBalance:
        """An unheld balance with ``bal``'s total and unsettled fees (``bal`` holds nothing)."""
        assert not bal.hold, f"{bal!r} holds funds"
        new = cls(bal.total)
        new.unsettled_fees = bal.unsettled_fees
        return new

    def change_hold(self, units: int, fee_units: int) -> None:
        """Dropped: nothing is held against this balance."""


@cython.no_gc  # as Order
@cython.cclass
class Fill:
    """One side of a match: the trade record of the description (``liq_flag``, ``match_id`` ...)."""

    __slots__ = ("fee", "fee_rate", "liq_flag", "match_id", "order", "price", "qty", "quote", "timestamp")

    SNAPSHOT: ClassVar[tuple[str, ...]] = __slots__  # every slot is state (api/runtime/snapshot.py)

    def __init__(
        self,
        match_id: int,
        timestamp: int,
        order: Order,
        price: int,
        qty: int,
        fee_rate: int,
        liq_flag: str,
        fee: int,
        quote: int,
    ) -> None:
        self.match_id = match_id
        self.timestamp = timestamp
        self.order = order
        self.price = price  # ticks
        self.qty = qty  # lots
        self.fee_rate = fee_rate  # 1e-9
        self.liq_flag = liq_flag
        self.fee = fee  # quote units charged on this fill
        self.quote = quote  # quote units paid (BUY) or received (SELL) before the fee

    def __repr__(self) -> str:
        return (
            f"Fill(match={self.match_id}, order={self.order.id}, {self.liq_flag} "
            f"{self.qty}@{self.price}, fee={self.fee})"
        )


class Transfer:
    __slots__ = (
        "account",
        "amount",
        "amount_text",
        "asset",
        "created",
        "id",
        "instructions",
        "platform",
        "reject_reason",
        "status",
        "type",
        "updated",
    )

    SNAPSHOT: ClassVar[tuple[str, ...]] = __slots__  # every slot is state (api/runtime/snapshot.py)

    def __init__(
        self,
        id: int,
        account: Account,
        asset: Asset,
        amount: int,
        type: str,
        platform: str,
        instructions: tuple[tuple[str, object], ...],
        created: int,
        amount_text: str,
    ) -> None:
        self.id = id
        self.account = account
        self.asset = asset
        self.amount = amount
        self.type = type
        self.platform = platform
        self.instructions = instructions
        self.status: str = TransferStatus.INITIALIZED.value
        self.created = created
        self.updated = created
        # REJECTED: why; INITIALIZED: a WITHDRAW that holds nothing, which its settlement decides
        self.reject_reason: str | None = None
        self.amount_text = amount_text


class Account:
    """The venue's state for one client: balances and records, in the order the venue made them.

    ``id`` is the client's id (events and reads name the account by it); ``client`` is the reference
    record, whose settings (STP) may change while the account lives.
    """

    __slots__ = (
        "balances",
        "by_external",
        "client",
        "fills",
        "funds_log",
        "id",
        "live_external",
        "open_orders",
        "orders",
        "transfers",
    )

    SNAPSHOT: ClassVar[tuple[str, ...]] = __slots__  # every slot is state (api/runtime/snapshot.py)

    def __init__(self, client: Client) -> None:
        self.client = client
        self.id = client.id
        self.balances: dict[int, Balance] = {}  # asset id ->
        self.orders: dict[int, Order] = {}  # order id -> order, oldest first
        self.live_external: dict[str, Order] = {}  # external id -> working order
        self.by_external: dict[str, Order] = {}  # external id -> latest order that carried it
        self.fills: list[Fill] = []  # oldest first
        self.transfers: dict[int, Transfer] = {}  # transfer id ->, oldest first
        self.open_orders: dict[int, int] = {}  # instrument id -> orders open on it
        self.funds_log: list[tuple[int, int, int]] = []  # paper funds entries: (ts, asset id, units)

    def release(self) -> None:
        """Forget the account's orders and fills: its venue is going (``VenueCore.__del__``).

        The compiled build keeps orders and fills out of the cycle collector, as long-lived records
        it would walk at every full collection; the cycles they close through the account (it lists
        them, they name it) are broken here instead, so that they are freed when their venue is.
        """
        self.orders.clear()
        self.live_external.clear()
        self.by_external.clear()
        self.fills.clear()

    def __repr__(self) -> str:
        return f"Account(client={self.id}, orders={len(self.orders)}, fills={len(self.fills)})"
