"""Every header a route reads, fuzzed alone with raw bytes while the others stay valid: a 4xx problem
or the route's success, never a 5xx, and nothing at ERROR (or with a traceback) in the server's log.

``test_fuzz_header_bytes.py`` sends one odd header on an otherwise bare request, so a route stops at
its first check (a missing signature header, a missing token). Here each request starts from one the
route accepts (signed with a fresh timestamp, a live bearer token, the control token) and exactly one
header is replaced, so that the check behind the first one sees the bytes: the signature's comparison
with a valid key, client and timestamp, the on-behalf-of user behind a valid organization token, the
``Host`` of an OpenAPI document. Values are bytes the HTTP parser lets through (HTAB, visible ASCII,
and every byte from 0x80: not UTF-8 more often than not); ``test_fuzz_header_bytes.py`` covers the
bytes the parser refuses. Requests go over raw sockets: HTTP clients refuse to send such bytes.
"""

from __future__ import annotations

import base64
import hashlib
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.support import (
    ORG_KEY,
    REDIRECT,
    RESOURCE,
    USER_KEY,
    Client,
    LogRecords,
    Reply,
    Served,
    check_answer,
    es256,
    examples,
    raw_reply,
    serve_sim,
    signed_headers,
)

FUZZ = settings(
    max_examples=examples(30),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
TOKEN = "fuzz-control-token"
CONTROL = {"Authorization": f"Bearer {TOKEN}"}
VERIFIER = "v" * 43 + "-._~0123456789"
#: the bytes llhttp takes in a header value: HTAB, visible ASCII and obs-text (0x80 to 0xFF)
VALUE_BYTES = [9, *range(0x20, 0x7F), *range(0x80, 0x100)]
RAW = st.lists(st.sampled_from(VALUE_BYTES), max_size=24).map(bytes)
HIGH = st.lists(st.integers(0x80, 0xFF), min_size=1, max_size=4).map(bytes)


@dataclass(frozen=True)
class Route:
    """A request the route accepts, and the headers it reads (each is fuzzed in turn)."""

    method: str
    target: str
    body: Callable[[World], bytes] | None
    auth: str  # signed | user | org | control | none
    reads: tuple[str, ...]
    content_type: str = "application/json"

    def __post_init__(self) -> None:
        object.__setattr__(self, "reads", tuple(dict.fromkeys(self.reads)))  # each header once


class World:
    """The server, a venue beside the default one, and live credentials (refreshed as they are used)."""

    def __init__(self, served: Served) -> None:
        self.served = served
        client = Client(served.port)
        self.client = client
        reply = client.request("POST", "/_sim/venues", b'{"scenario": "demo"}', {**CONTROL, **_JSON})
        assert reply.status == 201, reply.body
        ts = int(time.time())
        user = self._ok("POST", "/v1/auth/api-key/token", _key_exchange("k-alice", USER_KEY, ts), _JSON)
        org = self._ok("POST", "/v1/auth/api-key/token", _key_exchange("k-org", ORG_KEY, ts), _JSON)
        self.user, self.org, self.refresh = user["access_token"], org["access_token"], user["refresh_token"]
        consent = self._ok("POST", "/v1/auth/oauth/consent", orjson.dumps(_consent()), {**_JSON, **self.bearer("user")})
        code = consent["redirect_to"].split("code=", 1)[1].split("&", 1)[0]
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": "cli-demo",
            "code_verifier": VERIFIER,
        }
        tokens = self._ok("POST", "/v1/auth/oauth/token", urlencode(form).encode(), _FORM)
        self.oauth_refresh = tokens["refresh_token"]
        order = {"info": {**_ORDER["info"], "price": "49000.00"}, "external_id": "rest-1"}
        self.resting = self._ok(
            "POST", "/v1/cefi/orders", orjson.dumps(order), self.signed("POST", "/v1/cefi/orders", orjson.dumps(order))
        )["id"]

    def _ok(self, method: str, target: str, body: bytes, headers: dict[str, str]) -> Any:
        reply = self.client.request(method, target, body, headers)
        assert reply.status in (200, 201), (target, reply.status, reply.body)
        return reply.json()

    def bearer(self, who: str) -> dict[str, str]:
        if who == "org":
            return {"Authorization": f"Bearer {self.org}", "SVC-On-Behalf-Of": "u-bob"}
        return {"Authorization": f"Bearer {self.user}"}

    def signed(self, method: str, target: str, body: bytes) -> dict[str, str]:
        return signed_headers(100, method, target.split("?", 1)[0], body)

    def headers(self, route: Route, body: bytes) -> dict[str, str]:
        """The valid headers of ``route`` (signed now: the signature's timestamp is the wall clock)."""
        out = {"Host": f"127.0.0.1:{self.served.port}", "X-Request-Id": "fuzz-1"}
        if route.target.startswith("/v1/cefi/"):
            out["X-Svc-Version"] = "v2026_01_23"
        if body:
            out["Content-Type"] = route.content_type
        if route.auth == "signed":
            out.update(self.signed(route.method, route.target, body))
        elif route.auth in ("user", "org"):
            out.update(self.bearer(route.auth))
        elif route.auth == "control":
            out.update(CONTROL)
        return out

    def keep(self, route: Route, reply: Reply) -> None:
        """A refresh token is spent by its use: keep the replacement a success hands back."""
        if reply.status == 200 and route.target == "/v1/auth/token/refresh":
            self.refresh = reply.json()["refresh_token"]
        elif reply.status == 200 and route.target == "/v1/auth/oauth/token":
            self.oauth_refresh = reply.json()["refresh_token"]


