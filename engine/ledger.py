"""Balances, holds and the money side of a fill — exact, conserved, never negative.

Per client and asset a :class:`Balance` holds ``total`` and ``hold`` (AVAILABLE = total - hold),
``fees_hold`` (the part of ``hold`` reserved for fees of open BUY orders) and ``unsettled_fees`` (fees
already taken from ``total`` that the venue has not yet swept to its fee account). Conservation:
for every asset, sum(total) + sum(unsettled_fees) + fee_account is constant except for transfers and
paper funds.

Rounding. A lot times a tick is ``k = notional_num / notional_den`` quote units, usually not whole.
Money changes hands in whole quote units, so each order keeps exact cumulative sums (on its
:class:`~engine.records.Execution`, all 0 before the first fill) and rounds once:
- a fill of ``f`` lots at ``p`` ticks adds ``f*p`` to the BUY order's ``cum_lt``; the buyer pays
  ``X = ceil(cum_lt * k) - cum_quote`` and the seller receives the same ``X`` (conserved exactly);
- fees: ``cum_fee += X * rate`` (rate in 1e-9) and the fee charged is ``ceil(cum_fee / 1e9) - fees_paid``.
A BUY order holds ``ceil((cum_lt + open*price) * k) - cum_quote`` quote units plus the fee bound at its
hold rate; both bounds only shrink as fills arrive, so a hold always covers what a fill takes and
AVAILABLE never drops on a fill. A SELL order holds ``open * base_per_lot`` base units; its fee comes out
of what it receives and never exceeds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cefisim.engine.records import NO_FILLS, Account, Balance, Execution, Order
from cefisim.engine.units import RATE_CEIL, RATE_ONE
from cefisim.engine.vocabulary import WORKING, ExecInst, OrderStatus, Side

ALO = ExecInst.ALO.value
BUY = Side.BUY.value
NEW_PENDING = OrderStatus.NEW_PENDING.value

if TYPE_CHECKING:
    from cefisim.engine.reference import Instrument


def balance(account: Account, asset_id: int) -> Balance:
    """The account's balance of an asset, created empty on first use."""
    bal = account.balances.get(asset_id)
    if bal is None:
        bal = account.balances[asset_id] = Balance()
    return bal


#: statuses in which an order holds funds: working, or waiting for its acknowledgement
OPEN = WORKING | {NEW_PENDING}


def open_qty(order: Order) -> int:
    """Lots the order may still trade: working or waiting for its acknowledgement."""
    return order.remaining if order.status in OPEN else 0


def hold_rate(order: Order, rates: tuple[int, int] | None = None, given: bool = True) -> int:
    """Fee rate a BUY order's hold covers: the one given on the order (``hold_fee_rate``), else the
    highest rate the order can be charged: maker only for ALO, else maker or taker.

    ``rates``: the (maker, taker) rates of the order's client, when the caller has them already;
    ``given=False``: the highest rate, ignoring one given (what order entry checks a given rate against).
    """
    maker, taker = rates or order.instrument.fee_rates_for(order.account.client)
    extra = order.extra
    if extra is not None:
        if given and extra.hold_rate is not None:
            return extra.hold_rate
        if ALO in extra.exec_inst:
            return maker
    return maker if maker > taker else taker


def buy_bound(inst: Instrument, exe: Execution, open_lots: int, price: int, rate: int) -> tuple[int, int]:
    """(quote units, fee units) that cover ``open_lots`` more at ``price`` or better and a fee at
    ``rate``, after the fills summed in ``exe``. 0 lots give (0, 0): the sums are already paid."""
    cost = -(-(exe.cum_lt + open_lots * price) * inst.notional_num // inst.notional_den) - exe.cum_quote
    fee = (exe.cum_fee + cost * rate + RATE_CEIL) // RATE_ONE - exe.fees_paid
    return cost, fee


def buy_hold(order: Order, open_lots: int, price: int) -> tuple[int, int]:
    """(quote units, fee units) a BUY order must hold to trade ``open_lots`` more at ``price`` or better."""
    return buy_bound(order.instrument, order.execution or NO_FILLS, open_lots, price, hold_rate(order))


def order_hold(order: Order) -> tuple[int, int, int]:
    """(asset id, units held, of which fees) of the order in its current state: quote for a BUY
    order, base for a SELL order."""
    inst = order.instrument
    lots = order.remaining
    if order.side == BUY:
        if not lots or order.status not in OPEN:
            return inst.quote.id, 0, 0  # a BUY order with nothing left holds nothing: its sums are paid
        cost, fee = buy_bound(inst, order.execution or NO_FILLS, lots, order.price, hold_rate(order))
        return inst.quote.id, cost + fee, fee
    if order.status not in OPEN:
        return inst.base.id, 0, 0
    return inst.base.id, lots * inst.base_per_lot, 0


def rehold(order: Order, held: int, fee_held: int) -> None:
    """Bring the client's hold in line with the order's terms after they changed (price, quantity,
    type), given ``held`` and ``fee_held`` as ``order_hold`` gave them before the change."""
    asset_id, held2, fee_held2 = order_hold(order)
    balance(order.account, asset_id).change_hold(held2 - held, fee_held2 - fee_held)
