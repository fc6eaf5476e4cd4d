"""Holds, balances, fees and their settlement; external ids; conservation of every asset."""

from __future__ import annotations

import ast
from pathlib import Path

import cefisim.engine
from cefisim.engine.events import FeesSettledEvent, TradeEvent
from cefisim.engine.rejects import Reject
from cefisim.engine.vocabulary import OrderStatus, Side
from tests.engine.builders import (
    ALICE,
    BOB,
    BTC,
    BTC_USD,
    CAROL,
    DAVE,
    ETH,
    ETH_USD,
    HOUR,
    START,
    USD,
    Sim,
    fingerprint,
    trades,
)

ACTIVE = OrderStatus.ACTIVE
BUY = Side.BUY
CANCELED = OrderStatus.CANCELED
FILLED = OrderStatus.FILLED
REJECTED = OrderStatus.REJECTED
SELL = Side.SELL


# --- holds ------------------------------------------------------------------------------------------


def test_buy_holds_notional_plus_fee_at_highest_rate(sim: Sim) -> None:
    o = sim.buy(ALICE, "1", "100.00").order
    b = sim.bal(ALICE, USD)
    assert (b.hold, b.fees_hold) == (10_000 + 20, 20)  # 100.00 USD plus 0.2% (the taker rate)
    sim.cancel(ALICE, o.id)
    assert (b.hold, b.fees_hold) == (0, 0)


def test_buy_hold_rounds_up_in_quote_units(sim: Sim) -> None:
    sim.buy(ALICE, "0.0001", "100.01")  # 0.010001 USD -> 2 cents; fee 0.00004 -> 1 cent
    b = sim.bal(ALICE, USD)
    assert (b.hold, b.fees_hold) == (3, 1)


def test_sell_holds_base(sim: Sim) -> None:
    sim.sell(ALICE, "0.5", "100.00")
    assert sim.bal(ALICE, BTC).hold == 50_000_000
    assert sim.bal(ALICE, USD).hold == 0


def test_alo_buy_holds_fee_at_maker_rate(sim: Sim) -> None:
    sim.buy(ALICE, "1", "100.00", exec_inst=("ALO",))
    assert sim.bal(ALICE, USD).fees_hold == 10


def test_hold_fee_rate_given(sim: Sim) -> None:
    sim.buy(ALICE, "1", "100.00", hold_fee_rate="0.005")
    assert sim.bal(ALICE, USD).fees_hold == 50
    assert sim.bal(ALICE, USD).hold == 10_050


def test_hold_fee_rate_below_applicable_rate(sim: Sim) -> None:
    before = fingerprint(sim.v)
    r = sim.buy(ALICE, "1", "100.00", hold_fee_rate="0.0019")
    assert r.reject == Reject.HOLD_FEE_RATE_TOO_LOW and r.order.status == REJECTED
    assert fingerprint(sim.v, exclude_order=r.order) == before
    # ALO can only pay the maker rate, so the maker rate is enough
    assert sim.buy(ALICE, "1", "99.00", hold_fee_rate="0.001", exec_inst=("ALO",)).ok
    assert sim.buy(ALICE, "1", "99.00", hold_fee_rate="0.0009", exec_inst=("ALO",)).reject == (
        Reject.HOLD_FEE_RATE_TOO_LOW
    )
    assert sim.buy(ALICE, "1", "99.00", hold_fee_rate="0.002").ok


def test_hold_fee_rate_uses_client_override() -> None:
    sim = Sim(fee_overrides={BOB: {BTC_USD: ("0", "0.0005")}})
    assert sim.buy(BOB, "1", "100.00", hold_fee_rate="0.0005").ok
    assert sim.buy(ALICE, "1", "100.00", hold_fee_rate="0.0005").reject == Reject.HOLD_FEE_RATE_TOO_LOW
    sim.buy(BOB, "1", "99.00")
    assert sim.bal(BOB, USD).fees_hold == 5 + 5  # both holds at 0.05%


def test_insufficient_balance() -> None:
    sim = Sim(balances={DAVE: {USD: 10_000}, ALICE: {BTC: 10**8}})
    before = fingerprint(sim.v)
    r = sim.buy(DAVE, "1", "100.00")  # needs 100.20
    assert r.reject == Reject.INSUFFICIENT_BALANCE and r.order.status == REJECTED
    assert fingerprint(sim.v, exclude_order=r.order) == before
    r = sim.buy(DAVE, "0.99", "100.00")  # 99.00 + 0.198 -> 99.20
    assert r.ok and sim.bal(DAVE, USD).hold == 9_920
    assert sim.buy(DAVE, "0.0080", "100.00").reject == Reject.INSUFFICIENT_BALANCE  # 0.80 + 0.01 > 0.80
    assert sim.buy(DAVE, "0.0079", "100.00").ok  # 0.79 + 0.00158 -> 0.80
    assert sim.bal(DAVE, USD).available == 0
    assert sim.sell(DAVE, "0.0001", "100.00").reject == Reject.INSUFFICIENT_BALANCE  # no BTC
    assert sim.sell(ALICE, "1.0001", "100.00").reject == Reject.INSUFFICIENT_BALANCE
    assert sim.sell(ALICE, "1", "100.00").ok
    sim.check()


