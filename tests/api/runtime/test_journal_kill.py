"""Real servers on the demo scenario, stopped the hard way, restarted on their journal, again and again.

- virtual clock: orders go in while a one-day clock advance runs (in slices, so they are answered
  meanwhile); SIGKILL at a random moment of the advance; restart; two rounds on one journal, then a check.
- wall clock: orders, a few idle seconds of ticks, SIGTERM; restart; the same.
Each restart must bring back every acknowledged order (its id and its cancel), apply nothing twice
and keep every invariant.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
from pathlib import Path

import aiohttp
import pytest

from tests.api.served import ROOT, free_port, get_signed, limit_order, reap, serve_journaled, signed, wait_healthy

DEMO = ROOT / "scenarios" / "demo.json"


async def _place(session: aiohttp.ClientSession, base: str, ext: str) -> dict | None:
    body = limit_order(ext)
    try:
        async with session.post(
            base + "/v1/cefi/orders", data=body, headers=signed(100, "POST", "/v1/cefi/orders", body)
        ) as resp:
            record = await resp.json(content_type=None)
            assert resp.status == 200, record
            return record
    except (TimeoutError, aiohttp.ClientError):
        return None  # the server is gone: not acknowledged


async def _cancel(session: aiohttp.ClientSession, base: str, ext: str) -> bool:
    path = f"/v1/cefi/orders/{ext}"
    try:
        async with session.delete(base + path, headers=signed(100, "DELETE", path, b"")) as resp:
            await resp.read()
            return resp.status == 200
    except (TimeoutError, aiohttp.ClientError):
        return False


async def _check(
    session: aiohttp.ClientSession, base: str, acked: dict[str, dict], cancelled: set[str], sent: set[str]
) -> None:
    for ext, record in acked.items():
        status, now = await get_signed(session, base, 100, f"/v1/cefi/orders/status/{ext}")
        assert status == 200, (ext, now)
        assert now["id"] == record["id"]
        if ext in cancelled:
            assert now["status"] in ("CANCELED", "CANCEL_PENDING"), now
    active: list[str] = []
    params = {"size": "100"}
    while True:  # every page: orders acknowledged during a sliced advance may be more than one page
        status, page = await get_signed(session, base, 100, "/v1/cefi/orders/active", params=params)
        assert status == 200, page
        active += [o["external_id"] for o in page["data"]]
        cursor = page["pagination"]["next_cursor"]
        if cursor is None or not page["data"]:
            break
        params = {"size": "100", "timestamp": cursor}
    assert len(active) == len(set(active)), "an order was applied twice"
    assert set(acked) - cancelled <= set(active) <= sent
    async with session.get(base + "/_sim/invariants") as resp:
        assert resp.status == 200, await resp.text()


async def _round(journal: Path, clock: str, rng: random.Random, state: tuple) -> None:
    acked, cancelled, sent = state
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = serve_journaled(DEMO, journal, port, clock)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            await wait_healthy(session, base, proc)
            await _check(session, base, acked, cancelled, sent)
            for i in range(3):
                ext = f"{clock[0]}{len(sent)}-{i}"
                sent.add(ext)
                record = await _place(session, base, ext)
                assert record is not None
                acked[ext] = record
            if await _cancel(session, base, ext):
                cancelled.add(ext)
            if clock == "virtual":
                advance = asyncio.create_task(session.post(base + "/_sim/clock/advance", json={"seconds": 86_400}))
                deadline = asyncio.get_running_loop().time() + rng.uniform(0.2, 1.5)
                n = 0
                while asyncio.get_running_loop().time() < deadline:  # orders while the advance runs
                    ext = f"v{len(sent)}-{n}"
                    n += 1
                    sent.add(ext)
                    record = await _place(session, base, ext)
                    if record is not None:
                        acked[ext] = record
                os.kill(proc.pid, signal.SIGKILL)
                with pytest.raises((aiohttp.ClientError, asyncio.TimeoutError)):
                    (await advance).raise_for_status()  # it did not finish: the kill came first
            else:
                await asyncio.sleep(rng.uniform(1.5, 3))  # idle: the ticker runs the scenario
                proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) in (0, -signal.SIGKILL), proc.stdout.read() if proc.stdout else ""
    finally:
        reap(proc)


@pytest.mark.slow
@pytest.mark.parametrize("clock", ["virtual", "wall"])
async def test_every_acknowledged_order_survives_repeated_hard_stops(tmp_path: Path, clock: str) -> None:
    journal = tmp_path / "journal.jsonl"
    rng = random.Random(11)
    state: tuple = ({}, set(), set())
    for _ in range(2):
        await _round(journal, clock, rng, state)
    # the last restart, checked
    port = free_port()
    proc = serve_journaled(DEMO, journal, port, clock)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            await wait_healthy(session, f"http://127.0.0.1:{port}", proc)
            await _check(session, f"http://127.0.0.1:{port}", *state)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()
