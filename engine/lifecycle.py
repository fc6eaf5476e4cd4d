"""An order's life after entry: it goes live (``activate``), trades or rests, ends (``end_unless_rests``,
``cancel_now``), and its delayed acknowledgements (``ack_entry``, ``ack_cancel``) when a latency is
configured. The opening auction is ``engine/opening.py``.

Contract (``engine/entry.py`` has the whole of it, ``docs/matching.md`` in prose): an activated order
is confirmed ACTIVE, trades what it can (not while its instrument is OPENING), then rests if it is a
LIMIT GTC order with a remainder, else ends: FILLED, or CANCELED with the reason (self-trade
prevention, MARKET or IOC remainder, AON not fillable). A resting GTC order is queued for expiry.
``end_order`` (``engine/matching.py``) is the one way out of the working states.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cefisim.engine.events import OrderEvent, build_event
from cefisim.engine.ledger import order_hold, rehold
from cefisim.engine.matching import available_to, end_order, match
from cefisim.engine.pricing import protection_price, would_trade
from cefisim.engine.records import Order
from cefisim.engine.rejects import CancelReason, Reject
from cefisim.engine.vocabulary import ExecInst, InstrumentStatus, OrderFlag, OrderStatus, OrderType, Side, TimeInForce

if TYPE_CHECKING:
    from cefisim.engine.core import VenueCore
    from cefisim.engine.events import Event

ACTIVE = OrderStatus.ACTIVE.value
ALO = ExecInst.ALO.value
AON = ExecInst.AON.value
BUY = Side.BUY.value
CANCEL_PENDING = OrderStatus.CANCEL_PENDING.value
CANCELED = OrderStatus.CANCELED.value
FILLED = OrderStatus.FILLED.value
GTC = TimeInForce.GTC.value
IOC = TimeInForce.IOC.value
MARKET = OrderType.MARKET.value
NEW_PENDING = OrderStatus.NEW_PENDING.value
USE_AGGRESSIVE_PRICING = OrderFlag.USE_AGGRESSIVE_PRICING.value
I_ACTIVE = InstrumentStatus.ACTIVE.value
DISABLED = InstrumentStatus.DISABLED.value
HALTED = InstrumentStatus.HALTED.value
REQUESTED = CancelReason.REQUESTED.value
# the reasons as plain strings, read once: an enum member's .value is a Python property call per read
AON_NOT_FILLABLE = CancelReason.AON_NOT_FILLABLE.value
SELF_TRADE_PREVENTION = CancelReason.SELF_TRADE_PREVENTION.value
MARKET_REMAINDER = CancelReason.MARKET_REMAINDER.value
IOC_REMAINDER = CancelReason.IOC_REMAINDER.value
NO_LIQUIDITY = Reject.NO_LIQUIDITY.value
ALO_WOULD_TRADE = Reject.ALO_WOULD_TRADE.value


def activate(v: VenueCore, order: Order, events: list[Event], confirmed: int | None = None) -> None:
    """An accepted order goes live: confirm, trade what it can, then rest or end. ``confirmed`` is the
    timestamp an acknowledgement after a latency delay already took for the confirmation."""
    order.status = ACTIVE
    ts = v.clock.stamp() if confirmed is None else confirmed
    events.append(build_event(OrderEvent, (ts, order.id, order.account.id, ACTIVE, None)))
    extra = order.extra
    is_aon = extra is not None and AON in extra.exec_inst
    if is_aon and not available_to(v, order, order.price, order.remaining):
        end_order(v, order, CANCELED, AON_NOT_FILLABLE, events)
        return
    inst = order.instrument
    book = v.books[inst.id]
    # whether the contra side's best level is within the order's limit (keys grow away from the
    # touch), asked before match asks it again: most orders rest at once, and then match is not called
    if order.side == BUY:
        key, limit = book.ask_key, order.price
    else:
        key, limit = book.bid_key, -order.price
    stopped = key is not None and key <= limit and inst.status == I_ACTIVE and match(v, order, events)
    if end_unless_rests(v, order, stopped, events):
        book.add(order)
        if order.tif == GTC:
            v.queue_expiry(order)


def end_unless_rests(v: VenueCore, order: Order, stopped: bool, events: list[Event]) -> bool:
    """After matching: end the order if it is filled, stopped by self-trade prevention, or a MARKET
    or IOC order (whose remainder never rests). True when the remainder rests instead."""
    if not order.remaining:
        end_order(v, order, FILLED, None, events)
    elif stopped:
        end_order(v, order, CANCELED, SELF_TRADE_PREVENTION, events)
    elif order.type == MARKET:
        end_order(v, order, CANCELED, MARKET_REMAINDER, events)
    elif order.tif == IOC:
        end_order(v, order, CANCELED, IOC_REMAINDER, events)
    else:
        return True
    return False


def cancel_now(v: VenueCore, order: Order, reason: str, events: list[Event]) -> None:
    """Take a working order out of the book and end it CANCELED.

    Working orders are exactly the resting ones (``Venue.check_invariants``), and every caller has
    checked the status, so the order is removed without looking it up first.
    """
    book = v.books[order.instrument.id]
    book.remove(order, order.remaining)
    end_order(v, order, CANCELED, reason, events)


def ack_entry(v: VenueCore, order: Order, events: list[Event]) -> None:
    """The entry latency has passed: a NEW_PENDING order is acknowledged (``extra.acked``) and goes live
    (``activate``), or ends CANCELED if its instrument is disabled or halted, a MARKET order finds no
    liquidity, or an ALO order would trade. An order no longer pending (canceled meanwhile) is left."""
    if order.status != NEW_PENDING:
        return
    # the CONFIRM record's timestamp: a stamp of its own, never shared with a record made at the
    # same instant (another acknowledgement, a fill), so that activity cursors page exactly
    acked = v.clock.stamp()
    extra = order.ex()
    extra.acked = acked
    inst = order.instrument
    if inst.status in (DISABLED, HALTED):
        end_order(v, order, CANCELED, "INSTRUMENT_" + inst.status, events)
        return
    if order.type == MARKET:
        # the market moved while the order was in flight: re-derive the protection price
        aggressive = USE_AGGRESSIVE_PRICING in extra.flags
        prot = protection_price(v, order.side, inst, aggressive)
        if prot is None:
            end_order(v, order, CANCELED, NO_LIQUIDITY, events)
            return
        # a BUY never spends more than was held at entry, and a lower price holds less (the
        # difference goes back to the client); a SELL holds base, so any price will do
        if order.side == BUY and prot < order.price:
            _, held, fee_held = order_hold(order)
            order.price = prot
            rehold(order, held, fee_held)
        elif order.side != BUY:
            order.price = prot
    elif order.is_alo and would_trade(v, order.side, inst, order.price):
        end_order(v, order, CANCELED, ALO_WOULD_TRADE, events)
        return
    activate(v, order, events, acked)


def ack_cancel(v: VenueCore, order: Order, events: list[Event]) -> None:
    """The cancel latency has passed: a CANCEL_PENDING order is canceled (``cancel_now``); one that
    ended meanwhile (filled) is left."""
    if order.status == CANCEL_PENDING:
        cancel_now(v, order, REQUESTED, events)
