"""Order entry, modify and cancel: the rules an order must pass, then matching and resting.

Contract (the emulator's reading of the description; ``docs/matching.md`` says it in prose):
- Checks run in a fixed order and the first failure decides the ``reject_reason``: grid and quantity,
  order-type rules (ALO/AON/USE_AGGRESSIVE_PRICING/STP), external id, instrument status, hold fee
  rate, open-order limit, price band / protection price, ALO cross, balance.
- A business rejection creates a REJECTED order record and changes nothing else.
- LIMIT GTC rests for up to ``gtc_life_ns`` of engine time; IOC and MARKET never rest (their remainder
  is CANCELED); AON (MARKET only) trades completely at entry or not at all (CANCELED).
- Modify: ``new_qty`` is the new total quantity. A lower or equal quantity at the same price keeps the
  queue position; a price change or a larger quantity goes to the back of the queue and may trade. A
  ``new_qty`` at or below the executed quantity ends the order (CANCELED). ``new_type: MARKET`` turns
  the order into a MARKET order at its protection price, which executes at once and cancels the rest.
- With a latency configured, entry/modify/cancel are acknowledged later (NEW_PENDING,
  MODIFY_PENDING, CANCEL_PENDING); meanwhile a working order keeps trading at its old terms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .commands import CancelOrder, ModifyOrder, PlaceOrder
from .ledger import buy_hold, held_asset, max_fee_rate_needed, open_qty, order_hold
from .matching import available_to, balance, effective_stp, end_order, match
from .order import (
    ACTIVE, ALO, AON, BUY, CANCEL_PENDING, CANCELED, FILLED, FINAL, GTC, IOC, LIMIT, MARKET,
    MODIFY_PENDING, NEW_PENDING, REJECTED, USE_AGGRESSIVE_PRICING, Order, OrderExtra,
)
from .reference import ACTIVE as I_ACTIVE
from .reference import DISABLED, HALTED, ID_RE, OPENING, STP_INVALID
from .rejects import CancelReason, Reject
from .units import RATE_ONE, parse_rate

if TYPE_CHECKING:
    from .reference import Instrument
    from .venue import Result, Venue

Event = tuple


# --- prices ------------------------------------------------------------------------------------

def reference_price2(v: "Venue", inst: "Instrument") -> int | None:
    """Twice the reference price in ticks (last trade, else mid of a two-sided book), or None."""
    book = v.books[inst.id]
    if book.last_price is not None:
        return 2 * book.last_price
    bid, ask = book.best_bid(), book.best_ask()
    if bid is None or ask is None:
        return None
    return bid + ask


def within_band(v: "Venue", inst: "Instrument", price: int) -> bool:
    ref2 = reference_price2(v, inst)
    if ref2 is None:
        return True
    band = inst.price_band
    return ref2 * (RATE_ONE - band) <= 2 * price * RATE_ONE <= ref2 * (RATE_ONE + band)


def protection_price(v: "Venue", order_side: str, inst: "Instrument", aggressive: bool) -> int | None:
    """The limit a MARKET order trades to; None when there is no opposite liquidity."""
    book = v.books[inst.id]
    best = book.best_ask() if order_side == BUY else book.best_bid()
    if best is None:
        return None
    if aggressive:
        ref2 = reference_price2(v, inst)
        base2 = ref2 if ref2 is not None else 2 * best
    else:
        base2 = 2 * best
    band = inst.price_band
    if order_side == BUY:
        return base2 * (RATE_ONE + band) // (2 * RATE_ONE)
    return max(1, -(-base2 * (RATE_ONE - band) // (2 * RATE_ONE)))


def would_trade(v: "Venue", side: str, inst: "Instrument", price: int) -> bool:
    book = v.books[inst.id]
    if side == BUY:
        best = book.best_ask()
        return best is not None and best <= price
    best = book.best_bid()
    return best is not None and best >= price


# --- entry --------------------------------------------------------------------------------------

def _extra_of(cmd: PlaceOrder, hold_rate: int | None) -> OrderExtra | None:
    if not (cmd.msg_id or cmd.parent_id or cmd.flags or cmd.exec_inst or cmd.stp or cmd.hold_fee_rate):
        return None
    extra = OrderExtra()
    extra.msg_id = cmd.msg_id
    extra.parent_id = cmd.parent_id
    extra.flags = cmd.flags
    extra.exec_inst = cmd.exec_inst
    extra.stp = cmd.stp
    extra.hold_rate = hold_rate
    extra.hold_fee_rate_given = cmd.hold_fee_rate
    return extra


def _reject(v: "Venue", order: Order, reason: Reject, cmd: PlaceOrder, result: "Result") -> "Result":
    order.status = REJECTED
    extra = order.ex()
    extra.reject_reason = reason.value
    extra.qty_given = cmd.qty
    extra.price_given = cmd.price
    order.client.orders[order.id] = order
    if order.external_id is not None and order.external_id not in order.client.live_external:
        order.client.by_external[order.external_id] = order
    result.order = order
    result.reject = reason
    result.events.append(("order", order.created, order.id, order.client.id, REJECTED, reason.value))
    return result


def place(v: "Venue", cmd: PlaceOrder, result: "Result") -> "Result":
    client = v.clients.get(cmd.client_id)
    if client is None:
        result.reject = Reject.UNKNOWN_CLIENT
        return result
    inst = v.instruments.get(cmd.instrument_id)
    if inst is None:
        result.reject = Reject.UNKNOWN_INSTRUMENT
        return result

    hold_rate = parse_rate(cmd.hold_fee_rate) if cmd.hold_fee_rate is not None else None
    order_id = v.next_order_id
    v.next_order_id = order_id + 1
    qty, qty_canonical = inst.qty_grid.parse(cmd.qty)
    if cmd.price is not None:
        price, price_canonical = inst.price_grid.parse(cmd.price)
    else:
        price, price_canonical = None, True
    is_market = cmd.type == MARKET
    order = Order(
        order_id, client, inst, cmd.side, cmd.type, cmd.tif, price or 0, qty or 0,
        v.clock.stamp(), cmd.external_id, _extra_of(cmd, hold_rate),
    )
    if not (qty_canonical and price_canonical):
        # echo the request's own spelling of qty and price in order_info
        order.ex().qty_given = cmd.qty
        order.extra.price_given = cmd.price  # type: ignore[union-attr]

    reason = _entry_reject(v, cmd, order, qty, price, hold_rate)
    if reason is not None:
        return _reject(v, order, reason, cmd, result)

    if is_market:
        aggressive = USE_AGGRESSIVE_PRICING in cmd.flags
        prot = protection_price(v, cmd.side, inst, aggressive)
        if prot is None:
            return _reject(v, order, Reject.NO_LIQUIDITY, cmd, result)
        order.price = prot
    else:
        assert price is not None
        if not within_band(v, inst, price):
            return _reject(v, order, Reject.PRICE_OUTSIDE_BAND, cmd, result)
        if ALO in cmd.exec_inst and would_trade(v, cmd.side, inst, price):
            return _reject(v, order, Reject.ALO_WOULD_TRADE, cmd, result)

    # hold what the order can spend
    order.status = NEW_PENDING  # counts as open for the hold computation
    held, fee_held = order_hold(order)
    bal = balance(client, held_asset(order))
    if bal.total - bal.hold < held:
        order.status = REJECTED
        return _reject(v, order, Reject.INSUFFICIENT_BALANCE, cmd, result)
    bal.hold += held
    bal.fees_hold += fee_held

    client.orders[order_id] = order
    ext = cmd.external_id
    if ext is not None:
        client.live_external[ext] = order
        client.by_external[ext] = order
    client.open_orders[inst.id] = client.open_orders.get(inst.id, 0) + 1
    result.order = order
    events = result.events
    if v.latency_entry_ns:
        events.append(("order", order.created, order_id, client.id, NEW_PENDING, None))
        v.schedule(v.clock.now + v.latency_entry_ns, "ack_entry", order)
        result.snapshot_status = NEW_PENDING
        return result
    activate(v, order, events)
    return result


def _entry_reject(
    v: "Venue", cmd: PlaceOrder, order: Order, qty: int | None, price: int | None, hold_rate: int | None
) -> Reject | None:
    inst = order.instrument
    client = order.client
    if qty is None:
        return Reject.QTY_OFF_GRID
    if qty <= 0:
        return Reject.QTY_NOT_POSITIVE
    if qty < inst.min_qty:
        return Reject.QTY_BELOW_MINIMUM
    is_market = cmd.type == MARKET
    if not is_market:
        if cmd.price is None:
            return Reject.PRICE_REQUIRED
        if price is None:
            return Reject.PRICE_OFF_GRID
        if price <= 0:
            return Reject.PRICE_NOT_POSITIVE
        if AON in cmd.exec_inst:
            return Reject.AON_ONLY_ON_MARKET
        if USE_AGGRESSIVE_PRICING in cmd.flags:
            return Reject.AGGRESSIVE_PRICING_ONLY_ON_MARKET
    elif ALO in cmd.exec_inst:
        return Reject.ALO_NOT_ALLOWED_ON_MARKET
    if effective_stp(order) == STP_INVALID:
        return Reject.STP_INVALID
    if cmd.external_id is not None and cmd.external_id in client.live_external:
        return Reject.DUPLICATE_EXTERNAL_ID
    if client.status != I_ACTIVE:
        return Reject.CLIENT_NOT_ACTIVE
    status = inst.status
    if status == DISABLED:
        return Reject.INSTRUMENT_DISABLED
    if status == HALTED:
        return Reject.INSTRUMENT_HALTED
    if status == OPENING and (is_market or cmd.tif == IOC):
        return Reject.INSTRUMENT_OPENING
    if hold_rate is not None and cmd.side == BUY and hold_rate < max_fee_rate_needed(order):
        return Reject.HOLD_FEE_RATE_TOO_LOW
    limit = v.config.max_open_orders
    if limit is not None and client.open_orders.get(inst.id, 0) >= limit:
        return Reject.TOO_MANY_OPEN_ORDERS
    return None


def activate(v: "Venue", order: Order, events: list[Event]) -> None:
    """An accepted order goes live: confirm, trade what it can, then rest or end."""
    order.status = ACTIVE
    client = order.client
    events.append(("order", v.clock.stamp(), order.id, client.id, ACTIVE, None))
    inst = order.instrument
    is_aon = order.extra is not None and AON in order.extra.exec_inst
    if is_aon and not available_to(v, order, order.price, order.qty - order.executed):
        end_order(v, order, CANCELED, CancelReason.AON_NOT_FILLABLE.value, events)
        return
    stopped = False
    if inst.status == I_ACTIVE:
        stopped = match(v, order, events)
    if order.executed == order.qty:
        end_order(v, order, FILLED, None, events)
    elif stopped:
        end_order(v, order, CANCELED, CancelReason.SELF_TRADE_PREVENTION.value, events)
    elif order.type == MARKET:
        end_order(v, order, CANCELED, CancelReason.MARKET_REMAINDER.value, events)
    elif order.tif == IOC:
        end_order(v, order, CANCELED, CancelReason.IOC_REMAINDER.value, events)
    else:
        v.books[inst.id].add(order)
        if order.tif == GTC:
            queue = v.gtc_queue
            if queue and queue[-1].created > order.created:
                # acknowledged after a younger order (the entry latency changed): the expiry queue
                # must stay in creation order, so that every order expires on time
                i = len(queue)
                while i and queue[i - 1].created > order.created:
                    i -= 1
                queue.insert(i, order)
            else:
                queue.append(order)


# --- lookup -------------------------------------------------------------------------------------

def find_order(v: "Venue", client_id: int, ref: str) -> Order | None:
    """A client's order by exchange id, else by external id (a working order first)."""
    client = v.clients.get(client_id)
    if client is None:
        return None
    if ID_RE.fullmatch(ref):
        order = client.orders.get(int(ref))
        if order is not None:
            return order
    return client.live_external.get(ref) or client.by_external.get(ref)


