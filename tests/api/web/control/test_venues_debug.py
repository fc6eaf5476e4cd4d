"""Venue routing under asyncio's and aiohttp's debug checks (``PYTHONASYNCIODEBUG=1``, ``-X dev``).

aiohttp reads its debug switch once, when it is imported, so the check runs in a fresh interpreter:
a server with a created venue serves that venue's control route, a signed order with the venue's
keys and an Auth request routed by its body, each on the venue it names. Routing by swapping
``request.match_info.current_app`` answered these with 500s in debug mode ("Expected one of the
following apps"); the middleware's ``VENUE`` request key does not touch aiohttp's app stack.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]

SCRIPT = """
import asyncio
import aiohttp.helpers

from tests.api.conftest import Api, scenario_doc
from tests.api.web.control.test_venues import create, order_body, signed
from aiohttp.test_utils import TestClient, TestServer
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.web.app.application import create_app
from cefisim.api.web.server.keys import ServerOptions


async def main() -> None:
    assert aiohttp.helpers.DEBUG and asyncio.get_running_loop().get_debug(), "debug mode is off"
    sim = Simulation(parse_scenario(scenario_doc(), "test-scenario.json"), clock="virtual")
    client = TestClient(TestServer(create_app(sim, ServerOptions())))
    await client.start_server()
    try:
        api = Api(client, sim)
        venue = await create(api)
        status, clock, _ = await api.call("POST", "/_sim/venues/v1/clock/advance", client_id=None,
                                          json={"seconds": "60"})
        assert status == 200, clock
        status, order, _ = await signed(api, venue, "POST", "/v1/cefi/orders", json=order_body())
        assert status == 200 and order["status"] == "ACTIVE", order
        status, mine, _ = await signed(api, venue, "GET", "/v1/cefi/orders/all")
        assert status == 200 and len(mine["data"]) == 1, mine
        status, default, _ = await signed(api, None, "GET", "/v1/cefi/orders/all")
        assert status == 200 and default["data"] == [], default
        status, token, _ = await api.call("POST", "/v1/auth/api-key/token", client_id=None,
                                          json={"key_id": "nobody@v1", "timestamp": 1, "signature": "x"})
        assert status == 401, token
    finally:
        await client.close()
    print("routed in debug mode")


asyncio.run(main(), debug=True)
"""


def _run(*flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONASYNCIODEBUG": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *flags, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_venue_routes_serve_their_venue_in_debug_mode() -> None:
    done = _run()
    assert done.returncode == 0 and "routed in debug mode" in done.stdout, done.stderr[-4000:]
    assert "Error handling request" not in done.stderr, done.stderr[-4000:]


def test_venue_routes_serve_their_venue_in_dev_mode() -> None:
    done = _run("-X", "dev")
    assert done.returncode == 0 and "routed in debug mode" in done.stdout, done.stderr[-4000:]
    assert "Error handling request" not in done.stderr, done.stderr[-4000:]
