"""Real servers on the demo scenario with a created venue: Auth tokens minted, rotated and revoked, the
server SIGKILLed (virtual clock) or stopped cleanly with SIGTERM (wall clock), restarted on its journal,
again and again. After every restart each venue's Auth state (``GET /_sim/snapshot``'s ``auth``) is
as it was, every access token still works, every rotated or revoked credential is still refused."""

from __future__ import annotations

import base64
import hashlib
import secrets
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from tests.api.served import ROOT, ready_url, reap, serve_ready

DEMO = ROOT / "scenarios" / "demo.json"
ALICE = serialization.load_pem_private_key((ROOT / "scenarios" / "keys" / "alice-es256.pem").read_bytes(), None)
REDIRECT = "https://app.example/cb"
RESOURCE = "https://mcp.cefisim.test/"
READY_S = 120  # a start on a loaded machine: the ready file is polled this long


def _serve(journal: Path, ready: Path, clock: str) -> subprocess.Popen[bytes]:
    return serve_ready(DEMO, journal, ready, clock)


def _signed(key_id: str, key: ec.EllipticCurvePrivateKey) -> dict[str, Any]:
    ts = int(time.time())
    r, s = decode_dss_signature(key.sign(f"{key_id}.{ts}".encode(), ec.ECDSA(hashes.SHA256())))
    raw = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return {"key_id": key_id, "timestamp": ts, "signature": base64.urlsafe_b64encode(raw).rstrip(b"=").decode()}


class Venue:
    """What a test client of one venue holds, and what the server must still say about each of it."""

    def __init__(self, created: dict[str, Any] | None = None) -> None:
        """The default venue, or one a create answered (``created``: its minted credentials)."""
        assert isinstance(ALICE, ec.EllipticCurvePrivateKey)
        self.control, self.key_id, self.key, self.client_id = "/_sim", "k-alice", ALICE, "cli-demo"
        if created is not None:
            self.control = f"/_sim/venues/{created['id']}"
            entry = next(k for k in created["api_keys"] if k["key_id"].startswith("k-alice-"))
            key = serialization.load_pem_private_key(entry["private_key"].encode(), None)
            assert isinstance(key, ec.EllipticCurvePrivateKey)
            self.key_id, self.key = entry["key_id"], key
            self.client_id = next(
                c["client_id"] for c in created["oauth_clients"] if c["client_id"].startswith("cli-demo-")
            )
        self.access: list[str] = []  # key-exchange access tokens: valid for their hour
        self.refresh: str | None = None  # the key exchange's current refresh token
        self.rotated: list[str] = []  # key-exchange refresh tokens rotated away: refused
        self.oauth_refresh: str | None = None  # the grant's current OAuth refresh token
        self.used_oauth: list[str] = []  # OAuth refresh tokens rotated away
        self.dead_grant: str | None = None  # a refresh token of a grant revoked for reuse: refused
        self.code: tuple[str, str] | None = None  # a code approved, not yet redeemed (code, verifier)
        self.revoked = False
        self.auth: Any = None  # the venue's Auth state as the snapshot showed it before the stop

    async def post(self, session: aiohttp.ClientSession, base: str, path: str, **kw: Any) -> tuple[int, Any]:
        async with session.post(base + path, **kw) as resp:
            return resp.status, await resp.json(content_type=None)

    async def check(self, session: aiohttp.ClientSession, base: str) -> None:
        async with session.get(base + self.control + "/snapshot") as resp:
            assert resp.status == 200
            assert (await resp.json()).get("auth") == self.auth
        for token in self.access:  # a valid token gets past the bearer check to the body check: 400
            status, body = await self.post(
                session, base, "/v1/paper-trading/funds", json={}, headers={"Authorization": f"Bearer {token}"}
            )
            assert status == 400, body
        for token in self.rotated:
            status, _ = await self.post(session, base, "/v1/auth/token/refresh", json={"refresh_token": token})
            assert status == 401
        if self.dead_grant is not None:
            form = {"grant_type": "refresh_token", "client_id": self.client_id, "refresh_token": self.dead_grant}
            status, body = await self.post(session, base, "/v1/auth/oauth/token", data=form)
            assert status == 400 and body["error"] == "invalid_grant"
        status, body = await self.post(session, base, "/v1/auth/api-key/token", json=_signed(self.key_id, self.key))
        assert status == (401 if self.revoked else 200), body
        if status == 200:
            self.access.append(body["access_token"])

    async def reuse(self, session: aiohttp.ClientSession, base: str) -> None:
        """Replay a rotated OAuth refresh token: the whole grant is revoked."""
        form = {"grant_type": "refresh_token", "client_id": self.client_id, "refresh_token": self.used_oauth[0]}
        status, body = await self.post(session, base, "/v1/auth/oauth/token", data=form)
        assert status == 400 and body["error"] == "invalid_grant"
        self.dead_grant, self.oauth_refresh = self.oauth_refresh, None

    async def mint_and_rotate(self, session: aiohttp.ClientSession, base: str) -> None:
        if self.refresh is not None:
            status, body = await self.post(
                session, base, "/v1/auth/token/refresh", json={"refresh_token": self.refresh}
            )
            if self.revoked:
                assert status == 401, body
                return
            assert status == 200, body
            self.rotated.append(self.refresh)
            self.access.append(body["access_token"])
            self.refresh = body["refresh_token"]
        else:
            status, body = await self.post(session, base, "/v1/auth/api-key/token", json=_signed(self.key_id, self.key))
            assert status == 200, body
            self.access.append(body["access_token"])
            self.refresh = body["refresh_token"]
        await self._oauth(session, base)

    async def _oauth(self, session: aiohttp.ClientSession, base: str) -> None:
        token = self.access[-1]
        if self.code is not None and self.oauth_refresh is None:  # approved before the restart: redeemed now
            code, verifier = self.code
            form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                    "client_id": self.client_id, "code_verifier": verifier}  # fmt: skip
            status, body = await self.post(session, base, "/v1/auth/oauth/token", data=form)
            assert status == 200, body
            self.oauth_refresh = body["refresh_token"]
        elif self.oauth_refresh is not None:
            form = {"grant_type": "refresh_token", "client_id": self.client_id, "refresh_token": self.oauth_refresh}
            status, body = await self.post(session, base, "/v1/auth/oauth/token", data=form)
            assert status == 200, body
            self.used_oauth.append(self.oauth_refresh)
            self.oauth_refresh = body["refresh_token"]
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        params = {"client_id": self.client_id, "redirect_uri": REDIRECT, "response_type": "code",
                  "code_challenge": challenge, "code_challenge_method": "S256", "resource": RESOURCE,
                  "scope": "mcp:read", "decision": "approve"}  # fmt: skip
        status, body = await self.post(
            session, base, "/v1/auth/oauth/consent", json=params, headers={"Authorization": f"Bearer {token}"}
        )
        assert status == 200, body
        self.code = body["redirect_to"].split("code=")[1].split("&")[0], verifier

    async def remember(self, session: aiohttp.ClientSession, base: str) -> None:
        async with session.get(base + self.control + "/snapshot") as resp:
            assert resp.status == 200
            self.auth = (await resp.json()).get("auth")
        assert self.auth is not None


