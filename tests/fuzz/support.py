"""Shared by the fuzz, limit and security tests: a server on a loopback port in its own thread, a
blocking keep-alive HTTP client that signs like a real one, and the checks every answer must pass.

The server runs the real ``create_app`` on a real socket (so aiohttp's own HTTP parser is part of
what is fuzzed), in a thread with its own event loop; hypothesis and schemathesis drive it from the
test thread with blocking calls. The simulation is changed only on the server's loop
(:meth:`Served.on_loop`) and read from the test thread only between requests.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import http.client
import io
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson
from aiohttp import web
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from cefisim.api.edge.problems import PROBLEM_BASE, PROBLEM_CONTENT_TYPE
from cefisim.api.edge.signing import sign
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.app.application import create_app
from cefisim.api.web.server.keys import ServerOptions
from cefisim.api.web.server.limits import handler_args
from tests.api.conftest import SECRETS, scenario_doc

T = TypeVar("T")

#: ``CEFISIM_FUZZ_SCALE=10 pytest tests/fuzz`` runs ten times the examples (CI runs the default 1)
FUZZ_SCALE = max(1, int(os.environ.get("CEFISIM_FUZZ_SCALE", "1") or "1"))


def examples(n: int) -> int:
    return n * FUZZ_SCALE


#: the fields of ServerOptions that ``api/web/server/limits.py`` enforces (see docs/limits.md)
LIMIT_FIELDS = ("max_header_bytes", "read_timeout_s", "rate_limits")
REDIRECT = "https://app.example/cb"
RESOURCE = "https://mcp.cefisim.test/"
ORG_USERS = [{"user_id": "u-bob", "client_id": "101"}]


# --- keys and scenario --------------------------------------------------------------------------------


def _key(seed: int) -> ec.EllipticCurvePrivateKey:
    """A fixed P-256 key (tests must not depend on which random key they drew)."""
    return ec.derive_private_key(
        int.from_bytes(hashlib.sha256(f"cefisim-fuzz-{seed}".encode()).digest(), "big") % (2**255), ec.SECP256R1()
    )


USER_KEY = _key(1)
ORG_KEY = _key(2)


def public_pem(key: ec.EllipticCurvePrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def es256(key: ec.EllipticCurvePrivateKey, key_id: str, timestamp: int) -> str:
    r, s = decode_dss_signature(key.sign(f"{key_id}.{timestamp}".encode(), ec.ECDSA(hashes.SHA256())))
    return base64.urlsafe_b64encode(r.to_bytes(32, "big") + s.to_bytes(32, "big")).rstrip(b"=").decode()


def fuzz_doc(**overrides: Any) -> dict[str, Any]:
    """The HTTP tests' scenario plus an ES256 user key, an organization key and an OAuth client."""
    return scenario_doc(
        api_keys=[
            {
                "key_id": "k-alice",
                "kind": "user",
                "user_id": "u-alice",
                "client_id": "100",
                "public_key": public_pem(USER_KEY),
            },
            {"key_id": "k-org", "kind": "organization", "public_key": public_pem(ORG_KEY), "users": ORG_USERS},
        ],
        oauth_clients=[
            {
                "client_id": "cli-demo",
                "redirect_uris": [REDIRECT, "http://127.0.0.1/cb"],
                "scopes": ["mcp:read", "mcp:trade"],
            }
        ],
        **overrides,
    )


# --- the served app -----------------------------------------------------------------------------------


def build_app(sim: Simulation, **options: Any) -> tuple[web.Application, dict[str, Any]]:
    """The real ``create_app`` with ``options`` (the limit options of ``api/web/server/limits.py`` among
    them), and the aiohttp handler arguments to start it with."""
    limits = {k: options.pop(k) for k in LIMIT_FIELDS if k in options}
    opts = ServerOptions(**options)
    for name, value in limits.items():
        setattr(opts, name, value)
    return create_app(sim, opts), handler_args(opts)


