"""Control-plane defects the fuzzing found, kept as regression tests.

1. ``POST /_sim/snapshot`` with a ``start_ns`` that is not an integer was a 500 after the venue had
   been replaced; now a 400 and nothing changes.
2. ``POST /_sim/snapshot`` accepted a state that breaks the engine's invariants; now refused (400)
   before anything is installed.
3. ``POST /_sim/clock/advance`` walked engine time one housekeeping hour at a time, so a jump of
   years kept the server busy for hours, and past year 9999 answered 500. Quiet hours are now
   skipped and targets past 9999-12-31 are a 400.
4. A snapshot carried ``engine.units.Grid``'s memo caches, so a read changed it. They are now left
   out and rebuilt empty on restore.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest

from tests.fuzz.support import Client, Served, serve_sim, signed_headers

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def _client(served: Served, timeout: float = 10) -> Iterator[Client]:
    client = Client(served.port, timeout)
    try:
        yield client
    finally:
        client.close()


def _snapshot(client: Client) -> dict:
    reply = client.request("GET", "/_sim/snapshot")
    assert reply.status == 200
    return reply.json()


def _restore(client: Client, doc: dict) -> int:
    return client.request("POST", "/_sim/snapshot", orjson.dumps(doc), {"Content-Type": "application/json"}).status


@pytest.mark.parametrize("start_ns", [None, "junk", [1]])
def test_restore_with_a_bad_start_ns_is_400_and_changes_nothing(start_ns: object) -> None:
    with serve_sim() as served, _client(served) as client:
        doc = _snapshot(client)
        served.on_loop(lambda: served.sim.advance(served.sim.venue.clock.now + 10**9))  # differ from doc
        before = served.snapshot()
        assert _restore(client, {**doc, "start_ns": start_ns}) == 400
        assert served.snapshot() == before


def _corrupt_first_balance(doc: dict, value: object) -> dict:
    for obj in doc["objects"]:
        if isinstance(obj, dict) and obj.get("cls") == "Balance":
            obj["state"]["total"] = value
            return doc
    raise AssertionError("no balance in the snapshot")


@pytest.mark.parametrize("total", [-5, "x"])
def test_restoring_a_snapshot_that_breaks_an_invariant_is_400(total: object) -> None:
    with serve_sim() as served, _client(served) as client:
        before = served.snapshot()
        assert _restore(client, _corrupt_first_balance(_snapshot(client), total)) == 400
        assert served.snapshot() == before
        path = "/v1/cefi/balances"
        assert client.request("GET", path, b"", signed_headers(100, "GET", path, b"")).status == 200


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_huge_clock_advance_answers_at_once_without_a_5xx(tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cefisim.api.cli.main",
            "serve",
            "--port",
            str(port),
            "--clock",
            "virtual",
            "--log-level",
            "ERROR",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    client = Client(port, timeout=3)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if client.request("GET", "/_sim/health").status == 200:
                    break
            except OSError:
                client.close()
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.05)
        reply = client.request(
            "POST", "/_sim/clock/advance", b'{"seconds": 1000000000000}', {"Content-Type": "application/json"}
        )  # ~31,700 years; raises on timeout
        assert reply.status in (200, 400), reply.body
    finally:
        client.close()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def test_a_read_does_not_change_the_snapshot() -> None:
    with serve_sim() as served, _client(served) as client:
        before = served.sim.snapshot()["objects"]
        path = "/v1/cefi/balances"
        assert client.request("GET", path, b"", signed_headers(100, "GET", path, b"")).status == 200
        assert served.sim.snapshot()["objects"] == before
