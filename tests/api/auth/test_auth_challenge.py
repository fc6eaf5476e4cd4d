"""``WWW-Authenticate`` on every 401 of the Auth and bearer routes (RFC 6750 section 3.1): the
challenge names an error code only when the request presented a bearer credential."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest
from aiohttp import ClientResponse

from tests.api.auth.auth_support import Harness, pkce, running
from tests.api.auth.test_auth_oauth import AUTHORIZE, CONSENT, authorize_params

REALM_ONLY = 'Bearer realm="cefisim"'
# RFC 6750 section 3: the scheme, then auth-params (realm, error, ...) as quoted strings
CHALLENGE = re.compile(r'Bearer realm="cefisim"(?:, (?P<name>[a-z_]+)="(?P<value>[\x20\x21\x23-\x5b\x5d-\x7e]*)")*')


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    async with running() as h:
        yield h


def challenge_of(resp: ClientResponse) -> str:
    assert resp.status == 401
    challenge = resp.headers["WWW-Authenticate"]
    assert CHALLENGE.fullmatch(challenge), challenge
    return challenge


async def test_a_disabled_client_at_authorize_gets_a_challenge_without_an_error_code(harness: Harness) -> None:
    _, code_challenge = pkce()
    params = authorize_params(code_challenge, client_id="cli-off")
    resp = await harness.client.get(AUTHORIZE, params=params, allow_redirects=False)
    assert challenge_of(resp) == REALM_ONLY
    assert (await resp.json(content_type=None))["error"] == "invalid_client"  # the body still says why
    resp = await harness.client.get(CONSENT, params=params)  # the consent page: the same, as HTML
    assert challenge_of(resp) == REALM_ONLY


async def test_key_exchange_and_refresh_failures_carry_no_error_code(harness: Harness) -> None:
    resp = await harness.client.post("/v1/auth/api-key/token", json={**harness.signed("k-alice"), "key_id": "k-nobody"})
    assert challenge_of(resp) == REALM_ONLY
    resp = await harness.client.post("/v1/auth/token/refresh", json={"refresh_token": "made-up"})
    assert challenge_of(resp) == REALM_ONLY


@pytest.mark.parametrize("header", [None, "Basic dXNlcjpwYXNz", "Token abc"])
async def test_no_bearer_credential_means_no_error_code(harness: Harness, header: str | None) -> None:
    headers = {"Authorization": header} if header else {}
    resp = await harness.client.get("/_test/whoami", headers=headers)
    assert challenge_of(resp) == REALM_ONLY
    resp = await harness.client.post(CONSENT, json={}, headers=headers)
    assert challenge_of(resp) == REALM_ONLY


async def test_a_bearer_credential_that_fails_names_the_error(harness: Harness) -> None:
    resp = await harness.client.get("/_test/whoami", headers={"Authorization": "Bearer made-up"})
    assert challenge_of(resp) == f'{REALM_ONLY}, error="invalid_token"'
    resp = await harness.client.post(CONSENT, json={}, headers={"Authorization": "Bearer made-up"})
    assert challenge_of(resp) == f'{REALM_ONLY}, error="invalid_token"'
    org = await harness.token("k-org")
    resp = await harness.client.get("/_test/whoami", headers={"Authorization": f"Bearer {org}"})
    assert challenge_of(resp) == f'{REALM_ONLY}, error="invalid_request"'
