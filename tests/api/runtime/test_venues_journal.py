"""Every venue journals; a server killed and restarted on the same journal brings every venue back."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from tests.api.conftest import ALICE_KEY, scenario_doc
from tests.api.served import free_port, serve_journaled, signed, wait_healthy


async def _call(
    session: aiohttp.ClientSession, base: str, key: tuple[str, str], method: str, path: str, json: Any = None
) -> tuple[int, Any]:
    body = orjson.dumps(json) if json is not None else b""
    async with session.request(
        method, base + path, data=body or None, headers=signed(100, method, path, body, *key)
    ) as resp:
        return resp.status, await resp.json(content_type=None)


def _end(proc: subprocess.Popen) -> None:
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


async def test_sigkill_and_restart_bring_every_venue_back(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_bytes(orjson.dumps(scenario_doc()))
    journal = tmp_path / "journal.jsonl"
    orders: dict[str, list[str]] = {}  # key -> acknowledged order ids
    keys: dict[str, tuple[str, str]] = {"default": (ALICE_KEY, "alice-secret")}
    async with aiohttp.ClientSession() as session:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        proc = serve_journaled(scenario, journal, port)
        try:
            await wait_healthy(session, base, proc)
            for _ in range(3):
                async with session.post(base + "/_sim/venues", json={"scenario": scenario_doc()}) as resp:
                    venue = await resp.json()
                    assert resp.status == 201, venue
                keys[venue["id"]] = (venue["clients"][0]["key"], venue["clients"][0]["secret"])
            async with session.delete(base + "/_sim/venues/v2") as resp:
                assert resp.status == 200
            del keys["v2"]
            async with session.post(base + "/_sim/venues/v3/clock/advance", json={"seconds": "30"}) as resp:
                assert resp.status == 200
            for n, (venue_id, key) in enumerate(keys.items()):
                orders[venue_id] = []
                for i in range(n + 1):
                    status, rec = await _call(
                        session,
                        base,
                        key,
                        "POST",
                        "/v1/cefi/orders",
                        {
                            "info": {
                                "client_id": "100",
                                "instrument_id": "1",
                                "side": "BUY",
                                "type": "LIMIT",
                                "qty": "1",
                                "price": f"{50000 + i}.00",
                            }
                        },
                    )
                    assert status == 200, rec
                    orders[venue_id].append(rec["id"])
            async with session.get(base + "/_sim/venues/v3/clock") as resp:
                clock_v3 = await resp.json()
        finally:
            proc.send_signal(signal.SIGKILL)
            _end(proc)
        manifest = (tmp_path / "journal.jsonl.venues" / "manifest.jsonl").read_bytes().splitlines()
        # live venues only: the delete compacted it, and no line holds a document
        assert [{k: v for k, v in orjson.loads(line).items() if k != "crc32"} for line in manifest] == [
            {"op": "create", "id": venue_id, "record": 2} for venue_id in ("v1", "v3")
        ]
        assert all(line.endswith(b'"}') and b',"crc32":"' in line for line in manifest)  # sealed
        assert sorted(p.name for p in (tmp_path / "journal.jsonl.venues").iterdir()) == [
            "manifest.jsonl",
            "v1.jsonl",
            "v1.venue.json",
            "v3.jsonl",
            "v3.venue.json",
        ]

        port = free_port()
        base = f"http://127.0.0.1:{port}"
        proc = serve_journaled(scenario, journal, port)
        try:
            await wait_healthy(session, base, proc)
            async with session.get(base + "/_sim/venues") as resp:
                assert [v["id"] for v in await resp.json()] == ["default", "v1", "v3"]
            for venue_id, key in keys.items():
                status, page = await _call(session, base, key, "GET", "/v1/cefi/orders/active")
                assert status == 200 and sorted(o["id"] for o in page["data"]) == sorted(orders[venue_id]), venue_id
            async with session.get(base + "/_sim/venues/v3/clock") as resp:
                assert (await resp.json())["now_ns"] == clock_v3["now_ns"]
            async with session.post(base + "/_sim/venues", json={"scenario": scenario_doc()}) as resp:
                assert (await resp.json())["id"] == "v4"  # an id is never reused, restarts included
        finally:
            proc.send_signal(signal.SIGTERM)
            _end(proc)


def make(scenario: Any, path: Path | None) -> Any:
    from cefisim.api.runtime.simulation import Simulation

    return Simulation(scenario, clock="virtual", journal_path=path)


def create(venues: Any, body: dict[str, Any]) -> str:
    """What ``POST /_sim/venues`` does with the runtime part: make the next venue, then record it."""
    made = venues.make(venues.next_id(), body)
    venues.commit(made)
    return str(made.spec.id)


def test_a_torn_last_manifest_line_is_cut_and_that_venue_never_was(tmp_path: Path) -> None:
    from cefisim.api.runtime.venues import Venues

    journal = tmp_path / "journal.jsonl"
    venues = Venues(make, journal=journal)
    venues.recover()
    create(venues, {"scenario": scenario_doc(), "seed": 3})
    venues.close()
    manifest = tmp_path / "journal.jsonl.venues" / "manifest.jsonl"
    whole = manifest.read_bytes()
    with open(manifest, "ab") as f:
        f.write(b'{"op": "create", "id": "v2", "scen')
    again = Venues(make, journal=journal)
    again.recover()
    try:
        assert list(again.live) == ["v1"] and again.live["v1"][1].scenario.seed == 3
        assert manifest.read_bytes() == whole
        assert create(again, {"scenario": scenario_doc()}) == "v2"
    finally:
        again.close()


def test_a_manifest_of_an_earlier_cefisim_is_read_a_line_at_a_time_and_its_venues_set_aside(tmp_path: Path) -> None:
    """Its lines hold whole documents (of deleted venues too) and its venues' keys could be computed:
    they are set aside, lines and journals kept, and the ids go on after the highest."""
    from cefisim.api.runtime.venues import LEGACY, Venues

    folder = tmp_path / "journal.jsonl.venues"
    folder.mkdir()
    lines = [
        {"op": "create", "id": "v1", "scenario": None, "document": scenario_doc(), "seed": None},
        {"op": "create", "id": "v2", "scenario": "demo", "document": None, "seed": 5},
        {"op": "delete", "id": "v1"},
    ]
    (folder / "manifest.jsonl").write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    (folder / "v2.jsonl").write_bytes(b"their journal\n")
    venues = Venues(make, journal=tmp_path / "journal.jsonl")
    venues.recover()
    try:
        assert venues.live == {} and [(a.id, a.reason) for a in venues.set_aside.values()] == [("v2", LEGACY)]
        assert (folder / "v2.jsonl").read_bytes() == b"their journal\n"
        kept = (folder / "manifest.jsonl").read_bytes().splitlines()
        assert [orjson.loads(line) for line in kept] == [lines[1]]  # the deleted v1's document is gone
        assert create(venues, {"scenario": scenario_doc()}) == "v3"
    finally:
        venues.close()
