"""Reads lagging the engine answer from the venue as it was ``read_lag`` ago (docs/faults.md): an
order filled or canceled within the lag still reads open, balances hold what they held then; through
HTTP, through a restart, and (hypothesis) against a venue replayed from the journal only up to
``now - read_lag``."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cefisim.api.edge.serialize import activity_item, balance_record, order_record, trade_record
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.formats.scenario.loader import load_scenario
from cefisim.api.runtime import state_copy
from cefisim.api.runtime.read_replica import ReadReplica
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.side_state.venue_faults import NEVER
from cefisim.engine.commands import CancelOrder, PlaceOrder
from cefisim.engine.journal import from_record
from cefisim.engine.queries import activity, assets, balance, order_status, orders, trades
from cefisim.engine.venue import Venue
from tests.api.conftest import Api, scenario_doc
from tests.api.runtime.journal_lines import records
from tests.api.web.control.test_venue_faults import SIM_FAULTS, _data, _set

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
NS_PER_MS = 1_000_000
EVER = 2**62  # a list cursor past every record
CLIENTS = (100, 101)


async def _status(api: Api, ref: str, client_id: int = 100) -> dict[str, Any]:
    status, body, _ = await api.call("GET", f"/v1/cefi/orders/status/{ref}", client_id=client_id)
    assert status == 200, body
    return body


async def _usd(api: Api, client_id: int = 100) -> dict[str, str]:
    """The client's USD balance: {TOTAL, AVAILABLE, HOLD}."""
    (record,) = [r for r in await _data(api, "/v1/cefi/balances", client_id) if r["id"] == "2"]
    return {b["type"]: b["amount"] for b in record["balances"]}


async def test_an_order_filled_within_the_lag_reads_open_until_the_lag_has_passed(api: Api) -> None:
    buy = await api.order(price="50000.00", external_id="bid")
    await api.advance(2)
    before = await _usd(api)
    await _set(api, read_lag_ms=1000)
    sell = await api.order(client_id=101, side="SELL", price="50000.00")
    assert sell["status"] == "FILLED"  # the answer to a write is the venue's own, not lagged
    for ref in (buy["id"], "bid"):
        old = await _status(api, ref)
        assert old["status"] == "ACTIVE" and old["leaves_qty"] == "1.0000" and old["exeuted_qty"] == "0.0000"
    assert [o["id"] for o in await _data(api, "/v1/cefi/orders/active")] == [buy["id"]]
    status, body, _ = await api.call("GET", "/v1/cefi/orders/active", params={"id": buy["id"]})
    assert status == 200 and [o["leaves_qty"] for o in body["data"]] == ["1.0000"]
    for path in (f"/v1/cefi/orders/status/{sell['id']}", "/v1/cefi/orders/active"):  # placed within the lag
        params = {"id": sell["id"]} if path.endswith("active") else None
        assert (await api.call("GET", path, client_id=101, params=params))[0] == 404
    assert [o["status"] for o in await _data(api, "/v1/cefi/orders/all")] == ["ACTIVE"]
    assert await _usd(api) == before  # the 50000 still held, not yet spent
    assert await _data(api, "/v1/cefi/orders/trade") == []
    assert [i["type"] for i in await _data(api, "/v1/cefi/orders/activity")] == ["CONFIRM"]
    await api.advance(0.999)
    assert (await _status(api, buy["id"]))["status"] == "ACTIVE"
    await api.advance(0.001)
    filled = await _status(api, buy["id"])
    assert filled["status"] == "FILLED" and filled["leaves_qty"] == "0.0000" and filled["exeuted_qty"] == "1.0000"
    assert await _data(api, "/v1/cefi/orders/active") == []
    after = await _usd(api)
    assert after["HOLD"] == "0.00" and after["TOTAL"] != before["TOTAL"]
    assert [t["order_id"] for t in await _data(api, "/v1/cefi/orders/trade")] == [buy["id"]]


async def test_a_cancel_within_the_lag_and_the_lag_switched_off(api: Api) -> None:
    order = await api.order(price="49000.00")
    await api.advance(1)
    held = await _usd(api)
    await _set(api, read_lag_ms=500)
    status, canceled, _ = await api.call("DELETE", f"/v1/cefi/orders/{order['id']}")
    assert status == 200 and canceled["status"] == "CANCELED"
    assert (await _status(api, order["id"]))["status"] == "ACTIVE"
    assert await _usd(api) == held
    status, body, _ = await api.call("DELETE", SIM_FAULTS, client_id=None)
    assert status == 200 and body["read_lag_ms"] == 0
    assert (await _status(api, order["id"]))["status"] == "CANCELED"  # at once, no clock move
    assert (await _usd(api))["HOLD"] == "0.00"
    assert api.sim.replica is None  # nothing kept while off