@dataclass
class Served:
    """An app served on 127.0.0.1 from a background thread."""

    app: web.Application
    sim: Simulation
    port: int = 0
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    _runner: web.AppRunner | None = None
    _thread: threading.Thread | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def on_loop(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the server's loop (between requests) and return its result."""

        async def call() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(timeout=30)

    def snapshot(self) -> Any:
        """The state, read from the test thread: only call it between requests (no request is in
        flight, and on a virtual clock nothing runs on the server's loop between requests)."""
        return state(self.sim.snapshot())


#: caches inside engine objects that a snapshot carries but that are not state (reads fill them)
def state(snapshot: dict[str, Any]) -> list[Any]:
    """What a snapshot holds of the state: its object table (memo caches are never in it, so a mere read
    leaves it unchanged; test_control_robustness.py pins that)."""
    objects: list[Any] = snapshot["objects"]
    return objects


@contextmanager
def serve(app: web.Application, sim: Simulation, access_log: bool = False, **handler: Any) -> Iterator[Served]:
    served = Served(app, sim)
    started = threading.Event()

    async def start() -> None:
        kwargs: dict[str, Any] = {} if access_log else {"access_log": None}
        served._runner = web.AppRunner(app, handle_signals=False, **kwargs, **handler)
        await served._runner.setup()
        site = web.TCPSite(served._runner, "127.0.0.1", 0)
        await site.start()
        served.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def run() -> None:
        asyncio.set_event_loop(served.loop)
        served.loop.run_until_complete(start())
        started.set()
        served.loop.run_forever()
        served.loop.run_until_complete(stop())
        served.loop.close()

    async def stop() -> None:
        await served._runner.cleanup()  # type: ignore[union-attr]
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(0.01)  # let closed transports release their sockets before the loop closes

    served._thread = threading.Thread(target=run, name="cefisim-test-server", daemon=True)
    served._thread.start()
    if not started.wait(20):
        raise RuntimeError("the test server did not start")
    # Two threads take turns on every request: without a short switch interval each turn can wait
    # the default 5 ms for the GIL.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)
    try:
        yield served
    finally:
        sys.setswitchinterval(interval)
        served.loop.call_soon_threadsafe(served.loop.stop)
        served._thread.join(timeout=20)


@contextmanager
def serve_sim(
    doc: dict[str, Any] | None = None, access_log: bool = False, access_log_format: str | None = None, **options: Any
) -> Iterator[Served]:
    """A fresh simulation of ``doc`` (default :func:`fuzz_doc`) on a virtual clock, served."""
    sim = Simulation(parse_scenario(doc or fuzz_doc(), "fuzz-scenario.json"), clock="virtual")
    app, handler = build_app(sim, access_log=access_log_format, **options)
    with serve(app, sim, access_log=access_log, **handler) as served:
        yield served


# --- a blocking client ----------------------------------------------------------------------------------


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    @property
    def content_type(self) -> str:
        return (self.headers.get("Content-Type") or "").split(";")[0].strip()

    def json(self) -> Any:
        return orjson.loads(self.body)


class Client:
    """One keep-alive connection; reconnects after the server closes it."""

    def __init__(self, port: int, timeout: float = 10) -> None:
        self.port = port
        self.timeout = timeout
        self._conn: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, target: str, body: bytes = b"", headers: dict[str, str] | None = None) -> Reply:
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            try:
                self._conn.request(method, target, body=body or None, headers=headers or {})
                resp = self._conn.getresponse()
                data = resp.read()
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine):
                self.close()  # a keep-alive connection the server had closed: retry once on a new one
                if attempt == 2:
                    raise
                continue
            if resp.will_close:
                self.close()
            return Reply(resp.status, resp.headers, data)
        raise AssertionError("unreachable")


def signed_headers(
    client_id: int,
    method: str,
    path: str,
    body: bytes,
    layout: str = "concat",
    ts: int | None = None,
    key: str | None = None,
    secret: str | None = None,
) -> dict[str, str]:
    k, s = SECRETS[client_id]
    ts_text = str(int(time.time()) if ts is None else ts)
    signature = sign(secret or s, ts_text, method, path, body, layout)
    return {
        "x-svc-auth-token": key or k,
        "x-svc-auth-signature": signature,
        "x-svc-auth-timestamp": ts_text,
        "x-svc-auth-userid": str(client_id),
    }


