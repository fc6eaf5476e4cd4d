"""End to end: the OAuth consent page in headless Chromium, driven over WebDriver (chromedriver).

authorize -> consent page -> paste token -> Approve -> client callback with code -> token exchange.
A real server listens on 127.0.0.1 (free port); the client's registered redirect URI is the loopback
``http://127.0.0.1/cb``, which matches the server's own ``/cb`` on any port (RFC 8252).

Needs the Debian packages ``chromium`` and ``chromium-driver``; skips without them. Run with
``pytest -m e2e tests/e2e`` (the default options leave e2e tests out).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import aiohttp
import pytest
from aiohttp import web

from cefisim.api.auth.routes import auth_routes
from cefisim.api.auth.store import AuthStore
from cefisim.api.web.server.venue_state import auth_store_of
from tests.api.auth.auth_support import (
    RESOURCE,
    VENUE_PARTS,
    FakeClock,
    default_world,
    pkce,
    problem_middleware,
    sign,
    venue_parts,
    whoami,
)

pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C WebDriver element reference key
CHROME_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
    "--no-first-run", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]  # fmt: skip


def _chromedriver() -> str | None:
    return shutil.which("chromedriver") or (
        "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class WebDriver:
    """The few W3C WebDriver commands the test needs, over HTTP."""

    def __init__(self, http: aiohttp.ClientSession, base: str) -> None:
        self.http, self.base, self.session = http, base, ""

    async def _call(self, method: str, path: str, body: Any = None) -> Any:
        url = f"{self.base}/session/{self.session}{path}" if self.session else f"{self.base}{path}"
        async with self.http.request(method, url, json=body) as resp:
            data = await resp.json()
            if resp.status != 200:
                raise AssertionError(f"WebDriver {method} {path}: {resp.status} {data}")
            return data["value"]

    async def start(self, user_data_dir: str) -> None:
        opts = {"binary": CHROMIUM, "args": [*CHROME_ARGS, f"--user-data-dir={user_data_dir}"]}
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": opts}}}
        self.session = (await self._call("POST", "/session", caps))["sessionId"]

    async def quit(self) -> None:
        if self.session:
            await self._call("DELETE", "")
            self.session = ""

    async def go(self, url: str) -> None:
        await self._call("POST", "/url", {"url": url})

    async def url(self) -> str:
        return str(await self._call("GET", "/url"))

    async def find(self, css: str) -> str:
        return str((await self._call("POST", "/element", {"using": "css selector", "value": css}))[ELEMENT])

    async def text(self, css: str) -> str:
        return str(await self._call("GET", f"/element/{await self.find(css)}/text"))

    async def type(self, css: str, text: str) -> None:
        await self._call("POST", f"/element/{await self.find(css)}/value", {"text": text})

    async def click(self, css: str) -> None:
        await self._call("POST", f"/element/{await self.find(css)}/click", {})

    async def wait_for_url(self, prefix: str, timeout: float = 15) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            url = await self.url()
            if url.startswith(prefix):
                return url
            await asyncio.sleep(0.1)
        status = await self.text("#status")
        raise AssertionError(f"browser stayed at {await self.url()} (status line: {status!r})")


async def callback(request: web.Request) -> web.Response:
    return web.Response(text="<!doctype html><title>client</title><p>back at the client</p>", content_type="text/html")


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, AuthStore, Any]]:
    world = default_world()
    store = AuthStore.from_scenario(world.api_keys, world.oauth_clients, FakeClock())  # real wall clock
    app = web.Application(middlewares=[problem_middleware])
    app[VENUE_PARTS] = venue_parts(store)
    app.add_routes([*auth_routes(auth_store_of), web.get("/cb", callback), web.get("/_test/whoami", whoami)])
    runner = web.AppRunner(app)
    await runner.setup()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    site = web.SockSite(runner, sock)
    await site.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", store, world
    finally:
        await runner.cleanup()
        sock.close()


# named apart from the fixture: test_live_page.py imports it, and its tests' `browser` parameters would
# otherwise shadow the imported name (ruff F811); conftest.py stays the stand-alone run policy
@pytest.fixture(name="browser")
async def browser_fixture(tmp_path: Any) -> AsyncIterator[WebDriver]:
    driver = _chromedriver()
    if not os.path.exists(CHROMIUM) or driver is None:
        pytest.skip("needs /usr/bin/chromium and chromedriver (Debian: apt-get install chromium chromium-driver)")
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        driver, f"--port={port}", stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as http:
        wd = WebDriver(http, base)
        try:
            for _ in range(100):
                try:
                    async with http.get(f"{base}/status") as resp:
                        if (await resp.json())["value"].get("ready"):
                            break
                except aiohttp.ClientConnectionError:
                    pass
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("chromedriver did not become ready")
            await wd.start(str(tmp_path / "chromium-profile"))
            yield wd
        finally:
            try:
                await wd.quit()
            finally:
                proc.terminate()
                await proc.wait()


async def test_consent_page_approve_then_token_exchange(server: tuple[str, AuthStore, Any], browser: WebDriver) -> None:
    base, store, world = server
    redirect_uri = f"{base}/cb"  # registered as http://127.0.0.1/cb: loopback matches on any port
    async with aiohttp.ClientSession() as http:
        ts = int(time.time())
        key = {"key_id": "k-alice", "timestamp": ts, "signature": sign(world.private["k-alice"], "k-alice", ts)}
        async with http.post(f"{base}/v1/auth/api-key/token", json=key) as resp:
            assert resp.status == 200
            user_token = (await resp.json())["access_token"]

        verifier, challenge = pkce()
        params = {"client_id": "cli-demo", "redirect_uri": redirect_uri, "response_type": "code",
                  "code_challenge": challenge, "code_challenge_method": "S256", "resource": RESOURCE,
                  "scope": "mcp:read mcp:trade", "state": "xyz <&>"}  # fmt: skip
        await browser.go(f"{base}/v1/auth/oauth/authorize?{urlencode(params)}")
        assert urlsplit(await browser.url()).path == "/v1/auth/oauth/consent"
        assert await browser.text("#client-id") == "cli-demo"
        assert await browser.text("#resource") == RESOURCE
        assert "mcp:trade" in await browser.text("#scopes")

        await browser.click("#approve")  # without a token the page asks for one and stays
        assert "access token" in await browser.text("#status")
        await browser.type("#token", user_token)
        await browser.click("#approve")
        landed = await browser.wait_for_url(redirect_uri + "?")
        query = {k: v[0] for k, v in parse_qs(urlsplit(landed).query).items()}
        assert query["state"] == "xyz <&>"

        form = {"grant_type": "authorization_code", "code": query["code"], "redirect_uri": redirect_uri,
                "client_id": "cli-demo", "code_verifier": verifier}  # fmt: skip
        async with http.post(f"{base}/v1/auth/oauth/token", data=form) as resp:
            assert resp.status == 200, await resp.text()
            tokens = await resp.json()
        assert tokens["scope"] == "mcp:read mcp:trade" and tokens["expires_in"] == 3600
        headers = {"Authorization": f"Bearer {tokens['access_token']}"}
        async with http.get(f"{base}/_test/whoami", params={"audience": RESOURCE}, headers=headers) as resp:
            assert resp.status == 200
            me = await resp.json()
        assert (me["user_id"], me["client_id"], me["audience"]) == ("u-alice", "100", RESOURCE)
        async with http.post(f"{base}/v1/auth/oauth/token", data=form) as resp:  # the code is spent
            assert (resp.status, (await resp.json())["error"]) == (400, "invalid_grant")
    store.check_invariants()


async def test_consent_page_deny_with_token_from_fragment(
    server: tuple[str, AuthStore, Any], browser: WebDriver
) -> None:
    base, _, world = server
    redirect_uri = f"{base}/cb"
    async with aiohttp.ClientSession() as http:
        ts = int(time.time())
        key = {"key_id": "k-alice", "timestamp": ts, "signature": sign(world.private["k-alice"], "k-alice", ts)}
        async with http.post(f"{base}/v1/auth/api-key/token", json=key) as resp:
            user_token = (await resp.json())["access_token"]
    _, challenge = pkce()
    params = {
        "client_id": "cli-demo",
        "redirect_uri": redirect_uri,
        "response_type": "code",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": RESOURCE,
        "state": "s1",
    }
    await browser.go(f"{base}/v1/auth/oauth/consent?{urlencode(params)}#token={user_token}")
    assert "#" not in await browser.url()  # the page takes the token out of the address bar
    await browser.click("#deny")
    landed = await browser.wait_for_url(redirect_uri + "?")
    query = {k: v[0] for k, v in parse_qs(urlsplit(landed).query).items()}
    assert query["error"] == "access_denied" and query["state"] == "s1" and "code" not in query
