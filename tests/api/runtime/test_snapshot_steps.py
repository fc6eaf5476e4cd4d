"""A snapshot taken in steps (api/runtime/snapshot_steps.py, GET /_sim/snapshot): its document is, byte for
byte, the one the codec writes from the live state at the instant it began, whatever the venue does between
two steps; the venue's own requests wait for the copy, other venues' are answered during the copy and
during the document's writing in a thread."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime import snapshot_steps, state_copy
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.runtime.snapshot_steps import SnapshotSteps
from cefisim.api.web.control.isolated_venues import VENUES
from cefisim.api.web.server.http import dumps
from tests.api.conftest import Api
from tests.api.runtime.test_state_copy import SCENARIOS
from tests.api.web.control.test_venues import create, order_body, signed

WAIT_S = 60.0  # for a condition on a loaded machine; never reached when the code is right


async def _busy(api: Api) -> None:
    """Resting orders on both sides, fills, and the scenario's own activity."""
    for price in ("49000.00", "49100.00", "49200.00"):
        await api.order(price=price)
    await api.order(side="SELL", price="49500.00")
    await api.order(client_id=101, side="SELL", price="49100.00", qty="2")  # fills against the bids
    await api.advance(3)


async def _raw_snapshot(api: Api, path: str = "/_sim/snapshot") -> bytes:
    resp = await api.client.request("GET", path)
    body = await resp.read()
    assert resp.status == 200, body
    return body


