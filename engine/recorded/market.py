"""A recorded market: recorded L2 depth and trades replayed into one instrument's book, around the
users' own orders. ``docs/recorded.md`` says it in prose.

Contract:
- The instrument's book holds, per price level with recorded size, one *depth order* of the
  *recorded counterparty* (an ordinary client of the venue, funded at setup) whose open quantity is
  the level's recorded size, plus the users' own orders. Everything the venue does with orders —
  matching, ledger, fees, STP, records, latency — therefore applies unchanged: a user's aggressive
  order trades against the depth orders at their prices like against any resting order.
- ``apply_until(to_ns, events)`` applies every recorded event with engine time ``ts <= to_ns``
  (the venue calls it from ``timers.advance``, in time order with its timers, so it is journaled by
  the commands that moved the clock, never on its own). An update sets the level's depth order to the
  recorded size; 0 lots retires it (no event: the recorded market's book is not a client's activity).
- Market impact: with ``impact`` (the default) depth a user took stays taken until the recording next
  updates that level; without it, every level a user took from is restored to its recorded size
  before the next recorded event is applied.
- Queue position: a user's order resting at a recorded level gets ``front``, the recorded quantity
  ahead of it when it joined (the depth order's open quantity if that was in the level before the
  user's order, else 0). It is registered when the first recorded event touches its level after it
  joined (nothing at that level changed in between, so the quantity ahead is still the one it found).
  Recorded trades at its price move it forward; size changes move it as the queue model says
  (``engine/recorded/queue_model.py``).
- Fills: a recorded trade of ``q`` lots by an aggressor of side S fills the users' orders of the other
  side, best price first, up to ``q`` lots in all: an order priced better than the trade (the trade
  went through it) fills with no queue; an order at the trade's price fills what the trade left past
  its ``front``. Each fill is an ordinary venue fill against a one-off IOC order of the recorded
  counterparty at the trade's price (trade record, fees, balances, events), at the user's price.
- When recorded depth crosses a user's resting order (after all the events of one instant), the
  depth trades with it as the aggressor, at the user's price, up to the depth's size.
- Reference price: a recorded trade's price is the book's last price (``Book.last_price``: the price
  band's reference and what a strategy reads as the last price), as a trade on the venue is; users'
  own fills set it as anywhere. Until the recording's first trade, every recorded instant ends with
  no last price, so the band's reference is the book's mid: a user's early fill does not pin it while
  the recorded market moves on.
- Conservation: the counterparty is a client of the venue, so every fill moves assets between two
  accounts and every asset is conserved. Its fee rates on the instrument are zero (the recorded
  market's fees are not the venue's to charge), and nothing is held against its orders: its base and
  quote balances are :class:`~engine.records.UnheldBalance` (the recording, not a balance, says what
  the recorded market can trade), so a recorded update is a level write, not a ledger entry.
Complexity: an update O(1) (O(log levels) when a level appears or empties), plus O(own orders at the
level) when users rest there; a trade O(levels through + own orders touched).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from itertools import chain
from typing import TYPE_CHECKING

from cefisim.engine.events import DepthEvent, Event, build_event
from cefisim.engine.ledger import balance
from cefisim.engine.recorded.feed import TRADE, UPDATE, Levels, RecordedEvent
from cefisim.engine.recorded.fills import ZERO_RATES, trade, uncross
from cefisim.engine.recorded.queue import QueuePos, move_on_depth, place_of
from cefisim.engine.recorded.queue_model import QueueModel, RiskAverse
from cefisim.engine.records import Order, UnheldBalance
from cefisim.engine.vocabulary import OrderStatus, OrderType, Side, TimeInForce

ACTIVE = OrderStatus.ACTIVE.value
BUY = Side.BUY.value
CANCELED = OrderStatus.CANCELED.value
GTC = TimeInForce.GTC.value
LIMIT = OrderType.LIMIT.value
SELL = Side.SELL.value

if TYPE_CHECKING:
    from cefisim.engine.venue import Venue


class RecordedMarket:
    def __init__(
        self,
        venue: Venue,
        instrument_id: int,
        counterparty_id: int,
        events: Iterator[RecordedEvent],
        queue_model: QueueModel | None = None,
        impact: bool = True,
        name: str = "",
    ) -> None:
        """``counterparty_id``: a client of the venue, set up and funded for this market alone;
        ``events``: engine tuples (``engine/recorded/feed.py``) whose times are engine times."""
        self.venue = venue
        self.instrument = venue.instruments[instrument_id]
        self.book = venue.books[instrument_id]
        self.counterparty = counterparty = venue.accounts[counterparty_id]
        counterparty.client.fee_overrides[instrument_id] = ZERO_RATES
        self.model = queue_model or RiskAverse()
        self.impact = impact
        self.name = name
        self._events = events
        self._next: RecordedEvent | None = next(events, None)
        #: engine time of the next recorded event, None when the recording is over
        self.next_ts: int | None = None if self._next is None else self._next[1]
        self.sizes: dict[str, dict[int, int]] = {BUY: {}, SELL: {}}  # recorded lots per price
        self.depth: dict[str, dict[int, Order]] = {BUY: {}, SELL: {}}  # the depth order per price
        self.queue: dict[int, QueuePos] = {}  # user order id -> its place
        self.applied = 0  # recorded events applied
        self.last_ts: int | None = None  # engine time of the last one
        self.traded = False  # a recorded trade has set the book's last price
        self._fill_cursor = len(counterparty.fills)  # no-impact: the counterparty's fills seen
        inst = self.instrument
        for asset_id in (inst.base.id, inst.quote.id):  # nothing is held against the recorded depth
            bal = balance(counterparty, asset_id)
            if not isinstance(bal, UnheldBalance):
                counterparty.balances[asset_id] = UnheldBalance.replacing(bal)
        # what apply_until works with, in one tuple: it runs at every clock move that reaches a
        # recorded event, and these objects live as long as the venue
        book = self.book
        self._loop = (
            venue,
            venue.clock,
            book,
            book.bids,
            book.asks,
            self.sizes[BUY],
            self.sizes[SELL],
            self.depth[BUY],
            self.depth[SELL],
            inst,
            inst.id,
            counterparty,
            counterparty.orders,
            counterparty.open_orders,
        )

    # --- the venue's view ----------------------------------------------------------------------

    def apply_until(self, to_ns: int, events: list[Event]) -> None:
        """Apply every recorded event due at or before ``to_ns``, moving the venue's clock to each
        (the venue calls it with ``to_ns`` before anything else it has due)."""
        first = self._next
        if first is None or first[1] > to_ns:
            return
        if not self.impact:
            self._restore_taken()
        # This loop runs once per recorded event, so the three common updates (a size change, a new
        # level nobody rests at, a level's depth order going) are written out here with
        # everything they touch in locals; everything else goes through _set_level, trade, _snapshot.
        (
            v,
            clock,
            book,
            bids,
            asks,
            sizes_b,
            sizes_a,
            depth_b,
            depth_a,
            inst,
            inst_id,
            cp,
            cp_orders,
            cp_open,
        ) = self._loop
        plain = book.opening is None  # levels come and go directly (no opening auction to record; a
        # replay never changes the instrument's status)
        count = 0
        instant = first[1]
        for nxt in chain((first,), self._events):
            ts = nxt[1]
            if ts != instant:  # (times never decrease: an event of the current instant is due)
                if ts > to_ns:
                    break
                # the previous instant is complete: settle any cross it left
                bid_key, ask_key = book.bid_key, book.ask_key
                if bid_key is not None and ask_key is not None and -bid_key >= ask_key:
                    uncross(self, events)
                instant = ts
            count += 1
            if nxt[0] == UPDATE:
                _, _, _, side, price, lots = nxt
                if side == BUY:
                    sizes = sizes_b
                    depths = depth_b
                    levels = bids
                    key = -price
                else:
                    sizes = sizes_a
                    depths = depth_a
                    levels = asks
                    key = price
                depth = depths.get(price)
                if depth is not None and depth.status == ACTIVE:
                    level = levels[key]  # a live depth order rests at its level
                    if lots:
                        # a level's recorded size changes (users resting there move first)
                        if len(level.orders) > 1:
                            move_on_depth(self, level, sizes[price], lots)
                        sizes[price] = lots
                        delta = lots - depth.remaining
                        if delta:  # _resize written out
                            depth.remaining = lots
                            level.qty += delta
                        continue
                    if ts > clock.now:
                        clock.now = ts
                    if plain:
                        # the level's depth order goes: _set_level and _retire, written out
                        if len(level.orders) == 1:
                            book.drop_level(levels, key)  # the level goes with it
                        else:
                            move_on_depth(self, level, sizes[price], 0)  # users resting there move first
                            del level.orders[depth.id]
                            level.qty -= depth.remaining
                        del sizes[price]
                        depth.status = CANCELED
                        cp_open[inst_id] -= 1
                        del cp_orders[depth.id]
                        del depths[price]
                        continue
                elif ts > clock.now:
                    clock.now = ts
                if depth is None and lots and plain and key not in levels:
                    # a new level with no user there: _new_depth written out
                    sizes[price] = lots
                    oid = v.next_order_id
                    v.next_order_id = oid + 1
                    depth = Order(oid, cp, inst, side, LIMIT, GTC, price, lots, clock.now, None, None)
                    depth.status = ACTIVE
                    cp_orders[oid] = depth
                    cp_open[inst_id] = cp_open.get(inst_id, 0) + 1
                    book.add(depth)
                    depths[price] = depth
                else:
                    self._set_level(side, price, lots, events)
            else:
                if ts > clock.now:
                    clock.now = ts
                if nxt[0] == TRADE:
                    trade(self, nxt[3], nxt[4], nxt[5], events)
                else:
                    self._snapshot(nxt[3], nxt[4], events)
        else:
            nxt = None
        if instant > clock.now:
            clock.now = instant
        self._next = nxt
        self.next_ts = None if nxt is None else nxt[1]
        self.applied += count
        self.last_ts = instant
        bid_key, ask_key = book.bid_key, book.ask_key
        if bid_key is not None and ask_key is not None and -bid_key >= ask_key:
            uncross(self, events)
        if not self.traded:  # no recorded trade yet: the band's reference is the mid, not a user's old fill
            book.last_price = None
        events.append(build_event(DepthEvent, (clock.stamp(), inst_id)))

    def queue_position(self, order: Order) -> int | None:
        """Lots ahead of a user's resting order at its level (registering it if it is new there);
        None when the order does not rest on this instrument."""
        book = self.book
        levels, key = (book.bids, -order.price) if order.side == BUY else (book.asks, order.price)
        level = levels.get(key)
        if level is None or level.orders.get(order.id) is not order:
            return None
        return place_of(self, level, order).front

    # --- recorded events -----------------------------------------------------------------------

    def _snapshot(self, bids: Levels, asks: Levels, events: list[Event]) -> None:
        for side, levels in ((BUY, bids), (SELL, asks)):
            new = dict(levels)
            for price in [p for p in self.sizes[side] if p not in new]:
                self._set_level(side, price, 0, events)
            for price, lots in levels:
                self._set_level(side, price, lots, events)

    def _set_level(self, side: str, price: int, lots: int, events: list[Event]) -> None:
        sizes = self.sizes[side]
        prev = sizes.get(price, 0)
        if lots:
            sizes[price] = lots
        elif prev:
            del sizes[price]
        book = self.book
        level = (book.bids if side == BUY else book.asks).get(-price if side == BUY else price)
        depths = self.depth[side]
        depth = depths.get(price)
        if depth is not None and depth.status != ACTIVE:  # a user took it all
            del depths[price]
            depth = None
        if level is not None and len(level.orders) > (depth is not None):
            move_on_depth(self, level, prev, lots)
        if depth is None:
            if lots:
                self._new_depth(side, price, lots)
        elif lots:
            self._resize(depth, lots)
        else:
            self._retire(depth)

    # --- depth orders --------------------------------------------------------------------------

    def _new_depth(self, side: str, price: int, lots: int) -> None:
        v = self.venue
        cp = self.counterparty
        oid = v.next_order_id
        v.next_order_id = oid + 1
        order = Order(oid, cp, self.instrument, side, LIMIT, GTC, price, lots, v.clock.now, None, None)
        order.status = ACTIVE
        cp.orders[oid] = order
        counts = cp.open_orders
        counts[self.instrument.id] = counts.get(self.instrument.id, 0) + 1
        self.book.add(order)
        self.depth[side][order.price] = order

    def _resize(self, depth: Order, lots: int) -> None:
        """Set a live depth order's open quantity (and its level's total). The common case, a size
        change the recording makes, is written out in apply_until."""
        delta = lots - depth.remaining
        depth.remaining = lots
        book = self.book
        (book.bids[-depth.price] if depth.side == BUY else book.asks[depth.price]).qty += delta

    def _retire(self, depth: Order) -> None:
        """The level is gone from the recording: the depth order leaves quietly (its level too, if no
        user rests there)."""
        self.book.remove(depth, depth.remaining)
        depth.status = CANCELED
        cp = self.counterparty
        cp.open_orders[self.instrument.id] -= 1
        del cp.orders[depth.id]  # nobody looks it up: the counterparty has no API access
        del self.depth[depth.side][depth.price]

    def _restore_taken(self) -> None:
        """No impact: put back what users took from the depth orders since the last recorded event."""
        fills = self.counterparty.fills
        start = self._fill_cursor
        if start > len(fills):  # the venue forgot old fills (retention): look at all it kept
            start = 0
        touched: list[tuple[str, int]] = []
        for f in fills[start:]:
            order = f.order
            if order.tif == GTC and order.instrument is self.instrument:
                touched.append((order.side, order.price))
        self._fill_cursor = len(fills)
        for side, price in touched:
            lots = self.sizes[side].get(price, 0)
            depth = self.depth[side].get(price)
            if depth is not None and depth.status == ACTIVE:
                if lots:
                    self._resize(depth, lots)
            elif lots:
                self._new_depth(side, price, lots)

    # --- checks --------------------------------------------------------------------------------

    def check_invariants(self) -> None:
        """Every live depth order rests at its level with no more than the recorded size (less where
        users took some, until the level's next update or, without impact, the next event)."""
        book = self.book
        for side in (BUY, SELL):
            for price, depth in self.depth[side].items():
                if depth.status != ACTIVE:
                    continue
                assert book.contains(depth), f"depth order {depth!r} is not in the book"
                recorded = self.sizes[side].get(price, 0)
                assert 0 < depth.remaining <= recorded, f"depth order {depth!r} vs the recorded {recorded}"
        for pos in self.queue.values():
            assert pos.front >= 0 and pos.traded >= 0, pos


def latency_draw(seed: int, venue: Venue, lo: int, hi: int) -> int:
    """An order latency from ``lo`` to ``hi`` ns (uniform) for the next command: a function of the
    seed and of the venue's state (next order id, next timestamp), so the same run draws the same
    latencies and a venue rebuilt from its journal goes on drawing what it would have drawn."""
    if hi <= lo:
        return lo
    key = f"cefisim-latency:{seed}:{venue.next_order_id}:{venue.clock.peek()}".encode()
    return lo + int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % (hi - lo + 1)


__all__ = ["RecordedMarket", "latency_draw"]
