"""Fills between a recorded market and the users' resting orders (``engine/recorded/market.py`` states
the rules): recorded trades that reach users' orders, and recorded depth that crosses them.

Every fill is the venue's ordinary one (``engine/matching.py``): the recorded counterparty's order —
a one-off IOC order standing for a recorded aggressor, or the depth order that crossed — trades with
the user's resting order at the user's price, with trade records, fees, balances and events.

Complexity: a trade O(levels through + users' orders touched); a cross O(fills).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cefisim.engine.events import Event
from cefisim.engine.levels import level_at, level_of
from cefisim.engine.matching import end_order, fill
from cefisim.engine.recorded.queue import place_of
from cefisim.engine.records import Order
from cefisim.engine.vocabulary import OrderStatus, OrderType, Side, TimeInForce

ACTIVE = OrderStatus.ACTIVE.value
BUY = Side.BUY.value
FILLED = OrderStatus.FILLED.value
IOC = TimeInForce.IOC.value
LIMIT = OrderType.LIMIT.value
SELL = Side.SELL.value

if TYPE_CHECKING:
    from cefisim.engine.levels import Level
    from cefisim.engine.recorded.depth import MarketState
    from cefisim.engine.records import Account
ZERO_RATES = (0, 0)  # the counterparty's (maker, taker) fee rates on its instrument


def trade(m: MarketState, side: str, price: int, lots: int, events: list[Event]) -> None:
    """A recorded trade whose aggressor is ``side``: fill the users' orders it reached. Its price is
    the venue's last price (the reference of the price band), as a trade on the venue is."""
    book = m.book
    book.last_price = price
    m.traded = True
    if side == SELL:
        levels, limit, best = book.bids, -price, book.bid_key  # bids at or above the price, best first
    else:
        levels, limit, best = book.asks, price, book.ask_key
    if best is None or best > limit:
        return  # no level at or through the trade's price
    cp = m.counterparty
    if best == limit:
        # the trade is at the best level's price (the usual case): that level is the only one in range,
        # and most often only its depth order rests there
        orders = level_of(levels, best).orders
        if len(orders) == 1 and next(iter(orders.values())).account is cp:
            return
        keys: list[int] | tuple[int] = (best,)
    else:
        keys = levels.keys_through(limit)
    budget = lots
    for key in keys:
        if not budget:
            return
        level = level_at(levels, key)
        if level is None:
            continue
        at_price = level.price == price
        for order in [o for o in level.orders.values() if o.account is not cp]:
            take = order.remaining
            if at_price:
                # the trade passes every user's order at its price, filled or not
                pos = place_of(m, level, order)
                pos.front -= lots
                pos.traded += lots
                if pos.front >= 0:
                    continue
                if -pos.front < take:
                    take = -pos.front
                pos.front = 0
            if budget < take:
                take = budget
            if take:
                fill_user(m, order, level, side, price, take, events)
                budget -= take


def aggressor(m: MarketState, side: str, price: int, lots: int) -> Order:
    """A one-off IOC order of the counterparty standing for the recorded aggressor."""
    v = m.venue
    cp = m.counterparty
    oid = v.next_order_id
    v.next_order_id = oid + 1
    order = Order(oid, cp, m.instrument, side, LIMIT, IOC, price, lots, v.clock.stamp(), None, None)
    order.status = ACTIVE
    cp.orders[oid] = order
    counts = cp.open_orders
    counts[m.instrument.id] = counts.get(m.instrument.id, 0) + 1
    return order


def fill_user(
    m: MarketState, order: Order, level: Level, side: str, price: int, lots: int, events: list[Event]
) -> None:
    """``lots`` of the user's resting ``order`` trade with the recorded aggressor of ``side``."""
    taker = aggressor(m, side, price, lots)
    trade_against(m, taker, order, level, lots, events)
    end_order(m.venue, taker, FILLED, None, events)
    m.book.last_price = price  # the recorded trade went on past the user's price to its own


def trade_against(m: MarketState, taker: Order, order: Order, level: Level, lots: int, events: list[Event]) -> None:
    """One venue fill of ``lots`` between the counterparty's ``taker`` and the user's resting
    ``order``, at the user's price; the user's order leaves the book when it is done."""
    v = m.venue
    fill(v, taker, order, lots, order.price, events, ZERO_RATES, 0)
    m.book.last_price = order.price
    if order.remaining:
        level.qty -= lots
    else:
        m.book.remove(order, lots)
        end_order(v, order, FILLED, None, events)
        m.queue.pop(order.id, None)


def _first_user(level: Level, cp: Account) -> Order | None:
    """The first order at ``level`` that is not the counterparty's ``cp``, None when it has none."""
    for order in level.orders.values():
        if order.account is not cp:
            return order
    return None


def uncross(m: MarketState, events: list[Event]) -> None:
    """Recorded depth that crosses users' resting orders trades with them (users' prices). Not while
    the instrument is OPENING: then nothing matches, and the venue's uncross decides at ACTIVE."""
    book = m.book
    if book.opening is not None:
        return
    while book.bid_key is not None and book.ask_key is not None and -book.bid_key >= book.ask_key:
        bid_level, ask_level = book.bids[book.bid_key], book.asks[book.ask_key]
        bid_depth = m.live_depth(BUY, bid_level.price)
        ask_depth = m.live_depth(SELL, ask_level.price)
        cp = m.counterparty
        users_ask = _first_user(ask_level, cp)
        users_bid = _first_user(bid_level, cp)
        if bid_depth is not None and users_ask is not None:
            taker, order, level = bid_depth, users_ask, ask_level
        elif ask_depth is not None and users_bid is not None:
            taker, order, level = ask_depth, users_bid, bid_level
        else:
            # users' orders crossing each other are the venue's own business (they match on
            # entry); recorded depth never crosses itself at the end of an instant
            raise AssertionError(f"book {book.instrument_id} crossed with no recorded depth in the cross")
        lots = min(taker.remaining, order.remaining)
        # the depth order trades as the aggressor: fill() adjusts its hold like any working order's
        trade_against(m, taker, order, level, lots, events)
        depth_level = book.bids[-taker.price] if taker.side == BUY else book.asks[taker.price]
        if taker.remaining:
            depth_level.qty -= lots
        else:
            book.remove(taker, lots)
            end_order(m.venue, taker, FILLED, None, events)
            m.levels[taker.side][taker.price].depth = None


__all__ = ["ZERO_RATES", "aggressor", "fill_user", "trade", "trade_against", "uncross"]
