"""The users' places in the queues of a recorded market (``engine/recorded/market.py`` states the rules):
the recorded quantity ahead of each user's resting order at a recorded level, registered when the
recording first touches the level after the order joined, and moved by the queue model
(``engine/recorded/queue_model.py``) when the level's recorded size changes.

The table (``MarketState.queue``, user order id -> :class:`~engine.recorded.depth.QueuePos`) is looked
at by id only; past 4,096 entries it forgets the orders that no longer work.

Complexity: a place O(1), or O(orders ahead at the level) when it is registered; a size change
O(orders at the level); forgetting O(places + orders of the clients).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cefisim.engine.recorded.depth import QueuePos
from cefisim.engine.vocabulary import WORKING

if TYPE_CHECKING:
    from cefisim.engine.levels import Level
    from cefisim.engine.recorded.depth import MarketState
    from cefisim.engine.records import Order


def place_of(m: MarketState, level: Level, order: Order) -> QueuePos:
    """The order's place, registered (or registered again after a modify that lost priority)."""
    pos = m.queue.get(order.id)
    qty = order.remaining
    if pos is not None and pos.price == order.price and pos.qty >= qty:
        pos.qty = qty  # fills and a smaller modify keep the place; a price or size increase does not
        return pos
    front = 0
    depth = m.live_depth(order.side, order.price)
    if depth is not None:
        for other in level.orders:
            if other == depth.id:
                front = depth.remaining
                break
            if other == order.id:
                break
    pos = m.queue[order.id] = QueuePos(front, order.price, qty)
    if len(m.queue) > 4096:
        _forget_ended(m)
    return pos


def move_on_depth(m: MarketState, level: Level, prev: int, new: int) -> None:
    """The recorded size of ``level`` changes from ``prev`` to ``new``: move the users' orders."""
    model = m.model
    cp = m.counterparty
    for order in level.orders.values():  # place_of never changes the level
        if order.account is cp:
            continue
        pos = place_of(m, level, order)
        pos.front = model.depth(pos.front, prev, new, pos.traded)
        pos.traded = 0


def _forget_ended(m: MarketState) -> None:
    """Forget the places of orders that no longer work (the table is looked at by id only)."""
    accounts = m.venue.accounts
    keep: dict[int, QueuePos] = {}
    for account in accounts.values():
        for oid in m.queue.keys() & account.orders.keys():
            if account.orders[oid].status in WORKING:
                keep[oid] = m.queue[oid]
    m.queue = {oid: keep[oid] for oid in sorted(keep)}


__all__ = ["move_on_depth", "place_of"]
