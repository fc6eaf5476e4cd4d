"""The opening auction: how a book that crossed while its instrument was OPENING uncrosses on ACTIVE.

Contract (``docs/matching.md``, Opening, says it in prose):
- While OPENING nothing matches: LIMIT GTC orders rest and the book may cross. ``Book.opening`` keeps
  the orders that joined the back of a level since, in joining order (an order that lost its place by a
  modify counts from when it rejoined); orders that rested before OPENING are earlier than all of them
  and never cross one another.
- :func:`uncross` (OPENING -> ACTIVE, possibly by way of HALTED): while the best bid is at or above the
  best ask, the first order of the best bid level meets the first order of the best ask level: price
  priority, then time priority within a level. Of the two, the one that reached the book later is the
  incoming order (taker) and the earlier one the resting order (maker): they trade the smaller open
  quantity at the maker's price, as continuous price-time matching does when the later order arrives.
  So there is no single opening price: each fill is at its maker's price, and the last one becomes the
  last trade price (the reference of the price band).
- Self-trade prevention is the taker's effective setting, as in continuous matching: NONE trades with
  itself; CANCEL_AGGRESSIVE cancels the taker; CANCEL_BOTH cancels the maker and the taker.
- ALO: entry, modify and their late acknowledgements refuse an ALO order that would trade, so an ALO
  order is never the later order of a crossing pair: it meets as the maker. AON is for MARKET orders
  only, and MARKET and IOC orders never rest, so none is in the book.
- Holds and fees are those of continuous trading (``engine/matching.py``, ``fill``): a BUY taker that
  trades below its limit gets the difference back; maker and taker fee rates by role.
- Afterwards the book is not crossed, and every order left resting keeps its place.
- :func:`uncross_in_arrival_order` is the rule of venues replaying a ``cefisim-journal/1`` journal
  (``docs/journal.md``): the resting orders fed back in the order they joined, the earliest first,
  each trading what it crosses. A venue uses one rule or the other for its whole life
  (``VenueCore.rules``).

Complexity: O(orders joined while OPENING) to rank them, then O(1) per meeting, and every meeting ends
at least one order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cefisim.engine.ledger import hold_rate
from cefisim.engine.lifecycle import cancel_now, end_unless_rests
from cefisim.engine.matching import effective_stp, end_order, fill, match
from cefisim.engine.rejects import CancelReason
from cefisim.engine.vocabulary import WORKING, OrderStatus, SelfTradePrevention, Side

BUY = Side.BUY.value
FILLED = OrderStatus.FILLED.value
STP_CANCEL_BOTH = SelfTradePrevention.CANCEL_BOTH.value
STP_NONE = SelfTradePrevention.NONE.value
SELF_TRADE_PREVENTION = CancelReason.SELF_TRADE_PREVENTION.value

if TYPE_CHECKING:
    from cefisim.engine.book import Book
    from cefisim.engine.core import VenueCore
    from cefisim.engine.events import Event
    from cefisim.engine.records import Order


def uncross(v: VenueCore, book: Book, events: list[Event]) -> None:
    """Opening: the best bid and the best ask meet, pair by pair, until the book no longer crosses."""
    joined = book.opening or {}
    book.opening = None
    # time priority across the two sides: orders resting from before OPENING (rank 0) are earliest
    rank = {order_id: i for i, order_id in enumerate(joined, 1)}
    bids, asks = book.bids, book.asks
    while book.bid_key is not None and book.ask_key is not None and -book.bid_key >= book.ask_key:
        bid = next(iter(bids[book.bid_key].orders.values()))
        ask = next(iter(asks[book.ask_key].orders.values()))
        if (rank.get(bid.id, 0), bid.id) > (rank.get(ask.id, 0), ask.id):
            _meet(v, book, bid, ask, events)
        else:
            _meet(v, book, ask, bid, events)


def _meet(v: VenueCore, book: Book, taker: Order, maker: Order, events: list[Event]) -> None:
    """Two resting orders at the front of their sides meet: ``taker`` joined the book later."""
    if taker.account is maker.account:
        stp = effective_stp(taker)
        if stp != STP_NONE:
            if stp == STP_CANCEL_BOTH:
                cancel_now(v, maker, SELF_TRADE_PREVENTION, events)
            cancel_now(v, taker, SELF_TRADE_PREVENTION, events)
            return
    lots = taker.remaining if taker.remaining < maker.remaining else maker.remaining
    price = maker.price
    rates = taker.instrument.fee_rates_for(taker.account.client)
    fill(v, taker, maker, lots, price, events, rates, hold_rate(taker, rates) if taker.side == BUY else 0)
    book.last_price = price
    for order in (maker, taker):  # the maker's end first, as in continuous matching
        if order.remaining:
            level = book.bids[-order.price] if order.side == BUY else book.asks[order.price]
            level.qty -= lots
        else:
            book.remove(order, lots)
            end_order(v, order, FILLED, None, events)


def uncross_in_arrival_order(v: VenueCore, book: Book, events: list[Event]) -> None:
    """The opening of ``cefisim-journal/1``: feed the resting orders back in arrival order, so crossing
    ones trade.

    Orders that rested before OPENING never cross one another: they go first, level by level, which
    keeps their queues. Then the orders that joined while OPENING, in the order they joined. (Resting
    orders are LIMIT GTC: what one leaves untraded rests again.)
    """
    joined = book.opening or {}
    book.opening = None
    orders = [
        o for side in (book.bids, book.asks) for lv in side.values() for o in lv.orders.values() if o.id not in joined
    ]
    orders += joined.values()
    for order in orders:
        book.remove(order, order.remaining)
    for order in orders:
        if order.status not in WORKING:
            continue  # ended by self-trade prevention of an earlier order
        if end_unless_rests(v, order, match(v, order, events), events):
            book.add(order)
