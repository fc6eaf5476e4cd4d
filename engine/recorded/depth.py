"""The recorded market's state (``engine/recorded/market.py`` states the rules): per price level of each
side, what the recording says is there and the depth order standing for it; the users' places in the
recorded queues; and what the market trades in.

:class:`MarketState` is what the queue bookkeeping (``engine/recorded/queue.py``) and the fills
(``engine/recorded/fills.py``) are given; :class:`~engine.recorded.market.RecordedMarket` is the one
kind of it, which adds the recording itself and applies it. A :class:`RecordedLevel` holds a level's
recorded size and its depth order, found by one lookup: a recorded update reads and writes both. A
:class:`QueuePos` is a user's place (``engine/recorded/queue.py`` registers and moves it).

Complexity: a recorded level O(1) by side and price.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cefisim.engine.vocabulary import OrderStatus, Side

if TYPE_CHECKING:
    from cefisim.engine.book import Book
    from cefisim.engine.core import VenueCore
    from cefisim.engine.levels import Level
    from cefisim.engine.recorded.queue_model import QueueModel
    from cefisim.engine.records import Account, Order
    from cefisim.engine.reference import Instrument

ACTIVE = OrderStatus.ACTIVE.value
BUY = Side.BUY.value
SELL = Side.SELL.value


class RecordedLevel:
    """A price level as the recording has it: ``lots``, its size (never 0: a level the recording empties
    is forgotten), ``depth``, the counterparty's order that stands for it in the book while it is ACTIVE
    (a user may take it all, or part of it, until the level's next update), and ``level``, the book's
    level that order rests at (valid while it is ACTIVE: a book's level goes only once empty), so that a
    recorded size change finds it without a lookup."""

    __slots__ = ("depth", "level", "lots")

    def __init__(self, lots: int) -> None:
        self.lots = lots
        self.depth: Order | None = None
        self.level: Level | None = None


class QueuePos:
    """A user's order's place at a recorded level (lots): ``front`` ahead of it, ``traded`` at its
    price since the level's last size change, and the price and open quantity it was last seen with
    (a modify that loses priority — a new price or more quantity — is seen as a new arrival)."""

    __slots__ = ("front", "price", "qty", "traded")

    def __init__(self, front: int, price: int, qty: int) -> None:
        self.front = front
        self.traded = 0
        self.price = price
        self.qty = qty


class MarketState:
    """What a recorded market trades in (``venue``, ``instrument``, its ``book``), who stands for the
    recording (``counterparty``), the recorded levels of each side (``levels[side][price]``), the users'
    places in the recorded queues (``queue``, user order id -> place) and how they move (``model``), and
    whether a recorded trade has set the book's last price (``traded``)."""

    __slots__ = ("book", "counterparty", "instrument", "levels", "model", "queue", "traded", "venue")

    def __init__(self, venue: VenueCore, instrument: Instrument, counterparty: Account, model: QueueModel) -> None:
        self.venue = venue
        self.instrument = instrument
        self.book: Book = venue.books[instrument.id]
        self.counterparty = counterparty
        self.model = model
        self.levels: dict[str, dict[int, RecordedLevel]] = {BUY: {}, SELL: {}}
        self.queue: dict[int, QueuePos] = {}
        self.traded = False

    def live_depth(self, side: str, price: int) -> Order | None:
        """The depth order resting at ``price`` on ``side``, if one does."""
        rec = self.levels[side].get(price)
        if rec is None:
            return None
        depth = rec.depth
        return depth if depth is not None and depth.status == ACTIVE else None


__all__ = ["MarketState", "QueuePos", "RecordedLevel"]
