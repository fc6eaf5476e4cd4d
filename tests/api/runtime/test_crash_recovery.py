"""SIGKILL the server under load, restart it on its journal: every acknowledged command is there.

The journal is written ahead of each command, so a command the server took but could not answer before
it died is applied on restart too (the client saw a timeout, exactly as with a real venue); such
extras can only be requests that were in flight at the kill, and no request is ever applied twice.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import aiohttp
import orjson
import pytest

from tests.api.conftest import scenario_doc
from tests.api.served import free_port, get_signed, limit_order, serve_journaled, signed, wait_healthy

CONCURRENCY = 8


@pytest.mark.slow
async def test_sigkill_under_load_then_restart(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_bytes(orjson.dumps(scenario_doc()))
    journal = tmp_path / "journal.jsonl"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    acked: dict[str, dict] = {}  # external id -> order record as acknowledged
    sent: set[str] = set()
    proc = serve_journaled(scenario, journal, port)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as session:
            await wait_healthy(session, base, proc)

            async def worker(n: int) -> None:
                i = 0
                while True:
                    client = 100 + (n % 2)
                    ext = f"w{n}-{i}"
                    i += 1
                    side = "BUY" if client == 100 else "SELL"
                    price = f"{50000 + (i % 5) - 2}.00"
                    body = limit_order(ext, client, side, price)
                    sent.add(ext)
                    try:
                        async with session.post(
                            base + "/v1/cefi/orders",
                            data=body,
                            headers=signed(client, "POST", "/v1/cefi/orders", body),
                        ) as resp:
                            record = await resp.json(content_type=None)
                            assert resp.status == 200, record
                            acked[ext] = record
                    except (TimeoutError, aiohttp.ClientError):
                        return  # the server is gone

            workers = [asyncio.create_task(worker(n)) for n in range(CONCURRENCY)]
            while len(acked) < 60 and not all(w.done() for w in workers):  # load under way, then kill
                await asyncio.sleep(0.02)
            os.kill(proc.pid, signal.SIGKILL)
            await asyncio.gather(*workers)
        proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()
        assert len(acked) > 50, "the load did not get going"

        proc = serve_journaled(scenario, journal, port)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
            await wait_healthy(session, base, proc)
            for ext, record in acked.items():
                client = int(record["order_info"]["client_id"])
                status, now = await get_signed(session, base, client, f"/v1/cefi/orders/status/{ext}")
                assert status == 200, (ext, now)
                assert now["id"] == record["id"]
                assert float(now["exeuted_qty"]) >= float(record["exeuted_qty"])
            present: list[str] = []
            for client in (100, 101):
                cursor = "9" * 19
                while cursor:
                    _, page = await get_signed(
                        session, base, client, "/v1/cefi/orders/all", params={"timestamp": cursor, "size": "100"}
                    )
                    present += [o["external_id"] for o in page["data"]]
                    cursor = page["pagination"]["next_cursor"]
            assert len(present) == len(set(present)), "a command was applied twice"
            extras = set(present) - set(acked)
            assert extras <= sent and len(extras) <= CONCURRENCY, extras
            async with session.get(base + "/_sim/invariants") as resp:
                body = await resp.json()
                assert resp.status == 200 and body["ok"] is True
                assert body["asset_totals"] == {"BTC": "20.00000000", "ETH": "200.00000000", "USD": "2000000.00"}
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)
        if proc.stdout:
            proc.stdout.close()
