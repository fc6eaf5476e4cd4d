"""The matching loop and what a fill does to orders, balances and records.

Contract:
- ``match(v, taker, events)`` trades an incoming order against the contra side of its book in
  price-time priority, never beyond the taker's limit (``order.price``: the limit, or the protection
  price of a MARKET order). Every fill is at the resting (maker) order's price.
- Self-trade prevention is decided by the incoming order's effective setting (order ``stp``, else the
  client's): NONE trades with itself; CANCEL_AGGRESSIVE stops at the first own resting order met and
  the caller cancels the incoming remainder; CANCEL_BOTH also cancels that resting order.
- ``fill`` moves base and quote between the two clients, charges maker and taker fees into
  ``unsettled_fees`` and adjusts both orders' holds (``engine/ledger.py``): exact and conserved.
- ``end_order`` is the only way an order leaves the working states: it releases the hold, frees the
  live external id and the open-order slot, and emits the order event.

Complexity: O(levels touched + orders touched) per incoming order; each fill is O(1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cefisim.engine.events import OrderEvent, TradeEvent, build_event
from cefisim.engine.ledger import buy_bound, hold_rate, order_hold, settle
from cefisim.engine.levels import level_of
from cefisim.engine.records import Execution, Fill, Order
from cefisim.engine.rejects import CancelReason
from cefisim.engine.vocabulary import LiquidityFlag, OrderStatus, SelfTradePrevention, Side

BUY = Side.BUY.value
CANCELED = OrderStatus.CANCELED.value
FILLED = OrderStatus.FILLED.value
MAKER = LiquidityFlag.MAKER.value
TAKER = LiquidityFlag.TAKER.value
STP_CANCEL_BOTH = SelfTradePrevention.CANCEL_BOTH.value
STP_NONE = SelfTradePrevention.NONE.value

if TYPE_CHECKING:
    from cefisim.engine.core import VenueCore
    from cefisim.engine.events import Event

_REQUESTED = CancelReason.REQUESTED.value


def effective_stp(order: Order) -> str:
    extra = order.extra
    if extra is not None and extra.stp is not None:
        return extra.stp
    return order.account.client.self_trade_prevention


def end_order(v: VenueCore, order: Order, status: str, reason: str | None, events: list[Event]) -> None:
    """Finish a working or pending order: FILLED or CANCELED (the caller takes it out of the book)."""
    held = 0
    if order.remaining:  # an order with nothing left holds nothing (order_hold): most end filled
        asset_id, held, fee_held = order_hold(order)
    order.status = status
    if held:
        bal = order.account.balances[asset_id]  # created when the hold was taken
        bal.change_hold(-held, -fee_held)
    ts = order.updated = v.clock.stamp()
    if reason is not None and reason != _REQUESTED:  # REQUESTED is implied (Order.cancel_reason)
        order.ex().cancel_reason = reason
    account = order.account
    ext = order.external_id
    if ext is not None and account.live_external.get(ext) is order:
        del account.live_external[ext]
    counts = account.open_orders
    counts[order.instrument.id] -= 1
    events.append(build_event(OrderEvent, (ts, order.id, account.id, status, reason)))


def fill(
    v: VenueCore,
    taker: Order,
    maker: Order,
    lots: int,
    price: int,
    events: list[Event],
    t_rates: tuple[int, int],
    t_hold_rate: int,
    t_bound: tuple[int, int] | None = None,
) -> tuple[int, int]:
    """Trade ``lots`` at ``price`` between an incoming and a resting order; ``t_rates`` are the
    (maker, taker) fee rates of the taker's client and ``t_hold_rate`` the fee rate its hold covers
    when it buys (the same for all its fills). The caller records ``price`` as the last trade price.

    Both orders are working (the taker has been activated, the maker rests); the money side of the
    fill (sums, balances, holds) is :func:`~engine.ledger.settle`'s, the records and the event this one's.
    Returns what the BUY order holds after the fill (:func:`~engine.ledger.buy_bound`: quote units, of which
    fee units). A taker that buys holds after one fill what it holds before its next: ``t_bound``, when given, is
    that value (the previous fill's return), so it is not worked out twice.
    """
    inst = taker.instrument
    m_rates = inst.fee_rates_for(maker.account.client)
    if taker.side == BUY:
        buyer, seller, rate = taker, maker, t_hold_rate
        b_rate, s_rate = t_rates[1], m_rates[0]
    else:
        buyer, seller, rate = maker, taker, hold_rate(maker, m_rates)
        b_rate, s_rate = m_rates[0], t_rates[1]
    bx = buyer.execution
    if bx is None:  # the first fill of the order
        bx = buyer.execution = Execution()
    sx = seller.execution
    if sx is None:
        sx = seller.execution = Execution()
    if t_bound is None or buyer is not taker:
        t_bound = buy_bound(inst, bx, buyer.remaining, buyer.price, rate)
    quote, b_fee, s_fee, bound = settle(inst, buyer, seller, lots, price, b_rate, s_rate, rate, t_bound)

    bc, sc = buyer.account, seller.account
    ts = v.clock.stamp()
    match_id = v.next_match_id
    v.next_match_id = match_id + 1
    if buyer is taker:
        b_liq, s_liq = TAKER, MAKER
    else:
        b_liq, s_liq = MAKER, TAKER
    bc.fills.append(Fill(match_id, ts, buyer, price, lots, b_rate, b_liq, b_fee, quote))
    # a self-trade puts both sides in one account's list: a timestamp of its own keeps cursors exact
    s_ts = v.clock.stamp() if sc is bc else ts
    sc.fills.append(Fill(match_id, s_ts, seller, price, lots, s_rate, s_liq, s_fee, quote))
    if buyer is maker:
        m_fee, t_fee, m_client, t_client = b_fee, s_fee, bc.id, sc.id
    else:
        m_fee, t_fee, m_client, t_client = s_fee, b_fee, sc.id, bc.id
    events.append(
        build_event(
            TradeEvent,
            (ts, match_id, inst.id, price, lots, maker.id, taker.id, quote, m_fee, t_fee, m_client, t_client),
        )
    )
    return bound


def match(v: VenueCore, taker: Order, events: list[Event]) -> bool:
    """Trade ``taker`` against its book. True when self-trade prevention stopped it."""
    book = v.books[taker.instrument.id]
    # keys of the contra side grow away from the touch (bids are keyed by -price), so a level is
    # within the taker's limit when its key is at most the limit's key
    if taker.side == BUY:
        levels, key, limit = book.asks, book.ask_key, taker.price
    else:
        levels, key, limit = book.bids, book.bid_key, -taker.price
    if key is None or key > limit:
        return False  # nothing to trade with: most orders rest at once
    stp = effective_stp(taker)
    prevent = stp != STP_NONE
    account = taker.account
    t_rates = taker.instrument.fee_rates_for(account.client)
    t_hold_rate = hold_rate(taker, t_rates) if taker.side == BUY else 0
    remaining = taker.remaining
    stopped = False
    t_bound = None  # what a buying taker holds after its last fill (fill says why)
    while remaining and key is not None and key <= limit:
        level = level_of(levels, key)
        price = level.price
        orders = level.orders
        gone: list[Order] = []
        traded = 0
        for maker in orders.values():
            if prevent and maker.account is account:
                if stp == STP_CANCEL_BOTH:
                    traded += maker.remaining  # leaves the level's count with it
                    end_order(v, maker, CANCELED, "SELF_TRADE_PREVENTION", events)
                    gone.append(maker)
                stopped = True
                break
            maker_open = maker.remaining
            lots = remaining if remaining < maker_open else maker_open
            t_bound = fill(v, taker, maker, lots, price, events, t_rates, t_hold_rate, t_bound)
            book.last_price = price
            remaining -= lots
            traded += lots
            if lots == maker_open:
                end_order(v, maker, FILLED, None, events)
                gone.append(maker)
            if not remaining:
                break
        if len(gone) == len(orders):
            key = book.drop_level(levels, key)  # every order went, and the level with them
        else:
            level.qty -= traded
            for maker in gone:
                del orders[maker.id]
        if stopped:
            break
    return stopped


def available_to(v: VenueCore, taker: Order, limit: int, wanted: int) -> bool:
    """Whether ``wanted`` lots can trade at once up to ``limit`` (for all-or-none), honouring STP."""
    book = v.books[taker.instrument.id]
    is_buy = taker.side == BUY
    levels = book.asks if is_buy else book.bids
    prevent = effective_stp(taker) != STP_NONE
    account = taker.account
    found = 0
    for level in levels.values():
        if (level.price > limit) if is_buy else (level.price < limit):
            return False
        if not prevent:
            found += level.qty
        else:
            for maker in level.orders.values():
                if maker.account is account:
                    return found >= wanted
                found += maker.remaining
                if found >= wanted:
                    return True
        if found >= wanted:
            return True
    return False
