"""Security properties of the whole app (docs/security.md): secrets stay out of logs and error bodies,
clients are isolated from each other, tokens are bound to their audience, secrets are compared in
constant time, and the control plane is fenced off.

The unit-level rules (token lifetimes, rotation, refresh-token families, PKCE, consent) are tested in
``tests/api/test_auth_*.py``; these tests drive the real application over a real socket.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import logging
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import orjson
import pytest
from aiohttp.test_utils import make_mocked_request

from cefisim.api.edge import signing
from cefisim.api.edge.problems import Problem
from cefisim.api.edge.signing import sign
from cefisim.api.web.control import plane as control
from cefisim.api.web.server.limit_flags import parse_rate_limits
from cefisim.api.web.server.request_log import REQUEST_LOG
from tests.api.conftest import ALICE_KEY, BOB_KEY, SECRETS
from tests.fuzz.support import (
    REDIRECT,
    RESOURCE,
    USER_KEY,
    Client,
    Reply,
    Served,
    es256,
    raw_exchange,
    serve_sim,
    signed_headers,
)

CONTROL_TOKEN = "ctl-" + "q" * 40
VERIFIER = "w" * 50
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()
AUTHORIZE = {
    "client_id": "cli-demo",
    "redirect_uri": REDIRECT,
    "response_type": "code",
    "code_challenge": CHALLENGE,
    "code_challenge_method": "S256",
    "resource": RESOURCE,
    "scope": "mcp:read",
    "state": "s",
}
UUID = "0f8fad5b-d9cb-469f-a165-70867728950e"


class Recorder:
    """A client that keeps every reply, and the secrets that must never come back or be logged."""

    def __init__(self, served: Served) -> None:
        self.client = Client(served.port)
        self.port = served.port
        self.served = served
        self.replies: list[Reply] = []
        self.secrets: set[str] = {s for _, s in SECRETS.values()} | {CONTROL_TOKEN, VERIFIER}

    def send(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None, raw: bytes | None = None
    ) -> Reply:
        data = raw if raw is not None else (orjson.dumps(body) if body is not None else b"")
        hdrs = {"Authorization": f"Bearer {CONTROL_TOKEN}"} if path.startswith("/_sim") else {}
        hdrs.update(headers or {})
        if data and "Content-Type" not in hdrs:
            hdrs["Content-Type"] = "application/json"
        reply = self.client.request(method, path, data, hdrs)
        self.replies.append(reply)
        return reply

    def signed(self, method: str, path: str, body: Any = None, client_id: int = 100, **kw: Any) -> Reply:
        data = orjson.dumps(body) if body is not None else b""
        headers = signed_headers(client_id, method, path.split("?")[0], data, **kw)
        self.secrets.add(headers["x-svc-auth-signature"])
        return self.send(method, path, headers=headers, raw=data)


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    """Everything on: access log, control token, a small body limit, a short read timeout, and a rate
    limit on bob's key (alice's is exempt)."""
    with serve_sim(
        access_log=True,
        access_log_format="json",
        control_token=CONTROL_TOKEN,
        max_body_bytes=4096,
        read_timeout_s=0.3,
        rate_limits=parse_rate_limits([f"{BOB_KEY}=0.001:3"]),
    ) as served:
        rec = Recorder(served)
        try:
            yield rec
        finally:
            rec.client.close()


def _token_pair(rec: Recorder) -> dict[str, str]:
    ts = int(time.time())
    signature = es256(USER_KEY, "k-alice", ts)
    rec.secrets.add(signature)
    tokens = rec.send(
        "POST", "/v1/auth/api-key/token", {"key_id": "k-alice", "timestamp": ts, "signature": signature}
    ).json()
    rec.secrets.update([tokens["access_token"], tokens["refresh_token"]])
    return tokens


def _code(rec: Recorder, access: str) -> str:
    answer = rec.send(
        "POST", "/v1/auth/oauth/consent", {**AUTHORIZE, "decision": "approve"}, {"Authorization": f"Bearer {access}"}
    ).json()
    code = parse_qs(urlsplit(answer["redirect_to"]).query)["code"][0]
    rec.secrets.add(code)
    return code


def _form(rec: Recorder, form: dict[str, str]) -> Reply:
    return rec.send(
        "POST",
        "/v1/auth/oauth/token",
        raw=urlencode(form).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )


def _redeem(rec: Recorder, code: str, verifier: str) -> Reply:
    """The OAuth token request that exchanges ``code`` (demo client, the usual redirect URI)."""
    return _form(
        rec,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "client_id": "cli-demo",
            "code_verifier": verifier,
        },
    )


def test_no_secret_token_or_signature_reaches_a_log_record_or_an_error_body(
    recorder: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    rec = recorder
    access_lines = io.StringIO()  # cefisim's own access log (--log-format json), beside aiohttp's
    request_log = rec.served.app[REQUEST_LOG]
    request_log.stream = access_lines
    failing: list[Reply] = []
    orders = "/v1/cefi/orders"
    order = {
        "info": {
            "client_id": "100",
            "instrument_id": "1",
            "side": "BUY",
            "type": "LIMIT",
            "qty": "0.01",
            "price": "49000.00",
        }
    }
    # CeFi signing: every check that can fail, each with a real signature in the request
    body = orjson.dumps(order)
    other = sign("alice-secret", str(int(time.time())), "POST", orders, b"{}")
    rec.secrets.update([other, sign("alice-secret", str(int(time.time())), "POST", orders, body)])
    failing += [
        rec.send(
            "POST",
            orders,
            headers={**signed_headers(100, "POST", orders, body), "x-svc-auth-signature": other},
            raw=body,
        ),
        rec.signed("POST", orders, order, ts=int(time.time()) - 60),
        rec.signed("POST", orders, order, ts=int(time.time()) + 60),
        rec.signed("POST", orders, order, key=BOB_KEY),
        rec.signed("POST", orders, order, key="00000000-0000-4000-8000-000000000000"),
        rec.signed("POST", orders, {**order, "info": {**order["info"], "client_id": "101"}}),  # 403
        rec.signed("POST", orders, {"info": {"client_id": "100"}}),  # 400
        rec.signed("POST", orders, {"pad": "x" * 5000}),  # 413
        rec.signed("DELETE", "/v1/cefi/orders/nope"),  # 404
    ]
    failing += [rec.signed("GET", "/v1/cefi/balances", client_id=101) for _ in range(4)][3:]  # 429
    head = signed_headers(100, "POST", orders, b"x" * 50)
    rec.secrets.add(head["x-svc-auth-signature"])
    data, _ = raw_exchange(
        rec.port,
        (
            f"POST {orders} HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in head.items())
            + "\r\n"
        ).encode(),
        timeout=5,
    )
    assert data.startswith(b"HTTP/1.1 408")
    failing.append(Reply(408, None, data))  # type: ignore[arg-type]
    # Auth: key exchange, refresh, bearer, consent, OAuth token endpoint
    tokens = _token_pair(rec)
    ts = int(time.time())
    wrong = es256(USER_KEY, "k-alice", ts - 5)
    rec.secrets.add(wrong)
    failing += [
        rec.send("POST", "/v1/auth/api-key/token", {"key_id": "k-alice", "timestamp": ts, "signature": wrong}),
        rec.send("POST", "/v1/auth/api-key/token", {"key_id": "k-org", "timestamp": ts, "signature": wrong}),
        rec.send("POST", "/v1/auth/token/refresh", {"refresh_token": tokens["refresh_token"] + "x"}),
        rec.send("POST", "/v1/auth/token/refresh", {"refresh_token": tokens["access_token"]}),
        rec.send(
            "POST",
            "/v1/paper-trading/funds",
            {"asset": "USD", "amount": "1"},
            {"Authorization": f"Bearer {tokens['access_token']}x"},
        ),
        rec.send(
            "POST",
            "/v1/paper-trading/funds",
            {"asset": "DOGE", "amount": "1"},
            {"Authorization": f"Bearer {tokens['access_token']}"},
        ),
        rec.send(
            "POST",
            "/v1/auth/oauth/consent",
            {**AUTHORIZE, "decision": "maybe"},
            {"Authorization": f"Bearer {tokens['access_token']}"},
        ),
    ]
    code = _code(rec, tokens["access_token"])
    failing.append(_redeem(rec, code, "z" * 43))
    oauth = _redeem(rec, code, VERIFIER).json()
    rec.secrets.update([oauth["access_token"], oauth["refresh_token"]])
    refreshed = _form(
        rec, {"grant_type": "refresh_token", "refresh_token": oauth["refresh_token"], "client_id": "cli-demo"}
    ).json()
    rec.secrets.update([refreshed["access_token"], refreshed["refresh_token"]])
    failing.append(
        _form(rec, {"grant_type": "refresh_token", "refresh_token": oauth["refresh_token"], "client_id": "cli-demo"})
    )  # replay: revokes the family
    failing.append(_redeem(rec, code, VERIFIER))  # second redemption
    failing.append(
        rec.send(
            "POST",
            "/v1/paper-trading/funds",
            {"asset": "USD", "amount": "1"},
            {"Authorization": f"Bearer {oauth['access_token']}"},
        )
    )
    # control plane with a wrong token, and a refused restore
    failing.append(rec.send("GET", "/_sim/clock", headers={"Authorization": f"Bearer {CONTROL_TOKEN[:-1]}"}))
    snapshot = rec.send("GET", "/_sim/snapshot").json()
    failing.append(rec.send("POST", "/_sim/snapshot", {**snapshot, "start_ns": None}))

    assert all(r.status >= 400 for r in failing), [(r.status, r.body[:80]) for r in failing]
    assert {r.status for r in failing} >= {400, 401, 403, 404, 408, 413, 429}
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''} {r.stack_info or ''}" for r in caplog.records)
    assert "POST /v1/cefi/orders" in logged  # the access log is on: the check has teeth
    for reply in failing:
        text = reply.body.decode("utf-8", "replace") + (str(dict(reply.headers)) if reply.headers else "")
        for secret in rec.secrets:
            assert secret not in text, (reply.status, secret[:6])
    for secret in rec.secrets:
        assert secret not in logged, secret[:6]
    # the access log and GET /_sim/requests (which keeps the problem documents of the failures)
    kept = rec.send("GET", "/_sim/requests").body.decode()
    rec.served.loop.call_soon_threadsafe(request_log.flush)
    deadline = time.monotonic() + 5
    while '"POST","path":"/v1/cefi/orders","status":401' not in access_lines.getvalue():
        assert time.monotonic() < deadline, access_lines.getvalue()[-500:]
        time.sleep(0.01)
    assert '"status":413' in kept and '"problem":{' in kept and "/v1/auth/oauth/token" in kept
    for secret in rec.secrets:
        assert secret not in access_lines.getvalue() and secret not in kept, secret[:6]


# --- who may act for whom -------------------------------------------------------------------------------


def test_a_key_acts_only_for_its_own_client(recorder: Recorder) -> None:
    rec = recorder
    bob = rec.signed(
        "POST",
        "/v1/cefi/orders",
        {
            "external_id": "shared",
            "info": {
                "client_id": "101",
                "instrument_id": "1",
                "side": "SELL",
                "type": "LIMIT",
                "qty": "0.01",
                "price": "51000.00",
            },
        },
        client_id=101,
    ).json()
    transfer = rec.signed(
        "POST",
        "/v1/cefi/transfers",
        {
            "request": {
                "amount": "1.00",
                "asset_id": "2",
                "client_id": "101",
                "type": "DEPOSIT",
                "platform": "FIAT",
                "instructions": {
                    "fiat_account_id": UUID,
                    "identity_id": UUID,
                    "account_id": UUID,
                    "includes_fee": False,
                },
            }
        },
        client_id=101,
    ).json()
    # alice's key naming bob is refused outright; alice naming bob in a body or query is a 403
    assert rec.signed("GET", "/v1/cefi/balances", key=ALICE_KEY, secret="alice-secret", client_id=101).status == 401
    assert rec.signed("GET", "/v1/cefi/balances?client_id=101").status == 403
    # bob's records do not exist for alice, by id or by bob's external id
    for method, path, body in [
        ("DELETE", f"/v1/cefi/orders/{bob['id']}", None),
        ("DELETE", "/v1/cefi/orders/shared", None),
        ("GET", f"/v1/cefi/orders/status/{bob['id']}", None),
        ("GET", "/v1/cefi/orders/status/shared", None),
        ("GET", f"/v1/cefi/orders/active?id={bob['id']}", None),
        ("GET", f"/v1/cefi/transfers/active?transfer_id={transfer['id']}", None),
        (
            "PATCH",
            "/v1/cefi/orders",
            {"id": bob["id"], "info": {"client_id": "100", "new_qty": "0.005", "new_price": "51000.00"}},
        ),
    ]:
        assert rec.signed(method, path, body).status == 404, (method, path)
    # alice may reuse bob's external id: namespaces are per client
    mine = rec.signed(
        "POST",
        "/v1/cefi/orders",
        {
            "external_id": "shared",
            "info": {
                "client_id": "100",
                "instrument_id": "1",
                "side": "BUY",
                "type": "LIMIT",
                "qty": "0.01",
                "price": "49000.00",
            },
        },
    ).json()
    assert mine["status"] == "ACTIVE" and mine["id"] != bob["id"]
    assert rec.signed("GET", "/v1/cefi/orders/status/shared", client_id=101).json()["id"] == bob["id"]
    listing = rec.signed("GET", "/v1/cefi/orders/all").json()["data"]
    assert {o["order_info"]["client_id"] for o in listing} == {"100"}


def test_oauth_tokens_are_bound_to_their_audience(recorder: Recorder) -> None:
    rec = recorder
    tokens = _token_pair(rec)
    code = _code(rec, tokens["access_token"])
    oauth = _redeem(rec, code, VERIFIER).json()
    bearer = {"Authorization": f"Bearer {oauth['access_token']}"}
    # the emulator's own routes name no audience: an OAuth token for the MCP resource is not valid there
    reply = rec.send("POST", "/v1/paper-trading/funds", {"asset": "USD", "amount": "1"}, bearer)
    assert reply.status == 401 and reply.json()["type"].endswith("/invalid-token")
    assert rec.send("POST", "/v1/auth/oauth/consent", {**AUTHORIZE, "decision": "deny"}, bearer).status == 401
    # nor is it a key-exchange refresh token, nor the other way round
    assert rec.send("POST", "/v1/auth/token/refresh", {"refresh_token": oauth["refresh_token"]}).status == 401
    assert (
        _form(
            rec, {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": "cli-demo"}
        ).json()["error"]
        == "invalid_grant"
    )
    # and a key-exchange token still works on the emulator's routes
    assert (
        rec.send(
            "POST",
            "/v1/paper-trading/funds",
            {"asset": "USD", "amount": "1"},
            {"Authorization": f"Bearer {tokens['access_token']}"},
        ).status
        == 200
    )


# --- constant time --------------------------------------------------------------------------------------


def test_signatures_and_the_control_token_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(signing.hmac, "compare_digest", spy)  # the hmac module both api modules use
    assert control.hmac is signing.hmac
    with serve_sim(signature_layout="either", control_token=CONTROL_TOKEN) as served:
        client = Client(served.port)
        try:
            path = "/v1/cefi/balances"
            headers = {**signed_headers(100, "GET", path, b""), "x-svc-auth-signature": "AAAA" * 11}
            assert client.request("GET", path, b"", headers).status == 401
            # both layouts compared, whichever might match: no early exit that would time the layout
            assert [b for _, b in calls] == [b"AAAA" * 11] * 2
            calls.clear()
            assert client.request("GET", "/_sim/clock", b"", {"Authorization": "Bearer nope"}).status == 401
            assert calls, "the control token must be compared with hmac.compare_digest"
        finally:
            client.close()


def _app_with(**options: Any) -> Any:
    from aiohttp import web

    from cefisim.api.web.server.keys import OPTIONS, ServerOptions

    app = web.Application()
    app[OPTIONS] = ServerOptions(**options)
    return app


# --- the control plane ----------------------------------------------------------------------------------


def test_the_control_plane_is_off_in_production() -> None:
    with serve_sim(environment="production") as served:
        client = Client(served.port)
        for method, path in [
            ("GET", "/_sim/health"),
            ("POST", "/_sim/reset"),
            ("GET", "/_sim/snapshot"),
            ("POST", "/_sim/faults"),
            ("GET", "/_sim"),
            ("GET", "/_sim/nothing"),
        ]:
            reply = client.request(
                method, path, b"{}", {"Content-Type": "application/json", "Authorization": "Bearer anything"}
            )
            assert reply.status == 404 and reply.json()["type"].endswith("/not-found"), (method, path)
        client.close()


def test_the_control_plane_needs_its_token_on_every_route_when_one_is_set(recorder: Recorder) -> None:
    rec = recorder
    for method, path in [
        ("GET", "/_sim/health"),
        ("POST", "/_sim/reset"),
        ("GET", "/_sim/snapshot"),
        ("POST", "/_sim/snapshot"),
        ("POST", "/_sim/faults"),
        ("DELETE", "/_sim/faults"),
        ("POST", "/_sim/api-keys/k-alice/revoke"),
        ("POST", "/_sim/clock/advance"),
    ]:
        for auth in ("", "Bearer ", f"Bearer {CONTROL_TOKEN}x", f"bearer {CONTROL_TOKEN}", CONTROL_TOKEN):
            reply = rec.send(method, path, {}, {"Authorization": auth})
            assert reply.status == 401, (method, path, auth, reply.status)


def _guarded(peer: str, **options: Any) -> int:
    """The control guard's answer for a request from ``peer`` (200 when it lets the request through)."""
    import asyncio
    from unittest import mock

    transport = mock.Mock()
    transport.get_extra_info.side_effect = lambda name, default=None: (peer, 4242) if name == "peername" else default
    request = make_mocked_request("POST", "/_sim/reset", app=_app_with(**options), transport=transport)

    async def handler(request: Any) -> int:
        return 200

    try:
        return asyncio.run(control.control_guard(request, handler))
    except Problem as problem:
        return problem.status


def test_the_control_plane_serves_loopback_peers_without_a_token() -> None:
    assert _guarded("127.0.0.1") == 200
    assert _guarded("::1") == 200


def test_the_control_plane_refuses_remote_peers_unless_a_token_is_set() -> None:
    assert _guarded("10.1.2.3") in (403, 404)
    assert _guarded("10.1.2.3", control_token=CONTROL_TOKEN) == 401  # no token sent


def test_a_refused_oversized_header_does_not_log_its_bytes(caplog: pytest.LogCaptureFixture) -> None:
    from cefisim.api.web.server.limit_flags import install_log_redaction

    install_log_redaction()
    install_log_redaction()  # idempotent
    caplog.set_level(logging.DEBUG)
    token = "tok-" + "s" * 40
    with serve_sim(max_header_bytes=1024) as served:
        data, closed = raw_exchange(
            served.port,
            (f"GET /v1/cefi/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}{'A' * 2000}\r\n\r\n").encode(),
        )
    assert data.startswith(b"HTTP/1.0 400") and closed
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert "LineTooLong" in logged  # the refusal is logged ...
    assert token not in logged  # ... without the header's bytes
