"""The venue faults journaled (docs/faults.md): a change through ``/_sim/faults/venue`` or a scenario
event ``venue_faults`` is a ``faults.venue`` record, written before the answer; restarts (hard and
clean), snapshots and journal replays keep the settings; bad values leave no record. And the skewed
clock reaches the Auth key exchange's timestamp window."""

from __future__ import annotations

import base64
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from cefisim.api.cli.journal_tools.reader import Journal
from cefisim.api.cli.journal_tools.record_state import digest, facts, rebuild
from cefisim.api.cli.journal_tools.render import line
from cefisim.api.cli.replay import replay_main
from cefisim.api.formats.scenario import ScenarioError, load_scenario, parse_scenario
from cefisim.api.runtime.journal_file import JournalError
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.app.application import create_app
from cefisim.api.web.server.keys import ServerOptions
from cefisim.engine.commands import PlaceOrder
from tests.api.auth.test_auth_restart import ALICE, DEMO, _serve
from tests.api.conftest import Api, scenario_doc
from tests.api.runtime.journal_lines import reseal_file
from tests.api.served import ready_url, reap

SIM_FAULTS = "/_sim/faults/venue"
OFF = {"read_lag_ms": 0, "fill_delay_ms": 0, "clock_skew_s": 0}
SET = {"read_lag_ms": 250, "fill_delay_ms": 1500, "clock_skew_s": -45}
NS = 1_000_000_000


def _records(journal: Path) -> list[list[Any]]:
    """The records as ``[at, src, kind, values]`` (their checksums left out)."""
    return [orjson.loads(x)[:4] for x in journal.read_bytes().splitlines()[1:]]


def _fault_records(journal: Path) -> list[list[Any]]:
    return [r for r in _records(journal) if r[2] == "faults.venue"]


# ------------------------------------------------------------------------------ restarts


async def _faults(base: str, method: str = "GET", body: Any = None) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session, session.request(method, base + SIM_FAULTS, json=body) as resp:
        assert resp.status == 200, await resp.text()
        answer: dict[str, Any] = await resp.json()
        return answer


async def _life(journal: Path, ready: Path, expect: dict[str, Any], then: tuple[str, Any], stop: int) -> None:
    """One server life on ``journal``: the faults are ``expect`` on start, ``then`` changes them, then
    the server is stopped with ``stop`` (SIGKILL: no chance to flush or close anything)."""
    proc = _serve(journal, ready, "virtual")
    try:
        base = await ready_url(ready, proc)
        assert await _faults(base) == expect
        method, body = then
        answer = await _faults(base, method, body)
        assert answer == (OFF if method == "DELETE" else {**OFF, **body})
        proc.send_signal(stop)
        proc.wait(timeout=60)
    finally:
        reap(proc)


async def test_every_venue_fault_setting_survives_hard_and_clean_restarts(tmp_path: Path) -> None:
    journal, ready = tmp_path / "journal.jsonl", tmp_path / "ready.json"
    await _life(journal, ready, OFF, ("POST", SET), signal.SIGKILL)
    await _life(journal, ready, SET, ("POST", {"fill_delay_ms": 20}), signal.SIGTERM)
    await _life(journal, ready, {**OFF, "fill_delay_ms": 20}, ("POST", {"clock_skew_s": 7}), signal.SIGKILL)
    await _life(journal, ready, {**OFF, "clock_skew_s": 7}, ("DELETE", None), signal.SIGTERM)
    await _life(journal, ready, OFF, ("POST", {"read_lag_ms": 3}), signal.SIGKILL)
    values = [r[3] for r in _fault_records(journal)]
    assert values == [[250, 1500, -45], [0, 20, 0], [0, 0, 7], [0, 0, 0], [3, 0, 0]]
    assert {r[1] for r in _fault_records(journal)} == {"ext"}


# ----------------------------------------------------------------- bad values, snapshots


@pytest.fixture
async def journaled(tmp_path: Path) -> AsyncIterator[tuple[Api, Path]]:
    journal = tmp_path / "journal.jsonl"
    sim = Simulation(parse_scenario(scenario_doc(), "s.json"), clock="virtual", journal_path=journal)
    client = TestClient(TestServer(create_app(sim, ServerOptions())))
    await client.start_server()
    try:
        yield Api(client, sim), journal
    finally:
        await client.close()
        sim.close()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"read_lag_ms": "3600001"}, "read_lag_ms"),
        ({"read_lag_ms": -1}, "read_lag_ms"),
        ({"fill_delay_ms": "1.5"}, "fill_delay_ms"),
        ({"fill_delay_ms": "x"}, "fill_delay_ms"),
        ({"clock_skew_s": "86401"}, "clock_skew_s"),
        ({"clock_skew_s": False}, "clock_skew_s"),
        ({"read_lag_ms": 5, "clock_skew_s": "-"}, "clock_skew_s"),
    ],
)
async def test_a_bad_value_is_a_400_naming_it_and_leaves_no_record(
    journaled: tuple[Api, Path], body: dict[str, Any], field: str
) -> None:
    api, journal = journaled
    assert (await api.call("POST", SIM_FAULTS, client_id=None, json={"read_lag_ms": 9}))[0] == 200
    assert _fault_records(journal)[-1][3] == [9, 0, 0]  # a good change is journaled before its answer
    before = journal.read_bytes()
    status, problem, headers = await api.call("POST", SIM_FAULTS, client_id=None, json=body)
    assert status == 400 and field in problem["detail"], problem
    assert headers["Content-Type"].startswith("application/problem+json")
    assert journal.read_bytes() == before
    assert (await api.call("GET", SIM_FAULTS, client_id=None))[1] == {**OFF, "read_lag_ms": 9}