# --- modify -------------------------------------------------------------------------------------

def modify(v: "Venue", cmd: ModifyOrder, result: "Result") -> "Result":
    client = v.clients.get(cmd.client_id)
    order = None
    if client is not None:
        if cmd.order_id is not None:
            order = client.orders.get(cmd.order_id)
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
        new_price = order.instrument.price_grid.to_units(cmd.new_price)  # type: ignore[assignment]
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

    if new_ext is not None and new_ext in order.client.live_external:
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
        result.events.append(("order", ts, order.id, order.client.id, MODIFY_PENDING, None))
        v.schedule(v.clock.now + v.latency_modify_ns, "ack_modify", (order, new_qty, new_price, to_market))
        result.snapshot_status = MODIFY_PENDING
        return result
    apply_modify(v, order, new_qty, new_price, to_market, result.events)
    return result


def _cannot_afford(order: Order, new_qty: int, new_price: int) -> bool:
    """Whether the hold of ``order`` at ``new_qty``/``new_price`` would grow beyond the available balance."""
    if order.side == BUY:
        cost, fee = buy_hold(order, new_qty - order.executed, new_price)
        new_held = cost + fee
    else:
        new_held = (new_qty - order.executed) * order.instrument.base_per_lot
    bal = balance(order.client, held_asset(order))
    return new_held - order_hold(order)[0] > bal.total - bal.hold


