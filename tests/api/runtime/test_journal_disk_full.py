"""A write lands whole or changes nothing, on a real full disk: a small tmpfs mounted in tmp_path and
filled to its last byte (the tests skip, saying why, where mounting is refused: it needs root).

Every operation that writes — an order, a clock advance, the ticker's turns, a reset, a restore, a
venue's create and delete, a fault setting — is answered 503 with a problem and changes nothing while
the journal cannot take it; reads go on; a failing spell is logged once when it starts and once when
it ends; nothing is left behind (no ``.new`` file); once space returns, writes go on, and a restart
restores every acknowledged command. A write that fails in the middle of a scenario turn (the file
size limit, ``RLIMIT_FSIZE``) is rolled back to where the operation began.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer

from cefisim.api.cli.journal_tools.record_state import digest, facts
from cefisim.api.formats.scenario import Scenario, load_scenario, parse_scenario
from cefisim.api.runtime.simulation import JournalWriteError, Simulation
from cefisim.api.web.app.application import create_app
from cefisim.api.web.control.isolated_venues import VENUES
from cefisim.api.web.server.keys import ServerOptions
from cefisim.engine.clock import NS_PER_SECOND
from tests.api.conftest import Api, scenario_doc

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "scenarios" / "demo.json"


class Disk:
    """A small tmpfs: :meth:`fill` takes its every free byte, :meth:`free` gives them back."""

    def __init__(self, mount: Path) -> None:
        self.mount = mount
        self.filler = mount / "filler"

    def fill(self) -> None:
        with open(self.filler, "ab", buffering=0) as f:
            for size in (1 << 20, 1 << 12, 1):
                with contextlib.suppress(OSError):
                    while True:
                        f.write(b"\0" * size)
        assert os.statvfs(self.mount).f_bavail == 0

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)

    def leftovers(self) -> list[str]:
        """Staged files nobody renamed: there must be none."""
        return sorted(str(p.relative_to(self.mount)) for p in self.mount.rglob("*.new"))


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"a tmpfs cannot be mounted here ({done.stderr.strip() or done.returncode}); the test needs root")
    try:
        yield Disk(mount)
    finally:
        if subprocess.run(["umount", str(mount)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mount)], capture_output=True)


@pytest_asyncio.fixture
async def serve() -> AsyncIterator[Any]:
    """``await serve(scenario, journal)`` -> an Api on a server journaling to ``journal``."""
    made: list[Api] = []

    async def start(scenario: Scenario, journal: Path) -> Api:
        sim = Simulation(scenario, clock="virtual", journal_path=journal)
        client = TestClient(TestServer(create_app(sim, ServerOptions())))
        await client.start_server()
        made.append(Api(client, sim))
        return made[-1]

    yield start
    for api in made:
        await api.client.close()


def _scenario() -> Scenario:
    return parse_scenario(scenario_doc(), "s.json")


def _state(sim: Simulation) -> str:
    return digest(facts(sim.venue, sim.faults))


def _problem(status: int, body: Any) -> None:
    body = body.get("error", body)  # a CeFi route nests its problem under "error"
    assert status == 503 and body["type"].endswith("journal-unavailable"), body
    assert "nothing was changed" in body["detail"] or "nothing of the failed slice" in body["detail"], body


async def test_an_order_on_a_full_disk_is_a_503_and_changes_nothing(disk: Disk, serve: Any) -> None:
    journal = disk.mount / "j.jsonl"
    api = await serve(_scenario(), journal)
    ids = [(await api.order(external_id="before"))["id"]]
    disk.fill()
    refused = None
    for i in range(100):  # the journal's last page may still take a few records
        state, data = _state(api.sim), journal.read_bytes()
        status, body, _ = await api.call(
            "POST",
            "/v1/cefi/orders",
            json={
                "external_id": f"full-{i}",
                "info": {
                    "client_id": "100",
                    "instrument_id": "1",
                    "side": "BUY",
                    "type": "LIMIT",
                    "qty": "1",
                    "price": "49000.00",
                },
            },
        )
        if status == 200:
            ids.append(body["id"])
            continue
        _problem(status, body)
        assert _state(api.sim) == state and journal.read_bytes() == data
        refused = i
        break
    assert refused is not None
    status, _, _ = await api.call("GET", "/v1/cefi/balances")  # reads go on
    assert status == 200
    disk.free()
    ids.append((await api.order(external_id="after"))["id"])
    acknowledged = _state(api.sim)
    await api.client.close()
    again = Simulation(_scenario(), clock="virtual", journal_path=journal)
    assert _state(again) == acknowledged
    assert {o.id for o in again.venue.accounts[100].orders.values()} >= {int(i) for i in ids}
    again.close()
    assert disk.leftovers() == []


async def test_a_clock_advance_on_a_full_disk_changes_nothing(disk: Disk, serve: Any) -> None:
    journal = disk.mount / "j.jsonl"
    api = await serve(load_scenario(DEMO), journal)
    await api.advance(5)
    disk.fill()
    state, data, now = _state(api.sim), journal.read_bytes(), api.sim.venue.clock.now
    status, body, _ = await api.call("POST", "/_sim/clock/advance", client_id=None, json={"seconds": "30"})
    _problem(status, body)
    assert (_state(api.sim), journal.read_bytes(), api.sim.venue.clock.now) == (state, data, now)
    disk.free()
    await api.advance(30)
    acknowledged = _state(api.sim)
    await api.client.close()
    again = Simulation(load_scenario(DEMO), clock="virtual", journal_path=journal)
    assert _state(again) == acknowledged
    again.close()


async def test_a_reset_or_restore_that_cannot_make_its_fresh_journal_changes_nothing(
    disk: Disk, serve: Any, tmp_path: Path
) -> None:
    journal = disk.mount / "j.jsonl"
    api = await serve(_scenario(), journal)
    status, snapshot, _ = await api.call("GET", "/_sim/snapshot", client_id=None)
    assert status == 200
    await api.order(external_id="kept")
    disk.fill()
    state, data = _state(api.sim), journal.read_bytes()
    for path, body in (("/_sim/reset", None), ("/_sim/snapshot", snapshot)):
        status, problem, _ = await api.call("POST", path, client_id=None, json=body)
        _problem(status, problem)
        assert (_state(api.sim), journal.read_bytes()) == (state, data)
        assert disk.leftovers() == []
    disk.free()
    # a fresh journal that cannot be created at all: the old one goes on, and journals what follows
    (disk.mount / "j.jsonl.new").mkdir()
    status, problem, _ = await api.call("POST", "/_sim/reset", client_id=None)
    _problem(status, problem)
    assert (_state(api.sim), journal.read_bytes()) == (state, data)
    await api.order(external_id="after")
    acknowledged = _state(api.sim)
    await api.client.close()
    again = Simulation(_scenario(), clock="virtual", journal_path=journal)
    assert _state(again) == acknowledged and set(again.venue.accounts[100].by_external) == {"kept", "after"}
    again.close()


async def test_faults_on_a_full_disk_change_nothing(disk: Disk, serve: Any) -> None:
    journal = disk.mount / "j.jsonl"
    api = await serve(_scenario(), journal)
    disk.fill()
    for i in range(100):  # the journal's last page may take a few
        status, body, _ = await api.call("POST", "/_sim/faults/venue", client_id=None, json={"read_lag_ms": i + 1})
        if status != 200:
            break
    _problem(status, body)
    assert api.sim.faults.read_lag_ns == i * 1_000_000


async def test_venue_create_and_delete_on_a_full_disk_change_nothing(disk: Disk, serve: Any) -> None:
    journal = disk.mount / "j.jsonl"
    api = await serve(_scenario(), journal)
    status, v1, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": scenario_doc()})
    assert status == 201
    key = (v1["clients"][0]["key"], v1["clients"][0]["secret"])
    folder = disk.mount / "j.jsonl.venues"
    files = sorted(p.name for p in folder.rglob("*"))
    disk.fill()
    status, body, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": scenario_doc()})
    _problem(status, body)
    status, body, _ = await api.call("DELETE", "/_sim/venues/v1", client_id=None)
    _problem(status, body)
    assert sorted(p.name for p in folder.rglob("*")) == files and disk.leftovers() == []
    status, listed, _ = await api.call("GET", "/_sim/venues", client_id=None)
    assert [v["id"] for v in listed] == ["default", "v1"]
    status, _, _ = await api.call(
        "GET",
        "/v1/cefi/balances",
        headers=api.headers(100, "GET", "/v1/cefi/balances", b"", key=key[0], secret=key[1]),
        client_id=None,
    )
    assert status == 200  # v1 serves on
    disk.free()
    status, _, _ = await api.call("DELETE", "/_sim/venues/v1", client_id=None)
    assert status == 200
    await api.client.close()
    again = await serve(_scenario(), journal)
    assert list(again.client.server.app[VENUES].created) == []
    status, made, _ = await again.call("POST", "/_sim/venues", client_id=None, json={"scenario": scenario_doc()})
    assert status == 201 and made["id"] == "v2"  # v1's id is never given again


def test_ticks_that_fail_log_one_line_when_failing_starts_and_one_when_it_ends(
    disk: Disk, caplog: pytest.LogCaptureFixture
) -> None:
    class Wall:
        now = 1_800_000_000 * NS_PER_SECOND

        def __call__(self) -> int:
            return self.now

    wall, journal = Wall(), disk.mount / "j.jsonl"
    sim = Simulation(load_scenario(DEMO), clock="wall", journal_path=journal, wall_ns=wall)
    disk.fill()
    caplog.set_level(logging.INFO, logger="cefisim.sim")
    failed = 0
    for _ in range(300):  # 15 s of ticks, the makers due every 5 s
        wall.now += 50_000_000
        try:
            for _ in sim.tick():
                pass
        except JournalWriteError:
            failed += 1
    assert failed >= 2
    disk.free()
    for _ in range(2000):  # until the next tick is journaled again
        wall.now += 50_000_000
        with contextlib.suppress(JournalWriteError):
            for _ in sim.tick():
                pass
        if "writable again" in caplog.text:
            break
    lines = [r for r in caplog.records if r.name == "cefisim.sim" and r.levelno >= logging.WARNING]
    assert [r.levelno for r in lines] == [logging.ERROR, logging.WARNING], [r.getMessage() for r in lines]
    assert "writes are refused" in lines[0].getMessage() and "writable again" in lines[1].getMessage()
    acknowledged = _state(sim)
    sim.close()
    again = Simulation(load_scenario(DEMO), clock="wall", journal_path=journal, wall_ns=wall)
    assert _state(again) == acknowledged
    again.close()


@contextlib.contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """Writes beyond ``limit`` bytes of a file fail (EFBIG) instead of killing the process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def test_a_turn_the_journal_cannot_finish_is_rolled_back(tmp_path: Path) -> None:
    """The disk takes the first records of a market maker's re-quote and refuses the rest: the turn is
    undone whole (the journal cut back, the state rebuilt from it) and the advance answers the error."""
    journal = tmp_path / "j.jsonl"
    sim = Simulation(load_scenario(DEMO), clock="virtual", journal_path=journal)
    sim.advance(sim.venue.clock.now + 3 * NS_PER_SECOND)
    state, data, now = _state(sim), journal.read_bytes(), sim.venue.clock.now
    with file_size_limit(len(data) + 400), pytest.raises(JournalWriteError):
        sim.advance(now + 30 * NS_PER_SECOND)
    assert (_state(sim), journal.read_bytes(), sim.venue.clock.now) == (state, data, now)
    deadline = time.monotonic() + 60
    while True:  # writable again: once the back-off after a failed write has passed, the same turns
        try:
            sim.advance(now + 30 * NS_PER_SECOND)
            break
        except JournalWriteError:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    acknowledged = _state(sim)
    sim.close()
    again = Simulation(load_scenario(DEMO), clock="virtual", journal_path=journal)
    assert _state(again) == acknowledged
    again.close()
    assert orjson.loads(journal.read_bytes().splitlines()[0])["format"] == "cefisim-journal/3"