async def test_a_snapshot_carries_the_venue_faults(journaled: tuple[Api, Path]) -> None:
    api, _ = journaled
    status, clean, _ = await api.call("GET", "/_sim/snapshot", client_id=None)
    assert status == 200 and "faults" not in clean  # none set: the document is as before
    await api.call("POST", SIM_FAULTS, client_id=None, json=SET)
    _, snap, _ = await api.call("GET", "/_sim/snapshot", client_id=None)
    assert snap["faults"] == SET
    await api.call("DELETE", SIM_FAULTS, client_id=None)
    status, body, _ = await api.call("POST", "/_sim/snapshot", client_id=None, body=orjson.dumps(snap))
    assert status == 200, body
    assert (await api.call("GET", SIM_FAULTS, client_id=None))[1] == SET
    assert api.sim.faults.clock_skew_ns == -45 * NS  # the clock is skewed again, not only the numbers
    status, body, _ = await api.call("POST", "/_sim/snapshot", client_id=None, body=orjson.dumps(clean))
    assert status == 200, body
    assert (await api.call("GET", SIM_FAULTS, client_id=None))[1] == OFF  # as that snapshot was
    for bad, where in (({**SET, "read_lag_ms": -1}, "faults.read_lag_ms"), ({"read_lag_ms": 1}, "faults")):
        status, problem, _ = await api.call(
            "POST", "/_sim/snapshot", client_id=None, body=orjson.dumps({**snap, "faults": bad})
        )
        assert status == 400 and where in problem["detail"], problem
        assert (await api.call("GET", SIM_FAULTS, client_id=None))[1] == OFF  # nothing changed
    await api.call("POST", SIM_FAULTS, client_id=None, json=SET)
    assert (await api.call("POST", "/_sim/reset", client_id=None))[0] == 200
    assert (await api.call("GET", SIM_FAULTS, client_id=None))[1] == OFF  # back to the scenario as loaded


# ------------------------------------------------------------------------- scenario events

EVENTS = [
    {"at": "+2", "type": "venue_faults", "read_lag_ms": 500, "clock_skew_s": -30},
    {"at": "+4", "type": "venue_faults", "fill_delay_ms": 7, "note": "the replica catches up"},
]


def test_a_scenario_event_sets_the_faults_and_a_replay_gives_the_same_digest(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    scenario = parse_scenario(scenario_doc(events=EVENTS), "s.json")
    sim = Simulation(scenario, clock="virtual", journal_path=journal)
    start = sim.venue.clock.now
    sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "49000.00"))
    sim.advance(start + 3 * NS)
    assert sim.faults.describe() == {"read_lag_ms": 500, "fill_delay_ms": 0, "clock_skew_s": -30}
    middle, middle_at = digest(facts(sim.venue, sim.faults)), len(_records(journal))
    sim.advance(start + 5 * NS)
    assert sim.faults.describe() == {"read_lag_ms": 0, "fill_delay_ms": 7, "clock_skew_s": 0}
    end = digest(facts(sim.venue, sim.faults))
    assert middle != end and "venue faults" in {label for _, label, _ in facts(sim.venue, sim.faults)}
    sim.close()
    assert [r[:2] + r[3:] for r in _fault_records(journal)] == [
        [start + 2 * NS, "scn", [500, 0, -30]],
        [start + 4 * NS, "scn", [0, 7, 0]],
    ]
    again = Simulation(scenario, clock="virtual", journal_path=journal)  # a restart
    assert digest(facts(again.venue, again.faults)) == end
    again.close()
    with Journal(journal) as read:
        forked = rebuild(read, middle_at, scenario)  # cefisim journal state --at / fork
    assert digest(facts(forked.venue, forked.faults)) == middle
    with Journal(journal) as read:
        shown = [line(r) for r in read.records() if r.kind == "faults.venue"]
    assert "read_lag_ms=500 fill_delay_ms=0 clock_skew_s=-30" in shown[0]


