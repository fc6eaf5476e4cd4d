"""Real servers on the wall clock, whose market makers' turns submit nothing (a fixed price; the demo
between its re-quotes), stopped by SIGINT or SIGKILL after orders placed between idle turns: the
journal restores every acknowledged order in a server started on it, in ``cefisim replay
--from-journal`` and in ``cefisim journal state`` (issue 44's first case, the way a user meets it).
``tests/api/runtime/test_journal_schedules.py`` covers the schedules in-process, on a clock the test moves.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import orjson
import pytest

from tests.api.runtime.test_journal_schedules import fixed_price_doc
from tests.api.served import ROOT, get_signed, limit_order, ready_url, reap, serve_ready, signed


async def _after_idle_turns(seconds: float) -> None:
    """Let the server's wall clock run ``seconds`` on: its makers' turns fall meanwhile, and on the wall
    clock nothing but time passing makes them (the engine clock does not move for a turn that submits
    nothing, so there is nothing else to wait for)."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        await asyncio.sleep(0.05)


async def _place(session: aiohttp.ClientSession, base: str, ext: str) -> str:
    body = limit_order(ext)
    async with session.post(
        base + "/v1/cefi/orders", data=body, headers=signed(100, "POST", "/v1/cefi/orders", body)
    ) as resp:
        record = await resp.json(content_type=None)
        assert resp.status == 200, record
        return str(record["id"])


def _scenario(tmp_path: Path, name: str) -> Path:
    if name == "demo":
        return ROOT / "scenarios" / "demo.json"
    doc = fixed_price_doc()
    doc["agents"][0]["interval"] = "0.5"  # an idle turn every half second
    path = tmp_path / "fixed.json"
    path.write_bytes(orjson.dumps(doc))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
@pytest.mark.parametrize("name", ["fixed-price", "demo"])
async def test_a_wall_clock_server_stopped_after_idle_turns_restores_every_order(
    tmp_path: Path, name: str, stop: signal.Signals
) -> None:
    scenario, journal, ready = _scenario(tmp_path, name), tmp_path / "j.jsonl", tmp_path / "ready.json"
    placed: dict[str, str] = {}
    proc = serve_ready(scenario, journal, ready)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
            base = await ready_url(ready, proc)
            for i in range(3):
                await _after_idle_turns(1.2)
                placed[f"o{i}"] = await _place(session, base, f"o{i}")
        proc.send_signal(stop)
        assert proc.wait(timeout=60) in (0, -signal.SIGINT, -signal.SIGKILL, 130)
    finally:
        reap(proc)
    replay = subprocess.run(
        [sys.executable, "-m", "cefisim", "replay", str(scenario), "--from-journal", str(journal), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert replay.returncode == 0, replay.stderr
    state = subprocess.run(
        [sys.executable, "-m", "cefisim", "journal", "state", str(journal), "--scenario", str(scenario), "--facts"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert state.returncode == 0, state.stderr
    assert all(f"order {order_id}: client=100" in state.stdout for order_id in placed.values()), state.stdout
    proc = serve_ready(scenario, journal, ready)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
            base = await ready_url(ready, proc)
            for ext, order_id in placed.items():
                status, record = await get_signed(session, base, 100, f"/v1/cefi/orders/status/{ext}")
                assert status == 200 and record["id"] == order_id, record
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        reap(proc)