def test_market_buy_holds_at_its_protection_price() -> None:
    sim = Sim(balances={ALICE: {BTC: 10**8}, DAVE: {USD: 10_500}})
    sim.sell(ALICE, "1", "100.00")
    # protection 105.00: 1 BTC needs 105.00 + 0.21 held although it would trade at 100.00;
    # 0.99 BTC needs 103.95 + 0.2079 -> 104.16
    assert sim.market(DAVE, BUY, "1").reject == Reject.INSUFFICIENT_BALANCE
    r = sim.market(DAVE, BUY, "0.99")
    assert r.order.status == FILLED
    assert sim.bal(DAVE, USD).total == 10_500 - 9_900 - 20  # 0.2% of 99.00 = 0.198 -> 0.20
    assert sim.bal(DAVE, USD).hold == 0
    sim.check()


# --- fees ---------------------------------------------------------------------------------------------


def test_maker_and_taker_fees(sim: Sim) -> None:
    totals = sim.v.asset_totals()
    a_usd, b_usd = sim.bal(ALICE, USD).total, sim.bal(BOB, USD).total
    a_btc, b_btc = sim.bal(ALICE, BTC).total, sim.bal(BOB, BTC).total
    m = sim.sell(ALICE, "1", "100.00").order
    r = sim.buy(BOB, "1", "100.00")
    (ev,) = [e for e in r.events if isinstance(e, TradeEvent)]
    # price, lots, the orders, quote, maker fee, taker fee, and each order's client
    assert ev[3:] == (10_000, 10_000, m.id, r.order.id, 10_000, 10, 20, ALICE, BOB)
    assert sim.bal(ALICE, USD).total == a_usd + 10_000 - 10
    assert sim.bal(BOB, USD).total == b_usd - 10_000 - 20
    assert sim.bal(ALICE, BTC).total == a_btc - 10**8
    assert sim.bal(BOB, BTC).total == b_btc + 10**8
    assert sim.bal(ALICE, USD).unsettled_fees == 10 and sim.bal(BOB, USD).unsettled_fees == 20
    assert all(sim.bal(c, a).hold == 0 for c in (ALICE, BOB) for a in (BTC, USD))
    fills_a, fills_b = sim.v.accounts[ALICE].fills, sim.v.accounts[BOB].fills
    assert [(f.liq_flag, f.fee) for f in fills_a] == [("MAKER", 10)]
    assert [(f.liq_flag, f.fee) for f in fills_b] == [("TAKER", 20)]
    assert fills_a[0].match_id == fills_b[0].match_id
    assert sim.v.asset_totals() == totals
    sim.check()


def test_fee_rounding_is_cumulative_per_order(sim: Sim) -> None:
    """Fees round up once per order over its cumulative quote, not once per fill."""
    for _ in range(4):
        sim.sell(ALICE, "0.0001", "100.00")  # each fill: 1 cent of quote... 0.01 USD
    r = sim.buy(BOB, "0.0004", "100.00")
    assert len(trades(r)) == 4
    assert r.order.cum_quote == 4
    assert r.order.fees_paid == 1  # ceil(4 * 0.002) = 1 cent, not 4
    assert sim.bal(BOB, USD).unsettled_fees == 1


def test_per_client_fee_override() -> None:
    sim = Sim(fee_overrides={BOB: {BTC_USD: ("0", "0.0005")}, ALICE: {BTC_USD: ("0.0003", "0.004")}})
    sim.sell(ALICE, "1", "100.00")
    r = sim.buy(BOB, "1", "100.00")
    (ev,) = [e for e in r.events if isinstance(e, TradeEvent)]
    assert (ev.maker_fee, ev.taker_fee) == (3, 5)  # alice's maker 0.03%, bob's taker 0.05%
    sim.sell(BOB, "1", "100.00")
    r = sim.buy(ALICE, "1", "100.00")
    (ev,) = [e for e in r.events if isinstance(e, TradeEvent)]
    assert (ev.maker_fee, ev.taker_fee) == (0, 40)  # bob's maker 0, alice's taker 0.4%
    sim.check()


