"""Modify: change a working order's quantity, price or type (the contract is in ``engine/entry.py``).

``modify`` checks the request and either applies it at once or, with a modify latency, marks the
order MODIFY_PENDING and lets ``apply_modify`` apply it when the acknowledgement falls due (after
re-checking what the market or the balance may have changed meanwhile).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cefisim.engine.commands import ModifyOrder
from cefisim.engine.entry import find_order
from cefisim.engine.events import OrderEvent, build_event
from cefisim.engine.ledger import balance, buy_hold, order_hold, rehold
from cefisim.engine.lifecycle import end_unless_rests
from cefisim.engine.matching import end_order, match
from cefisim.engine.pricing import protection_price, within_band, would_trade
from cefisim.engine.records import Order
from cefisim.engine.rejects import CancelReason, Reject
from cefisim.engine.vocabulary import FINAL, InstrumentStatus, OrderStatus, OrderType, Side

ACTIVE = OrderStatus.ACTIVE.value
BUY = Side.BUY.value
CANCELED = OrderStatus.CANCELED.value
LIMIT = OrderType.LIMIT.value
MARKET = OrderType.MARKET.value
MODIFY_PENDING = OrderStatus.MODIFY_PENDING.value
I_ACTIVE = InstrumentStatus.ACTIVE.value
DISABLED = InstrumentStatus.DISABLED.value
HALTED = InstrumentStatus.HALTED.value
OPENING = InstrumentStatus.OPENING.value

if TYPE_CHECKING:
    from cefisim.engine.core import Result, VenueCore
    from cefisim.engine.events import Event


def modify(v: VenueCore, cmd: ModifyOrder, result: Result) -> Result:
    """Check a modify of an ACTIVE order, then apply it (or, with a modify latency, later)."""
    account = v.accounts.get(cmd.client_id)
    order = None
    if account is not None:
        if cmd.order_id is not None:
            order = account.orders.get(cmd.order_id)
        elif cmd.external_id is not None:
            order = find_order(v, cmd.client_id, cmd.external_id)
    if order is None:
        result.reject = Reject.UNKNOWN_ORDER
        return result
    result.order = order
    reason = _modify_reject(v, cmd, order)
    if reason is not None:
        result.reject = reason
        return result
    new_ext = None
    if cmd.order_id is not None and cmd.external_id is not None and cmd.external_id != order.external_id:
        new_ext = cmd.external_id
    new_qty = order.instrument.qty_grid.to_units(cmd.new_qty)
    assert new_qty is not None
    to_market = cmd.new_type == MARKET
    if to_market:
        new_price = protection_price(v, order.side, order.instrument, False)
        if new_price is None:
            result.reject = Reject.NO_LIQUIDITY
            return result
    elif cmd.new_price is not None:
        new_price = order.instrument.price_grid.to_units(cmd.new_price)
    else:
        new_price = order.price
    assert new_price is not None
    if new_qty > order.executed:
        if not to_market and new_price != order.price and not within_band(v, order.instrument, new_price):
            result.reject = Reject.PRICE_OUTSIDE_BAND
            return result
        if order.is_alo and would_trade(v, order.side, order.instrument, new_price):
            result.reject = Reject.ALO_WOULD_TRADE
            return result
        if _cannot_afford(order, new_qty, new_price):
            result.reject = Reject.INSUFFICIENT_BALANCE
            return result

    if new_ext is not None and new_ext in order.account.live_external:
        result.reject = Reject.DUPLICATE_EXTERNAL_ID  # checked before anything about the order changes
        return result
    extra = order.ex()
    if extra.qty_given is None:  # order_info keeps the order as entered
        extra.qty_given = order.instrument.qty_grid.format(order.qty)
        extra.price_given = order.instrument.price_grid.format(order.price) if order.type == LIMIT else None
    extra.modify_info = {
        k: getattr(cmd, k)
        for k in ("msg_id", "parent_id", "prev_modify", "new_qty", "new_price", "new_type")
        if getattr(cmd, k) is not None
    }
    extra.modify_info["client_id"] = str(cmd.client_id)
    if cmd.msg_id is not None:
        extra.msg_id = cmd.msg_id
    if new_ext is not None:
        _rename_external(order, new_ext)
    if v.latency_modify_ns:
        order.status = MODIFY_PENDING
        ts = v.clock.stamp()
        order.updated = ts
        result.events.append(build_event(OrderEvent, (ts, order.id, order.account.id, MODIFY_PENDING, None)))
        v.schedule(v.clock.now + v.latency_modify_ns, "ack_modify", (order, new_qty, new_price, to_market))
        result.snapshot_status = MODIFY_PENDING
        return result
    apply_modify(v, order, new_qty, new_price, to_market, result.events)
    return result


def _cannot_afford(order: Order, new_qty: int, new_price: int) -> bool:
    """Whether the hold of ``order`` at ``new_qty``/``new_price`` would grow beyond the available balance."""
    if order.side == BUY:
        new_held = buy_hold(order, new_qty - order.executed, new_price)[0]
    else:
        new_held = (new_qty - order.executed) * order.instrument.base_per_lot
    asset_id, held, _ = order_hold(order)
    bal = balance(order.account, asset_id)
    return new_held - held > bal.total - bal.hold


def _late_modify_reject(v: VenueCore, order: Order, new_qty: int, new_price: int) -> Reject | None:
    """A modify acknowledged after a delay: the checks the market or the balance may have changed since."""
    inst = order.instrument
    if inst.status == HALTED:
        return Reject.INSTRUMENT_HALTED
    if new_qty <= order.executed:
        return None  # ends the order: nothing to afford or cross
    if order.is_alo and would_trade(v, order.side, inst, new_price):
        return Reject.ALO_WOULD_TRADE
    if _cannot_afford(order, new_qty, new_price):
        return Reject.INSUFFICIENT_BALANCE
    return None


def _rename_external(order: Order, new_ext: str) -> None:
    account = order.account
    old = order.external_id
    if old is not None and account.live_external.get(old) is order:
        del account.live_external[old]
    order.ex().ref_external_id = old
    order.external_id = new_ext
    account.live_external[new_ext] = order
    account.by_external[new_ext] = order


def _modify_reject(v: VenueCore, cmd: ModifyOrder, order: Order) -> Reject | None:
    status = order.status
    if status in FINAL:
        return Reject.ORDER_NOT_ACTIVE
    if status != ACTIVE:
        return Reject.ORDER_PENDING
    inst = order.instrument
    if inst.status == DISABLED:
        return Reject.INSTRUMENT_DISABLED
    if inst.status == HALTED:
        return Reject.INSTRUMENT_HALTED
    new_qty = inst.qty_grid.to_units(cmd.new_qty)
    if new_qty is None:
        return Reject.QTY_OFF_GRID
    if new_qty <= 0 and (new_qty or v.rules < 2):  # zero ends the order (edition 1 refused it)
        return Reject.QTY_NOT_POSITIVE
    if cmd.new_type == MARKET:
        if inst.status == OPENING:
            return Reject.INSTRUMENT_OPENING
        return None
    if cmd.new_price is not None:
        price = inst.price_grid.to_units(cmd.new_price)
        if price is None:
            return Reject.PRICE_OFF_GRID
        if price <= 0:
            return Reject.PRICE_NOT_POSITIVE
    return None


def apply_modify(
    v: VenueCore, order: Order, new_qty: int, new_price: int, to_market: bool, events: list[Event]
) -> None:
    """Change a working order's quantity and price (the checks have passed). A modify acknowledged after
    a latency delay re-checks halt, ALO and balance first and, if one fails, leaves the order as it was
    (``MODIFY_REJECTED:<reason>`` in its modifications and event)."""
    if order.status not in (ACTIVE, MODIFY_PENDING):
        return  # ended while the modify was pending
    book = v.books[order.instrument.id]
    account = order.account
    extra = order.ex()
    ts = v.clock.stamp()
    order.updated = ts
    mods = extra.modifications
    if mods is None:
        mods = extra.modifications = []
    if order.status == MODIFY_PENDING:
        late = _late_modify_reject(v, order, new_qty, new_price)
        if late is not None:  # the order keeps its old terms and its place
            what = "MODIFY_REJECTED:" + late.value
            mods.append((ts, what))
            order.status = ACTIVE
            events.append(build_event(OrderEvent, (ts, order.id, account.id, ACTIVE, what)))
            return
    mods.append((ts, "MODIFIED"))
    resting = book.contains(order)
    _, held, fee_held = order_hold(order)
    open_before = order.remaining
    if new_qty <= order.executed:
        if resting:
            book.remove(order, open_before)
        events.append(build_event(OrderEvent, (ts, order.id, account.id, order.status, "MODIFIED")))
        end_order(v, order, CANCELED, CancelReason.MODIFIED_TO_EXECUTED.value, events)
        order.remaining = 0  # nothing is left to trade: qty = executed
        return
    keeps_place = new_price == order.price and new_qty <= order.qty and not to_market
    order.status = ACTIVE
    if keeps_place:
        if resting:
            levels = book.side(order.side)
            level = levels[-order.price if order.side == BUY else order.price]
            level.qty -= order.qty - new_qty
        order.remaining = new_qty - order.executed
    else:
        if resting:
            book.remove(order, open_before)
        order.remaining = new_qty - order.executed
        order.price = new_price
        if to_market:
            order.type = MARKET
    rehold(order, held, fee_held)
    events.append(build_event(OrderEvent, (ts, order.id, account.id, ACTIVE, "MODIFIED")))
    if keeps_place:
        return
    stopped = match(v, order, events) if order.instrument.status == I_ACTIVE else False
    if end_unless_rests(v, order, stopped, events):
        book.add(order)
