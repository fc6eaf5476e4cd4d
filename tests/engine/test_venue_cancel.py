"""``VenueCancel``: the venue cancels resting orders on its own (a fault: docs/faults.md)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cefisim.engine.commands import VenueCancel
from cefisim.engine.events import OrderEvent
from cefisim.engine.rejects import VENUE_CANCEL_REASONS, CancelReason, Reject
from cefisim.engine.vocabulary import OrderStatus
from tests.engine.builders import ALICE, BOB, BTC_USD, ETH_USD, USD, Sim

ACTIVE = OrderStatus.ACTIVE
CANCELED = OrderStatus.CANCELED


def _resting(sim: Sim) -> dict[tuple[int, int], int]:
    """(client, instrument) -> an order id resting there, one per pair; plus a filled order of ALICE's."""
    ids = {}
    for client, price in ((ALICE, "100.00"), (BOB, "99.00")):
        ids[(client, BTC_USD)] = sim.buy(client, "1", price).order.id
        ids[(client, ETH_USD)] = sim.limit(client, "SELL", "1", "2000.00", inst=ETH_USD).order.id
    return ids


@pytest.mark.parametrize(
    ("client", "instrument", "canceled"),
    [
        (None, None, {(ALICE, BTC_USD), (ALICE, ETH_USD), (BOB, BTC_USD), (BOB, ETH_USD)}),
        (ALICE, None, {(ALICE, BTC_USD), (ALICE, ETH_USD)}),
        (None, ETH_USD, {(ALICE, ETH_USD), (BOB, ETH_USD)}),
        (BOB, BTC_USD, {(BOB, BTC_USD)}),
    ],
)
def test_cancels_what_it_names_with_its_reason(client, instrument, canceled) -> None:
    sim = Sim()
    ids = _resting(sim)
    usd_hold = sim.v.accounts[ALICE].balances[USD].hold
    result = sim.submit(VenueCancel("RISK_EVENT", client, instrument))
    assert result.reject is None
    ended = [e.order_id for e in result.events if type(e) is OrderEvent]
    assert ended == [ids[p] for p in sorted(canceled, key=lambda p: (p[1], ids[p]))]  # by instrument, oldest first
    for pair, order_id in ids.items():
        order = sim.v.accounts[pair[0]].orders[order_id]
        if pair in canceled:
            assert order.status == CANCELED and order.cancel_reason == CancelReason.RISK_EVENT
        else:
            assert order.status == ACTIVE
    if (ALICE, BTC_USD) in canceled:
        assert sim.v.accounts[ALICE].balances[USD].hold < usd_hold  # the BUY's hold is released
    sim.check()


def test_unknown_client_or_instrument_is_rejected_and_changes_nothing() -> None:
    sim = Sim()
    _resting(sim)
    assert sim.submit(VenueCancel("INSTRUMENT_HALT", client_id=999)).reject == Reject.UNKNOWN_CLIENT
    assert sim.submit(VenueCancel("INSTRUMENT_HALT", instrument_id=99)).reject == Reject.UNKNOWN_INSTRUMENT
    assert all(o.status == ACTIVE for a in sim.v.accounts.values() for o in a.orders.values())


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([ALICE, BOB]), st.integers(9_000, 11_000), st.booleans()), max_size=12),
    st.sampled_from(VENUE_CANCEL_REASONS),
    st.sampled_from([None, ALICE, BOB]),
    st.sampled_from([None, BTC_USD, ETH_USD]),
)
def test_leaves_no_resting_order_it_names_and_every_invariant(orders, reason, client, instrument) -> None:
    sim = Sim()
    for who, ticks, buy in orders:
        inst = BTC_USD if ticks % 2 else ETH_USD
        price = f"{ticks // 100}.{ticks % 100 // 5 * 5:02d}"
        sim.limit(who, "BUY" if buy else "SELL", "1", price, inst=inst)
    sim.submit(VenueCancel(reason, client, instrument))
    for book in sim.v.books.values():
        for order in book.resting_orders():
            assert not (
                (client is None or order.account.id == client)
                and (instrument is None or order.instrument.id == instrument)
            )
    sim.check()