def test_fees_on_other_instrument(sim: Sim) -> None:
    sim.limit(ALICE, SELL, "1", "100.00", inst=ETH_USD)
    r = sim.limit(BOB, BUY, "1", "100.00", inst=ETH_USD)
    (ev,) = [e for e in r.events if isinstance(e, TradeEvent)]
    assert (ev.quote_units, ev.maker_fee, ev.taker_fee) == (10_000, 0, 5)
    assert sim.bal(BOB, ETH).total == 100_000 * 10**8 + 10**8


def test_unsettled_fees_sweep_hourly(sim: Sim) -> None:
    sim.sell(ALICE, "1", "100.00", at=START + 10)
    sim.buy(BOB, "1", "100.00", at=START + 20)
    totals = sim.v.asset_totals()
    r = sim.advance_to(START + HOUR - 1)
    assert not [e for e in r.events if isinstance(e, FeesSettledEvent)]
    assert sim.v.fee_account[USD] == 0
    r = sim.advance_to(START + HOUR)
    assert [e for e in r.events if isinstance(e, FeesSettledEvent)] == [FeesSettledEvent(START + HOUR, USD, 30)]
    assert sim.v.fee_account[USD] == 30
    assert sim.bal(ALICE, USD).unsettled_fees == 0 and sim.bal(BOB, USD).unsettled_fees == 0
    assert sim.v.asset_totals() == totals
    r = sim.advance_to(START + 3 * HOUR)
    assert not [e for e in r.events if isinstance(e, FeesSettledEvent)]  # nothing left to sweep


# --- external ids --------------------------------------------------------------------------------------


def test_duplicate_live_external_id_rejected(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "99.00", external_id="e1").order
    before = fingerprint(sim.v)
    r = sim.buy(ALICE, "1", "98.00", external_id="e1")
    assert r.reject == Reject.DUPLICATE_EXTERNAL_ID and r.order.status == REJECTED
    assert fingerprint(sim.v, exclude_order=r.order) == before
    assert sim.v.accounts[ALICE].live_external["e1"] is a
    assert sim.buy(BOB, "1", "98.00", external_id="e1").ok  # per client


def test_external_id_reusable_after_the_order_ended(sim: Sim) -> None:
    a = sim.buy(ALICE, "1", "99.00", external_id="e1").order
    sim.cancel(ALICE, "e1")
    b = sim.buy(ALICE, "1", "98.00", external_id="e1").order
    assert b.status == ACTIVE
    assert sim.cancel(ALICE, "e1").ok
    assert a.status == CANCELED and b.status == CANCELED
    c = sim.sell(ALICE, "1", "100.00", external_id="e2").order
    sim.buy(BOB, "1", "100.00")  # fills c
    assert c.status == FILLED
    assert sim.sell(ALICE, "1", "100.00", external_id="e2").ok


def test_cancel_by_external_id_prefers_the_live_order(sim: Sim) -> None:
    sim.buy(ALICE, "1", "99.00", external_id="e1")
    sim.cancel(ALICE, "e1")
    b = sim.buy(ALICE, "1", "98.00", external_id="e1").order
    assert sim.v.accounts[ALICE].by_external["e1"] is b
    sim.cancel(ALICE, "e1")
    assert b.status == CANCELED


# --- conservation ------------------------------------------------------------------------------------


def test_asset_totals_conserved_by_trading(sim: Sim) -> None:
    totals = sim.v.asset_totals()
    sim.sell(ALICE, "1.2345", "100.07")
    sim.sell(CAROL, "0.5", "100.03")
    sim.buy(BOB, "0.0003", "100.09")
    sim.market(BOB, BUY, "0.7")
    sim.buy(CAROL, "3", "99.01")
    sim.market(ALICE, SELL, "1.3")
    sim.advance(2 * HOUR)
    assert sim.v.asset_totals() == totals
    sim.check()


def _hold_writes(tree: ast.Module) -> list[int]:
    """Lines that assign to a ``hold`` or ``fees_hold`` attribute outside the class ``Balance``."""
    owner = {id(n) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name == "Balance" for n in ast.walk(c)}
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AugAssign) and id(node) not in owner
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Attribute) and target.attr in ("hold", "fees_hold")
    ]


def test_every_change_of_a_hold_goes_through_change_hold() -> None:
    """``Balance.change_hold`` owns the hold: an unheld balance (the recorded counterparty's) drops
    what it is given, which a direct write to ``hold`` or ``fees_hold`` would bypass."""
    root = Path(cefisim.engine.__file__).parent.parent
    sources = sorted((root / "engine").rglob("*.py")) + sorted((root / "api").rglob("*.py"))
    writes = [
        f"{p.relative_to(root)}:{line}" for p in sources for line in _hold_writes(ast.parse(p.read_text(), str(p)))
    ]
    assert not writes, writes
    assert _hold_writes(ast.parse("bal.hold += 1\nclass Balance:\n    def f(self):\n        self.hold = 0")) == [1]
