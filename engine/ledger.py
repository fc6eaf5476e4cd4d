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

Two widths. The sums are exact at any size: Python's integers have no bound. Compiled (docs/build.md),
a sum's function runs first on C's 64-bit integers, whose overflow raises ``OverflowError`` (the build's
``overflowcheck``) where it would wrap, and then again, the same function, on Python's integers: the
function takes a last argument, ``NATIVE`` or ``UNBOUNDED``, whose type (a C ``long long`` or a Python
object) types its locals (``Exact`` in ledger.pxd), and it changes nothing before its last sum is done,
so the second run starts from what the first found. Interpreted, both are Python's ``0``: the first run is
the only one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

try:
    import cython
except ImportError:  # the pure package, without Cython (engine/nocython.py)
    from cefisim.engine import nocython as cython  # type: ignore[no-redef]  # the same names as cython

from cefisim.engine.records import NO_FILLS, Account, Balance, Execution, Order
from cefisim.engine.units import RATE_CEIL, RATE_ONE
from cefisim.engine.vocabulary import WORKING, ExecInst, OrderStatus, Side

ALO = ExecInst.ALO.value
BUY = Side.BUY.value
NEW_PENDING = OrderStatus.NEW_PENDING.value
#: the last argument of a sum's function (module docstring, Two widths): C's 64-bit integers (compiled;
#: a C ``long long``, ledger.pxd), or Python's
NATIVE = cython.cast(cython.longlong, 0)
UNBOUNDED = 0

if TYPE_CHECKING:
    from cefisim.engine.reference import Instrument


def balance(account: Account, asset_id: int) -> Balance:
    """The account's balance of an asset, created empty on first use."""
    bal = account.balances.get(asset_id)
    if bal is None:
        bal = account.balances[asset_id] = Balance()
    return bal


#: what a BUY order holds once it has traded its whole quantity (quote units, of which fee units)
NOTHING_HELD = (0, 0)
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
    """(quote units, of which fee units) that cover ``open_lots`` more at ``price`` or better and a fee at
    ``rate``, after the fills summed in ``exe``: what a BUY order holds. 0 lots give (0, 0): the sums
    are already paid."""
    return _bound(inst, exe, open_lots, price, rate, NATIVE)


def _bound(inst: Instrument, exe: Execution, open_lots: int, price: int, rate: int, width: int) -> tuple[int, int]:
    """:func:`buy_bound` in the integers ``width`` names (module docstring, Two widths)."""
    try:
        # each value is first given a name: compiled, a name of the width's type (a C integer read from
        # the object, OverflowError if it does not fit), so that the sums below are C's or Python's alone
        lots = open_lots
        limit = price
        fee_rate = rate
        lt = exe.cum_lt
        paid = exe.cum_quote
        fee_sum = exe.cum_fee
        fees_paid = exe.fees_paid
        num = inst.notional_num
        den = inst.notional_den
        ceil = RATE_CEIL
        one = RATE_ONE
        # ceil(x / den) as (x + den - 1) // den: den > 0, and no negation (C's is not checked for overflow)
        cost = ((lt + lots * limit) * num + den - 1) // den - paid
        fee = (fee_sum + cost * fee_rate + ceil) // one - fees_paid
        return cost + fee, fee
    except OverflowError:  # compiled, past 64 bits (only C's integers overflow): on Python's integers
        return _bound(inst, exe, open_lots, price, rate, UNBOUNDED)


def settle(
    inst: Instrument,
    buyer: Order,
    seller: Order,
    lots: int,
    price: int,
    b_rate: int,
    s_rate: int,
    rate: int,
    held: tuple[int, int],
) -> tuple[int, int, int, tuple[int, int]]:
    """The money side of a fill of ``lots`` at ``price`` between two working orders, each with its
    Execution: both orders' sums and remaining lots, fees at ``b_rate`` (the buyer's) and ``s_rate``, the
    four balances, and the BUY order's hold, which covers a fee at ``rate`` and was ``held`` (its
    :func:`buy_bound`) before the fill; the SELL order's hold shrinks by exactly the base it delivers.
    Returns (quote units the buyer pays and the seller receives, the buyer's fee, the seller's fee, what
    the BUY order holds after the fill: nothing once it has traded its whole quantity)."""
    quote, b_fee, s_fee = _execute(inst, buyer, seller, lots, price, b_rate, s_rate, NATIVE)
    if buyer.remaining:
        exe = buyer.execution
        bound = _bound(inst, exe, buyer.remaining, buyer.price, rate, NATIVE)  # type: ignore[arg-type]  # working: has one
    else:
        bound = NOTHING_HELD
    b_held, b_fee_held = held
    b_held2, b_fee_held2 = bound
    base_units = lots * inst.base_per_lot
    q_id, b_id = inst.quote.id, inst.base.id
    bc, sc = buyer.account, seller.account
    # each balance read and written in turn: a self-trade has one account on both sides
    bal = bc.balances[q_id]  # the buyer holds quote, the seller base: both exist since entry
    bal.total -= quote + b_fee
    bal.change_hold(b_held2 - b_held, b_fee_held2 - b_fee_held)
    bal.unsettled_fees += b_fee
    bal = bc.balances.get(b_id) or balance(bc, b_id)
    bal.total += base_units
    bal = sc.balances[b_id]
    bal.total -= base_units
    bal.change_hold(-base_units, 0)
    bal = sc.balances.get(q_id) or balance(sc, q_id)
    bal.total += quote - s_fee
    bal.unsettled_fees += s_fee
    return quote, b_fee, s_fee, bound


