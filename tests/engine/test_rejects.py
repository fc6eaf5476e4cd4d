"""A rejected command leaves no trace in the state except its REJECTED record and the consumed id;
an order request ``order_reject`` refuses (unknown client or instrument, LIMIT without a price) not
even those."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cefisim.engine.commands import (
    CancelOrder,
    Command,
    ModifyOrder,
    PaperFunds,
    PlaceOrder,
    RequestTransfer,
    SetClientInfo,
    SetInstrumentStatus,
)
from cefisim.engine.entry import order_reject
from cefisim.engine.events import OrderEvent
from cefisim.engine.rejects import Reject
from cefisim.engine.vocabulary import OrderStatus
from tests.engine.builders import ALICE, BOB, BTC_USD, CAROL, DAVE, ETH_USD, USD, Sim, fingerprint

REJECTED = OrderStatus.REJECTED
#: what order_reject refuses: the request is not an order, so it leaves no REJECTED record either
NOT_AN_ORDER = {Reject.UNKNOWN_CLIENT, Reject.UNKNOWN_INSTRUMENT, Reject.PRICE_REQUIRED}


def populated() -> Sim:
    sim = Sim()
    sim.v.credit(DAVE, USD, 10_000)
    sim.buy(ALICE, "1", "99.00", external_id="a1")  # order 1
    sim.sell(BOB, "1", "101.00")  # order 2
    sim.sell(CAROL, "0.5", "100.00")
    sim.buy(BOB, "0.5", "100.00")  # last trade 100.00
    sim.buy(CAROL, "1", "98.00", exec_inst=("ALO",))  # order 5
    sim.buy(ALICE, "0.1", "97.00", external_id="gone")  # order 6
    sim.cancel(ALICE, 6)
    sim.limit(BOB, "SELL", "1", "200.00", inst=ETH_USD)  # order 7, one-sided book
    sim.buy(DAVE, "0.5", "99.00")  # order 8: holds 49.50 + 0.10, dave has 50.40 left
    sim.check()
    return sim


def place(
    client: int = ALICE,
    side: str = "BUY",
    type: str = "LIMIT",
    qty: str = "1",
    price: str | None = "99.50",
    inst: int = BTC_USD,
    **kw: object,
) -> PlaceOrder:
    return PlaceOrder(client, inst, side, type, qty, price, **kw)  # type: ignore[arg-type]


CASES: list[tuple[str, Command, Reject]] = [
    ("price off grid", place(price="99.505"), Reject.PRICE_OFF_GRID),
    ("qty off grid", place(qty="0.00001"), Reject.QTY_OFF_GRID),
    ("qty zero", place(qty="0"), Reject.QTY_NOT_POSITIVE),
    ("below min qty", place(qty="0.001", inst=ETH_USD, price="190.00"), Reject.QTY_BELOW_MINIMUM),
    ("price required", place(price=None), Reject.PRICE_REQUIRED),
    ("AON on limit", place(exec_inst=("AON",)), Reject.AON_ONLY_ON_MARKET),
    ("aggressive on limit", place(flags=("USE_AGGRESSIVE_PRICING",)), Reject.AGGRESSIVE_PRICING_ONLY_ON_MARKET),
    ("ALO on market", place(type="MARKET", price=None, exec_inst=("ALO",)), Reject.ALO_NOT_ALLOWED_ON_MARKET),
    ("STP invalid", place(stp="INVALID"), Reject.STP_INVALID),
    ("duplicate external id", place(external_id="a1"), Reject.DUPLICATE_EXTERNAL_ID),
    ("hold fee rate too low", place(hold_fee_rate="0.001"), Reject.HOLD_FEE_RATE_TOO_LOW),
    ("outside band", place(price="105.01"), Reject.PRICE_OUTSIDE_BAND),
    ("ALO would trade", place(side="SELL", price="99.00", exec_inst=("ALO",)), Reject.ALO_WOULD_TRADE),
    ("no liquidity", place(side="SELL", type="MARKET", price=None, inst=ETH_USD, qty="0.01"), Reject.NO_LIQUIDITY),
    ("insufficient quote", place(client=DAVE, qty="0.6", external_id="d"), Reject.INSUFFICIENT_BALANCE),
    ("insufficient base", place(client=DAVE, side="SELL", price="100.50"), Reject.INSUFFICIENT_BALANCE),
    ("market insufficient", place(client=DAVE, type="MARKET", price=None, qty="0.5"), Reject.INSUFFICIENT_BALANCE),
    ("unknown client", place(client=999), Reject.UNKNOWN_CLIENT),
    ("unknown instrument", place(inst=99), Reject.UNKNOWN_INSTRUMENT),
    ("modify unknown", ModifyOrder(ALICE, 999, None, "1"), Reject.UNKNOWN_ORDER),
    ("modify foreign", ModifyOrder(BOB, 1, None, "1"), Reject.UNKNOWN_ORDER),
    ("modify ended", ModifyOrder(ALICE, 6, None, "1"), Reject.ORDER_NOT_ACTIVE),
    ("modify off grid", ModifyOrder(ALICE, 1, None, "1", "99.001"), Reject.PRICE_OFF_GRID),
    ("modify band", ModifyOrder(ALICE, 1, None, "1", "94.99", msg_id="m"), Reject.PRICE_OUTSIDE_BAND),
    ("modify ALO cross", ModifyOrder(CAROL, 5, None, "1", "101.00"), Reject.ALO_WOULD_TRADE),
    ("modify insufficient", ModifyOrder(DAVE, 8, None, "1.1"), Reject.INSUFFICIENT_BALANCE),
    ("modify market no liq", ModifyOrder(BOB, 7, None, "1", new_type="MARKET"), Reject.NO_LIQUIDITY),
    ("cancel unknown", CancelOrder(ALICE, "999"), Reject.UNKNOWN_ORDER),
    ("cancel ended", CancelOrder(ALICE, "gone"), Reject.ORDER_NOT_ACTIVE),
    ("client info bogus", SetClientInfo(ALICE, "SOMETIMES"), Reject.STP_INVALID),
    ("status unknown instrument", SetInstrumentStatus(99, "HALTED"), Reject.UNKNOWN_INSTRUMENT),
    ("funds remove too much", PaperFunds(DAVE, USD, "50.41", remove=True), Reject.INSUFFICIENT_BALANCE),
    ("transfer off grid", RequestTransfer(ALICE, USD, "0.001", "DEPOSIT", "FIAT"), Reject.QTY_OFF_GRID),
]


@pytest.mark.parametrize(("name", "cmd", "reason"), CASES, ids=[c[0] for c in CASES])
def test_rejected_command_leaves_no_trace(name: str, cmd: Command, reason: Reject) -> None:
    sim = populated()
    before = fingerprint(sim.v)
    totals = sim.v.asset_totals()
    r = sim.submit(cmd)
    assert r.reject == reason, name
    rejected = r.order if r.order is not None and r.order.status == REJECTED else None
    if isinstance(cmd, PlaceOrder) and reason not in NOT_AN_ORDER:
        assert rejected is not None and rejected.ex().reject_reason == reason.value
        assert [(type(e), e.status) for e in r.events] == [(OrderEvent, REJECTED)]  # type: ignore[union-attr]
    else:
        assert not r.events
    assert fingerprint(sim.v, exclude_order=rejected) == before
    assert sim.v.asset_totals() == totals
    sim.check()


def test_rejected_modify_by_duplicate_external_id_leaves_no_trace() -> None:
    sim = populated()
    sim.buy(ALICE, "0.1", "96.00", external_id="live2")
    before = fingerprint(sim.v)
    r = sim.submit(ModifyOrder(ALICE, 1, "live2", "0.5", msg_id="m1", parent_id="p"))
    assert r.reject == Reject.DUPLICATE_EXTERNAL_ID
    assert fingerprint(sim.v) == before


@pytest.mark.parametrize(
    ("status", "reason"), [("HALTED", Reject.INSTRUMENT_HALTED), ("DISABLED", Reject.INSTRUMENT_DISABLED)]
)
def test_rejected_by_status_leaves_no_trace(status: str, reason: Reject) -> None:
    sim = populated()
    sim.status(BTC_USD, status)
    before = fingerprint(sim.v)
    r = sim.submit(place())
    assert r.reject == reason
    assert fingerprint(sim.v, exclude_order=r.order) == before
    if status == "HALTED":
        assert sim.submit(ModifyOrder(ALICE, 1, None, "0.5")).reject == reason
        assert fingerprint(sim.v, exclude_order=r.order) == before


def test_a_limit_order_without_a_price_is_refused_before_it_is_an_order() -> None:
    """Even with a quantity off the grid (a REJECTED record's reason): no record, no order id used."""
    sim = populated()
    before, next_id = fingerprint(sim.v), sim.v.next_order_id
    r = sim.submit(place(price=None, qty="0.00001"))
    assert r.reject == Reject.PRICE_REQUIRED and r.order is None and not r.events
    assert fingerprint(sim.v) == before and sim.v.next_order_id == next_id


@given(
    client=st.sampled_from([ALICE, DAVE, 999]),
    inst=st.sampled_from([BTC_USD, ETH_USD, 99]),
    type=st.sampled_from(["LIMIT", "MARKET"]),
    price=st.sampled_from([None, "99.50", "99.501"]),
    qty=st.sampled_from(["1", "0", "0.00001"]),
)
def test_order_reject_is_what_entry_refuses_before_an_order(
    client: int, inst: int, type: str, price: str | None, qty: str
) -> None:
    """``order_reject`` (what api/ asks before it journals a request) and the engine's entry agree:
    a reason from it is the entry's answer, with nothing left behind; None, and the entry makes an
    order (accepted or REJECTED)."""
    sim = populated()
    cmd = place(client=client, inst=inst, type=type, price=price, qty=qty)
    reason = order_reject(sim.v, cmd)
    before, next_id = fingerprint(sim.v), sim.v.next_order_id
    r = sim.submit(cmd)
    if reason is not None:
        assert r.reject == reason and r.order is None and not r.events
        assert fingerprint(sim.v) == before and sim.v.next_order_id == next_id
    else:
        assert r.order is not None and sim.v.next_order_id == next_id + 1
