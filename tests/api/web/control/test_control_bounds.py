"""The control plane's bounds: ASCII digits only, bounded durations and advances, a bounded snapshot body,
a long advance that lets other requests through; and the scenario limits that keep a server alive."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import orjson
import pytest

from cefisim.api.formats.scenario import ScenarioError, load_scenario, parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.control import plane as control
from tests.api.conftest import Api

DEMO = Path(__file__).resolve().parents[4] / "scenarios" / "demo.json"
DAY_S = 86_400


def _problem(status: int, body: Any, field: str) -> None:
    assert isinstance(body, dict) and field in body["detail"], body


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/_sim/book/1", {"depth": "²"}, "depth"),
        ("/_sim/book/1", {"depth": "١٠"}, "depth"),  # Arabic-Indic digits: isdigit() says yes
        ("/_sim/trades/1", {"limit": "¹"}, "limit"),
        ("/_sim/trades/1", {"limit": "9" * 50}, "limit"),
    ],
)
async def test_a_numeric_query_parameter_is_ascii_digits_or_400(api: Api, path: str, params: dict, field: str) -> None:
    status, body, _ = await api.call("GET", path, client_id=None, params=params)
    assert status == 400
    _problem(status, body, field)


@pytest.mark.parametrize("segment", ["%C2%B2", "%D9%A1", "1%C2%B9"])
async def test_a_non_ascii_digit_instrument_id_is_an_unknown_instrument(api: Api, segment: str) -> None:
    for route in ("/_sim/book/", "/_sim/trades/"):
        status, body, _ = await api.call("GET", route + segment, client_id=None)
        assert status == 404 and body["title"], body


async def test_a_fault_plan_count_in_other_digits_is_400(api: Api) -> None:
    status, body, _ = await api.call("POST", "/_sim/faults", client_id=None, json={"count": "²", "status": 503})
    assert status == 400
    _problem(status, body, "count")


@pytest.mark.parametrize(
    ("path", "field", "most"),
    [
        ("/_sim/latency", "entry_ms", control.MAX_LATENCY_MS),
        ("/_sim/latency", "modify_ms", control.MAX_LATENCY_MS),
        ("/_sim/latency", "cancel_ms", control.MAX_LATENCY_MS),
        ("/_sim/settlement-delay", "ms", control.MAX_SETTLEMENT_DELAY_MS),
    ],
)
async def test_every_duration_is_bounded(api: Api, path: str, field: str, most: int) -> None:
    for value in ("9" * 40, str(most + 1), f"{most}.001", most + 1):
        status, body, _ = await api.call("POST", path, client_id=None, json={field: value})
        assert status == 400, (value, body)
        _problem(status, body, field)
    status, _, _ = await api.call("POST", path, client_id=None, json={field: most})
    assert status == 200
    # the largest delay still ends: an order placed now is acknowledged once it has passed
    rec = await api.order()
    await api.advance(most / 1000 + 1)
    status, seen, _ = await api.call("GET", f"/v1/cefi/orders/status/{rec['id']}")
    assert status == 200 and seen["status"] != "NEW_PENDING", seen


async def test_one_advance_is_bounded(api: Api) -> None:
    most = control.MAX_ADVANCE_NS // 10**9
    for body in (
        {"seconds": most + 1},
        {"seconds": str(most) + ".5"},
        {"to_ns": str(api.sim.venue.clock.now + control.MAX_ADVANCE_NS + 1)},
        {"to_ns": "9999999999999999999"},
    ):
        status, problem, _ = await api.call("POST", "/_sim/clock/advance", client_id=None, json=body)
        assert status == 400, (body, problem)
    status, _, _ = await api.call("POST", "/_sim/clock/advance", client_id=None, json={"seconds": most})
    assert status == 200


async def test_a_long_advance_lets_other_requests_through(api_factory) -> None:
    api = await api_factory(doc=orjson.loads(DEMO.read_bytes()))
    advance = asyncio.create_task(api.call("POST", "/_sim/clock/advance", client_id=None, json={"seconds": 2 * 3600}))
    answered = 0
    while not advance.done():
        status, _health, _ = await api.call("GET", "/_sim/health", client_id=None)
        assert status == 200
        answered += 1
    status, clock, _ = await advance
    assert status == 200, clock
    assert answered >= 3  # health answered while the advance ran, not after it


async def test_a_snapshot_body_past_its_limit_is_413_unread(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    _, snap, _ = await api.call("GET", "/_sim/snapshot", client_id=None)
    body = orjson.dumps(snap)
    monkeypatch.setattr(control, "MAX_SNAPSHOT_BYTES", len(body) - 1)
    status, problem, _ = await api.call("POST", "/_sim/snapshot", client_id=None, body=body)
    assert status == 413 and problem["type"].endswith("payload-too-large"), problem

    async def chunks():  # no Content-Length: refused while it streams in
        for i in range(0, len(body), 1000):
            yield body[i : i + 1000]

    resp = await api.client.post("/_sim/snapshot", data=chunks(), headers={"Content-Type": "application/json"})
    assert resp.status == 413
    monkeypatch.setattr(control, "MAX_SNAPSHOT_BYTES", len(body))
    status, _, _ = await api.call("POST", "/_sim/snapshot", client_id=None, body=body)
    assert status == 200


def _demo_with(tmp_path: Path, **agent: Any) -> Path:
    doc = orjson.loads(DEMO.read_bytes())
    doc["agents"] = [copy.deepcopy(doc["agents"][0])]
    doc["agents"][0].update(agent)
    if "prices_file" in agent:
        del doc["agents"][0]["random_walk"]
    path = tmp_path / "demo.json"
    path.write_bytes(orjson.dumps(doc))
    return path


def test_a_prices_file_that_never_ends_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"\$\.agents\[0\]\.prices_file: cannot read /dev/zero: not a regular file"):
        load_scenario(_demo_with(tmp_path, prices_file="/dev/zero"))


def test_a_prices_file_past_its_size_limit_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cefisim.api.formats.scenario import agent_entries as agents

    (tmp_path / "prices.txt").write_text("30000.00\n" * 100)
    monkeypatch.setattr(agents, "MAX_PRICES_FILE_BYTES", 899)
    with pytest.raises(ScenarioError, match=r"\$\.agents\[0\]\.prices_file: prices.txt: larger than"):
        load_scenario(_demo_with(tmp_path, prices_file="prices.txt", every="1"))


@pytest.mark.parametrize(("field", "value"), [("interval", "0.000000001"), ("interval", "0.099")])
def test_an_agent_faster_than_the_wall_clock_allows_is_refused_there(tmp_path: Path, field: str, value: str) -> None:
    scenario = load_scenario(_demo_with(tmp_path, **{field: value}))
    Simulation(scenario, clock="virtual")  # a virtual clock runs as fast as the CPU allows
    with pytest.raises(ScenarioError, match=rf"\$\.agents\[0\]\.{field}: at least 0.1 s on the wall clock"):
        Simulation(scenario, clock="wall")
    doc = orjson.loads(DEMO.read_bytes())
    doc["agents"][3]["mean_interval"] = "0.01"
    with pytest.raises(ScenarioError, match=r"\$\.agents\[3\]\.mean_interval: at least 0.1 s"):
        Simulation(parse_scenario(doc, "demo.json"), clock="wall")