ROUNDS = 3  # of mint, rotate, revoke, then a stop; one more start checks the last


async def _round(journal: Path, ready: Path, clock: str, stop: signal.Signals, venues: list[Venue], n: int) -> None:
    """One start: check what the last round left, then (but in the last) change it, remember it, stop."""
    proc = _serve(journal, ready, clock)
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
            base = await ready_url(ready, proc, READY_S)
            if n == 0:
                async with session.post(base + "/_sim/venues", json={"scenario": "demo"}) as resp:
                    assert resp.status == 201, await resp.text()
                    venues.append(Venue(await resp.json()))
            for venue in venues:
                if venue.auth is not None:
                    await venue.check(session, base)
                if n < ROUNDS:
                    await venue.mint_and_rotate(session, base)
            if n == 1:  # the created venue's key revoked on its control plane; the default's stays
                status, _ = await venues[1].post(
                    session, base, f"{venues[1].control}/api-keys/{venues[1].key_id}/revoke"
                )
                assert status == 200
                venues[1].revoked = True
            if n == 2:
                await venues[0].reuse(session, base)
            for venue in venues:
                await venue.remember(session, base)
        proc.send_signal(stop)
        assert proc.wait(timeout=60) in (0, -signal.SIGKILL), proc.stdout.read() if proc.stdout else ""
    finally:
        reap(proc)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize(("clock", "stop"), [("virtual", signal.SIGKILL), ("wall", signal.SIGTERM)])
async def test_auth_state_survives_repeated_restarts(tmp_path: Path, clock: str, stop: signal.Signals) -> None:
    journal, ready = tmp_path / "journal.jsonl", tmp_path / "ready.json"
    venues = [Venue()]
    for n in range(ROUNDS + 1):
        await _round(journal, ready, clock, stop, venues, n)
    assert len(venues) == 2 and venues[1].revoked and len(venues[0].rotated) == 2 and venues[0].dead_grant
    secrets_written = [
        t for v in venues for t in (*v.access, *v.rotated, *v.used_oauth, v.refresh, v.dead_grant, *(v.code or ())) if t
    ]
    text = journal.read_bytes() + b"".join(
        p.read_bytes() for p in journal.with_name(journal.name + ".venues").iterdir()
    )
    assert not [t for t in secrets_written if t.encode() in text], "a secret reached a journal"
