"""Shared helpers for the auth and paper-trading tests: keys, signatures, clocks, a test app.

Other test modules import from here (``from tests.api.auth.auth_support import ...``) and open a
started harness with ``async with running() as h``. The app gets
a tiny problem-rendering middleware standing in for the real one (its one venue's parts on every
request), and a ``/_test/whoami`` route that echoes the bearer principal.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import orjson
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from cefisim.api.auth.bearer import require_bearer
from cefisim.api.auth.routes import auth_routes
from cefisim.api.auth.store import AuthStore
from cefisim.api.edge.problems import PROBLEM_CONTENT_TYPE, Problem
from cefisim.api.web.cefi.paper import paper_routes
from cefisim.api.web.server.keys import OPTIONS, ServerOptions
from cefisim.api.web.server.venue_state import VENUE, auth_store_of

NS = 1_000_000_000
START = datetime(2026, 11, 2, 9, 0, 0, tzinfo=UTC)
START_NS = int(START.timestamp()) * NS
WALL_START = 1_800_000_000.0  # the wall clock is independent of the engine clock
RESOURCE = "https://mcp.cefisim.test/"
REDIRECT = "https://app.example/cb"
LOOPBACK_REDIRECT = "http://127.0.0.1/cb"


class FakeClock:
    """Engine clock in nanoseconds."""

    def __init__(self, now: int = START_NS) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += int(seconds * NS)


class FakeWall:
    def __init__(self, now: float = WALL_START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def public_pem(key: ec.EllipticCurvePrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def b64url(raw: bytes, pad: bool = False) -> str:
    text = base64.urlsafe_b64encode(raw).decode()
    return text if pad else text.rstrip("=")


def sign(key: ec.EllipticCurvePrivateKey, key_id: str, timestamp: int, *, der: bool = False, pad: bool = False) -> str:
    """ES256 over ``{key_id}.{timestamp}``: base64url of raw r||s (or of DER when ``der``)."""
    signature = key.sign(f"{key_id}.{timestamp}".encode(), ec.ECDSA(hashes.SHA256()))
    if der:
        return b64url(signature, pad)
    r, s = decode_dss_signature(signature)
    return b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"), pad)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, b64url(hashlib.sha256(verifier.encode()).digest())


#: the parts of a venue's state the Auth and paper-trading routes read (a whole ``VenueState`` needs a
#: simulation, which these apps do not run): ``auth_store`` and ``paper_funds``
VENUE_PARTS = web.AppKey("venue_parts", SimpleNamespace)


def venue_parts(store: AuthStore, paper: Any = None) -> SimpleNamespace:
    return SimpleNamespace(auth_store=store, paper_funds=paper)


@web.middleware
async def problem_middleware(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
    """Stand-in for the app's middleware: the app's one venue, and Problem -> RFC 7807 body."""
    request[VENUE] = request.app[VENUE_PARTS]  # type: ignore[assignment]  # the parts these routes read
    try:
        return await handler(request)
    except Problem as problem:
        return web.Response(
            body=orjson.dumps(problem.body()), status=problem.status, content_type=PROBLEM_CONTENT_TYPE,
            headers=problem.headers,
        )  # fmt: skip


async def whoami(request: web.Request) -> web.Response:
    audience = request.query.get("audience")
    principal = require_bearer(auth_store_of(request), request, audience=audience, scope=request.query.get("scope"))
    return web.json_response(asdict(principal))


@dataclass
class World:
    """Keys and clients of a test scenario, with the private keys that sign for them."""

    private: dict[str, ec.EllipticCurvePrivateKey] = field(default_factory=dict)
    api_keys: list[dict[str, Any]] = field(default_factory=list)
    oauth_clients: list[dict[str, Any]] = field(default_factory=list)

    def add_key(self, key_id: str, kind: str = "user", **extra: Any) -> dict[str, Any]:
        self.private[key_id] = new_key()
        entry = {"key_id": key_id, "kind": kind, **extra, "public_key": public_pem(self.private[key_id])}
        self.api_keys.append(entry)
        return entry


def default_world() -> World:
    w = World()
    w.add_key("k-alice", user_id="u-alice", client_id="100")
    w.add_key("k-bob", user_id="u-bob", client_id="200")
    w.add_key("k-org", "organization", users=[{"user_id": "u-carol", "client_id": "300"},
                                              {"user_id": "u-dave", "client_id": "400"}])  # fmt: skip
    w.add_key("k-expiring", user_id="u-erin", client_id="500", expires_at="2026-11-02T12:00:00Z")
    w.oauth_clients = [
        {"client_id": "cli-demo", "redirect_uris": [REDIRECT, LOOPBACK_REDIRECT, "http://[::1]/cb"],
         "scopes": ["mcp:read", "mcp:trade"]},
        {"client_id": "cli-read", "redirect_uris": [REDIRECT], "scopes": ["mcp:read"]},
        {"client_id": "cli-off", "redirect_uris": [REDIRECT], "scopes": ["mcp:read"], "disabled": True},
    ]  # fmt: skip
    return w


class Harness:
    """A store, its clocks and an HTTP test client over the auth (and paper) routes."""

    def __init__(self, world: World, paper: Any = None, environment: str = "sandbox") -> None:
        self.world = world
        self.clock = FakeClock()
        self.wall = FakeWall()
        self.store = AuthStore.from_scenario(world.api_keys, world.oauth_clients, self.clock, wall=self.wall)
        app = web.Application(middlewares=[problem_middleware])
        app[VENUE_PARTS] = venue_parts(self.store, paper)
        app.add_routes(auth_routes(auth_store_of))
        app.add_routes([web.get("/_test/whoami", whoami)])
        if paper is not None:
            app[OPTIONS] = ServerOptions(environment=environment)
            app.add_routes(paper_routes())
        self.client = TestClient(TestServer(app))

    def signed(self, key_id: str, *, skew: float = 0, **kw: Any) -> dict[str, Any]:
        ts = int(self.wall.now + skew)
        return {"key_id": key_id, "timestamp": ts, "signature": sign(self.world.private[key_id], key_id, ts, **kw)}

    async def exchange(self, key_id: str, **kw: Any) -> dict[str, Any]:
        resp = await self.client.post("/v1/auth/api-key/token", json=self.signed(key_id, **kw))
        assert resp.status == 200, await resp.text()
        self.store.check_invariants()
        return await resp.json()

    async def token(self, key_id: str = "k-alice") -> str:
        return (await self.exchange(key_id))["access_token"]

    async def whoami(self, token: str | None, on_behalf_of: str | None = None, **query: str) -> tuple[int, Any]:
        headers = {}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if on_behalf_of is not None:
            headers["SVC-On-Behalf-Of"] = on_behalf_of
        resp = await self.client.get("/_test/whoami", headers=headers, params=query)
        return resp.status, await resp.json()


@asynccontextmanager
async def running(world: World | None = None, **kw: Any) -> AsyncIterator[Harness]:
    """A started :class:`Harness` (default scenario unless ``world``), closed on exit."""
    h = Harness(world or default_world(), **kw)
    await h.client.start_server()
    try:
        yield h
    finally:
        await h.client.close()


def test_signature_helper_produces_raw_and_der_forms() -> None:
    key = new_key()
    assert len(base64.urlsafe_b64decode(sign(key, "k", 1) + "==")) == 64
    assert len(base64.urlsafe_b64decode(sign(key, "k", 1, der=True, pad=True))) in range(68, 73)
