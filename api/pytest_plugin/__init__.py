"""pytest plugin: run the emulator in-process and talk to it, from any test suite.

Installed with the package (entry point ``pytest11: cefisim = "cefisim.api.pytest_plugin"``); from a source
checkout that is not installed, put ``pytest_plugins = ["cefisim.api.pytest_plugin"]`` in your root
``conftest.py``. Needs pytest-asyncio (strict or auto mode): ``pip install 'cefisim[pytest]'`` brings
it; without it the plugin says so in one line of pytest's header, and its async fixtures fail with
that line.

Fixtures:

``cefisim_scenario``
    What the server loads: the shipped ``demo`` by default (package data of ``cefisim.scenarios``);
    else the file named by ``@pytest.mark.cefisim_scenario("path")`` (relative to the test file's
    directory, then to the rootdir) or by ``--cefisim-scenario FILE`` (relative to where pytest was
    started); either also takes the name of a shipped scenario (``"flash_crash"``). Override the
    fixture to return a path, a scenario document (dict) or an ``api.formats.scenario.Scenario``.
``cefisim_clock``
    ``"virtual"`` (default: engine time moves only when the test advances it) or ``"wall"``.
``cefisim_server_options``
    The :class:`api.web.server.keys.ServerOptions` the app is built with (signature layout, ...).
``cefisim_server``
    The emulator on 127.0.0.1 and a free port, fresh for each test. ``.url``, ``.sim``, ``.app``,
    ``.scenario``, ``.advance(seconds)``, ``.now_ns``, ``.reset()``.
``cefisim_client``
    A connected :class:`api.client.CefiClient` signing with the scenario's first HMAC key.
``cefisim_client_for``
    A factory: ``cefisim_client_for("101")`` (client id or mnemonic) returns a client signing as that
    client; every client it made is closed after the test.
``cefisim_shared_server``, ``cefisim_venue``
    One server per session (per pytest-xdist worker), or the running one ``--cefisim-url`` names, and a
    fresh venue of ``cefisim_scenario`` on it for each test: ``api/pytest_plugin/pytest_venues.py``, docs/pytest.md.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

try:  # the plugin is loaded into every pytest run of an environment that has cefisim installed
    import pytest_asyncio
except ImportError:  # cefisim installed without its [pytest] extra
    pytest_asyncio = None  # type: ignore[assignment]  # "not installed", tested before use

if TYPE_CHECKING:
    from aiohttp import web
    from aiohttp.test_utils import TestServer

    from cefisim.api.client import CefiClient
    from cefisim.api.formats.scenario import Scenario
    from cefisim.api.runtime.simulation import Simulation

from cefisim.api.pytest_plugin.pytest_venues import TOKEN_OPTION, URL_OPTION, cefisim_shared_server, cefisim_venue  # noqa: F401 - fixtures

MARKER = "cefisim_scenario"
OPTION = "--cefisim-scenario"
MISSING_ASYNCIO = "cefisim: the cefisim fixtures need pytest-asyncio: pip install 'cefisim[pytest]'"


def __getattr__(name: str) -> Any:
    """``DEFAULT_SCENARIO``: the shipped demo's path, looked up when first asked for (the plugin is
    loaded into every pytest run of an environment with cefisim: it imports nothing heavy up front)."""
    if name == "DEFAULT_SCENARIO":
        from cefisim.api.formats.scenario.shipped import (
            resolve,  # the plugin loads into every pytest run: import on use
        )

        return resolve(None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _shipped(value: str) -> Path | None:
    from cefisim.api.formats.scenario.shipped import shipped  # the plugin loads into every pytest run: import on use

    return shipped(value) if Path(value).parent == Path(".") else None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cefisim", "cefisim exchange emulator")
    group.addoption(
        OPTION,
        dest="cefisim_scenario",
        default=None,
        metavar="FILE",
        help="scenario file (or shipped scenario name) the cefisim_server fixture loads (default: demo)",
    )
    group.addoption(
        URL_OPTION,
        dest="cefisim_url",
        default=None,
        metavar="URL",
        help="cefisim_venue: make venues on this running server instead of starting one per session",
    )
    group.addoption(
        TOKEN_OPTION,
        dest="cefisim_control_token",
        default=None,
        metavar="TOKEN",
        help=f"the --control-token of the server {URL_OPTION} names",
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    return MISSING_ASYNCIO if pytest_asyncio is None else None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(path): scenario file the cefisim_server fixture loads for this test "
        "(relative to the test file's directory)",
    )


def _async_fixture(fn: Callable[..., Any]) -> Any:
    if pytest_asyncio is not None:
        return pytest_asyncio.fixture(fn)

    @pytest.fixture(name=fn.__name__)
    def missing() -> Any:
        pytest.fail(MISSING_ASYNCIO, pytrace=False)

    return missing


# --- scenario -----------------------------------------------------------------------------------


def _marker_path(request: pytest.FixtureRequest, value: Any) -> Any:
    if not isinstance(value, (str, Path)):
        return value  # a document or a Scenario
    path = Path(value)
    if path.is_absolute():
        return path
    tried = []
    for base in (Path(request.path).parent, request.config.rootpath):
        candidate = base / path
        if candidate.exists():
            return candidate
        tried.append(str(candidate))
    named = _shipped(str(value))
    if named is not None:
        return named
    raise pytest.UsageError(f"@pytest.mark.{MARKER}({str(value)!r}): no such file (tried {', '.join(tried)})")


@pytest.fixture
def cefisim_scenario(request: pytest.FixtureRequest) -> Any:
    """The scenario the server loads: marker, else ``--cefisim-scenario``, else the shipped demo."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None:
        if len(marker.args) != 1:
            raise pytest.UsageError(f"@pytest.mark.{MARKER} takes one argument: the scenario file")
        return _marker_path(request, marker.args[0])
    option = request.config.getoption("cefisim_scenario")
    if option:
        path = Path(option)
        path = path if path.is_absolute() else request.config.invocation_params.dir / path
        return path if path.exists() else _shipped(option) or path
    from cefisim.api.formats.scenario.shipped import resolve  # the plugin loads into every pytest run: import on use

    return resolve(None)


