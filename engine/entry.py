"""Order entry, modify and cancel: the rules an order must pass, then matching and resting.

Contract (the emulator's reading of the description; ``docs/matching.md`` says it in prose):
- A request that is not an order (unknown client, LIMIT without a price, unknown instrument) is
  refused by ``order_reject`` and leaves nothing; ``api/`` asks it before journaling a request.
- Checks run in a fixed order and the first failure decides the ``reject_reason``: grid and quantity,
  order-type rules (ALO/AON/USE_AGGRESSIVE_PRICING/STP), external id, instrument status, hold fee
  rate, open-order limit, price band / protection price, ALO cross, balance.
- A business rejection creates a REJECTED order record and changes nothing else.
- LIMIT GTC rests for up to ``gtc_life_ns`` of engine time; IOC and MARKET never rest (their remainder
  is CANCELED); AON (MARKET only) trades completely at entry or not at all (CANCELED).
- Modify: ``new_qty`` is the new total quantity. A lower or equal quantity at the same price keeps the
  queue position; a price change or a larger quantity goes to the back of the queue and may trade. A
  ``new_qty`` at or below the executed quantity (zero too) ends the order (CANCELED). ``new_type: MARKET`` turns
  the order into a MARKET order at its protection price, which executes at once and cancels the rest.
- With a latency configured, entry/modify/cancel are acknowledged later (NEW_PENDING,
  MODIFY_PENDING, CANCEL_PENDING); meanwhile a working order keeps trading at its old terms.

Modify lives in ``engine/modify.py``, the prices orders are checked against in ``engine/pricing.py``,
what happens to an accepted order (activation, resting, ending, acknowledgements) in
``engine/lifecycle.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cefisim.engine.commands import CancelOrder, PlaceOrder
from cefisim.engine.events import OrderEvent, build_event
from cefisim.engine.ledger import balance, order_hold
from cefisim.engine.ledger import hold_rate as order_hold_rate
from cefisim.engine.lifecycle import REQUESTED, activate, cancel_now
from cefisim.engine.matching import effective_stp
from cefisim.engine.pricing import protection_price, within_band, would_trade
from cefisim.engine.records import Order, OrderExtra
from cefisim.engine.rejects import Reject
from cefisim.engine.units import parse_rate
from cefisim.engine.vocabulary import (
    FINAL,
    ExecInst,
    InstrumentStatus,
    OrderFlag,
    OrderStatus,
    OrderType,
    SelfTradePrevention,
    Side,
    TimeInForce,
)

ACTIVE = OrderStatus.ACTIVE.value
ALO = ExecInst.ALO.value
AON = ExecInst.AON.value
BUY = Side.BUY.value
CANCEL_PENDING = OrderStatus.CANCEL_PENDING.value
MARKET = OrderType.MARKET.value
NEW_PENDING = OrderStatus.NEW_PENDING.value
REJECTED = OrderStatus.REJECTED.value
USE_AGGRESSIVE_PRICING = OrderFlag.USE_AGGRESSIVE_PRICING.value
I_ACTIVE = InstrumentStatus.ACTIVE.value
DISABLED = InstrumentStatus.DISABLED.value
HALTED = InstrumentStatus.HALTED.value
OPENING = InstrumentStatus.OPENING.value
STP_INVALID = SelfTradePrevention.INVALID.value
IOC = TimeInForce.IOC.value

if TYPE_CHECKING:
    from cefisim.engine.core import Result, VenueCore


# --- entry --------------------------------------------------------------------------------------


def _extra_of(cmd: PlaceOrder, hold_rate: int | None) -> OrderExtra:
    """The extra details of an order whose request carries any (``place`` asks first)."""
    extra = OrderExtra()
    extra.msg_id = cmd.msg_id
    extra.parent_id = cmd.parent_id
    extra.flags = cmd.flags
    extra.exec_inst = cmd.exec_inst
    extra.stp = cmd.stp
    extra.hold_rate = hold_rate
    extra.hold_fee_rate_given = cmd.hold_fee_rate
    return extra


def _reject(v: VenueCore, order: Order, reason: Reject, cmd: PlaceOrder, result: Result) -> Result:
    order.status = REJECTED
    extra = order.ex()
    extra.reject_reason = reason.value
    extra.qty_given = cmd.qty
    extra.price_given = cmd.price
    account = order.account
    account.orders[order.id] = order
    if order.external_id is not None and order.external_id not in account.live_external:
        account.by_external[order.external_id] = order
    result.order = order
    result.reject = reason
    result.events.append(build_event(OrderEvent, (order.created, order.id, account.id, REJECTED, reason.value)))
    return result


def order_reject(v: VenueCore, cmd: PlaceOrder) -> Reject | None:
    """Why the venue refuses an order request before it is an order: an unknown client, a LIMIT order
    without a price, an unknown instrument, checked in this order. Such a request leaves nothing: no
    order record, no event, no order id used. None: it becomes an order (which the later checks may
    still reject, as a REJECTED record). ``api/`` asks this before it journals a request."""
    if cmd.client_id not in v.accounts:
        return Reject.UNKNOWN_CLIENT
    if cmd.price is None and cmd.type != MARKET:
        return Reject.PRICE_REQUIRED
    if cmd.instrument_id not in v.instruments:
        return Reject.UNKNOWN_INSTRUMENT
    return None


def place(v: VenueCore, cmd: PlaceOrder, result: Result) -> Result:
    """Enter an order: check it, hold what it can spend, then activate it (or, with an entry
    latency, acknowledge it later). A request :func:`order_reject` refuses leaves nothing; a refused
    order is recorded REJECTED."""
    account = v.accounts.get(cmd.client_id)
    inst = v.instruments.get(cmd.instrument_id)
    if account is None or inst is None or (cmd.price is None and cmd.type != MARKET):
        result.reject = order_reject(v, cmd)  # which of them, in the order the rule gives
        return result

    order_id = v.next_order_id
    v.next_order_id = order_id + 1
    created = v.clock.stamp()
    qty, qty_canonical = inst.qty_grid.parse(cmd.qty)
    if cmd.price is not None:
        price, price_canonical = inst.price_grid.parse(cmd.price)
    else:
        price, price_canonical = None, True
    if cmd.msg_id or cmd.parent_id or cmd.flags or cmd.exec_inst or cmd.stp or cmd.hold_fee_rate:
        hold_rate = parse_rate(cmd.hold_fee_rate) if cmd.hold_fee_rate is not None else None
        extra = _extra_of(cmd, hold_rate)
    else:
        hold_rate = extra = None  # most orders carry nothing beyond their terms
    order = Order(
        order_id,
        account,
        inst,
        cmd.side,
        cmd.type,
        cmd.tif,
        price or 0,
        qty or 0,
        created,
        cmd.external_id,
        extra,
    )
    if not (qty_canonical and price_canonical):
        # echo the request's own spelling of qty and price in order_info
        given = order.ex()
        given.qty_given = cmd.qty
        given.price_given = cmd.price

    reason = _entry_reject(v, cmd, order, qty, price, hold_rate)
    if reason is None:
        reason = _price_reject(v, cmd, order)
        if reason is None:
            reason = _take_hold(order)
    if reason is not None:
        return _reject(v, order, reason, cmd, result)

    account.orders[order_id] = order
    ext = cmd.external_id
    if ext is not None:
        account.live_external[ext] = order
        account.by_external[ext] = order
    counts = account.open_orders
    counts[inst.id] = counts.get(inst.id, 0) + 1
    result.order = order
    events = result.events
    if v.latency_entry_ns:
        events.append(build_event(OrderEvent, (order.created, order_id, account.id, NEW_PENDING, None)))
        v.schedule(v.clock.now + v.latency_entry_ns, "ack_entry", order)
        result.snapshot_status = NEW_PENDING
        return result
    activate(v, order, events)
    return result


def _entry_reject(
    v: VenueCore, cmd: PlaceOrder, order: Order, qty: int | None, price: int | None, hold_rate: int | None
) -> Reject | None:
    """The checks of the request itself and of the venue's state, in the contract's order."""
    inst = order.instrument
    account = order.account
    client = account.client
    if qty is None:
        return Reject.QTY_OFF_GRID
    if qty <= 0:
        return Reject.QTY_NOT_POSITIVE
    if qty < inst.min_qty:
        return Reject.QTY_BELOW_MINIMUM
    is_market = cmd.type == MARKET
    if not is_market:  # a price is given (order_reject)
        if price is None:
            return Reject.PRICE_OFF_GRID
        if price <= 0:
            return Reject.PRICE_NOT_POSITIVE
    extra = order.extra
    if extra is not None:  # flags, instructions and an own STP setting all come with an extra
        if not is_market:
            if AON in cmd.exec_inst:
                return Reject.AON_ONLY_ON_MARKET
            if USE_AGGRESSIVE_PRICING in cmd.flags:
                return Reject.AGGRESSIVE_PRICING_ONLY_ON_MARKET
        elif ALO in cmd.exec_inst:
            return Reject.ALO_NOT_ALLOWED_ON_MARKET
        if effective_stp(order) == STP_INVALID:
            return Reject.STP_INVALID
    elif client.self_trade_prevention == STP_INVALID:
        return Reject.STP_INVALID
    if cmd.external_id is not None and cmd.external_id in account.live_external:
        return Reject.DUPLICATE_EXTERNAL_ID
    if client.status != I_ACTIVE:
        return Reject.CLIENT_NOT_ACTIVE
    status = inst.status
    if status != I_ACTIVE:
        if status == DISABLED:
            return Reject.INSTRUMENT_DISABLED
        if status == HALTED:
            return Reject.INSTRUMENT_HALTED
        if status == OPENING and (is_market or cmd.tif == IOC):
            return Reject.INSTRUMENT_OPENING
    if hold_rate is not None and cmd.side == BUY and hold_rate < order_hold_rate(order, given=False):
        return Reject.HOLD_FEE_RATE_TOO_LOW
    config = v.config
    limit = config.max_open_orders
    if limit is not None and account.open_orders.get(inst.id, 0) >= limit:
        return Reject.TOO_MANY_OPEN_ORDERS
    limit = config.max_venue_open_orders
    if limit is not None and open_order_total(v) >= limit:
        return Reject.TOO_MANY_OPEN_ORDERS
    return None


def open_order_total(v: VenueCore) -> int:
    """Open orders of the whole venue, O(clients × instruments): counted only when the venue-wide limit is on."""
    return sum(n for a in v.accounts.values() for n in a.open_orders.values())


def _price_reject(v: VenueCore, cmd: PlaceOrder, order: Order) -> Reject | None:
    """MARKET: set the protection price. LIMIT: the price band and the ALO cross checks."""
    inst = order.instrument
    if cmd.type == MARKET:
        prot = protection_price(v, cmd.side, inst, USE_AGGRESSIVE_PRICING in cmd.flags)
        if prot is None:
            return Reject.NO_LIQUIDITY
        order.price = prot
        return None
    if not within_band(v, inst, order.price):
        return Reject.PRICE_OUTSIDE_BAND
    if order.extra is not None and ALO in cmd.exec_inst and would_trade(v, cmd.side, inst, order.price):
        return Reject.ALO_WOULD_TRADE
    return None


def _take_hold(order: Order) -> Reject | None:
    """Hold what the order can spend, or refuse it when the client's available balance cannot."""
    order.status = NEW_PENDING  # counts as open for the hold computation
    asset_id, held, fee_held = order_hold(order)
    bal = balance(order.account, asset_id)  # created even for a refused order
    if bal.total - bal.hold < held:
        return Reject.INSUFFICIENT_BALANCE
    bal.change_hold(held, fee_held)
    return None


