"""The order record and its derived quantities.

An :class:`Order` is kept lean because one exists per resting order (the book's memory budget is
about 300 bytes per resting order): integers in ticks and lots, references to shared objects, and the
rarely used request details in an :class:`OrderExtra` that exists only when one of them is set.

Quantities (lots):
- ``qty`` is the order's current total quantity (a modify replaces it), ``executed`` what has traded.
- ``leaves`` = qty - executed while the order is working (ACTIVE, MODIFY_PENDING, CANCEL_PENDING),
  0 otherwise; ``pending`` = qty - executed while NEW_PENDING, 0 otherwise.

Money (see ``engine/fills.py``): ``cum_lt`` is the sum of lots x ticks over all fills (exact, for VWAP and
for the cost bound), ``cum_quote`` the quote units paid (BUY) or received (SELL), ``cum_fee`` the sum of
quote units x fee rate (units of 1e-9) and ``fees_paid`` the fee charged so far: ceil(cum_fee / 1e9).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .reference import Client, Instrument

# Order status (the description's states)
INITIALIZED = "INITIALIZED"
NEW_PENDING = "NEW_PENDING"
REJECTED = "REJECTED"
ACTIVE = "ACTIVE"
FILLED = "FILLED"
CANCEL_PENDING = "CANCEL_PENDING"
CANCELED = "CANCELED"
MODIFY_PENDING = "MODIFY_PENDING"
ORDER_STATUSES = (
    INITIALIZED, NEW_PENDING, REJECTED, ACTIVE, FILLED, CANCEL_PENDING, CANCELED, MODIFY_PENDING,
)
#: statuses in which the order sits in the book and can trade
WORKING = frozenset((ACTIVE, MODIFY_PENDING, CANCEL_PENDING))
#: statuses from which nothing changes any more
FINAL = frozenset((REJECTED, FILLED, CANCELED))

BUY = "BUY"
SELL = "SELL"
LIMIT = "LIMIT"
MARKET = "MARKET"
GTC = "GTC"
IOC = "IOC"
ALO = "ALO"
AON = "AON"
USE_AGGRESSIVE_PRICING = "USE_AGGRESSIVE_PRICING"


class OrderExtra:
    """Request details that most orders do not carry, and the history of the few that change."""

    __slots__ = (
        "msg_id", "parent_id", "flags", "exec_inst", "stp", "hold_rate", "hold_fee_rate_given",
        "ref_external_id", "modify_info", "modifications", "reject_reason", "cancel_reason",
        "price_given", "qty_given", "acked",
    )

    def __init__(self) -> None:
        self.msg_id: str | None = None
        self.parent_id: str | None = None
        self.flags: tuple[str, ...] = ()
        self.exec_inst: tuple[str, ...] = ()
        self.stp: str | None = None  # as given on the order; None: the client's setting applies
        self.hold_rate: int | None = None  # fee rate (1e-9) the BUY hold covers, when given
        self.hold_fee_rate_given: str | None = None
        self.ref_external_id: str | None = None
        self.modify_info: dict | None = None  # the last ModifyInfo as received (wire strings)
        self.modifications: list[tuple[int, str]] | None = None  # (timestamp, MODIFIED|MODIFY_REJECTED:..)
        self.reject_reason: str | None = None
        self.cancel_reason: str | None = None
        self.price_given: str | None = None  # raw strings of a rejected order that never reached the grid
        self.qty_given: str | None = None
        self.acked: int | None = None  # when a NEW_PENDING order was acknowledged


class Order:
    __slots__ = (
        "id", "client", "instrument", "side", "type", "tif", "price", "qty", "executed", "status",
        "created", "updated", "external_id", "cum_lt", "cum_quote", "cum_fee", "fees_paid", "extra",
    )

    def __init__(
        self,
        id: int,
        client: "Client",
        instrument: "Instrument",
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
        self.client = client
        self.instrument = instrument
        self.side = side
        self.type = type
        self.tif = tif
        self.price = price
        self.qty = qty
        self.executed = 0
        self.status = INITIALIZED
        self.created = created
        self.updated = created
        self.external_id = external_id
        self.cum_lt = 0
        self.cum_quote = 0
        self.cum_fee = 0
        self.fees_paid = 0
        self.extra = extra

    @property
    def leaves(self) -> int:
        return self.qty - self.executed if self.status in WORKING else 0

    @property
    def pending(self) -> int:
        return self.qty - self.executed if self.status == NEW_PENDING else 0

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
            f"Order(id={self.id}, client={self.client.id}, {self.side} {self.type} {self.tif} "
            f"qty={self.qty} price={self.price} executed={self.executed} status={self.status})"
        )