_JSON = {"Content-Type": "application/json"}
_FORM = {"Content-Type": "application/x-www-form-urlencoded"}
_ORDER = {
    "info": {
        "client_id": "100",
        "instrument_id": "1",
        "qty": "0.0001",
        "side": "BUY",
        "type": "LIMIT",
        "price": "48000.00",
    }
}
SIGNING = ("x-svc-auth-token", "x-svc-auth-signature", "x-svc-auth-timestamp", "x-svc-auth-userid")
COMMON = ("Host", "X-Request-Id")
CEFI = (*COMMON, "X-Svc-Version", "x-svc-auth-token", "Authorization")
BEARER = (*COMMON, "Authorization", "SVC-On-Behalf-Of")


def _key_exchange(key_id: str, key: Any, ts: int) -> bytes:
    return orjson.dumps({"key_id": key_id, "timestamp": ts, "signature": es256(key, key_id, ts)})


def _consent() -> dict[str, str]:
    challenge = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()
    return {
        "client_id": "cli-demo",
        "redirect_uri": REDIRECT,
        "response_type": "code",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": RESOURCE,
        "scope": "mcp:read",
        "state": "st",
        "decision": "approve",
    }


def _const(body: bytes) -> Callable[[World], bytes]:
    return lambda _w: body


FAMILIES: dict[str, list[Route]] = {
    "cefi-signed": [
        Route("GET", "/v1/cefi/balances", None, "signed", (*CEFI, *SIGNING)),
        Route("POST", "/v1/cefi/orders", _const(orjson.dumps(_ORDER)), "signed", (*CEFI, *SIGNING, "Content-Type")),
        Route(
            "PATCH",
            "/v1/cefi/orders",
            lambda w: orjson.dumps(
                {"id": w.resting, "info": {"client_id": "100", "new_qty": "0.0001", "new_price": "49000.00"}}
            ),
            "signed",
            (*CEFI, *SIGNING, "Content-Type"),
        ),
        Route("DELETE", "/v1/cefi/orders/999999", None, "signed", (*CEFI, *SIGNING)),
        Route("GET", "/v1/cefi/orders/all?size=5", None, "signed", (*CEFI, *SIGNING)),
    ],
    "cefi-public": [
        Route("GET", "/v1/cefi/instruments", None, "none", CEFI),
        Route("GET", "/v1/cefi/versions", None, "none", CEFI),
        Route(
            "POST",
            "/v1/cefi/markets/quote",
            _const(b'{"qty": "0.0001", "instrument_id": "1", "side": "SELL", "qty_unit": "BASE"}'),
            "none",
            (*CEFI, "Content-Type"),
        ),
    ],
    "documents": [
        Route("GET", "/v1/cefi/openapi.json", None, "none", CEFI),
        Route("GET", "/_sim/openapi.json", None, "control", (*COMMON, "Authorization")),
    ],
    "auth": [
        Route(
            "POST",
            "/v1/auth/api-key/token",
            lambda _w: _key_exchange("k-alice", USER_KEY, int(time.time())),
            "none",
            (*COMMON, "Content-Type", "Authorization"),
        ),
        Route(
            "POST",
            "/v1/auth/token/refresh",
            lambda w: orjson.dumps({"refresh_token": w.refresh}),
            "none",
            (*COMMON, "Content-Type", "Authorization"),
        ),
        Route(
            "GET",
            "/v1/auth/oauth/authorize?" + "&".join(f"{k}={v}" for k, v in _consent().items() if k != "decision"),
            None,
            "none",
            BEARER,
        ),
        Route("POST", "/v1/auth/oauth/consent", lambda _w: orjson.dumps(_consent()), "user", (*BEARER, "Content-Type")),
        Route("POST", "/v1/auth/oauth/consent", lambda _w: orjson.dumps(_consent()), "org", (*BEARER, "Content-Type")),
        Route(
            "POST",
            "/v1/auth/oauth/token",
            lambda w: f"grant_type=refresh_token&refresh_token={w.oauth_refresh}&client_id=cli-demo".encode(),
            "none",
            (*COMMON, "Content-Type", "Authorization"),
            content_type="application/x-www-form-urlencoded",
        ),
    ],
    "paper": [
        Route(
            "POST",
            "/v1/paper-trading/funds",
            _const(b'{"asset": "USD", "amount": "1"}'),
            "user",
            (*BEARER, "Content-Type"),
        ),
        Route(
            "POST",
            "/v1/paper-trading/funds/remove",
            _const(b'{"asset": "USD", "amount": "1"}'),
            "org",
            (*BEARER, "Content-Type"),
        ),
    ],
    "control": [
        Route("GET", "/_sim/health", None, "control", (*COMMON, "Authorization")),
        Route("GET", "/_sim/venues/v1/book/1", None, "control", (*COMMON, "Authorization")),
        Route(
            "POST", "/_sim/latency", _const(b'{"entry_ms": 0}'), "control", (*COMMON, "Authorization", "Content-Type")
        ),
        Route(
            "GET", "/_sim/stream?venue=v1&instrument=1", None, "control", (*COMMON, "Authorization", "Last-Event-ID")
        ),
    ],
}


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with serve_sim(control_token=TOKEN) as served:
        world = World(served)
        try:
            yield world
        finally:
            world.client.close()