def load(scenario: Any) -> Scenario:
    """A Scenario from a path, a document or a Scenario (problems raise ``ScenarioError``)."""
    from cefisim.api.formats.scenario import (
        Scenario,
        load_scenario,
        parse_scenario,
    )  # the plugin loads into every pytest run: import on use

    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return parse_scenario(scenario, "<cefisim_scenario fixture>")
    if isinstance(scenario, (str, Path)):
        return load_scenario(scenario)
    raise TypeError(f"cefisim_scenario: expected a path, a document or a Scenario, not {type(scenario).__name__}")


@pytest.fixture
def cefisim_clock() -> str:
    return "virtual"


@pytest.fixture
def cefisim_server_options() -> Any:
    from cefisim.api.web.server.keys import ServerOptions  # the plugin loads into every pytest run: import on use

    return ServerOptions()


# --- server -------------------------------------------------------------------------------------


@dataclass
class CefisimServer:
    """A running emulator: its address and the objects behind it."""

    url: str
    sim: Simulation
    app: web.Application
    server: TestServer = field(repr=False)

    @property
    def scenario(self) -> Scenario:
        return self.sim.scenario

    @property
    def now_ns(self) -> int:
        """Engine time (nanoseconds since the Unix epoch)."""
        return self.sim.now_ns()

    def advance(self, seconds: int | str | Decimal) -> int:
        """Move the virtual clock forward; the scenario's agents and the venue's timers act on the way.
        Returns the new engine time."""
        if isinstance(seconds, float):
            seconds = Decimal(repr(seconds))
        delta = Decimal(seconds) * 1_000_000_000
        if delta < 0 or delta != delta.to_integral_value():
            raise ValueError("seconds: a non-negative amount with at most 9 decimals")
        if self.sim.clock_mode != "virtual":
            raise RuntimeError("advance() needs the virtual clock (cefisim_clock fixture)")
        self.sim.advance(self.sim.now_ns() + int(delta))
        return self.sim.now_ns()

    def reset(self) -> None:
        """Back to the scenario as loaded."""
        self.sim.reset()

    def signing_key(self, client: str | int | None = None) -> tuple[str, str, str]:
        """(key, secret, client id) of an HMAC key: the scenario's first, or that of a client (id or mnemonic)."""
        keys = self.sim.scenario.hmac_keys
        if not keys:
            raise LookupError(f"scenario {self.sim.scenario.source} defines no HMAC keys (clients[].key)")
        if client is None:
            key, (cid, secret) = next(iter(keys.items()))
            return key, secret, str(cid)
        wanted = str(client)
        if not wanted.isdigit():
            for c in self.sim.scenario.clients.values():
                if c.mnemonic == wanted:
                    wanted = str(c.id)
                    break
        for key, (cid, secret) in keys.items():
            if str(cid) == wanted:
                return key, secret, wanted
        raise LookupError(f"scenario {self.sim.scenario.source}: client {client!r} has no HMAC key")

    def client(self, client: str | int | None = None, **kwargs: Any) -> CefiClient:
        """A :class:`CefiClient` signing as ``client`` (default: the first HMAC key); close it yourself."""
        from cefisim.api.client import CefiClient  # the plugin loads into every pytest run: import on use

        key, secret, cid = self.signing_key(client)
        layout = self.app_layout()
        kwargs.setdefault("layout", layout)
        return CefiClient(self.url, key=key, secret=secret, client_id=cid, **kwargs)

    def app_layout(self) -> str:
        from cefisim.api.web.server.keys import OPTIONS  # the plugin loads into every pytest run: import on use

        layout = self.app[OPTIONS].signature_layout
        return "concat" if layout == "either" else layout