async def _until(condition: Any, pause: float = 0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while not condition():
        assert loop.time() < deadline, "the condition never held"
        await asyncio.sleep(pause)


async def test_get_answers_the_codecs_document_byte_for_byte(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    await _busy(api)
    # a side's state too: it follows the objects in the document
    status, body, _ = await api.call("POST", "/_sim/faults/venue", client_id=None, json={"fill_delay_ms": 5})
    assert status == 200, body
    expected = dumps(api.sim.snapshot())
    assert list(orjson.loads(expected))[-1] != "objects"
    monkeypatch.setattr(state_copy, "STEP_VALUES", 7)  # many steps
    monkeypatch.setattr(snapshot_steps, "DUMP_OBJECTS", 3)  # many pieces
    assert await _raw_snapshot(api) == expected
    assert await _raw_snapshot(api) == expected  # nothing changed: the same again (determinism)
    # restored, the state gives the same document again
    status, body, _ = await api.call("POST", "/_sim/snapshot", client_id=None, body=expected)
    assert status == 200, body
    assert await _raw_snapshot(api) == expected


async def test_a_change_between_two_steps_finishes_the_copy_first(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    await _busy(api)
    sim = api.sim
    expected = dumps(sim.snapshot())
    monkeypatch.setattr(state_copy, "STEP_VALUES", 7)
    taking = sim.snapshot_steps()
    steps = taking.steps()
    next(steps)
    assert sim.copying and not taking.done
    await api.order(price="48000.00")  # a command between two steps (not held: nothing runs the steps here)
    assert taking.done and not sim.copying
    assert dumps(taking.document()) == expected  # the state the copy began at, not the one after the order
    assert dumps(sim.snapshot()) != expected
    # the scenario's turns too
    expected = dumps(sim.snapshot())
    taking = sim.snapshot_steps()
    next(taking.steps())
    await api.advance(5)
    assert taking.done and dumps(taking.document()) == expected


@pytest.fixture
def busy() -> Simulation:
    """A busy market after 10 s: thousands of orders, fills, the runner's agents, timers."""
    doc = json.loads((SCENARIOS / "busy_market.json").read_text())
    doc.pop("$schema")
    sim = Simulation(parse_scenario(doc, "busy.json"), clock="virtual")
    sim.advance(sim.now_ns() + 10 * 10**9)
    return sim


def test_a_busy_venues_document_is_the_codecs_while_its_scenario_runs_on(busy: Simulation) -> None:
    expected = dumps(busy.snapshot())
    taking = busy.snapshot_steps()
    steps = taking.steps()
    next(steps)
    assert not taking.done
    # the scenario's agents take turns (their commands do not pass through Simulation.apply)
    slices = busy.advance_slices(busy.now_ns() + 2 * 10**9, max_turns=5)
    next(slices)
    assert taking.done and not busy.copying
    assert dumps(taking.document()) == expected
    for _ in slices:
        pass
    busy.finish_advance(busy.now_ns())
    # left alone, the steps make the same document as the codec
    expected = dumps(busy.snapshot())
    taking = busy.snapshot_steps()
    assert sum(1 for _ in taking.steps()) > 1  # several steps
    assert dumps(taking.document()) == expected


def test_the_document_is_written_in_pieces_the_collector_paused(
    busy: Simulation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_steps, "DUMP_OBJECTS", 50)
    taking = busy.snapshot_steps()
    taking.finish()
    objects = len(taking.document()["objects"])
    assert objects > 500
    dumped: list[Any] = []
    collector: list[bool] = []

    def counted(value: Any) -> bytes:
        dumped.append(value)
        collector.append(gc.isenabled())
        return dumps(value)

    assert gc.isenabled()
    assert taking.written(counted) == dumps(busy.snapshot())
    assert gc.isenabled() and collector and not any(collector)
    pieces = [v for v in dumped if isinstance(v, list)]
    assert len(pieces) == -(-objects // 50) and all(len(v) <= 50 for v in pieces)
    # a collector off before stays off
    with pytest.raises(RuntimeError):
        taking.written(dumps)  # once: the copy went with it
    taking = busy.snapshot_steps()
    taking.finish()
    gc.disable()
    try:
        taking.written(dumps)
        assert not gc.isenabled()
    finally:
        gc.enable()


def _held_copy(gate: dict[str, bool], monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy's steps wait after the first until ``gate["copy"]`` is set (yielding, as a step would)."""
    steps = SnapshotSteps.steps

    def held(taking: SnapshotSteps) -> Iterator[None]:
        for n, _ in enumerate(steps(taking)):
            while n == 0 and not gate["copy"]:
                yield
            yield

    monkeypatch.setattr(SnapshotSteps, "steps", held)


async def test_other_venues_are_answered_during_the_copy_and_the_writing(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    venue = await create(api)
    sim: Simulation = api.client.app[VENUES].created[venue["id"]].sim
    for price in ("49000.00", "49100.00"):
        assert (await signed(api, venue, "POST", "/v1/cefi/orders", json=order_body(price=price)))[0] == 200
    expected = dumps(sim.snapshot())
    monkeypatch.setattr(state_copy, "STEP_VALUES", 7)
    gate = {"copy": False}
    _held_copy(gate, monkeypatch)
    writing, written = threading.Event(), threading.Event()
    document = SnapshotSteps.document

    def held_document(taking: SnapshotSteps) -> dict[str, Any]:
        writing.set()
        assert written.wait(WAIT_S)
        return document(taking)

    monkeypatch.setattr(SnapshotSteps, "document", held_document)
    try:
        got = asyncio.create_task(_raw_snapshot(api, f"/_sim/venues/{venue['id']}/snapshot"))
        await _until(lambda: sim.copying)
        # the copy is under way: the default venue's reads are answered, the venue's own read waits for it
        own = asyncio.create_task(signed(api, venue, "GET", "/v1/cefi/balances"))
        for _ in range(3):
            assert (await signed(api, None, "GET", "/v1/cefi/balances"))[0] == 200
        assert sim.copying and not own.done()
        gate["copy"] = True
        await asyncio.to_thread(writing.wait, WAIT_S)
        assert writing.is_set() and not got.done()
        # the document is being written in a thread: every venue is answered, this one too
        assert (await signed(api, None, "GET", "/v1/cefi/balances"))[0] == 200
        assert (await own)[0] == 200
        assert (await signed(api, venue, "POST", "/v1/cefi/orders", json=order_body(price="48000.00")))[0] == 200
        assert not got.done()
    finally:
        written.set()
    # the document of the instant the GET began: the order placed while it was written is not in it
    assert await got == expected
    assert dumps(sim.snapshot()) != expected


async def test_the_ticker_lets_a_snapshots_copy_be(api_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A virtual clock with a speed: its ticker does not move time (which would finish the copy at once)
    while a snapshot's copy is under way, and goes on once it is whole."""
    api = await api_factory(speed=3600.0)
    sim = api.sim
    monkeypatch.setattr(state_copy, "STEP_VALUES", 7)
    gate = {"copy": False}
    _held_copy(gate, monkeypatch)
    copying = Simulation.copying.fget
    assert copying is not None
    checks = [0]

    def counted(self: Simulation) -> bool:
        checks[0] += 1  # only the ticker asks
        return copying(self)

    monkeypatch.setattr(Simulation, "copying", property(counted))
    got = asyncio.create_task(_raw_snapshot(api))
    await _until(lambda: copying(sim))
    now, seen = sim.venue.clock.now, checks[0]
    await _until(lambda: checks[0] >= seen + 3 or not copying(sim), pause=0.01)  # three ticks (or a move)
    assert copying(sim) and sim.venue.clock.now == now
    gate["copy"] = True
    await got
    await _until(lambda: sim.venue.clock.now > now, pause=0.01)
