"""The pytest plugin's shared-server fixtures: one server per session (or worker), a fresh venue per test.

Registered by ``api/pytest_plugin/__init__.py`` (its fixtures are imported there). Contract:

``cefisim_shared_server`` (session scope)
    A ``cefisim serve`` process on 127.0.0.1 and a free port (virtual clock, ``--quiet``), started on
    first use and stopped when the session ends; under pytest-xdist each worker is a session of its
    own, so each worker gets its own server. With ``--cefisim-url URL`` no process is started: the
    fixture talks to the server at URL (and ``--cefisim-control-token`` if it runs with one), shared
    by every worker and every pipeline pointed at it.
``cefisim_venue`` (function scope)
    A venue created for the test on the shared server (``POST /_sim/venues``) from the test's
    ``cefisim_scenario`` (a shipped name when it is a shipped file, else the file's document), and
    deleted after it, whatever the outcome. Its credentials are the ones the server minted for it and
    answered once (``docs/venues.md``). ``.id``, ``.url``, ``.clients`` (each client's HMAC key and
    secret), ``.api_keys`` and ``.api_key(name)`` (Auth key ids with their private keys),
    ``.client(id_or_mnemonic)`` (a :class:`~cefisim.api.client.CefiClient` signing with its keys: close
    it yourself), ``.control(method, path, body)`` (its ``/_sim/venues/{id}/...`` routes),
    ``.advance(seconds)``.

Plain fixtures with blocking HTTP (``urllib``) to a server in another process: they work in sync and
async tests alike and under any pytest-asyncio loop scope.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from cefisim.api.client import CefiClient

URL_OPTION = "--cefisim-url"
TOKEN_OPTION = "--cefisim-control-token"
START_TIMEOUT_S = 30.0


class ControlError(RuntimeError):
    """A control-plane call answered with an error status (the problem's detail in the message)."""


@dataclass
class SharedServer:
    """A server shared by many tests: its address and the control token it needs (None: loopback)."""

    url: str
    control_token: str | None = None
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """A control-plane request; the decoded JSON answer, or :class:`ControlError`."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.control_token:
            request.add_header("Authorization", f"Bearer {self.control_token}")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise ControlError(f"{method} {path}: {exc.code} {exc.read().decode(errors='replace')}") from None

    def create_venue(self, scenario: str | dict[str, Any], seed: int | None = None) -> Venue:
        """A new venue from a shipped scenario's name or a scenario document."""
        doc = self.call("POST", "/_sim/venues", {"scenario": scenario, **({"seed": seed} if seed is not None else {})})
        return Venue(self, doc)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass
class Venue:
    """A venue on a shared server, as ``POST /_sim/venues`` answered it."""

    server: SharedServer
    doc: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.doc["id"])

    @property
    def url(self) -> str:
        """The server's address: requests reach this venue through its keys."""
        return self.server.url

    @property
    def clients(self) -> list[dict[str, str]]:
        """Each client's ``client_id``, ``mnemonic``, ``key`` and ``secret`` (docs/venues.md)."""
        return list(self.doc["clients"])

    def credentials(self, client: str | int | None = None) -> dict[str, str]:
        """The credentials of a client (id or mnemonic; None: the first)."""
        if client is None:
            return self.clients[0]
        for entry in self.clients:
            if str(client) in (entry["client_id"], entry["mnemonic"]):
                return entry
        raise LookupError(f"venue {self.id}: client {client!r} has no HMAC key")

    @property
    def api_keys(self) -> list[dict[str, Any]]:
        """Each Auth API key: ``key_id``, ``kind``, ``user_id``, ``client_id`` and the ``private_key``
        (PEM) minted for it, which the server answered once and keeps nowhere."""
        return list(self.doc["api_keys"])

    def api_key(self, name: str) -> dict[str, Any]:
        """The Auth API key the scenario calls ``name`` (``"k-alice"``: the venue's is ``"k-alice-…@v1"``)."""
        for entry in self.api_keys:
            if entry["key_id"] == name or entry["key_id"].startswith(f"{name}-"):
                return entry
        raise LookupError(f"venue {self.id}: no API key {name!r}")

    def client(self, client: str | int | None = None, **kwargs: Any) -> CefiClient:
        """A :class:`CefiClient` signing as ``client`` of this venue; close it yourself."""
        from cefisim.api.client import CefiClient  # the plugin loads into every pytest run: import on use

        entry = self.credentials(client)
        return CefiClient(self.url, key=entry["key"], secret=entry["secret"], client_id=entry["client_id"], **kwargs)

    def control(self, method: str, path: str, body: Any = None) -> Any:
        """``method`` on this venue's control route ``path`` (``"/book/1"``, ``"/reset"``, ...)."""
        return self.server.call(method, f"/_sim/venues/{self.id}{path}", body)

    def advance(self, seconds: int | str | Decimal) -> int:
        """Move the venue's virtual clock forward; returns its new engine time (ns)."""
        return int(self.control("POST", "/clock/advance", {"seconds": str(seconds)})["now_ns"])

    def delete(self) -> None:
        self.server.call("DELETE", f"/_sim/venues/{self.id}")


def _start(scenario: str | None) -> SharedServer:
    with tempfile.TemporaryDirectory(prefix="cefisim-") as tmp:
        ready = Path(tmp) / "ready.json"
        command = [
            sys.executable,
            "-m",
            "cefisim",
            "serve",
            "--port",
            "0",
            "--clock",
            "virtual",
            "--quiet",
            "--log-level",
            "WARNING",
            "--ready-file",
            str(ready),
        ]
        if scenario is not None:
            command += ["--scenario", scenario]
        with tempfile.TemporaryFile() as errors:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
            deadline = time.monotonic() + START_TIMEOUT_S
            while not ready.exists():
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    process.wait()
                    errors.seek(0)
                    raise RuntimeError(f"cefisim serve did not start: {errors.read().decode(errors='replace').strip()}")
                time.sleep(0.02)
        return SharedServer(json.loads(ready.read_text())["url"], None, process)


@pytest.fixture(scope="session")
def cefisim_shared_server(request: pytest.FixtureRequest) -> Iterator[SharedServer]:
    """One server for the session (each xdist worker its own), or the one ``--cefisim-url`` names."""
    url = request.config.getoption("cefisim_url") or os.environ.get("CEFISIM_URL")
    if url:
        yield SharedServer(url.rstrip("/"), request.config.getoption("cefisim_control_token"))
        return
    server = _start(request.config.getoption("cefisim_scenario"))
    try:
        yield server
    finally:
        server.stop()


def _venue_scenario(scenario: Any) -> str | dict[str, Any]:
    """What ``POST /_sim/venues`` takes for a ``cefisim_scenario`` value: a shipped name or a document."""
    from cefisim.api.formats.scenario import Scenario  # the plugin loads into every pytest run: import on use
    from cefisim.api.formats.scenario.shipped import shipped  # the plugin loads into every pytest run: import on use

    if isinstance(scenario, Scenario):
        return scenario.doc
    if isinstance(scenario, dict):
        return scenario
    path = Path(scenario)
    if shipped(path.name) == path:
        return path.stem
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def cefisim_venue(cefisim_shared_server: SharedServer, cefisim_scenario: Any) -> Iterator[Venue]:
    """A fresh venue of ``cefisim_scenario`` on the shared server, deleted after the test."""
    venue = cefisim_shared_server.create_venue(_venue_scenario(cefisim_scenario))
    try:
        yield venue
    finally:
        venue.delete()