def raw_exchange(
    port: int, data: bytes, *, trickle: list[tuple[float, bytes]] | None = None, timeout: float = 10
) -> tuple[bytes, bool]:
    """Send raw bytes (then ``trickle`` pieces after their delays); return what came back and whether
    the server closed the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        for delay, piece in trickle or []:
            time.sleep(delay)
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
        chunks = []
        closed = False
        sock.settimeout(timeout)
        while True:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            chunks.append(chunk)
        return b"".join(chunks), closed


def raw_reply(sock: socket.socket, head_only: bool = False) -> Reply:
    """The answer on ``sock``, read to the connection's end; with ``head_only``, to the end of the
    head of a success or ``100 Continue`` (a stream never ends) and of the whole of any other answer."""
    answer = b""
    while True:
        _, sep, body = answer.partition(b"\r\n\r\n")
        if head_only and sep:
            reply = parse_reply(answer, head_only=True)
            if reply.status < 300 or len(body) >= int(reply.headers.get("Content-Length") or 0):
                return reply if reply.status < 300 else parse_reply(answer)
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    return parse_reply(answer)


def parse_reply(answer: bytes, head_only: bool = False) -> Reply:
    """An HTTP/1.x answer received over a raw socket (``head_only``: no body kept)."""
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, _, fields = head.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1."), answer[:300]
    headers = http.client.parse_headers(io.BytesIO(fields + b"\r\n\r\n"))
    return Reply(int(status_line.split()[1]), headers, b"" if head_only else body)


class LogRecords(logging.Handler):
    """The records of ``loggers`` (INFO and up) while the block runs: what a server wrote to its log."""

    def __init__(self, loggers: tuple[str, ...]) -> None:
        super().__init__(logging.INFO)
        self.names = loggers
        self.records: list[logging.LogRecord] = []
        self._levels: list[int] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> LogRecords:
        for name in self.names:
            logger = logging.getLogger(name)
            self._levels.append(logger.level)
            logger.setLevel(logging.INFO)
            logger.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        for name, level in zip(self.names, self._levels, strict=True):
            logger = logging.getLogger(name)
            logger.removeHandler(self)
            logger.setLevel(level)

    def clear(self) -> None:
        self.records.clear()

    def bad(self) -> list[str]:
        """The records a client's request must never cause: ERROR and above, or any with a traceback."""
        return [
            f"{r.name} {r.levelname}: {r.getMessage()}"
            for r in self.records
            if r.levelno >= logging.ERROR or r.exc_info is not None
        ]


# --- the checks ----------------------------------------------------------------------------------------


def assert_problem(reply: Reply, path: str) -> dict[str, Any]:
    """An RFC 7807 problem: nested in ``error`` on CeFi paths (v2026_01_23), bare elsewhere."""
    assert reply.content_type == PROBLEM_CONTENT_TYPE, (reply.status, reply.content_type, reply.body[:300])
    doc = reply.json()
    nested = path.startswith("/v1/cefi/") and isinstance(doc, dict) and isinstance(doc.get("error"), dict)
    problem = doc["error"] if nested else doc
    assert isinstance(problem, dict), doc
    assert isinstance(problem.get("type"), str) and problem["type"].startswith(PROBLEM_BASE), doc
    assert isinstance(problem.get("title"), str) and problem["title"], doc
    assert problem.get("status") == reply.status, doc
    assert isinstance(problem.get("detail"), str), doc
    return problem


def assert_oauth_error(reply: Reply) -> None:
    """RFC 6749 section 5.2: ``{"error": ..., "error_description": ...}`` as application/json."""
    assert reply.content_type == "application/json", (reply.status, reply.content_type, reply.body[:300])
    doc = reply.json()
    assert isinstance(doc.get("error"), str) and doc["error"], doc
    assert reply.status in (400, 401), reply.status


def check_answer(method: str, path: str, reply: Reply) -> None:
    """No 5xx; every 4xx a problem document (or the route's documented exception)."""
    assert reply.status < 500, (method, path, reply.status, reply.body[:500])
    if reply.status < 400 or method == "HEAD":
        return
    if path == "/v1/auth/oauth/token" and method == "POST":
        assert_oauth_error(reply)
    elif path == "/v1/auth/oauth/consent" and method == "GET":
        # the consent screen is a browser page: its refusals are HTML pages (docs/auth.md)
        assert reply.content_type in ("text/html", PROBLEM_CONTENT_TYPE), reply.content_type
    else:
        assert_problem(reply, path)
