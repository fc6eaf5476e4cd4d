"""Records the venue keeps besides orders: fills (one per side of a match) and transfers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .vocabulary import TransferStatus

if TYPE_CHECKING:
    from .order import Order
    from .reference import Asset, Client


class Fill:
    """One side of a match: the trade record of the description (``liq_flag``, ``match_id`` ...)."""

    __slots__ = ("fee", "fee_rate", "liq_flag", "match_id", "order", "price", "qty", "quote", "timestamp")

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
        "amount",
        "amount_text",
        "asset",
        "client",
        "created",
        "id",
        "instructions",
        "platform",
        "reject_reason",
        "status",
        "type",
        "updated",
    )

    def __init__(
        self,
        id: int,
        client: Client,
        asset: Asset,
        amount: int,
        type: str,
        platform: str,
        instructions: tuple[tuple[str, object], ...],
        created: int,
        amount_text: str,
    ) -> None:
        self.id = id
        self.client = client
        self.asset = asset
        self.amount = amount
        self.type = type
        self.platform = platform
        self.instructions = instructions
        self.status: str = TransferStatus.INITIALIZED.value
        self.created = created
        self.updated = created
        self.reject_reason: str | None = None
        self.amount_text = amount_text
