"""Auth and paper trading wired into the real application: tokens, engine clock, CeFi balances."""

from __future__ import annotations

import time

from tests.api.auth.auth_support import new_key, public_pem
from tests.api.auth.auth_support import sign as sign_es256
from tests.api.conftest import Api, scenario_doc

KEY = new_key()
ORG_KEY = new_key()


def _doc() -> dict:
    return scenario_doc(
        api_keys=[
            {
                "key_id": "k-alice",
                "kind": "user",
                "user_id": "u-alice",
                "client_id": "100",
                "public_key": public_pem(KEY),
            },
            {
                "key_id": "k-org",
                "kind": "organization",
                "public_key": public_pem(ORG_KEY),
                "users": [{"user_id": "u-bob", "client_id": "101"}],
            },
        ]
    )


async def _token(api: Api, key_id: str = "k-alice", key=KEY) -> dict:
    ts = int(time.time())
    status, body, _ = await api.call(
        "POST",
        "/v1/auth/api-key/token",
        client_id=None,
        json={"key_id": key_id, "timestamp": ts, "signature": sign_es256(key, key_id, ts)},
    )
    assert status == 200, body
    return body


async def _usd_total(api: Api, client_id: int) -> str:
    _, body, _ = await api.call("GET", "/v1/cefi/balances", client_id=client_id, params={"asset_name": "USD"})
    return next(b["amount"] for b in body["data"][0]["balances"] if b["type"] == "TOTAL")


async def test_key_exchange_then_paper_funds_show_in_cefi_balances(api_factory) -> None:
    api = await api_factory(_doc())
    tokens = await _token(api)
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == "2026-11-02T10:00:00Z"
    auth = {"Authorization": f"Bearer {tokens['access_token']}"}
    status, body, _ = await api.call(
        "POST", "/v1/paper-trading/funds", client_id=None, headers=auth, json={"asset": "USD", "amount": "250.00"}
    )
    assert status == 200, body
    assert await _usd_total(api, 100) == "1000250.00"
    status, body, _ = await api.call(
        "POST",
        "/v1/paper-trading/funds/remove",
        client_id=None,
        headers=auth,
        json={"asset": "2", "amount": "1000250.01"},
    )
    assert status == 400 and body["type"].endswith("insufficient-funds")
    status, body, _ = await api.call(
        "POST", "/v1/paper-trading/funds/remove", client_id=None, headers=auth, json={"asset": "2", "amount": "50"}
    )
    assert status == 200 and await _usd_total(api, 100) == "1000200.00"
    status, body, _ = await api.call(
        "POST", "/v1/paper-trading/funds", client_id=None, headers=auth, json={"asset": "DOGE", "amount": "1"}
    )
    assert status == 404


async def test_organization_acts_for_its_user(api_factory) -> None:
    api = await api_factory(_doc())
    tokens = await _token(api, "k-org", ORG_KEY)
    assert "refresh_token" not in tokens
    auth = {"Authorization": f"Bearer {tokens['access_token']}"}
    status, _, _ = await api.call(
        "POST", "/v1/paper-trading/funds", client_id=None, headers=auth, json={"asset": "USD", "amount": "1"}
    )
    assert status == 401
    status, _, _ = await api.call(
        "POST",
        "/v1/paper-trading/funds",
        client_id=None,
        headers={**auth, "SVC-On-Behalf-Of": "u-bob"},
        json={"asset": "USD", "amount": "1"},
    )
    assert status == 200 and await _usd_total(api, 101) == "1000001.00"
    status, _, _ = await api.call(
        "POST",
        "/v1/paper-trading/funds",
        client_id=None,
        headers={**auth, "SVC-On-Behalf-Of": "u-alice"},
        json={"asset": "USD", "amount": "1"},
    )
    assert status == 403


async def test_tokens_expire_on_the_engine_clock(api_factory) -> None:
    api = await api_factory(_doc())
    tokens = await _token(api)
    auth = {"Authorization": f"Bearer {tokens['access_token']}"}
    await api.advance(3601)
    status, _, _ = await api.call(
        "POST", "/v1/paper-trading/funds", client_id=None, headers=auth, json={"asset": "USD", "amount": "1"}
    )
    assert status == 401
    status, fresh, _ = await api.call(
        "POST", "/v1/auth/token/refresh", client_id=None, json={"refresh_token": tokens["refresh_token"]}
    )
    assert status == 200 and fresh["refresh_token"] != tokens["refresh_token"]


async def test_revoking_a_key_on_the_control_plane_stops_refresh(api_factory) -> None:
    api = await api_factory(_doc())
    tokens = await _token(api)
    status, _, _ = await api.call("POST", "/_sim/api-keys/k-alice/revoke", client_id=None)
    assert status == 200
    status, _, _ = await api.call(
        "POST", "/v1/auth/token/refresh", client_id=None, json={"refresh_token": tokens["refresh_token"]}
    )
    assert status == 401
    # an access token already minted keeps working until it expires
    status, _, _ = await api.call(
        "POST",
        "/v1/paper-trading/funds",
        client_id=None,
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
        json={"asset": "USD", "amount": "1"},
    )
    assert status == 200
    status, _, _ = await api.call("POST", "/_sim/api-keys/nope/revoke", client_id=None)
    assert status == 404


async def test_paper_trading_is_404_in_production(api_factory) -> None:
    api = await api_factory(_doc(), environment="production")
    tokens = await _token(api)
    status, _, _ = await api.call(
        "POST",
        "/v1/paper-trading/funds",
        client_id=None,
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
        json={"asset": "USD", "amount": "1"},
    )
    assert status == 404