def _late_modify_reject(v: "Venue", order: Order, new_qty: int, new_price: int) -> Reject | None:
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
    client = order.client
    old = order.external_id
    if old is not None and client.live_external.get(old) is order:
        del client.live_external[old]
    order.ex().ref_external_id = old
    order.external_id = new_ext
    client.live_external[new_ext] = order
    client.by_external[new_ext] = order


def _modify_reject(v: "Venue", cmd: ModifyOrder, order: Order) -> Reject | None:
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
    if new_qty <= 0:
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
    v: "Venue", order: Order, new_qty: int, new_price: int, to_market: bool, events: list[Event]
) -> None:
    """Change a working order's quantity and price (the checks have passed). A modify acknowledged after
    a latency delay re-checks halt, ALO and balance first and, if one fails, leaves the order as it was
    (``MODIFY_REJECTED:<reason>`` in its modifications and event)."""
    if order.status not in (ACTIVE, MODIFY_PENDING):
        return  # ended while the modify was pending
    book = v.books[order.instrument.id]
    client = order.client
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
            events.append(("order", ts, order.id, client.id, ACTIVE, what))
            return
    mods.append((ts, "MODIFIED"))
    resting = book.contains(order)
    held, fee_held = order_hold(order)
    open_before = order.qty - order.executed
    if new_qty <= order.executed:
        if resting:
            book.remove(order, open_before)
        events.append(("order", ts, order.id, client.id, order.status, "MODIFIED"))
        end_order(v, order, CANCELED, CancelReason.MODIFIED_TO_EXECUTED.value, events)
        order.qty = order.executed  # nothing is left to trade
        return
    keeps_place = new_price == order.price and new_qty <= order.qty and not to_market
    order.status = ACTIVE
    if keeps_place:
        if resting:
            levels = book.side(order.side)
            level = levels[-order.price if order.side == BUY else order.price]
            level.qty -= order.qty - new_qty
        order.qty = new_qty
    else:
        if resting:
            book.remove(order, open_before)
        order.qty = new_qty
        order.price = new_price
        if to_market:
            order.type = MARKET
    held2, fee_held2 = order_hold(order)
    bal = balance(client, held_asset(order))
    bal.hold += held2 - held
    bal.fees_hold += fee_held2 - fee_held
    events.append(("order", ts, order.id, client.id, ACTIVE, "MODIFIED"))
    if keeps_place:
        return
    inst = order.instrument
    stopped = match(v, order, events) if inst.status == I_ACTIVE else False
    if order.executed == order.qty:
        end_order(v, order, FILLED, None, events)
    elif stopped:
        end_order(v, order, CANCELED, CancelReason.SELF_TRADE_PREVENTION.value, events)
    elif order.type == MARKET:
        end_order(v, order, CANCELED, CancelReason.MARKET_REMAINDER.value, events)
    elif order.tif == IOC:
        end_order(v, order, CANCELED, CancelReason.IOC_REMAINDER.value, events)
    else:
        book.add(order)


