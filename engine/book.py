"""The order book of one instrument: two sides of price levels, FIFO within a level.

Contract:
- Each side is a :class:`~engine.levels.Levels` (a dict of levels read in key order) keyed so that
  the best level comes first: asks by price, bids by negated price. One matching loop therefore
  serves both sides (``engine/matching.py``).
- A :class:`~engine.levels.Level` keeps its orders in a dict by order id, whose insertion order is
  arrival order, and the total open quantity of those orders. Priority is lost by removing and re-adding
  the order.
- ``bid_key`` and ``ask_key`` cache the key of each side's best level (None when the side is empty):
  every order entry asks whether it crosses, and reading a side's first key costs a call. They
  change only where a level is created or deleted (``add``, ``remove``, ``drop_level``).
- Complexity: best bid/offer O(1) (the cached keys); add O(1), plus a new key in its side
  (``engine/levels.py``) for a new level; remove by id O(1) (a dict lookup by price, then by id),
  plus the key's deletion when the level empties.
- Only orders with open quantity rest; a level never holds a zero-quantity order and an empty level is
  removed at once. ``check_invariants`` asserts all of this and that the book is not crossed (except
  while an OPENING instrument collects orders).
- While the instrument is OPENING (and until it uncrosses), ``opening`` records the orders that joined
  the back of a level, in joining order, so the uncross (``engine/opening.py``) knows their time priority
  (an order that lost its place by a modify counts from when it rejoined).
"""

from __future__ import annotations

from typing import ClassVar

from cefisim.engine.levels import Level, Levels, level_at, level_of
from cefisim.engine.records import Order
from cefisim.engine.vocabulary import WORKING, Side

BUY = Side.BUY.value


class Book:
    __slots__ = ("ask_key", "asks", "band", "bid_key", "bids", "instrument_id", "last_price", "opening")
    #: the band is a cache of the reference price's bounds, rebuilt on use (``restored``)
    SNAPSHOT: ClassVar[tuple[str, ...]] = (
        "instrument_id",
        "bids",
        "asks",
        "bid_key",
        "ask_key",
        "last_price",
        "opening",
    )

    def __init__(self, instrument_id: int) -> None:
        self.instrument_id = instrument_id
        self.bids: Levels = Levels()  # -price -> Level
        self.asks: Levels = Levels()  # price -> Level
        self.bid_key: int | None = None  # -(best bid), the first key of bids
        self.ask_key: int | None = None  # best ask, the first key of asks
        self.last_price: int | None = None  # ticks of the last trade
        self.opening: dict[int, Order] | None = None  # id -> order joined since OPENING, in order
        self.reset_caches()

    def reset_caches(self) -> None:
        """Empty the memo caches (not state: a snapshot leaves them out)."""
        # (2 x reference price, lowest, highest price within the band), kept by pricing.within_band
        self.band: tuple[int, int, int] | None = None

    def restored(self) -> None:
        """Rebuild what a snapshot leaves out (``api/runtime/snapshot.py``): the band cache."""
        self.reset_caches()

    def side(self, side: str) -> Levels:
        """The levels an order of ``side`` rests on."""
        return self.bids if side == BUY else self.asks

    def contra(self, side: str) -> Levels:
        """The levels an order of ``side`` trades against."""
        return self.asks if side == BUY else self.bids

    def add(self, order: Order) -> Level:
        """Rest ``order`` at the back of its price level, which it returns."""
        # (an if, not a conditional pair of tuples: compiled, each pair would be a tuple built and freed)
        is_bid = order.side == BUY
        if is_bid:
            levels, key = self.bids, -order.price
        else:
            levels, key = self.asks, order.price
        level = level_at(levels, key)
        if level is None:
            level = levels[key] = Level(order.price)
            if is_bid:
                if self.bid_key is None or key < self.bid_key:
                    self.bid_key = key
            elif self.ask_key is None or key < self.ask_key:
                self.ask_key = key
        else:
            order.price = level.price  # share one int object per level
        level.orders[order.id] = order
        level.qty += order.remaining
        opening = self.opening
        if opening is not None:
            opening.pop(order.id, None)
            opening[order.id] = order
        return level

    def remove(self, order: Order, open_lots: int) -> None:
        """Take a resting ``order`` with ``open_lots`` still counted at its level out of the book."""
        if order.side == BUY:
            levels, key = self.bids, -order.price
        else:
            levels, key = self.asks, order.price
        level = level_of(levels, key)
        del level.orders[order.id]
        level.qty -= open_lots
        if not level.orders:
            self.drop_level(levels, key)
        if self.opening is not None:
            self.opening.pop(order.id, None)

    def drop_level(self, levels: Levels, key: int) -> int | None:
        """Delete the emptied level ``key`` of one side; returns the key of that side's best level."""
        del levels[key]
        is_bids = levels is self.bids
        best = self.bid_key if is_bids else self.ask_key
        if key == best:
            best = levels.first_key()
            if is_bids:
                self.bid_key = best
            else:
                self.ask_key = best
        return best

    def contains(self, order: Order) -> bool:
        levels = self.bids if order.side == BUY else self.asks
        level = levels.get(-order.price if order.side == BUY else order.price)
        return level is not None and level.orders.get(order.id) is order

    def best_bid(self) -> int | None:
        return None if self.bid_key is None else -self.bid_key

    def best_ask(self) -> int | None:
        return self.ask_key

    def depth(self, side: str, levels: int) -> list[tuple[int, int, int]]:
        """Up to ``levels`` (price, open lots, order count) of one side, best first."""
        book_side = self.bids if side == BUY else self.asks
        out: list[tuple[int, int, int]] = []
        for level in book_side.values():
            if len(out) >= levels:
                break
            out.append((level.price, level.qty, len(level.orders)))
        return out

    def resting_orders(self) -> list[Order]:
        """Every resting order, in arrival order (by id)."""
        orders = [o for side in (self.bids, self.asks) for lv in side.values() for o in lv.orders.values()]
        orders.sort(key=lambda o: o.id)
        return orders

    def check_invariants(self, allow_crossed: bool = False) -> None:
        for levels, sign, best in ((self.bids, -1, self.bid_key), (self.asks, 1, self.ask_key)):
            levels.check_invariants()
            assert best == levels.first_key(), f"best key {best} is stale"
            for key, level in levels.items():
                assert level.orders, f"empty level {level!r} left in the book"
                assert key == sign * level.price, f"level {level!r} filed under key {key}"
                total = 0
                for oid, order in level.orders.items():
                    assert oid == order.id
                    assert order.price == level.price, f"{order!r} at level {level.price}"
                    assert order.status in WORKING, f"{order!r} rests but is not working"
                    assert (order.side == BUY) == (sign == -1), f"{order!r} on the wrong side"
                    open_lots = order.remaining
                    assert open_lots > 0, f"{order!r} rests with nothing open"
                    total += open_lots
                assert total == level.qty, f"{level!r} caches qty {level.qty}, orders hold {total}"
        bid, ask = self.best_bid(), self.best_ask()
        if not allow_crossed and bid is not None and ask is not None:
            assert bid < ask, f"book {self.instrument_id} crossed: {bid} >= {ask}"