async def test_a_modify_within_the_lag_reads_as_the_order_was(api: Api) -> None:
    order = await api.order(price="49000.00", qty="1")
    await api.advance(1)
    await _set(api, read_lag_ms=300)
    body = {"id": order["id"], "info": {"client_id": "100", "new_qty": "2", "new_price": "49500.00"}}
    status, modified, _ = await api.call("PATCH", "/v1/cefi/orders", json=body)
    assert status == 200, modified
    old = await _status(api, order["id"])
    assert old["modify_info"] is None and old["leaves_qty"] == "1.0000"
    await api.advance(0.3)
    new = await _status(api, order["id"])
    assert new["modify_info"]["new_price"] == "49500.00" and new["leaves_qty"] == "2.0000"


# --------------------------------------------------------------------- the venue's views, compared


def _views(
    venue: Venue, order_ids: list[int], lagged: Simulation | None = None, clients: tuple[int, ...] = CLIENTS
) -> dict[str, Any]:
    """Everything the CeFi account reads show of both clients, as records; ``lagged``: as the read
    handlers show it, through the lag's cursors (``VenueFaults.visible_before``, ``hides``)."""
    before, hidden = EVER, (lambda ts: False)
    if lagged is not None:
        now, faults = lagged.now_ns(), lagged.faults
        before, hidden = faults.visible_before(now, EVER), (lambda ts: faults.hides(now, ts))
    out: dict[str, Any] = {}
    for client in clients:
        found = orders(venue, client, before, 0, None)[0]
        out[f"{client}.orders"] = [order_record(o) for o in found]
        out[f"{client}.trades"] = [trade_record(f) for f in trades(venue, client, before, 0, None)[0]]
        out[f"{client}.activity"] = [activity_item(*i) for i in activity(venue, client, before, 0, None)[0]]
        out[f"{client}.balances"] = [balance_record(a, balance(venue, client, a.id)) for a in assets(venue)]
        for oid in order_ids:
            order = order_status(venue, client, str(oid))
            out[f"{client}.status.{oid}"] = None if order is None or hidden(order.created) else order_record(order)
    return out


def _replayed(scenario_path: Path, journal: Path, cutoff: int) -> Venue:
    """A venue built from the scenario and the journal's commands up to ``cutoff`` only."""
    venue = parse_scenario(orjson.loads(scenario_path.read_bytes()), str(scenario_path)).build_venue()
    for record in records(journal):
        if "." in record[2]:
            continue  # a side's record (the faults): no venue state
        at, _, cmd = from_record(record)
        if at > cutoff:
            break
        venue.submit(cmd, at)
    return venue


def _journaled_sim(tmp: Path) -> tuple[Simulation, Path, Path]:
    scenario_path = tmp / "s.json"
    scenario_path.write_bytes(orjson.dumps(scenario_doc()))
    journal = tmp / "journal.jsonl"
    sim = Simulation(parse_scenario(scenario_doc(), str(scenario_path)), clock="virtual", journal_path=journal)
    return sim, scenario_path, journal


def test_a_restart_keeps_the_lagged_view() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sim, scenario_path, journal = _journaled_sim(Path(tmp))
        resting = sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "50000.00")).order
        assert resting is not None
        sim.advance(sim.now_ns() + 2_000 * NS_PER_MS)
        sim.set_venue_faults(1000, 0, 0)
        sim.submit(PlaceOrder(101, 1, "SELL", "LIMIT", "0.4", "50000.00"))
        sim.advance(sim.now_ns() + 400 * NS_PER_MS)
        sim.submit(CancelOrder(100, str(resting.id)))
        lagged = _views(sim.read_venue(), [resting.id])
        assert lagged["100.orders"][0]["status"] == "ACTIVE" and lagged["100.orders"][0]["exeuted_qty"] == "0.0000"
        sim.close()
        again = Simulation(parse_scenario(scenario_doc(), str(scenario_path)), clock="virtual", journal_path=journal)
        assert again.now_ns() == sim.now_ns()
        assert _views(again.read_venue(), [resting.id]) == lagged
        again.advance(again.now_ns() + 600 * NS_PER_MS)  # past the fill, not yet the cancel
        partly = _views(again.read_venue(), [resting.id])["100.orders"][0]
        assert partly["status"] == "ACTIVE" and partly["exeuted_qty"] == "0.4000" and partly["leaves_qty"] == "0.6000"
        again.close()


