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
  the commands that moved the clock, never on its own). With a budget it stops at an instant boundary
  and goes on at the next call (a clock advance in steps: ``Venue.advance_steps``). An update sets the
  level's depth order to the recorded size; 0 lots retires it (no event: the recorded market's book
  is not a client's activity).
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
from cefisim.engine.levels import level_at
from cefisim.engine.recorded.depth import MarketState, RecordedLevel
from cefisim.engine.recorded.feed import TRADE, UPDATE, Levels, RecordedEvent
from cefisim.engine.recorded.fills import ZERO_RATES, trade, uncross
from cefisim.engine.recorded.queue import move_on_depth, place_of
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


class RecordedMarket(MarketState):
    # a C type in the compiled build (market.pxd): apply_until and the level updates read the state as
    # struct fields and call each other directly. Each slot is declared there (tests/test_build.py)
    __slots__ = ("_events", "_fill_cursor", "_next", "applied", "held_until", "impact", "last_ts", "name", "next_ts")

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
        counterparty = venue.accounts[counterparty_id]
        super().__init__(venue, venue.instruments[instrument_id], counterparty, queue_model or RiskAverse())
        counterparty.client.fee_overrides[instrument_id] = ZERO_RATES
        self.impact = impact
        self.name = name
        self._events = events
        self._next: RecordedEvent | None = next(events, None)
        #: engine time of the next recorded event, None when the recording is over
        self.next_ts: int | None = None if self._next is None else self._next[1]
        self.applied = 0  # recorded events applied
        self.last_ts: int | None = None  # engine time of the last one
        #: the ``to_ns`` of an ``apply_until`` stopped by its budget, which the next call goes on with
        self.held_until: int | None = None
        self._fill_cursor = len(counterparty.fills)  # no-impact: the counterparty's fills seen
        inst = self.instrument
        for asset_id in (inst.base.id, inst.quote.id):  # nothing is held against the recorded depth
            bal = balance(counterparty, asset_id)
            if not isinstance(bal, UnheldBalance):
                counterparty.balances[asset_id] = UnheldBalance.replacing(bal)

    # --- the venue's view ----------------------------------------------------------------------

    def apply_until(self, to_ns: int, events: list[Event], budget: int = 0) -> int:
        """Apply every recorded event due at or before ``to_ns``, moving the venue's clock to each
        instant (the venue calls it with ``to_ns`` before anything else it has due); returns how many
        it applied. ``budget`` > 0: stop at the first instant boundary after ``budget`` events, the
        pass left open (``held_until`` is ``to_ns``); the next call goes on with it (given
        ``held_until``), so the calls together do what one call does: the same events, one
        ``DepthEvent`` at the end."""
        first = self._next
        resumed = self.held_until is not None
        self.held_until = None
        if first is None or first[1] > to_ns:
            return 0
        if not self.impact and not resumed:
            self._restore_taken()
        clock = self.venue.clock
        count = 0
        instant = first[1]
        bids, asks = self.levels[BUY], self.levels[SELL]
        clock.advance(instant)
        for nxt in chain((first,), self._events):
            ts = nxt[1]
            if ts != instant:  # (times never decrease: an event of the current instant is due)
                if ts > to_ns:
                    break
                uncross(self, events)  # the previous instant is complete: settle any cross it left
                if 0 < budget <= count:  # (a comparison per instant: the budget's whole cost)
                    self.held_until = to_ns
                    break
                instant = ts
                clock.advance(ts)
            count += 1
            # the engine's own words for the sides: a recording's may be the vocabulary's members, whose
            # lookups and comparisons take the slow path of a str subclass
            if nxt[0] == UPDATE:
                if nxt[3] == BUY:
                    self._set_level(BUY, bids, nxt[4], nxt[5])
                else:
                    self._set_level(SELL, asks, nxt[4], nxt[5])
            elif nxt[0] == TRADE:
                trade(self, BUY if nxt[3] == BUY else SELL, nxt[4], nxt[5], events)
            else:
                self._snapshot(nxt[3], nxt[4])
        else:
            nxt = None
        self._next = nxt
        self.next_ts = None if nxt is None else nxt[1]
        self.applied += count
        self.last_ts = instant
        if self.held_until is not None:
            return count  # (the instant before the stop is settled; the end of the pass comes later)
        uncross(self, events)
        if not self.traded:  # no recorded trade yet: the band's reference is the mid, not a user's old fill
            self.book.last_price = None
        events.append(build_event(DepthEvent, (clock.stamp(), self.instrument.id)))
        return count

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

    def _snapshot(self, bids: Levels, asks: Levels) -> None:
        for side, levels in ((BUY, bids), (SELL, asks)):
            new = dict(levels)
            recs = self.levels[side]
            for price in [p for p in recs if p not in new]:
                self._set_level(side, recs, price, 0)
            for price, lots in levels:
                self._set_level(side, recs, price, lots)

    def _set_level(
        self, side: str, recs: dict[int, RecordedLevel], price: int, lots: int, recorded: bool = True
    ) -> None:
        """The depth order at ``price`` on ``side`` (whose recorded levels are ``recs``, ``self.levels[side]``)
        comes to hold ``lots`` (0: it leaves quietly, its level too if no user rests there; a new one joins
        the back of its level). A ``recorded`` change also sets the recorded size, and the users resting at
        the level move first, as the queue model says; without it (no impact: what users took is put back)
        only the depth order changes."""
        rec = recs.get(price)
        if rec is not None and (depth := rec.depth) is not None and depth.status == ACTIVE:
            # the depth order rests at its level (a level goes only once empty)
            level = rec.level
            if TYPE_CHECKING:  # (a level goes only once empty, and the depth order rests there)
                assert level is not None
            if recorded and len(level.orders) > 1:  # users rest there too
                move_on_depth(self, level, rec.lots, lots)
            if lots:  # resized in place
                if recorded:
                    rec.lots = lots
                level.qty += lots - depth.remaining
                depth.remaining = lots
                return
            if recorded:
                del recs[price]  # the recording empties the level
            # retired: nobody looks it up (the counterparty has no API access)
            self.book.remove(depth, depth.remaining)
            depth.status = CANCELED
            cp = self.counterparty
            cp.open_orders[self.instrument.id] -= 1
            del cp.orders[depth.id]
            return
        # no depth order rests there: none yet, or a user took it all
        book = self.book
        if side == BUY:
            levels = book.bids
            key = -price
        else:
            levels = book.asks
            key = price
        if recorded:
            users = level_at(levels, key)
            if users is not None:  # only users rest there
                move_on_depth(self, users, 0 if rec is None else rec.lots, lots)
            if not lots:
                if rec is not None:
                    del recs[price]
                return
            if rec is None:
                rec = recs[price] = RecordedLevel(lots)
            else:
                rec.lots = lots
        if not lots or rec is None:
            return  # (put back: the caller names recorded levels only)
        v = self.venue  # a new depth order joins the level
        cp = self.counterparty
        inst = self.instrument
        oid = v.next_order_id
        v.next_order_id = oid + 1
        depth = Order(oid, cp, inst, side, LIMIT, GTC, price, lots, v.clock.now, None, None)
        depth.status = ACTIVE
        cp.orders[oid] = depth
        counts = cp.open_orders
        counts[inst.id] = counts.get(inst.id, 0) + 1
        rec.level = book.add(depth)
        rec.depth = depth

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
        levels = self.levels
        for side, price in touched:
            recs = levels[side]
            rec = recs.get(price)
            if rec is not None:
                self._set_level(side, recs, price, rec.lots, False)

    # --- checks --------------------------------------------------------------------------------

    def check_invariants(self) -> None:
        """Every live depth order rests at its level with no more than the recorded size (less where
        users took some, until the level's next update or, without impact, the next event)."""
        book = self.book
        for side in (BUY, SELL):
            for price, rec in self.levels[side].items():
                assert rec.lots > 0, f"a recorded level of {rec.lots} lots"
                depth = self.live_depth(side, price)
                if depth is None:
                    continue
                assert book.contains(depth), f"depth order {depth!r} is not in the book"
                levels, key = (book.bids, -price) if side == BUY else (book.asks, price)
                assert rec.level is levels[key], f"recorded level {price} names a level its depth order left"
                assert 0 < depth.remaining <= rec.lots, f"depth order {depth!r} vs the recorded {rec.lots}"
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