@asynccontextmanager
async def serving(sim: Simulation, options: Any = None) -> AsyncIterator[CefisimServer]:
    """The emulator serving ``sim`` on 127.0.0.1 and a free port, until the block ends."""
    from aiohttp.test_utils import TestServer  # the plugin loads into every pytest run: import on use

    from cefisim.api.web.app.application import create_app  # the plugin loads into every pytest run: import on use

    app = create_app(sim, options)
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    try:
        yield CefisimServer(str(server.make_url("")).rstrip("/"), sim, app, server)
    finally:
        await server.close()


@_async_fixture
async def cefisim_server(
    cefisim_scenario: Any, cefisim_clock: str, cefisim_server_options: Any
) -> AsyncIterator[CefisimServer]:
    """The emulator serving ``cefisim_scenario`` on 127.0.0.1 and a free port, for one test."""
    from cefisim.api.runtime.simulation import Simulation  # the plugin loads into every pytest run: import on use

    async with serving(Simulation(load(cefisim_scenario), clock=cefisim_clock), cefisim_server_options) as server:
        yield server


@_async_fixture
async def cefisim_client(cefisim_server: CefisimServer) -> AsyncIterator[CefiClient]:
    """A connected client signing with the scenario's first HMAC key."""
    async with cefisim_server.client() as client:
        yield client


@_async_fixture
async def cefisim_client_for(cefisim_server: CefisimServer) -> AsyncIterator[Callable[..., CefiClient]]:
    """``cefisim_client_for(client_id_or_mnemonic, **CefiClient_kwargs)`` -> a client; closed after the test."""
    made: list[CefiClient] = []

    def factory(client: str | int | None = None, **kwargs: Any) -> CefiClient:
        c = cefisim_server.client(client, **kwargs)
        made.append(c)
        return c

    try:
        yield factory
    finally:
        for c in made:
            await c.close()