def test_a_journal_whose_scenario_fault_record_was_changed_is_refused(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    scenario = parse_scenario(scenario_doc(events=EVENTS), "s.json")
    sim = Simulation(scenario, clock="virtual", journal_path=journal)
    sim.advance(sim.venue.clock.now + 5 * NS)
    sim.close()
    journal.write_bytes(journal.read_bytes().replace(b"[500,0,-30]", b"[501,0,-30]"))
    with pytest.raises(JournalError, match=r"checksum does not match"):
        Simulation(scenario, clock="virtual", journal_path=journal)
    reseal_file(journal)  # as a cefisim that wrote other values would have sealed them
    with pytest.raises(JournalError, match=r"regenerates faults\.venue"):
        Simulation(scenario, clock="virtual", journal_path=journal)


def test_a_pending_venue_faults_event_survives_a_snapshot() -> None:
    scenario = parse_scenario(scenario_doc(events=EVENTS), "s.json")
    sim = Simulation(scenario, clock="virtual")
    doc = orjson.loads(orjson.dumps(sim.snapshot()))
    again = Simulation(scenario, clock="virtual")
    again.restore(doc)
    again.advance(again.venue.clock.now + 3 * NS)
    assert again.faults.describe() == {"read_lag_ms": 500, "fill_delay_ms": 0, "clock_skew_s": -30}


def test_offline_runs_leave_the_venue_faults_events_out() -> None:
    scenario = parse_scenario(scenario_doc(events=EVENTS), "s.json")
    venue = scenario.build_venue()
    results = scenario.runner(venue).run_until(scenario.start_ns + 5 * NS)  # backtest, replay: no faults side
    assert all(r.ok for r in results)


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"read_lag_ms": -1}, "read_lag_ms: must be between 0 and 3600000"),
        ({"fill_delay_ms": "5"}, "fill_delay_ms: must be an integer"),
        ({"clock_skew_s": 86401}, "clock_skew_s: must be between -86400 and 86400"),
        ({"clock_skew": 1}, "clock_skew"),
    ],
)
def test_a_bad_venue_faults_event_is_refused_naming_its_path(event: dict[str, Any], reason: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(scenario_doc(events=[{"at": "+1", "type": "venue_faults", **event}]), "s.json")
    assert f"$.events[0].{reason}" in str(caught.value)


# ------------------------------------------------------------------------ the Auth window


def _key_exchange_body(ts: int) -> dict[str, Any]:
    assert isinstance(ALICE, ec.EllipticCurvePrivateKey)
    r, s = decode_dss_signature(ALICE.sign(f"k-alice.{ts}".encode(), ec.ECDSA(hashes.SHA256())))
    raw = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return {"key_id": "k-alice", "timestamp": ts, "signature": base64.urlsafe_b64encode(raw).rstrip(b"=").decode()}


async def test_a_skewed_clock_moves_the_key_exchange_window() -> None:
    sim = Simulation(load_scenario(DEMO), clock="virtual")
    client = TestClient(TestServer(create_app(sim, ServerOptions())))
    await client.start_server()
    try:

        async def exchange(ts: int) -> int:
            resp = await client.post("/v1/auth/api-key/token", json=_key_exchange_body(ts))
            return resp.status

        assert await exchange(int(time.time())) == 200
        assert (await client.post(SIM_FAULTS, json={"clock_skew_s": 3600})).status == 200
        assert await exchange(int(time.time())) == 401  # signed by the true clock: an hour behind the server's
        assert await exchange(int(time.time()) + 3600) == 200
        assert (await client.delete(SIM_FAULTS)).status == 200
        assert await exchange(int(time.time())) == 200
    finally:
        await client.close()


def test_a_replay_journal_holds_the_scenario_fault_records_a_server_continues_from(tmp_path: Path) -> None:
    source, journal = tmp_path / "s.json", tmp_path / "replay.jsonl"
    source.write_bytes(orjson.dumps(scenario_doc(events=EVENTS)))
    assert replay_main([str(source), "--journal", str(journal), "--until", "+5", "--quiet"]) == 0
    assert [r[1:] for r in _fault_records(journal)] == [
        ["scn", "faults.venue", [500, 0, -30]],
        ["scn", "faults.venue", [0, 7, 0]],
    ]
    sim = Simulation(load_scenario(source), clock="virtual", journal_path=journal)  # as `serve --journal` does
    assert sim.faults.describe() == {"read_lag_ms": 0, "fill_delay_ms": 7, "clock_skew_s": 0}
    sim.close()


def test_an_advance_counts_the_scenarios_events_when_it_also_sets_faults() -> None:
    """A scenario with ``venue_faults`` events hands its runner another submit function; the events of
    its commands still count in what an advance reports (``scenario_events``)."""
    doc = orjson.loads(DEMO.read_bytes())
    doc["events"] = [*doc.get("events", []), *EVENTS]
    counted: list[int] = []
    sim = Simulation(parse_scenario(doc, "s.json"), clock="virtual", on_result=lambda r: counted.append(len(r.events)))
    counted.clear()  # what loading the scenario applied is not the advance's
    before = sim.scenario_events
    sim.advance(sim.venue.clock.now + 60 * NS)
    assert sim.scenario_events - before == sum(counted) > 0