# --- cancel -------------------------------------------------------------------------------------

def cancel(v: "Venue", cmd: CancelOrder, result: "Result") -> "Result":
    order = find_order(v, cmd.client_id, cmd.ref)
    if order is None:
        result.reject = Reject.UNKNOWN_ORDER
        return result
    result.order = order
    if order.status in FINAL:
        result.reject = Reject.ORDER_NOT_ACTIVE
        return result
    if order.status != ACTIVE:
        result.reject = Reject.ORDER_PENDING
        return result
    if order.instrument.status == DISABLED:
        result.reject = Reject.INSTRUMENT_DISABLED
        return result
    if v.latency_cancel_ns:
        order.status = CANCEL_PENDING
        ts = v.clock.stamp()
        order.updated = ts
        result.events.append(("order", ts, order.id, order.client.id, CANCEL_PENDING, None))
        v.schedule(v.clock.now + v.latency_cancel_ns, "ack_cancel", order)
        result.snapshot_status = CANCEL_PENDING
        return result
    cancel_now(v, order, CancelReason.REQUESTED.value, result.events)
    return result


def cancel_now(v: "Venue", order: Order, reason: str, events: list[Event]) -> None:
    """Take a working order out of the book and end it CANCELED."""
    book = v.books[order.instrument.id]
    if book.contains(order):
        book.remove(order, order.qty - order.executed)
    end_order(v, order, CANCELED, reason, events)