def _execute(
    inst: Instrument, buyer: Order, seller: Order, lots: int, price: int, b_rate: int, s_rate: int, width: int
) -> tuple[int, int, int]:
    """Both orders' sums after a fill (:func:`settle`) in the integers ``width`` names (module docstring,
    Two widths): lots executed and remaining, lots x ticks, quote units and fees. Every sum first, then
    the writes, so that an overflow leaves the orders as they were. Returns (quote units, the buyer's fee,
    the seller's fee)."""
    try:
        bx, sx = buyer.execution, seller.execution
        if TYPE_CHECKING:  # (a working order has its Execution: entry made it)
            assert bx is not None and sx is not None
        n = lots
        p = price
        b_fee_rate = b_rate
        s_fee_rate = s_rate
        num = inst.notional_num
        den = inst.notional_den
        ceil = RATE_CEIL
        one = RATE_ONE
        b_lt = bx.cum_lt
        s_lt = sx.cum_lt
        b_paid = bx.cum_quote
        s_paid = sx.cum_quote
        b_executed = bx.executed
        s_executed = sx.executed
        b_remaining = buyer.remaining
        s_remaining = seller.remaining
        b_fee_sum = bx.cum_fee
        s_fee_sum = sx.cum_fee
        b_fees_paid = bx.fees_paid
        s_fees_paid = sx.fees_paid

        lt = n * p
        b_lt += lt
        s_lt += lt
        paid = (b_lt * num + den - 1) // den  # ceil, as in _bound
        quote = paid - b_paid
        s_paid += quote
        b_fee_sum += quote * b_fee_rate
        b_fee = (b_fee_sum + ceil) // one - b_fees_paid
        s_fee_sum += quote * s_fee_rate
        s_fee = (s_fee_sum + ceil) // one - s_fees_paid
        b_executed += n
        s_executed += n
        b_remaining -= n
        s_remaining -= n
        b_fees_paid += b_fee
        s_fees_paid += s_fee

        bx.cum_lt = b_lt
        sx.cum_lt = s_lt
        bx.cum_quote = paid
        sx.cum_quote = s_paid
        bx.executed = b_executed
        sx.executed = s_executed
        buyer.remaining = b_remaining
        seller.remaining = s_remaining
        bx.cum_fee = b_fee_sum
        sx.cum_fee = s_fee_sum
        bx.fees_paid = b_fees_paid
        sx.fees_paid = s_fees_paid
        return quote, b_fee, s_fee
    except OverflowError:  # compiled, past 64 bits (only C's integers overflow): on Python's integers
        return _execute(inst, buyer, seller, lots, price, b_rate, s_rate, UNBOUNDED)


def buy_hold(order: Order, open_lots: int, price: int) -> tuple[int, int]:
    """(quote units, of which fee units) a BUY order must hold to trade ``open_lots`` more at ``price`` or
    better."""
    return buy_bound(order.instrument, order.execution or NO_FILLS, open_lots, price, hold_rate(order))


def order_hold(order: Order) -> tuple[int, int, int]:
    """(asset id, units held, of which fees) of the order in its current state: quote for a BUY
    order, base for a SELL order."""
    inst = order.instrument
    lots = order.remaining
    if order.side == BUY:
        if not lots or order.status not in OPEN:
            return inst.quote.id, 0, 0  # a BUY order with nothing left holds nothing: its sums are paid
        exe = order.execution or NO_FILLS
        held, fee = _bound(inst, exe, lots, order.price, hold_rate(order), NATIVE)
        return inst.quote.id, held, fee
    if order.status not in OPEN:
        return inst.base.id, 0, 0
    return inst.base.id, lots * inst.base_per_lot, 0


def rehold(order: Order, held: int, fee_held: int) -> None:
    """Bring the client's hold in line with the order's terms after they changed (price, quantity,
    type), given ``held`` and ``fee_held`` as ``order_hold`` gave them before the change."""
    asset_id, held2, fee_held2 = order_hold(order)
    balance(order.account, asset_id).change_hold(held2 - held, fee_held2 - fee_held)
