"""The floor: the fastest minimal price-time book we could write in pure CPython.

It is the yardstick of ``bench_engine.py``: the engine's rate on a stream divided by this book's rate
on the same stream, in the same run and under the same garbage-collector setting, is the figure we
track (a ratio survives the machine's ±25% drift between runs; absolute rates do not).

Contract:
- Integer prices (ticks) and quantities (lots) only; ids are given by the caller and must be unique.
- Each side is a ``SortedDict`` keyed so the best level comes first (asks by price, bids by negated
  price), so one loop matches both sides: an incoming order trades every level whose key is at most
  its own limit key (``price`` for a BUY against asks, ``-price`` for a SELL against bids).
- A level is a plain ``dict`` id -> order: insertion order is arrival order, and cancel is O(1).
  (measured: a dict level beats a deque with ``remove`` by 8x on cancel-heavy flow, and beats an
  ``OrderedDict``; ``__slots__`` orders beat lists.)
- Fills are at the resting order's price; an unfilled remainder rests (GTC). No ledger, fees,
  self-trade prevention, events, timestamps or validation: this is the floor, not a venue.

Complexity: place O(log levels) for a new level else O(1), plus O(1) per order filled; cancel O(1)
plus O(log levels) when the level empties; best bid/ask O(1).
"""

from __future__ import annotations

from sortedcontainers import SortedDict


class FloorOrder:
    __slots__ = ("is_buy", "key", "qty")

    def __init__(self, is_buy: bool, key: int, qty: int) -> None:
        self.is_buy = is_buy
        self.key = key  # price for an ask, -price for a bid: the level's key on its side
        self.qty = qty  # open lots


class FloorBook:
    __slots__ = ("asks", "bids", "orders")

    def __init__(self) -> None:
        self.bids: SortedDict = SortedDict()  # -price -> {id: FloorOrder}
        self.asks: SortedDict = SortedDict()  # price -> {id: FloorOrder}
        self.orders: dict[int, FloorOrder] = {}  # resting orders by id

    def place(self, oid: int, is_buy: bool, price: int, qty: int) -> None:
        """Match a limit order against the contra side, then rest what is left. O(1) per fill."""
        if is_buy:
            contra, own, limit, key = self.asks, self.bids, price, -price
        else:
            contra, own, limit, key = self.bids, self.asks, -price, price
        orders = self.orders
        while contra:
            k, level = contra.peekitem(0)
            if k > limit:
                break
            filled = []
            for moid, maker in level.items():
                mq = maker.qty
                if mq > qty:
                    maker.qty = mq - qty
                    qty = 0
                    break
                qty -= mq
                filled.append(moid)
                if not qty:
                    break
            for moid in filled:
                del level[moid]
                del orders[moid]
            if not level:
                del contra[k]
            if not qty:
                return
        order = FloorOrder(is_buy, key, qty)
        level = own.get(key)
        if level is None:
            own[key] = {oid: order}
        else:
            level[oid] = order
        orders[oid] = order

    def cancel(self, oid: int) -> bool:
        """Take a resting order out of the book. O(1), plus O(log levels) when its level empties."""
        order = self.orders.pop(oid, None)
        if order is None:
            return False
        levels = self.bids if order.is_buy else self.asks
        key = order.key
        level = levels[key]
        del level[oid]
        if not level:
            del levels[key]
        return True

    def best_bid(self) -> int | None:
        return -self.bids.keys()[0] if self.bids else None

    def best_ask(self) -> int | None:
        return self.asks.keys()[0] if self.asks else None

    def __len__(self) -> int:
        return len(self.orders)

    def check_invariants(self) -> None:
        n = 0
        for levels, is_buy in ((self.bids, True), (self.asks, False)):
            for key, level in levels.items():
                assert level, f"empty level {key}"
                for oid, order in level.items():
                    assert order.key == key and order.is_buy is is_buy and order.qty > 0
                    assert self.orders[oid] is order
                    n += 1
        assert n == len(self.orders)
        bid, ask = self.best_bid(), self.best_ask()
        assert bid is None or ask is None or bid < ask, f"crossed {bid} >= {ask}"
