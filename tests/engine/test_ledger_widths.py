"""The ledger's sums at any size (engine/ledger.py, Two widths).

Compiled, a sum runs on C's 64-bit integers first and, when one overflows, again on Python's; the
figures must be the exact ones either way, for values on both sides of every width (a C ``int``, a
``long long``) and far past them, and an overflow half way must leave nothing changed. Interpreted,
the same tests hold the one run to the rule. The rule is written here as the ledger's docstring
states it, independently of the ledger's own arithmetic: a fill of ``lots`` at ``price`` adds
``lots * price`` to both orders' lots x ticks; the buyer pays ``ceil(cum_lt * num / den) - cum_quote``
and the seller receives it; each fee is ``ceil(cum_fee / 1e9) - fees_paid`` after ``cum_fee += quote *
rate``; a BUY order holds ``ceil((cum_lt + open * price) * num / den) - cum_quote`` plus the fee bound.
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil

from hypothesis import given
from hypothesis import strategies as st

from cefisim.engine import ledger
from cefisim.engine.records import Account, Balance, Execution, Order
from cefisim.engine.reference import Asset, Client, Instrument
from cefisim.engine.units import RATE_ONE, Grid
from tests.engine.builders import ALICE, BOB, BTC, BTC_USD, USD, Sim

#: integers around each width: small, about a C int, either side of a C long long, far past it
MAGNITUDES = st.one_of(
    st.integers(0, 2**16),
    st.integers(2**30, 2**32),
    st.integers(2**62, 2**64),
    st.integers(2**64, 2**100),
)
SIGNED = st.builds(lambda m, negative: -m if negative else m, MAGNITUDES, st.booleans())
BAND = RATE_ONE // 10
#: instruments whose lot x tick is a fraction of a quote unit (num 1, den 1000), several (num 3, den 200)
#: or many (num 15000, den 1)
INSTRUMENTS = st.sampled_from(
    [
        Instrument(1, "A", Asset(1, "B", 8), Asset(2, "Q", 2), Grid("0.01"), Grid("0.001"), 1, BAND, 0, 0),
        Instrument(2, "B", Asset(1, "B", 8), Asset(2, "Q", 2), Grid("0.05"), Grid("0.003"), 1, BAND, 0, 0),
        Instrument(3, "C", Asset(1, "B", 8), Asset(2, "Q", 8), Grid("0.05"), Grid("0.003"), 1, BAND, 0, 0),
    ]
)


def _execution(lt: int, quote: int, fee_sum: int, fees_paid: int, executed: int = 0) -> Execution:
    exe = Execution()
    exe.cum_lt, exe.cum_quote, exe.cum_fee, exe.fees_paid, exe.executed = lt, quote, fee_sum, fees_paid, executed
    return exe


def _ceil(x: Fraction) -> int:
    return ceil(x)


@given(INSTRUMENTS, SIGNED, SIGNED, SIGNED, SIGNED, SIGNED, SIGNED, SIGNED)
def test_buy_bound_is_exact_at_any_size(
    inst: Instrument, lt: int, quote: int, fee_sum: int, fees_paid: int, lots: int, price: int, rate: int
) -> None:
    k = Fraction(inst.notional_num, inst.notional_den)
    cost = _ceil((lt + lots * price) * k) - quote
    fee = _ceil(Fraction(fee_sum + cost * rate, RATE_ONE)) - fees_paid
    assert ledger.buy_bound(inst, _execution(lt, quote, fee_sum, fees_paid), lots, price, rate) == (cost + fee, fee)


def _order(oid: int, inst: Instrument, side: str, remaining: int, exe: Execution, balances: list[int]) -> Order:
    account = Account(Client(oid, f"c{oid}"))
    for asset, (total, hold, fees_hold, unsettled) in zip(
        (inst.base.id, inst.quote.id), (balances[:4], balances[4:]), strict=True
    ):
        bal = account.balances[asset] = Balance(total)
        bal.hold, bal.fees_hold, bal.unsettled_fees = hold, fees_hold, unsettled
    order = Order(oid, account, inst, side, "LIMIT", "GTC", balances[0] % 2**40 + 1, remaining, 0, None, None)
    order.execution = exe
    return order


def _state(bal: Balance) -> tuple[int, int, int, int]:
    return bal.total, bal.hold, bal.fees_hold, bal.unsettled_fees


@given(
    INSTRUMENTS,
    st.lists(SIGNED, min_size=14, max_size=14),
    st.lists(SIGNED, min_size=16, max_size=16),
    st.tuples(MAGNITUDES, MAGNITUDES, MAGNITUDES, MAGNITUDES, MAGNITUDES),
    st.tuples(SIGNED, SIGNED),
)
def test_settle_is_exact_at_any_size(
    inst: Instrument,
    sums: list[int],
    balances: list[int],
    terms: tuple[int, int, int, int, int],
    held: tuple[int, int],
) -> None:
    lots, price, b_rate, s_rate, rate = terms
    b = _execution(*sums[0:5])
    s = _execution(*sums[5:10])
    buyer = _order(1, inst, "BUY", sums[10], b, balances[:8])
    seller = _order(2, inst, "SELL", sums[11], s, balances[8:])
    base, quote_asset = inst.base.id, inst.quote.id
    b_base, b_quote = (_state(buyer.account.balances[a]) for a in (base, quote_asset))
    s_base, s_quote = (_state(seller.account.balances[a]) for a in (base, quote_asset))
    (b_lt, b_paid, b_fee_sum, b_fees_paid, b_done), (s_lt, s_paid, s_fee_sum, s_fees_paid, s_done) = (
        (e.cum_lt, e.cum_quote, e.cum_fee, e.fees_paid, e.executed) for e in (b, s)
    )

    got = ledger.settle(inst, buyer, seller, lots, price, b_rate, s_rate, rate, held)

    k = Fraction(inst.notional_num, inst.notional_den)
    b_lt += lots * price
    s_lt += lots * price
    quote = _ceil(b_lt * k) - b_paid
    b_fee_sum += quote * b_rate
    s_fee_sum += quote * s_rate
    b_fee = _ceil(Fraction(b_fee_sum, RATE_ONE)) - b_fees_paid
    s_fee = _ceil(Fraction(s_fee_sum, RATE_ONE)) - s_fees_paid
    b_paid += quote
    b_fees_paid += b_fee
    open_lots = sums[10] - lots
    if open_lots:
        cost = _ceil((b_lt + open_lots * buyer.price) * k) - b_paid
        fee = _ceil(Fraction(b_fee_sum + cost * rate, RATE_ONE)) - b_fees_paid
        bound = (cost + fee, fee)
    else:
        bound = (0, 0)
    assert got == (quote, b_fee, s_fee, bound)
    assert (b.cum_lt, b.cum_quote, b.cum_fee, b.fees_paid, b.executed) == (
        b_lt,
        b_paid,
        b_fee_sum,
        b_fees_paid,
        b_done + lots,
    )
    assert (s.cum_lt, s.cum_quote, s.cum_fee, s.fees_paid, s.executed) == (
        s_lt,
        s_paid + quote,
        s_fee_sum,
        s_fees_paid + s_fee,
        s_done + lots,
    )
    assert (buyer.remaining, seller.remaining) == (open_lots, sums[11] - lots)
    units = lots * inst.base_per_lot
    hold_change = bound[0] - held[0]
    assert _state(buyer.account.balances[quote_asset]) == (
        b_quote[0] - quote - b_fee,
        b_quote[1] + hold_change,
        b_quote[2] + bound[1] - held[1],
        b_quote[3] + b_fee,
    )
    assert _state(buyer.account.balances[base]) == (b_base[0] + units, *b_base[1:])
    assert _state(seller.account.balances[base]) == (s_base[0] - units, s_base[1] - units, *s_base[2:])
    assert _state(seller.account.balances[quote_asset]) == (
        s_quote[0] + quote - s_fee,
        s_quote[1],
        s_quote[2],
        s_quote[3] + s_fee,
    )


def test_a_trade_past_64_bits_settles_exactly() -> None:
    """100 BTC at a billion dollars: 10**13 cents change hands, and the fee sums (quote units x rate in
    1e-9) reach 2 * 10**19, past a C long long. The figures are the exact ones and every asset is
    conserved."""
    rich = {BTC: 10**12, USD: 10**16}
    sim = Sim(balances={ALICE: rich, BOB: rich})
    totals = sim.v.asset_totals()
    sell = sim.sell(ALICE, "100", "1000000000.00").order
    assert sim.bal(ALICE, BTC).hold == 100 * 10**8
    buy = sim.buy(BOB, "100", "1000000000.00").order
    quote = 100 * 10**9 * 100  # cents
    assert (sell.status, buy.status) == ("FILLED", "FILLED")
    assert (sell.cum_quote, buy.cum_quote) == (quote, quote)
    maker_fee, taker_fee = quote // 1000, quote // 500  # 0.1% and 0.2%, whole cents
    assert (sell.fees_paid, buy.fees_paid) == (maker_fee, taker_fee)
    assert sim.bal(ALICE, USD).total == 10**16 + quote - maker_fee
    assert sim.bal(BOB, USD).total == 10**16 - quote - taker_fee
    assert sim.bal(BOB, BTC).total == 10**12 + 100 * 10**8
    assert sim.bal(ALICE, BTC).total == 10**12 - 100 * 10**8
    for who in (ALICE, BOB):
        for asset in (BTC, USD):
            assert (sim.bal(who, asset).hold, sim.bal(who, asset).fees_hold) == (0, 0)
    assert sim.v.asset_totals() == totals
    sim.v.check_invariants()
    assert sim.v.books[BTC_USD].last_price == 100_000_000_000