@pytest.fixture(scope="module")
def server_log() -> Iterator[LogRecords]:
    with LogRecords(("cefisim", "aiohttp")) as records:
        yield records


def _send(world: World, route: Route, name: str | None, value: Callable[[bytes], bytes]) -> tuple[Reply, bytes]:
    """``route``'s valid request with header ``name`` set to ``value(valid value)``; the answer."""
    body = route.body(world) if route.body else b""
    headers = world.headers(route, body)
    lines = [f"{route.method} {route.target} HTTP/1.1", "Connection: close", f"Content-Length: {len(body)}"]
    raw = "\r\n".join(lines).encode() + b"\r\n"
    sent = b""
    for key, text in headers.items():
        if name is not None and key.lower() == name.lower():
            continue
        raw += f"{key}: {text}".encode() + b"\r\n"
    if name is not None:
        sent = value(next((v for k, v in headers.items() if k.lower() == name.lower()), "").encode())
        raw += name.encode() + b": " + sent + b"\r\n"
    stream = route.target.startswith("/_sim/stream")
    with socket.create_connection(("127.0.0.1", world.served.port), timeout=60) as sock:
        sock.sendall(raw + b"\r\n" + body)
        reply = raw_reply(sock, head_only=stream)
    world.keep(route, reply)
    return reply, sent


@dataclass(frozen=True)
class Mutation:
    """What becomes of the valid value: ``replace``d by ``raw``, or ``raw`` inserted at ``cut`` (modulo
    its length), or ``high`` bytes (never UTF-8 on their own) inserted there: the common crash."""

    how: str
    raw: bytes
    cut: int

    def __call__(self, valid: bytes) -> bytes:
        if self.how == "replace":
            return self.raw
        at = self.cut % (len(valid) + 1)
        return valid[:at] + self.raw + valid[at:]


MUTATIONS = st.one_of(
    st.builds(Mutation, st.just("replace"), RAW, st.just(0)),
    st.builds(Mutation, st.just("insert"), RAW, st.integers(0, 80)),
    st.builds(Mutation, st.just("high"), HIGH, st.integers(0, 80)),
)


def test_every_route_answers_its_valid_request(world: World) -> None:
    """The requests the fuzzing starts from are accepted: each fuzzed header is the only thing wrong."""
    for routes in FAMILIES.values():
        for route in routes:
            reply, _ = _send(world, route, None, bytes)
            expected = 404 if route.target.endswith("/999999") else 200
            assert reply.status == expected or (
                route.method == "GET" and "authorize" in route.target and reply.status == 302
            ), (
                route,
                reply.status,
                reply.body[:300],
            )


@pytest.mark.parametrize("family", sorted(FAMILIES))
@FUZZ
@given(data=st.data())
def test_a_header_of_any_bytes_is_a_4xx_problem_never_a_5xx(
    world: World, server_log: LogRecords, family: str, data: st.DataObject
) -> None:
    route = data.draw(st.sampled_from(FAMILIES[family]), label="route")
    name = data.draw(st.sampled_from(route.reads), label="header")
    mutate = data.draw(MUTATIONS, label="mutation")
    server_log.clear()
    reply, sent = _send(world, route, name, mutate)
    path = route.target.split("?", 1)[0]
    check_answer(route.method, path, reply)
    assert not server_log.bad(), (route.method, route.target, name, sent, server_log.bad())
