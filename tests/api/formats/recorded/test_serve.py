"""A recorded market served over HTTP: /_sim/recorded, orders in the queue, journal recovery."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine.commands import PlaceOrder
from tests.api.conftest import Api, scenario_doc

RECORDING = str(Path(__file__).resolve().parents[4] / "scenarios" / "recordings" / "busy_btcusd.jsonl.gz")


def doc(**item: Any) -> dict[str, Any]:
    return scenario_doc(recorded=[{"instrument": "BTC-USD", "file": RECORDING, **item}])


async def test_the_control_plane_shows_the_recording_and_each_orders_place(api_factory: Callable) -> None:
    api: Api = await api_factory(doc())
    status, (src,), _ = await api.call("GET", "/_sim/recorded", client_id=None)
    assert status == 200
    assert (src["symbol"], src["files"], src["queue_model"], src["impact"]) == (
        "BTC-USD",
        ["busy_btcusd.jsonl.gz"],
        "risk_averse",
        True,
    )
    await api.advance(10)
    _, (src,), _ = await api.call("GET", "/_sim/recorded", client_id=None)
    assert src["events_applied"] > 1000 and not src["done"] and src["orders"] == []
    assert int(src["recording_position_ns"]) == int(src["position_ns"])  # speed 1, recorded from the start
    _, book, _ = await api.call("GET", "/_sim/book/1", client_id=None, params={"depth": "1"})
    best = book["bids"][0]
    rec = await api.order(100, side="BUY", qty="0.01", price=best["price"])
    _, (src,), _ = await api.call("GET", "/_sim/recorded", client_id=None)
    (mine,) = src["orders"]
    assert (mine["order_id"], mine["queue_ahead"], mine["leaves_qty"]) == (rec["id"], best["qty"], "0.0100")
    status, problem, _ = await api.call("GET", "/_sim/snapshot", client_id=None)
    assert status == 409 and "journal restores it" in problem["detail"]


async def test_a_served_recorded_market_is_rebuilt_from_its_journal(tmp_path: Path) -> None:
    scenario = parse_scenario(doc(), "test-scenario.json")
    journal = tmp_path / "j.jsonl"
    sim = Simulation(scenario, clock="virtual", journal_path=journal)
    start = scenario.start_ns
    sim.advance(start + 5 * 10**9)
    bid = sim.venue.books[1].best_bid()
    assert bid is not None
    sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.5", f"{bid // 100}.{bid % 100:02d}"))
    sim.submit(PlaceOrder(101, 1, "SELL", "MARKET", "2"))  # through the recorded depth into alice's bid
    sim.advance(start + 60 * 10**9)
    sim.close()
    again = Simulation(scenario, clock="virtual", journal_path=journal, read_only=True)
    for s in (sim, again):
        s.venue.check_invariants()
    assert again.venue.asset_totals() == sim.venue.asset_totals()
    alice, alice2 = sim.venue.accounts[100], again.venue.accounts[100]
    assert [(f.match_id, f.price, f.qty) for f in alice.fills] == [(f.match_id, f.price, f.qty) for f in alice2.fills]
    assert alice.fills and sim.venue.accounts[101].fills
    assert sim.venue.books[1].depth("BUY", 5) == again.venue.books[1].depth("BUY", 5)


class _Marker:
    """An object that takes weak references."""


def test_a_reset_lets_the_replaced_recorded_venue_go_without_a_collection() -> None:
    """A recorded market names its venue: the reset drops the replaced venue's feeds, so that it goes
    with its last reference (a server's heap is frozen, and a frozen cycle is never collected)."""
    sim = Simulation(parse_scenario(doc(), "test-scenario.json"), clock="virtual")
    sim.advance(sim.scenario.start_ns + 10**9)
    # the compiled Venue takes no weak reference: a marker only the venue holds goes when it goes
    marker = _Marker()
    sim.venue.marker = marker  # type: ignore[attr-defined]
    replaced = weakref.ref(marker)
    del marker
    gc.collect()
    gc.disable()
    try:
        sim.reset()
        assert replaced() is None
    finally:
        gc.enable()