def test_a_snapshot_restore_starts_the_lagged_view_from_the_restored_state() -> None:
    scenario = parse_scenario(scenario_doc(), "s.json")
    sim = Simulation(scenario, clock="virtual")
    order = sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "49000.00")).order
    assert order is not None
    sim.set_venue_faults(1000, 0, 0)
    doc = orjson.loads(orjson.dumps(sim.snapshot()))
    sim.submit(CancelOrder(100, str(order.id)))
    assert _status_of(sim, order.id) == "ACTIVE"  # canceled within the lag
    sim.restore(doc)
    assert sim.faults.replica_from == NEVER  # no copy of the restored venue yet: the cursors hide as before
    assert sim.read_venue() is not sim.venue  # a copy of the restored venue, not of the one replaced
    sim.submit(CancelOrder(100, str(order.id)))
    assert _status_of(sim, order.id) == "ACTIVE"
    sim.advance(sim.now_ns() + 1000 * NS_PER_MS)
    assert _status_of(sim, order.id) == "CANCELED"


def test_a_copy_made_in_steps_is_of_the_instant_it_began_whatever_comes_meanwhile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While ``copy_steps`` makes the copy, a read answers from the venue (nothing has changed since it
    began), and a command finishes the copy before it applies: the lagged view is the one a copy made at
    once gives."""
    monkeypatch.setattr(state_copy, "STEP_VALUES", 40)
    views = []
    for in_steps in (False, True):
        sim = Simulation(parse_scenario(scenario_doc(), "s.json"), clock="virtual")
        order = sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "49000.00")).order
        assert order is not None
        sim.advance(sim.now_ns() + 2000 * NS_PER_MS)
        sim.set_venue_faults(1000, 0, 0)
        replica = sim.replica
        assert replica is not None and replica.pending(sim.venue)
        if in_steps:
            steps = replica.copy_steps(sim.venue)
            next(steps), next(steps)
            assert replica.pending(sim.venue) and replica.copy is None  # begun, not whole
            assert sim.read_venue() is sim.venue  # the state the copy is of: nothing applied since
            assert sim.faults.replica_from == sim.venue.clock.peek()
        sim.submit(CancelOrder(100, str(order.id)))  # finishes a copy in progress first
        assert not replica.pending(sim.venue) and replica.copy is not None
        views.append(_views(sim.read_venue(), [order.id], sim))
        assert views[-1]["100.orders"][0]["status"] == "ACTIVE"  # canceled within the lag
    assert views[0] == views[1]


def test_steps_end_when_the_copy_is_whole_or_of_another_venue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state_copy, "STEP_VALUES", 40)
    sim = Simulation(parse_scenario(scenario_doc(), "s.json"), clock="virtual")
    sim.set_venue_faults(1000, 0, 0)
    replica = sim.replica
    assert replica is not None
    assert len(list(replica.copy_steps(sim.venue))) > 3  # steps of 40 values, to the end
    assert not replica.pending(sim.venue) and replica.copy is not None and sim.read_venue() is replica.copy
    steps = replica.copy_steps(sim.venue)
    assert list(steps) == []  # nothing left to do
    other = ReadReplica(sim.faults)
    steps = other.copy_steps(sim.venue)
    next(steps)
    other.as_of(replica.copy, sim.now_ns())  # the replica turned to another venue: that one copied at once
    assert list(steps) == [] and other.source is replica.copy and other.copy is not None


def _status_of(sim: Simulation, order_id: int) -> str | None:
    order = order_status(sim.read_venue(), 100, str(order_id))
    return None if order is None else order.status


STEP = st.one_of(
    st.tuples(
        st.just("place"),
        st.sampled_from(CLIENTS),
        st.sampled_from(("BUY", "SELL")),
        st.integers(-3, 3),  # price: 50000 + 100 * this
        st.sampled_from(("0.5", "1", "1.5")),
    ),
    st.tuples(st.just("cancel"), st.integers(0, 20)),
    st.tuples(st.just("advance"), st.integers(1, 1500)),  # ms
    st.tuples(st.just("restart")),  # the server stops and starts again from its journal
    st.tuples(st.just("lower")),  # the lag halved while on: the replica catches up
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lag_ms=st.integers(1, 1000), steps=st.lists(STEP, min_size=1, max_size=25))
def test_every_lagged_read_is_the_venue_replayed_up_to_now_minus_the_lag(
    lag_ms: int, steps: list[tuple[Any, ...]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sim, scenario_path, journal = _journaled_sim(Path(tmp))
        try:
            sim.set_venue_faults(lag_ms, 0, 0)
            placed: list[int] = []
            for step in steps:
                if step[0] == "place":
                    _, client, side, offset, qty = step
                    price = f"{50000 + 100 * offset}.00"
                    order = sim.submit(PlaceOrder(client, 1, side, "LIMIT", qty, price)).order
                    if order is not None:
                        placed.append(order.id)
                elif step[0] == "cancel" and placed:
                    oid = placed[step[1] % len(placed)]
                    client = next(c for c in CLIENTS if oid in sim.venue.accounts[c].orders)
                    sim.submit(CancelOrder(client, str(oid)))
                elif step[0] == "advance":
                    sim.advance(sim.now_ns() + step[1] * NS_PER_MS)
                elif step[0] == "restart":
                    sim.close()
                    sim = Simulation(sim.scenario, clock="virtual", journal_path=journal)
                elif step[0] == "lower":
                    lag_ms = max(1, lag_ms // 2)
                    sim.set_venue_faults(lag_ms, 0, 0)
                cutoff = sim.now_ns() - lag_ms * NS_PER_MS
                assert _views(sim.read_venue(), placed, sim) == _views(
                    _replayed(scenario_path, journal, cutoff), placed
                )
        finally:
            sim.close()


def test_the_scenarios_own_commands_reach_the_replica_too() -> None:
    """The demo's agents trade as the clock moves: their commands take the scenario's path (not
    ``Simulation.apply``), and the lagged reads still equal the venue replayed up to now - lag."""
    with tempfile.TemporaryDirectory() as tmp:
        journal = Path(tmp) / "journal.jsonl"
        scenario_path = SCENARIOS / "demo.json"
        sim = Simulation(load_scenario(scenario_path), clock="virtual", journal_path=journal)
        try:
            sim.set_venue_faults(2000, 0, 0)
            sim.advance(sim.now_ns() + 2000 * NS_PER_MS)  # reads never go back before the switch (the contract)
            clients = tuple(sorted(sim.venue.accounts))
            for _ in range(8):
                sim.advance(sim.now_ns() + 1500 * NS_PER_MS)
                cutoff = sim.now_ns() - 2000 * NS_PER_MS
                lagged = _views(sim.read_venue(), [], sim, clients)
                assert lagged == _views(_replayed(scenario_path, journal, cutoff), [], None, clients)
            assert any(lagged[f"{c}.trades"] for c in clients)  # the agents did trade meanwhile
        finally:
            sim.close()


def test_a_recorded_market_is_not_copied_and_its_reads_only_hide_what_is_new() -> None:
    sim = Simulation(load_scenario(SCENARIOS / "recorded_busy.json"), clock="virtual")
    old = sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.01", "1.00")).order
    assert old is not None and old.status == "ACTIVE"
    sim.advance(sim.now_ns() + 2_000 * NS_PER_MS)
    sim.set_venue_faults(1000, 0, 0)
    sim.submit(CancelOrder(100, str(old.id)))
    new = sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.01", "1.00")).order
    assert new is not None
    assert sim.read_venue() is sim.venue  # its place in the recording lives in the file: no copy
    assert _views(sim.read_venue(), [old.id, new.id], sim)["100.status." + str(old.id)]["status"] == "CANCELED"
    assert _views(sim.read_venue(), [old.id, new.id], sim)["100.status." + str(new.id)] is None  # hidden


def test_on_the_wall_clock_a_read_catches_up_as_time_passes_without_a_command() -> None:
    wall = [1_793_610_000 * 10**9]
    sim = Simulation(parse_scenario(scenario_doc(), "s.json"), clock="wall", wall_ns=lambda: wall[0])
    buy = sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "50000.00")).order
    assert buy is not None
    wall[0] += 2 * 10**9
    sim.set_venue_faults(1000, 0, 0)
    sim.submit(PlaceOrder(101, 1, "SELL", "LIMIT", "1", "50000.00"))
    assert buy.status == "FILLED" and _status_of(sim, buy.id) == "ACTIVE"
    wall[0] += 999 * NS_PER_MS
    assert _status_of(sim, buy.id) == "ACTIVE"
    wall[0] += 2 * NS_PER_MS  # no command since: the read itself brings the replica up
    assert _status_of(sim, buy.id) == "FILLED"
