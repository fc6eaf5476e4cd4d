"""Connections that never finish a request: idle keep-alive and slow request lines/headers are closed
``KEEPALIVE_TIMEOUT_S`` (75 s) after the connection opened or its last answer (aiohttp arms its
keep-alive timer when the connection is made, and bytes of an unfinished request do not re-arm it).
The figure is checked where ``cefisim serve`` passes it; the behaviour with a one-second timer."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import pytest
from aiohttp import web

from cefisim.api.cli import main as cli
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.app.application import create_app
from cefisim.api.web.server.limits import KEEPALIVE_TIMEOUT_S
from tests.api.conftest import scenario_doc

TIMER_S = 1.0


def test_cefisim_serve_closes_idle_and_unfinished_connections_after_75_s(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def run(
        app: web.Application, host: str, port: int, on_listening: Any, ready_file: Any = None, **handler: Any
    ) -> int:  # api.web.server.listen.run: the server with these handler settings
        seen.update(handler)
        return 0

    monkeypatch.setattr(cli, "run", run)
    assert cli.main(["serve", "--clock", "virtual", "--port", "0", "--log-level", "ERROR"]) == 0
    assert seen["keepalive_timeout"] == KEEPALIVE_TIMEOUT_S == 75


async def _closed_after(port: int, trickle: bytes | None) -> float:
    """Seconds until the server closes a connection that sends ``trickle`` a byte every 0.2 s (or
    nothing)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.monotonic()
    try:
        for byte in trickle or b"":
            writer.write(bytes([byte]))
            await writer.drain()
            try:
                if await asyncio.wait_for(reader.read(1), 0.2) == b"":
                    return time.monotonic() - started
            except TimeoutError:
                continue
        assert await asyncio.wait_for(reader.read(), 10) == b""
        return time.monotonic() - started
    finally:
        writer.close()


@pytest.mark.parametrize("trickle", [None, b"GET /v1/cefi/health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 40])
async def test_a_connection_that_does_not_finish_a_request_is_closed_by_the_keepalive_timer(
    trickle: bytes | None,
) -> None:
    sim = Simulation(parse_scenario(scenario_doc(), "t.json"), clock="virtual")
    runner = web.AppRunner(create_app(sim), keepalive_timeout=TIMER_S)
    await runner.setup()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        closed = await _closed_after(port, trickle)
        assert TIMER_S * 0.9 <= closed < TIMER_S + 2, closed
    finally:
        await runner.cleanup()