def ack_entry(v: "Venue", order: Order, events: list[Event]) -> None:
    if order.status != NEW_PENDING:
        return
    order.ex().acked = v.clock.now
    inst = order.instrument
    if inst.status in (DISABLED, HALTED):
        end_order(v, order, CANCELED, "INSTRUMENT_" + inst.status, events)
        return
    if order.type == MARKET:
        # the market moved while the order was in flight: re-derive the protection price
        aggressive = order.extra is not None and USE_AGGRESSIVE_PRICING in order.extra.flags
        prot = protection_price(v, order.side, inst, aggressive)
        if prot is None:
            end_order(v, order, CANCELED, Reject.NO_LIQUIDITY.value, events)
            return
        # a BUY never spends more than was held at entry; a SELL holds base, so any price will do
        order.price = min(prot, order.price) if order.side == BUY else prot
    elif order.is_alo and would_trade(v, order.side, inst, order.price):
        end_order(v, order, CANCELED, Reject.ALO_WOULD_TRADE.value, events)
        return
    activate(v, order, events)


def ack_cancel(v: "Venue", order: Order, events: list[Event]) -> None:
    if order.status == CANCEL_PENDING:
        cancel_now(v, order, CancelReason.REQUESTED.value, events)


__all__ = [
    "place", "modify", "cancel", "activate", "apply_modify", "cancel_now", "ack_entry", "ack_cancel",
    "find_order", "protection_price", "within_band", "would_trade", "open_qty", "CANCELED",
]
