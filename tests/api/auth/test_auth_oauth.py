"""OAuth 2.0 authorization code with PKCE: authorize, consent, token (over HTTP)."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.api.auth.auth_support import (
    REDIRECT,
    RESOURCE,
    Harness,
    default_world,
    pkce,
    running,
)

AUTHORIZE = "/v1/auth/oauth/authorize"
CONSENT = "/v1/auth/oauth/consent"
TOKEN = "/v1/auth/oauth/token"


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    async with running() as h:
        yield h


def authorize_params(challenge: str, **over: str | None) -> dict[str, str]:
    params: dict[str, str | None] = {
        "client_id": "cli-demo",
        "redirect_uri": REDIRECT,
        "response_type": "code",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": RESOURCE,
        "state": "st-1 &/?",
    }
    params.update(over)
    return {k: v for k, v in params.items() if v is not None}


def query_of(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query, keep_blank_values=True).items()}


async def get(h: Harness, path: str, params: Any) -> Any:
    return await h.client.get(path, params=params, allow_redirects=False)


async def consent(h: Harness, token: str | None, body: Any, on_behalf_of: str | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if on_behalf_of:
        headers["SVC-On-Behalf-Of"] = on_behalf_of
    resp = await h.client.post(CONSENT, json=body, headers=headers)
    return resp.status, await resp.json(content_type=None)


async def token_call(h: Harness, form: Any, **kw: Any) -> tuple[int, Any]:
    resp = await h.client.post(TOKEN, data=form, **kw)
    if resp.status == 200:
        assert resp.headers["Cache-Control"] == "no-store"
    return resp.status, await resp.json()


async def get_code(h: Harness, key_id: str = "k-alice", **over: str | None) -> tuple[str, str, dict[str, str]]:
    """Authorize and approve; returns (code, verifier, the authorize params)."""
    verifier, challenge = pkce()
    params = authorize_params(challenge, **over)
    token = await h.token(key_id)
    status, body = await consent(h, token, {**params, "decision": "approve"})
    assert status == 200, body
    q = query_of(body["redirect_to"])
    assert q.get("state") == params.get("state")
    return q["code"], verifier, params


def code_form(code: str, verifier: str, **over: str) -> dict[str, str]:
    return {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": "cli-demo",
            "code_verifier": verifier, **over}  # fmt: skip


async def tokens_for(h: Harness, **over: str | None) -> dict[str, Any]:
    code, verifier, params = await get_code(h, **over)
    status, body = await token_call(h, code_form(code, verifier, redirect_uri=params["redirect_uri"]))
    assert status == 200, body
    h.store.check_invariants()
    return body


# ------------------------------------------------------------------------------ authorize


async def test_authorize_success_goes_to_consent(harness: Harness) -> None:
    _, challenge = pkce()
    params = authorize_params(challenge, scope="mcp:read")
    resp = await get(harness, AUTHORIZE, params)
    assert resp.status == 302
    location = resp.headers["Location"]
    assert urlsplit(location).path == CONSENT
    assert query_of(location) == params


@pytest.mark.parametrize(
    ("over", "status", "error"),
    [
        ({"client_id": None}, 400, "invalid_request"),
        ({"client_id": "cli-nobody"}, 400, "invalid_client"),
        ({"client_id": "cli-off"}, 401, "invalid_client"),
        ({"redirect_uri": None}, 400, "invalid_request"),
        ({"redirect_uri": "https://evil.example/cb"}, 400, "invalid_request"),
        ({"redirect_uri": REDIRECT + "/"}, 400, "invalid_request"),  # byte for byte
        ({"redirect_uri": "https://app.example:443/cb"}, 400, "invalid_request"),  # ports only on loopback
        ({"redirect_uri": "http://localhost:8080/cb"}, 400, "invalid_request"),  # 127.0.0.1 registered, not localhost
    ],
)
async def test_untrusted_client_or_redirect_is_answered_directly(
    harness: Harness, over: dict[str, str | None], status: int, error: str
) -> None:
    _, challenge = pkce()
    resp = await get(harness, AUTHORIZE, authorize_params(challenge, **over))
    assert resp.status == status
    assert "Location" not in resp.headers
    assert resp.headers["Content-Type"].startswith("application/problem+json")
    assert (await resp.json(content_type=None))["error"] == error


@pytest.mark.parametrize(
    ("over", "error"),
    [
        ({"response_type": None}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"code_challenge": None}, "invalid_request"),
        ({"code_challenge": "too-short"}, "invalid_request"),
        ({"code_challenge": "=" * 43}, "invalid_request"),
        ({"code_challenge_method": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"resource": None}, "invalid_request"),
        ({"resource": "/relative"}, "invalid_target"),
        ({"resource": RESOURCE + "#frag"}, "invalid_target"),
        ({"scope": "mcp:read mcp:admin"}, "invalid_scope"),
    ],
)
async def test_other_failures_redirect_to_the_client_with_error_and_state(
    harness: Harness, over: dict[str, str | None], error: str
) -> None:
    _, challenge = pkce()
    resp = await get(harness, AUTHORIZE, authorize_params(challenge, **over))
    assert resp.status == 302
    location = resp.headers["Location"]
    assert location.startswith(REDIRECT + "?")
    q = query_of(location)
    assert q["error"] == error and q["state"] == "st-1 &/?"


async def test_failure_without_state_has_no_state(harness: Harness) -> None:
    _, challenge = pkce()
    resp = await get(harness, AUTHORIZE, authorize_params(challenge, state=None, response_type="token"))
    assert "state" not in query_of(resp.headers["Location"])


async def test_repeated_parameter_is_invalid_request(harness: Harness) -> None:
    _, challenge = pkce()
    pairs = [*authorize_params(challenge).items(), ("resource", "https://other.example/")]
    resp = await get(harness, AUTHORIZE, pairs)
    assert resp.status == 302 and query_of(resp.headers["Location"])["error"] == "invalid_request"
    pairs = [*authorize_params(challenge).items(), ("client_id", "cli-read")]
    assert (await get(harness, AUTHORIZE, pairs)).status == 400


def harness_with_client(client: dict[str, Any]) -> Any:
    world = default_world()
    world.oauth_clients.append(client)
    return running(world)


async def test_redirect_uri_with_a_query_keeps_it() -> None:
    uri = "https://app.example/cb?app=1"
    async with harness_with_client({"client_id": "cli-q", "redirect_uris": [uri], "scopes": ["mcp:read"]}) as h:
        _, challenge = pkce()
        params = authorize_params(challenge, client_id="cli-q", redirect_uri=uri, response_type="token")
        resp = await get(h, AUTHORIZE, params)
        assert resp.headers["Location"].startswith(uri + "&error=")
        params["response_type"] = "code"
        status, body = await consent(h, await h.token(), {**params, "decision": "approve"})
        assert status == 200 and body["redirect_to"].startswith(uri + "&code=")


@pytest.mark.parametrize("uri", ["http://127.0.0.1:54321/cb", "http://127.0.0.1/cb", "http://[::1]:9/cb"])
async def test_loopback_redirect_matches_on_any_port(harness: Harness, uri: str) -> None:
    _, challenge = pkce()
    resp = await get(harness, AUTHORIZE, authorize_params(challenge, redirect_uri=uri))
    assert resp.status == 302 and urlsplit(resp.headers["Location"]).path == CONSENT
    resp = await get(harness, AUTHORIZE, authorize_params(challenge, redirect_uri=uri + "x"))
    assert resp.status == 400  # the path still matches byte for byte


async def test_loopback_code_flow_needs_the_same_port_at_the_token_endpoint(harness: Harness) -> None:
    code, verifier, params = await get_code(harness, redirect_uri="http://127.0.0.1:50000/cb")
    status, body = await token_call(harness, code_form(code, verifier, redirect_uri="http://127.0.0.1:50001/cb"))
    assert (status, body["error"]) == (400, "invalid_grant")
    status, body = await token_call(harness, code_form(code, verifier, redirect_uri=params["redirect_uri"]))
    assert status == 200


# --------------------------------------------------------------------------- consent page


async def test_consent_page_shows_client_scopes_and_resource(harness: Harness) -> None:
    _, challenge = pkce()
    resp = await get(harness, CONSENT, authorize_params(challenge))
    assert resp.status == 200 and resp.content_type == "text/html"
    page = await resp.text()
    assert '<code id="client-id">cli-demo</code>' in page
    assert '<span id="client-name">cli-demo</span>' in page  # no name registered: the id stands in
    assert "<code>mcp:read</code>" in page and "<code>mcp:trade</code>" in page  # default: all registered
    assert f'<code id="resource">{RESOURCE}</code>' in page
    assert 'id="approve"' in page and 'id="deny"' in page and 'id="token"' in page
    assert resp.headers["X-Frame-Options"] == "DENY"
    csp = resp.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp
    for tag in ("script", "style"):  # the inline script and style are allowed by their hash, nothing else
        text = re.search(rf"<{tag}>(.*?)</{tag}>", page, re.DOTALL).group(1)  # type: ignore[union-attr]
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp


async def test_consent_page_escapes_everything() -> None:
    evil = '<img src=x onerror=alert(1)>"&'
    async with harness_with_client({"client_id": evil, "redirect_uris": [REDIRECT], "scopes": ["mcp:read"]}) as h:
        _, challenge = pkce()
        params = authorize_params(challenge, client_id=evil, resource="https://r.example/?a=<b>&c='d'",
                                  state="</script><script>alert(2)</script>")  # fmt: skip
        resp = await get(h, CONSENT, params)
        page = await resp.text()
    assert resp.status == 200
    assert "<img" not in page and "alert(2)</script>" not in page and "<b>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;&quot;&amp;" in page
    assert page.count("<script") == 2


async def test_consent_page_for_invalid_request(harness: Harness) -> None:
    _, challenge = pkce()
    resp = await get(harness, CONSENT, authorize_params(challenge, redirect_uri="https://evil.example/<x>"))
    assert resp.status == 400 and "<x>" not in await resp.text()
    resp = await get(harness, CONSENT, authorize_params(challenge, response_type="token"))
    assert resp.status == 302 and query_of(resp.headers["Location"])["error"] == "unsupported_response_type"


# -------------------------------------------------------------------------- consent POST


async def test_approve_returns_redirect_with_code_and_state(harness: Harness) -> None:
    _, challenge = pkce()
    params = authorize_params(challenge)
    body_in = {**params, "decision": "approve", "nonce": "ignored"}  # unrecognised fields are ignored
    status, body = await consent(harness, await harness.token(), body_in)
    assert status == 200 and list(body) == ["redirect_to"]
    assert body["redirect_to"].startswith(REDIRECT + "?code=")
    assert set(query_of(body["redirect_to"])) == {"code", "state"}


async def test_deny_returns_access_denied_and_state(harness: Harness) -> None:
    _, challenge = pkce()
    params = authorize_params(challenge)
    status, body = await consent(harness, await harness.token(), {**params, "decision": "deny"})
    assert status == 200
    q = query_of(body["redirect_to"])
    assert q["error"] == "access_denied" and q["state"] == params["state"] and "code" not in q


@pytest.mark.parametrize("token", [None, "made-up-token"])
async def test_consent_needs_a_bearer_credential(harness: Harness, token: str | None) -> None:
    _, challenge = pkce()
    status, body = await consent(harness, token, {**authorize_params(challenge), "decision": "approve"})
    assert status == 401 and body["status"] == 401


async def test_an_oauth_token_cannot_consent(harness: Harness) -> None:
    tokens = await tokens_for(harness, scope="mcp:read")
    _, challenge = pkce()
    status, body = await consent(
        harness, tokens["access_token"], {**authorize_params(challenge), "decision": "approve"}
    )
    assert status == 401 and body["error"] == "invalid_token"


@pytest.mark.parametrize(
    ("change", "word"),
    [
        ({"decision": "maybe"}, "decision"),
        ({"decision": None}, "decision"),
        ({"redirect_uri": "https://evil.example/cb"}, "redirect_uri"),
        ({"code_challenge": None}, "code_challenge"),
        ({"client_id": "cli-off"}, "client_id"),
        ({"scope": "mcp:admin"}, "scope"),
        ({"state": 5}, "state"),
    ],
)
async def test_consent_with_parameters_that_no_longer_validate_is_400(
    harness: Harness, change: dict[str, Any], word: str
) -> None:
    _, challenge = pkce()
    body = {**authorize_params(challenge), "decision": "approve", **change}
    body = {k: v for k, v in body.items() if v is not None}
    status, problem = await consent(harness, await harness.token(), body)
    assert status == 400 and word in problem["detail"], problem


async def test_consent_body_must_be_a_json_object(harness: Harness) -> None:
    resp = await harness.client.post(CONSENT, data=b"[]", headers={"Authorization": f"Bearer {await harness.token()}"})
    assert resp.status == 400


async def test_trade_scope_needs_a_credential_from_the_last_5_minutes(harness: Harness) -> None:
    _, challenge = pkce()
    params = {**authorize_params(challenge, scope="mcp:read mcp:trade"), "decision": "approve"}
    token = await harness.token()
    harness.clock.advance(300)
    assert (await consent(harness, token, params))[0] == 200  # exactly 5 minutes: still fine
    harness.clock.advance(1)
    status, body = await consent(harness, token, params)
    assert status == 403 and body["error"] == "login_required"
    status, _ = await consent(harness, token, {**params, "scope": "mcp:read"})
    assert status == 200  # only the sensitive scope needs the recent credential
    status, _ = await consent(harness, token, {**params, "decision": "deny"})
    assert status == 200  # denying needs no fresh credential
    assert (await consent(harness, await harness.token(), params))[0] == 200


async def test_default_scope_includes_trade_and_so_needs_a_fresh_credential(harness: Harness) -> None:
    _, challenge = pkce()
    token = await harness.token()
    harness.clock.advance(301)
    status, body = await consent(harness, token, {**authorize_params(challenge), "decision": "approve"})
    assert status == 403 and body["error"] == "login_required"


async def test_a_refreshed_token_does_not_count_as_a_fresh_credential(harness: Harness) -> None:
    first = await harness.exchange("k-alice")
    harness.clock.advance(600)
    resp = await harness.client.post("/v1/auth/token/refresh", json={"refresh_token": first["refresh_token"]})
    refreshed = (await resp.json())["access_token"]
    _, challenge = pkce()
    status, body = await consent(
        harness, refreshed, {**authorize_params(challenge, scope="mcp:trade"), "decision": "approve"}
    )
    assert status == 403 and body["error"] == "login_required"


async def test_organization_consents_for_a_user_it_acts_for(harness: Harness) -> None:
    code, verifier, _ = await get_code_with(harness, "k-org", "u-carol")
    status, tokens = await token_call(harness, code_form(code, verifier))
    assert status == 200
    status, me = await harness.whoami(tokens["access_token"], audience=RESOURCE)
    assert status == 200 and (me["user_id"], me["client_id"], me["kind"]) == ("u-carol", "300", "oauth")
    _, challenge = pkce()
    org_token = await harness.token("k-org")
    status, _ = await consent(harness, org_token, {**authorize_params(challenge), "decision": "approve"})
    assert status == 401  # an organization must say whom it acts for
    status, _ = await consent(harness, org_token, {**authorize_params(challenge), "decision": "approve"}, "u-alice")
    assert status == 403


async def get_code_with(h: Harness, key_id: str, on_behalf_of: str) -> tuple[str, str, dict[str, str]]:
    verifier, challenge = pkce()
    params = authorize_params(challenge)
    status, body = await consent(h, await h.token(key_id), {**params, "decision": "approve"}, on_behalf_of)
    assert status == 200, body
    return query_of(body["redirect_to"])["code"], verifier, params


# ------------------------------------------------------------------- token: authorization_code


async def test_code_exchange_returns_tokens_for_the_resource(harness: Harness) -> None:
    code, verifier, _ = await get_code(harness, scope="mcp:trade mcp:read")
    status, body = await token_call(harness, code_form(code, verifier))
    assert status == 200
    assert list(body) == ["access_token", "token_type", "expires_in", "refresh_token", "scope"]
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600 and body["scope"] == "mcp:trade mcp:read"
    status, me = await harness.whoami(body["access_token"], audience=RESOURCE)
    assert status == 200
    assert me["audience"] == RESOURCE and me["user_id"] == "u-alice" and me["client_id"] == "100"
    assert me["scopes"] == ["mcp:trade", "mcp:read"] and me["oauth_client_id"] == "cli-demo"


async def test_default_scope_is_every_registered_scope(harness: Harness) -> None:
    assert (await tokens_for(harness))["scope"] == "mcp:read mcp:trade"


async def test_unknown_expired_and_redeemed_codes_give_the_same_answer(harness: Harness) -> None:
    code, verifier, _ = await get_code(harness)
    assert (await token_call(harness, code_form(code, verifier)))[0] == 200
    redeemed = await token_call(harness, code_form(code, verifier))
    unknown = await token_call(harness, code_form("no-such-code", verifier))
    code2, verifier2, _ = await get_code(harness)
    harness.clock.advance(600)
    expired = await token_call(harness, code_form(code2, verifier2))
    assert redeemed == unknown == expired
    assert redeemed[0] == 400 and redeemed[1]["error"] == "invalid_grant"


async def test_code_lives_10_minutes_of_engine_time(harness: Harness) -> None:
    code, verifier, _ = await get_code(harness)
    harness.clock.advance(599)
    assert (await token_call(harness, code_form(code, verifier)))[0] == 200


async def test_redeeming_a_code_twice_revokes_what_it_gave(harness: Harness) -> None:
    code, verifier, _ = await get_code(harness)
    _, tokens = await token_call(harness, code_form(code, verifier))
    assert (await token_call(harness, code_form(code, verifier)))[0] == 400
    assert (await harness.whoami(tokens["access_token"], audience=RESOURCE))[0] == 401
    form = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": "cli-demo"}
    assert (await token_call(harness, form))[1]["error"] == "invalid_grant"


@pytest.mark.parametrize(
    "over",
    [{"redirect_uri": "http://127.0.0.1/cb"}, {"client_id": "cli-read"}, {"code_verifier": "x" * 43}],
)
async def test_code_is_bound_to_client_redirect_and_verifier(harness: Harness, over: dict[str, str]) -> None:
    code, verifier, _ = await get_code(harness)
    status, body = await token_call(harness, code_form(code, verifier, **over))
    assert (status, body["error"]) == (400, "invalid_grant")
    # a refused attempt does not consume the code: the rightful client can still redeem it
    assert (await token_call(harness, code_form(code, verifier)))[0] == 200


async def test_code_exchange_rejects_another_resource(harness: Harness) -> None:
    code, verifier, _ = await get_code(harness)
    status, body = await token_call(harness, code_form(code, verifier, resource="https://other.example/"))
    assert (status, body["error"]) == (400, "invalid_target")
    status, _ = await token_call(harness, code_form(code, verifier, resource=RESOURCE))
    assert status == 200


@pytest.mark.parametrize(
    ("form", "status", "error"),
    [
        ({"code": "c", "redirect_uri": REDIRECT, "client_id": "cli-demo", "code_verifier": "v" * 43},
         400, "invalid_request"),
        ({"grant_type": "password", "client_id": "cli-demo"}, 400, "unsupported_grant_type"),
        ({"grant_type": "authorization_code", "redirect_uri": REDIRECT, "client_id": "cli-demo",
          "code_verifier": "v" * 43}, 400, "invalid_request"),
        ({"grant_type": "authorization_code", "code": "c", "client_id": "cli-demo", "code_verifier": "v" * 43},
         400, "invalid_request"),
        ({"grant_type": "authorization_code", "code": "c", "redirect_uri": REDIRECT, "client_id": "cli-demo"},
         400, "invalid_request"),
        ({"grant_type": "authorization_code", "code": "c", "redirect_uri": REDIRECT, "client_id": "cli-demo",
          "code_verifier": "short"}, 400, "invalid_request"),
        ({"grant_type": "authorization_code", "code": "c", "redirect_uri": REDIRECT, "code_verifier": "v" * 43},
         400, "invalid_request"),
        ({"grant_type": "authorization_code", "code": "c", "redirect_uri": REDIRECT, "client_id": "cli-nobody",
          "code_verifier": "v" * 43}, 401, "invalid_client"),
        ({"grant_type": "authorization_code", "code": "c", "redirect_uri": REDIRECT, "client_id": "cli-off",
          "code_verifier": "v" * 43}, 401, "invalid_client"),
        ({"grant_type": "refresh_token", "client_id": "cli-demo"}, 400, "invalid_request"),
    ],
)  # fmt: skip
async def test_token_endpoint_errors(harness: Harness, form: dict[str, str], status: int, error: str) -> None:
    got_status, body = await token_call(harness, form)
    assert (got_status, body["error"]) == (status, error)
    assert set(body) == {"error", "error_description"}


async def test_token_endpoint_takes_only_form_bodies(harness: Harness) -> None:
    code, verifier, _ = await get_code(harness)
    status, body = await token_call(harness, None, json=code_form(code, verifier))
    assert (status, body["error"]) == (400, "invalid_request")
    assert "x-www-form-urlencoded" in body["error_description"]


async def test_token_endpoint_refuses_repeated_parameters(harness: Harness) -> None:
    code, verifier, _ = await get_code(harness)
    form = [*code_form(code, verifier).items(), ("code", "other")]
    status, body = await token_call(harness, form)
    assert (status, body["error"]) == (400, "invalid_request")


# ------------------------------------------------------------------------ token: refresh_token


def refresh_form(refresh_token: str, **over: str) -> dict[str, str]:
    return {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": "cli-demo", **over}


async def test_refresh_rotates_keeping_audience_and_scopes(harness: Harness) -> None:
    first = await tokens_for(harness)
    harness.clock.advance(3000)
    status, second = await token_call(harness, refresh_form(first["refresh_token"]))
    assert status == 200 and second["scope"] == "mcp:read mcp:trade"
    assert second["refresh_token"] != first["refresh_token"]
    _, me = await harness.whoami(second["access_token"], audience=RESOURCE)
    assert me["audience"] == RESOURCE
    assert (await harness.whoami(first["access_token"], audience=RESOURCE))[0] == 200  # not revoked by rotation


async def test_refresh_may_narrow_but_not_widen_scopes(harness: Harness) -> None:
    first = await tokens_for(harness, scope="mcp:read")
    status, body = await token_call(harness, refresh_form(first["refresh_token"], scope="mcp:read mcp:trade"))
    assert (status, body["error"]) == (400, "invalid_scope")
    full = await tokens_for(harness)
    status, narrow = await token_call(harness, refresh_form(full["refresh_token"], scope="mcp:read"))
    assert status == 200 and narrow["scope"] == "mcp:read"
    _, me = await harness.whoami(narrow["access_token"], audience=RESOURCE)
    assert me["scopes"] == ["mcp:read"]
    status, again = await token_call(harness, refresh_form(narrow["refresh_token"]))
    assert again["scope"] == "mcp:read mcp:trade"  # the grant keeps what the user approved


async def test_refresh_cannot_change_the_audience(harness: Harness) -> None:
    first = await tokens_for(harness)
    status, body = await token_call(harness, refresh_form(first["refresh_token"], resource="https://other.example/"))
    assert (status, body["error"]) == (400, "invalid_target")
    status, _ = await token_call(harness, refresh_form(first["refresh_token"], resource=RESOURCE))
    assert status == 200


async def test_replaying_a_consumed_refresh_token_revokes_the_whole_grant(harness: Harness) -> None:
    first = await tokens_for(harness)
    other_grant = await tokens_for(harness)
    _, second = await token_call(harness, refresh_form(first["refresh_token"]))
    _, third = await token_call(harness, refresh_form(second["refresh_token"]))
    status, body = await token_call(harness, refresh_form(first["refresh_token"]))  # replay
    assert (status, body["error"]) == (400, "invalid_grant")
    for access in (first["access_token"], second["access_token"], third["access_token"]):
        assert (await harness.whoami(access, audience=RESOURCE))[0] == 401
    assert (await token_call(harness, refresh_form(third["refresh_token"])))[1]["error"] == "invalid_grant"
    assert (await harness.whoami(other_grant["access_token"], audience=RESOURCE))[0] == 200  # other grants live
    assert (await token_call(harness, refresh_form(other_grant["refresh_token"])))[0] == 200
    harness.store.check_invariants()


async def test_refresh_token_is_bound_to_its_client(harness: Harness) -> None:
    first = await tokens_for(harness)
    status, body = await token_call(harness, refresh_form(first["refresh_token"], client_id="cli-read"))
    assert (status, body["error"]) == (400, "invalid_grant")
    assert (await token_call(harness, refresh_form(first["refresh_token"])))[0] == 200  # not consumed


async def test_oauth_refresh_token_expires_after_30_days(harness: Harness) -> None:
    first = await tokens_for(harness)
    harness.clock.advance(30 * 86_400)
    assert (await token_call(harness, refresh_form(first["refresh_token"])))[1]["error"] == "invalid_grant"


async def test_refresh_tokens_do_not_cross_endpoints(harness: Harness) -> None:
    oauth = await tokens_for(harness)
    resp = await harness.client.post("/v1/auth/token/refresh", json={"refresh_token": oauth["refresh_token"]})
    assert resp.status == 401
    key = await harness.exchange("k-alice")
    assert (await token_call(harness, refresh_form(key["refresh_token"])))[1]["error"] == "invalid_grant"


async def test_oauth_flow_secrets_stay_out_of_error_bodies(harness: Harness) -> None:
    code, verifier, _ = await get_code(harness)
    _, tokens = await token_call(harness, code_form(code, verifier))
    texts = [
        await token_call(harness, code_form(code, verifier)),
        await token_call(harness, refresh_form(tokens["refresh_token"], scope="nope")),
        await token_call(harness, refresh_form(tokens["refresh_token"] + "x")),
    ]
    for secret in (code, verifier, tokens["refresh_token"], tokens["access_token"]):
        assert secret not in repr(texts)
