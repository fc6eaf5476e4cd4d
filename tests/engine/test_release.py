"""A venue that goes frees its orders and fills, in both builds. The compiled build keeps them out of the
cycle collector (docs/build.md), so the cycles they close through their accounts (an account lists its
orders and fills, they name it) are broken when the venue goes (``Account.release``)."""

from __future__ import annotations

import gc
import sys

from cefisim.engine.recorded.feed import SNAPSHOT
from tests.engine.builders import ALICE, BOB, CP, SECOND, START, Sim, recorded


def trade(sim: Sim) -> None:
    """Resting, filled and canceled orders, fills on both sides, external ids."""
    sim.sell(BOB, "0.0002", "30000.00", external_id="ask-1")
    sim.buy(ALICE, "0.0001", "30000.00", external_id="bid-1")  # fills against BOB's order
    resting = sim.buy(ALICE, "0.0001", "29000.00", external_id="bid-2").order
    sim.cancel(ALICE, resting.id)
    sim.buy(ALICE, "0.0001", "29500.00")


def refs_after_collection(*names: object) -> list[int]:
    gc.collect()
    return [sys.getrefcount(x) - 3 for x in names]  # less getrefcount's argument, the tuple's item and x


def test_a_dropped_venue_frees_its_orders_and_fills() -> None:
    sim = Sim()
    trade(sim)
    alice, bob = sim.v.accounts[ALICE], sim.v.accounts[BOB]
    assert alice.fills and bob.fills and alice.by_external and bob.live_external
    del sim  # the only reference to the venue
    assert refs_after_collection(alice, bob) == [1, 1]  # the test's own names: no order or fill names them


def test_a_venue_in_a_reference_cycle_frees_them_too() -> None:
    # a recorded market and its venue refer to each other: the collector finds them, and the venue's
    # release runs before it clears them
    at, price = START + SECOND, 3_000_000  # 30000.00 in ticks of 0.01
    sim, market = recorded([(SNAPSHOT, at, at, ((price, 5),), ((price + 100, 4),))])
    sim.advance_to(at)
    sim.buy(ALICE, "0.0001", "30001.00")  # takes recorded depth
    alice, counterparty = sim.v.accounts[ALICE], sim.v.accounts[CP]
    assert alice.fills and counterparty.orders
    del sim, market
    assert refs_after_collection(alice, counterparty) == [1, 1]


def test_a_venue_that_drops_its_feeds_goes_with_its_last_reference() -> None:
    """``drop_feeds`` breaks the cycle a recorded market closes: no collection needed (a server's
    heap is frozen; docs/venues.md)."""
    at, price = START + SECOND, 3_000_000
    sim, market = recorded([(SNAPSHOT, at, at, ((price, 5),), ((price + 100, 4),))])
    sim.advance_to(at)
    sim.buy(ALICE, "0.0001", "30001.00")
    alice = sim.v.accounts[ALICE]
    gc.collect()
    gc.disable()
    try:
        sim.v.drop_feeds()
        assert sim.v.feeds == ()
        del sim, market
        assert sys.getrefcount(alice) == 2  # its name here and the call's argument: the venue went
    finally:
        gc.enable()
