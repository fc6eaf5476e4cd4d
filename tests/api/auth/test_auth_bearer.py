"""require_bearer: who a gateway request acts for."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.api.auth.auth_support import START_NS, Harness, running


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    async with running() as h:
        yield h


async def test_missing_token_is_401_with_a_challenge(harness: Harness) -> None:
    resp = await harness.client.get("/_test/whoami")
    assert resp.status == 401
    assert resp.headers["WWW-Authenticate"] == 'Bearer realm="cefisim"'
    body = await resp.json(content_type=None)
    assert resp.headers["Content-Type"].startswith("application/problem+json")
    assert body["type"].endswith("/missing-token") and body["status"] == 401


@pytest.mark.parametrize("header", ["Bearer", "Bearer a b", "Bearer ===", "bearer made-up"])
async def test_malformed_or_unknown_token_is_401(harness: Harness, header: str) -> None:
    resp = await harness.client.get("/_test/whoami", headers={"Authorization": header})
    assert resp.status == 401
    assert 'error="invalid_token"' in resp.headers["WWW-Authenticate"]


async def test_scheme_is_case_insensitive(harness: Harness) -> None:
    token = await harness.token()
    resp = await harness.client.get("/_test/whoami", headers={"Authorization": f"bearer {token}"})
    assert resp.status == 200


async def test_user_token_acts_for_its_own_user(harness: Harness) -> None:
    token = await harness.token("k-alice")
    status, me = await harness.whoami(token)
    assert status == 200
    assert me == {
        "user_id": "u-alice", "client_id": "100", "key_id": "k-alice", "kind": "user", "audience": None,
        "scopes": [], "authenticated_at_ns": START_NS, "oauth_client_id": None,
    }  # fmt: skip
    assert (await harness.whoami(token, on_behalf_of="u-alice"))[0] == 200
    status, body = await harness.whoami(token, on_behalf_of="u-bob")
    assert status == 403 and body["type"].endswith("/on-behalf-of-forbidden")


async def test_organization_token_needs_on_behalf_of(harness: Harness) -> None:
    token = await harness.token("k-org")
    status, body = await harness.whoami(token)
    assert status == 401 and body["type"].endswith("/on-behalf-of-required")
    status, me = await harness.whoami(token, on_behalf_of="u-dave")
    assert status == 200 and (me["user_id"], me["client_id"], me["kind"]) == ("u-dave", "400", "organization")


async def test_organization_cannot_act_for_a_user_outside_it(harness: Harness) -> None:
    token = await harness.token("k-org")
    status, body = await harness.whoami(token, on_behalf_of="u-alice")
    assert status == 403 and "SVC-On-Behalf-Of" in body["detail"]


async def test_expired_token_is_401(harness: Harness) -> None:
    token = await harness.token()
    harness.clock.advance(3600)
    status, body = await harness.whoami(token)
    assert status == 401 and token not in body["detail"]
