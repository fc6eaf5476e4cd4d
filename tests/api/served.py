"""Servers in processes of their own, started as a user starts them (``python -m cefisim serve``), and
what the tests that drive them share: waiting until one listens, signing a request, an order's body,
reaping a process a failed test left running.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from cefisim.api.edge.signing import sign
from tests.api.conftest import SECRETS

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(*argv: str, stdout: int = subprocess.PIPE, stderr: int = subprocess.STDOUT) -> subprocess.Popen[bytes]:
    """``python -m cefisim serve ARGV... --log-level WARNING --quiet`` from the repository's root (this
    tree's code, installed or not)."""
    return subprocess.Popen(
        [sys.executable, "-m", "cefisim", "serve", *argv, "--log-level", "WARNING", "--quiet"],
        cwd=ROOT,
        stdout=stdout,
        stderr=stderr,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def serve_journaled(scenario: Path, journal: Path, port: int, clock: str = "virtual") -> subprocess.Popen[bytes]:
    """A server of ``scenario`` with ``--journal`` on ``port`` (output and errors on its stdout pipe)."""
    return serve("--port", str(port), "--scenario", str(scenario), "--journal", str(journal), "--clock", clock)


def serve_ready(scenario: Path, journal: Path, ready: Path, clock: str = "wall") -> subprocess.Popen[bytes]:
    """A server of ``scenario`` with ``--journal`` on a free port it writes into ``ready``."""
    ready.unlink(missing_ok=True)
    argv = ("--port", "0", "--ready-file", str(ready), "--scenario", str(scenario), "--journal", str(journal))
    return serve(*argv, "--clock", clock)


def reap(proc: subprocess.Popen[Any]) -> None:
    """Kill a server process a failed test left running, and close its pipes (a test's ``finally``)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=30)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def _output(proc: subprocess.Popen[Any]) -> str:
    pipe = proc.stdout or proc.stderr
    text = pipe.read() if pipe is not None else ""
    return text.decode() if isinstance(text, bytes) else text


async def wait_healthy(session: aiohttp.ClientSession, base: str, proc: subprocess.Popen[Any]) -> None:
    """Until ``GET /v1/cefi/health`` answers 200 (the server must not exit meanwhile)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {_output(proc)}")
        try:
            async with session.get(base + "/v1/cefi/health") as resp:
                if resp.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.05)
    raise AssertionError("server did not start")


def wait_for_ready_file(ready: Path, proc: subprocess.Popen[Any], seconds: float) -> dict[str, object]:
    """What ``--ready-file`` wrote, once it is there whole (the server must not exit meanwhile)."""
    deadline = time.monotonic() + seconds
    while not ready.exists() or not ready.read_bytes().endswith(b"}"):
        assert proc.poll() is None, _output(proc)
        assert time.monotonic() < deadline, f"no ready file after {seconds} s"
        time.sleep(0.05)
    return json.loads(ready.read_text())  # type: ignore[no-any-return]


async def ready_url(ready: Path, proc: subprocess.Popen[Any], seconds: float = 120) -> str:
    """The URL ``--ready-file`` names, waited for without holding the test's event loop."""
    deadline = time.monotonic() + seconds
    while not ready.exists() or not ready.read_bytes().endswith(b"}"):
        assert proc.poll() is None, _output(proc)
        assert time.monotonic() < deadline, f"no ready file after {seconds} s"
        await asyncio.sleep(0.05)
    return str(orjson.loads(ready.read_bytes())["url"])


def signed(
    client_id: int, method: str, path: str, body: bytes, key: str | None = None, secret: str | None = None
) -> dict[str, str]:
    """The headers of a request signed now, by the client's key of ``tests/api/conftest.py`` unless
    ``key`` and ``secret`` are given."""
    if key is None or secret is None:
        key, secret = SECRETS[client_id]
    ts = str(int(time.time()))
    return {
        "x-svc-auth-token": key,
        "x-svc-auth-signature": sign(secret, ts, method, path, body),
        "x-svc-auth-timestamp": ts,
        "x-svc-auth-userid": str(client_id),
        "Content-Type": "application/json",
    }


async def get_signed(
    session: aiohttp.ClientSession, base: str, client_id: int, path: str, params: dict[str, str] | None = None
) -> tuple[int, Any]:
    async with session.get(base + path, headers=signed(client_id, "GET", path, b""), params=params) as resp:
        return resp.status, await resp.json(content_type=None)


def limit_order(ext: str, client_id: int = 100, side: str = "BUY", price: str = "29000.00") -> bytes:
    """The body of ``POST /v1/cefi/orders``: a LIMIT order of 0.01 on instrument 1."""
    info = {"client_id": str(client_id), "instrument_id": "1", "side": side, "type": "LIMIT", "qty": "0.01"}
    return orjson.dumps({"external_id": ext, "info": info | {"price": price}})