# --- lookup -------------------------------------------------------------------------------------


def find_order(v: VenueCore, client_id: int, ref: str) -> Order | None:
    """A client's order by exchange id, else by external id (a working order first)."""
    account = v.accounts.get(client_id)
    if account is None:
        return None
    if ref.isdigit() and ref.isascii() and ref[0] != "0":  # ID_RE.fullmatch(ref), without the regex
        order = account.orders.get(int(ref))
        if order is not None:
            return order
    return account.live_external.get(ref) or account.by_external.get(ref)


# --- cancel -------------------------------------------------------------------------------------


def cancel(v: VenueCore, cmd: CancelOrder, result: Result) -> Result:
    """Cancel an ACTIVE order at once, or with a cancel latency mark it CANCEL_PENDING."""
    order = find_order(v, cmd.client_id, cmd.ref)
    if order is None:
        result.reject = Reject.UNKNOWN_ORDER
        return result
    result.order = order
    if order.status != ACTIVE:
        result.reject = Reject.ORDER_NOT_ACTIVE if order.status in FINAL else Reject.ORDER_PENDING
        return result
    if order.instrument.status == DISABLED:
        result.reject = Reject.INSTRUMENT_DISABLED
        return result
    if v.latency_cancel_ns:
        order.status = CANCEL_PENDING
        ts = v.clock.stamp()
        order.updated = ts
        result.events.append(build_event(OrderEvent, (ts, order.id, order.account.id, CANCEL_PENDING, None)))
        v.schedule(v.clock.now + v.latency_cancel_ns, "ack_cancel", order)
        result.snapshot_status = CANCEL_PENDING
        return result
    cancel_now(v, order, REQUESTED, result.events)
    return result
