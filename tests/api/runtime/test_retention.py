"""Order status retention (scenario setting, --status-retention, /_sim/retention) and the caps on retained
ended orders that bound the server's memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from cefisim.api.cli.main import main
from cefisim.api.formats.scenario import ScenarioError, parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine import core
from cefisim.engine.commands import CancelOrder, PlaceOrder
from cefisim.engine.venue import VenueConfig
from tests.api.conftest import Api, scenario_doc

DAY_NS = 86_400 * 10**9


async def _ended_order(api: Api) -> str:
    rec = await api.order()
    await api.call("DELETE", f"/v1/cefi/orders/{rec['id']}")
    return rec["id"]


async def test_the_scenario_setting_sets_the_status_retention(api_factory) -> None:
    api = await api_factory(scenario_doc(settings={"status_retention": "60"}))
    oid = await _ended_order(api)
    await api.advance(59)
    assert (await api.call("GET", f"/v1/cefi/orders/status/{oid}"))[0] == 200
    await api.advance(2)
    assert (await api.call("GET", f"/v1/cefi/orders/status/{oid}"))[0] == 404


@pytest.mark.parametrize("value", [0, "0.5", 2_592_001, "abc", "²", True, None, "1e3"])
def test_the_scenario_setting_is_validated(value: object) -> None:
    with pytest.raises(ScenarioError, match=r"\$\.settings\.status_retention: must be seconds from 1 to 2592000"):
        parse_scenario(scenario_doc(settings={"status_retention": value}), "s.json")


async def test_the_control_plane_reads_and_sets_it(api: Api) -> None:
    status, doc, _ = await api.call("GET", "/_sim/retention", client_id=None)
    assert status == 200 and doc["status_retention"] == "86400"
    assert doc["max_ended_orders_per_client"] == VenueConfig().max_ended_orders_per_client
    assert doc["max_ended_orders"] == VenueConfig().max_ended_orders
    oid = await _ended_order(api)
    for bad in (0, "²", "2592001", "x", -1):
        status, problem, _ = await api.call("POST", "/_sim/retention", client_id=None, json={"status_retention": bad})
        assert status == 400 and "status_retention" in problem["detail"], problem
    status, doc, _ = await api.call("POST", "/_sim/retention", client_id=None, json={"status_retention": "30.5"})
    assert status == 200 and doc["status_retention"] == "30.5"
    assert doc["ended_orders"] == 1 and doc["ended_orders_by_client"]["100"] == 1
    await api.advance(31)
    assert (await api.call("GET", f"/v1/cefi/orders/status/{oid}"))[0] == 404
    status, health, _ = await api.call("GET", "/_sim/health", client_id=None)
    assert health["retained_orders"] == 1  # still held for the listings' 24 hours


def test_a_change_is_journaled_and_replayed_where_it_happened(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    sim = Simulation(parse_scenario(scenario_doc(), "s.json"), clock="virtual", journal_path=path)
    sim.set_status_retention(3600 * 10**9)
    sim.set_status_retention(3600 * 10**9)  # unchanged: nothing written
    sim.close()
    assert path.read_bytes().count(b'"status_retention"') == 1
    again = Simulation(parse_scenario(scenario_doc(), "s.json"), clock="virtual", journal_path=path)
    assert again.venue.config.status_retention_ns == 3600 * 10**9
    again.close()


def test_the_serve_flag_is_validated(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--status-retention", "0"])
    assert exc.value.code == 2
    assert "--status-retention: must be seconds from 1 to 2592000" in capsys.readouterr().err


def _churn(sim: Simulation, client_id: int, n: int, tag: str) -> None:
    for i in range(n):
        sim.submit(PlaceOrder(client_id, 1, "BUY", "LIMIT", "0.01", "49000.00", external_id=f"{tag}{i}"))
        sim.submit(CancelOrder(client_id, f"{tag}{i}"))


def test_ended_orders_are_capped_per_client_oldest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core, "CHECK_EVERY", 10)
    config = VenueConfig(max_ended_orders_per_client=50, max_ended_orders=1000)
    sim = Simulation(parse_scenario(scenario_doc(), "s.json"), clock="virtual", venue_config=config)
    sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.01", "48000.00", external_id="open"))  # never forgotten
    _churn(sim, 100, 300, "a")
    orders = sim.venue.accounts[100].orders
    ended = [o for o in orders.values() if o.status == "CANCELED"]
    assert 45 <= len(ended) <= 50 + 10
    assert [o.external_id for o in ended] == [f"a{i}" for i in range(300 - len(ended), 300)]  # the newest
    assert sim.venue.accounts[100].by_external["open"].status == "ACTIVE"
    assert "a0" not in sim.venue.accounts[100].by_external
    sim.venue.check_invariants()


def test_ended_orders_are_capped_for_the_venue_oldest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core, "CHECK_EVERY", 10)
    config = VenueConfig(max_ended_orders_per_client=1000, max_ended_orders=80)
    sim = Simulation(parse_scenario(scenario_doc(), "s.json"), clock="virtual", venue_config=config)
    _churn(sim, 100, 60, "a")  # the older ones
    _churn(sim, 101, 60, "b")
    kept = {cid: [o.external_id for o in c.orders.values()] for cid, c in sim.venue.accounts.items()}
    assert 72 <= len(kept[100]) + len(kept[101]) <= 80 + 10
    assert kept[101] == [f"b{i}" for i in range(60)]  # the newest client's are all there
    assert kept[100] == [f"a{i}" for i in range(60 - len(kept[100]), 60)]
