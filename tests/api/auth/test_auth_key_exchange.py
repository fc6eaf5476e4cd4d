"""POST /v1/auth/api-key/token and POST /v1/auth/token/refresh over HTTP."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.api.auth.auth_support import START_NS, Harness, running, sign

NS = 1_000_000_000
KEY_TOKEN = "/v1/auth/api-key/token"
REFRESH = "/v1/auth/token/refresh"


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    async with running() as h:
        yield h


async def post(h: Harness, path: str, body: Any = None, data: Any = None) -> tuple[int, Any, Any]:
    resp = await h.client.post(path, json=body) if data is None else await h.client.post(path, data=data)
    return resp.status, await resp.json(content_type=None), resp.headers


def assert_problem(status: int, body: dict[str, Any], headers: Any, expected: int, *detail_words: str) -> None:
    assert status == expected, body
    assert headers["Content-Type"].startswith("application/problem+json")
    assert set(body) >= {"type", "title", "status", "detail", "error"}
    assert body["status"] == expected and body["type"].startswith("https://cefisim.dev/problems/")
    for word in detail_words:
        assert word in body["detail"]


# --------------------------------------------------------------------------- key exchange


async def test_user_key_gets_access_and_refresh_with_iso_expiry(harness: Harness) -> None:
    status, body, headers = await post(harness, KEY_TOKEN, harness.signed("k-alice"))
    assert status == 200
    assert list(body) == ["access_token", "refresh_token", "token_type", "expires_in"]
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == "2026-11-02T10:00:00Z"  # engine start + 1 hour, ISO 8601 UTC
    assert body["access_token"] != body["refresh_token"]
    assert headers["Cache-Control"] == "no-store"


async def test_organization_key_gets_no_refresh_token(harness: Harness) -> None:
    status, body, _ = await post(harness, KEY_TOKEN, harness.signed("k-org"))
    assert status == 200
    assert list(body) == ["access_token", "token_type", "expires_in"]


async def test_tokens_are_random(harness: Harness) -> None:
    a, b = await harness.exchange("k-alice"), await harness.exchange("k-alice")
    assert a["access_token"] != b["access_token"] and a["refresh_token"] != b["refresh_token"]


async def test_signature_padding_is_optional(harness: Harness) -> None:
    status, _, _ = await post(harness, KEY_TOKEN, harness.signed("k-alice", pad=True))
    assert status == 200


async def test_der_signature_is_401(harness: Harness) -> None:
    status, body, headers = await post(harness, KEY_TOKEN, harness.signed("k-alice", der=True))
    assert_problem(status, body, headers, 401, "signature", "64-byte r||s")


@pytest.mark.parametrize("mutate", ["other_key", "other_message", "flipped", "standard_base64", "garbage"])
async def test_bad_signature_is_401(harness: Harness, mutate: str) -> None:
    body = harness.signed("k-alice")
    if mutate == "other_key":
        body["signature"] = sign(harness.world.private["k-bob"], "k-alice", body["timestamp"])
    elif mutate == "other_message":
        body["signature"] = sign(harness.world.private["k-alice"], "k-alice", body["timestamp"] - 1)
    elif mutate == "flipped":
        sig = body["signature"]
        body["signature"] = sig[:10] + ("A" if sig[10] != "A" else "B") + sig[11:]
    elif mutate == "standard_base64":
        body["signature"] = "+/" + body["signature"][2:]
    else:
        body["signature"] = "not a signature!"
    status, problem, headers = await post(harness, KEY_TOKEN, body)
    assert_problem(status, problem, headers, 401, "signature")
    assert body["signature"] not in problem["detail"]


@pytest.mark.parametrize(("skew", "expected"), [(-30, 200), (30, 200), (-31, 401), (31, 401), (-3600, 401)])
async def test_timestamp_window_is_30_seconds_of_wall_clock(harness: Harness, skew: int, expected: int) -> None:
    harness.clock.advance(86_400 * 365)  # the engine clock plays no part in the window
    status, body, _ = await post(harness, KEY_TOKEN, harness.signed("k-alice", skew=skew))
    assert status == expected, body
    if expected == 401:
        assert "timestamp" in body["detail"]


async def test_unknown_key_is_401(harness: Harness) -> None:
    body = harness.signed("k-alice")
    body["key_id"] = "k-nobody"
    status, problem, headers = await post(harness, KEY_TOKEN, body)
    assert_problem(status, problem, headers, 401, "key_id")


async def test_revoked_key_is_401(harness: Harness) -> None:
    assert harness.store.revoke_key("k-alice") is True
    status, body, headers = await post(harness, KEY_TOKEN, harness.signed("k-alice"))
    assert_problem(status, body, headers, 401, "revoked")
    assert harness.store.revoke_key("k-nobody") is False


async def test_expired_key_is_401_on_the_engine_clock(harness: Harness) -> None:
    await harness.exchange("k-expiring")  # expires_at 12:00, engine at 09:00
    harness.clock.advance(3 * 3600)
    status, body, headers = await post(harness, KEY_TOKEN, harness.signed("k-expiring"))
    assert_problem(status, body, headers, 401, "expired")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"timestamp": 1, "signature": "x"}, "key_id"),
        ({"key_id": "k-alice", "signature": "x"}, "timestamp"),
        ({"key_id": "k-alice", "timestamp": 1}, "signature"),
        ({"key_id": 7, "timestamp": 1, "signature": "x"}, "key_id"),
        ({"key_id": "", "timestamp": 1, "signature": "x"}, "key_id"),
        ({"key_id": "k-alice", "timestamp": "1", "signature": "x"}, "timestamp"),
        ({"key_id": "k-alice", "timestamp": 1.0, "signature": "x"}, "timestamp"),
        ({"key_id": "k-alice", "timestamp": True, "signature": "x"}, "timestamp"),
        ({"key_id": "k-alice", "timestamp": 1, "signature": ["x"]}, "signature"),
        ({"key_id": "k-alice", "timestamp": 1, "signature": "x", "extra": 1}, "extra"),
        ([1, 2], "body"),
        ("text", "body"),
    ],
)
async def test_malformed_body_is_400_naming_the_field(harness: Harness, body: Any, field: str) -> None:
    status, problem, headers = await post(harness, KEY_TOKEN, body)
    assert_problem(status, problem, headers, 400)
    assert problem["detail"].startswith(f"{field}:")


@pytest.mark.parametrize("raw", [b"", b"{", b"not json", b"\xff\xfe"])
async def test_invalid_json_is_400(harness: Harness, raw: bytes) -> None:
    status, problem, headers = await post(harness, KEY_TOKEN, data=raw)
    assert_problem(status, problem, headers, 400, "body")


# -------------------------------------------------------------------------------- refresh


async def test_refresh_rotates_and_the_old_token_stops(harness: Harness) -> None:
    first = await harness.exchange("k-alice")
    harness.clock.advance(60)
    status, second, _ = await post(harness, REFRESH, {"refresh_token": first["refresh_token"]})
    assert status == 200
    assert list(second) == ["access_token", "refresh_token", "token_type", "expires_in"]
    assert second["expires_in"] == "2026-11-02T10:01:00Z"
    assert second["refresh_token"] != first["refresh_token"]
    status, body, headers = await post(harness, REFRESH, {"refresh_token": first["refresh_token"]})
    assert_problem(status, body, headers, 401, "refresh_token")
    status, third, _ = await post(harness, REFRESH, {"refresh_token": second["refresh_token"]})
    assert status == 200
    assert (await harness.whoami(third["access_token"]))[0] == 200
    harness.store.check_invariants()


@pytest.mark.parametrize(
    ("body", "field"),
    [({}, "refresh_token"), ({"refresh_token": 5}, "refresh_token"), ({"refresh_token": ""}, "refresh_token"),
     ({"refresh_token": "x", "other": 1}, "other"), ([], "body")],
)  # fmt: skip
async def test_refresh_malformed_body_is_400(harness: Harness, body: Any, field: str) -> None:
    status, problem, headers = await post(harness, REFRESH, body)
    assert_problem(status, problem, headers, 400)
    assert problem["detail"].startswith(f"{field}:")


async def test_refresh_with_unknown_token_is_401(harness: Harness) -> None:
    status, body, headers = await post(harness, REFRESH, {"refresh_token": "made-up"})
    assert_problem(status, body, headers, 401)


async def test_refresh_token_lasts_30_days_of_engine_time(harness: Harness) -> None:
    a = await harness.exchange("k-alice")
    b = await harness.exchange("k-alice")
    harness.clock.advance(30 * 86_400 - 1)
    assert (await post(harness, REFRESH, {"refresh_token": a["refresh_token"]}))[0] == 200
    harness.clock.advance(1)
    assert (await post(harness, REFRESH, {"refresh_token": b["refresh_token"]}))[0] == 401


async def test_access_token_lasts_one_hour_of_engine_time(harness: Harness) -> None:
    token = await harness.token("k-alice")
    harness.clock.advance(3600 - 1)
    assert (await harness.whoami(token))[0] == 200
    harness.clock.advance(1)
    status, body = await harness.whoami(token)
    assert status == 401 and body["type"].endswith("/invalid-token")


async def test_revoking_a_key_stops_refresh_but_not_minted_access_tokens(harness: Harness) -> None:
    tokens = await harness.exchange("k-alice")
    harness.store.revoke_key("k-alice")
    status, body, headers = await post(harness, REFRESH, {"refresh_token": tokens["refresh_token"]})
    assert_problem(status, body, headers, 401, "revoked")
    assert (await harness.whoami(tokens["access_token"]))[0] == 200  # until it expires
    harness.clock.advance(3600)
    assert (await harness.whoami(tokens["access_token"]))[0] == 401
    harness.store.check_invariants()


async def test_an_expired_key_stops_its_refresh_tokens(harness: Harness) -> None:
    tokens = await harness.exchange("k-expiring")
    harness.clock.advance(3 * 3600)
    status, body, headers = await post(harness, REFRESH, {"refresh_token": tokens["refresh_token"]})
    assert_problem(status, body, headers, 401, "expired")


async def test_refresh_keeps_the_time_of_the_key_signature(harness: Harness) -> None:
    tokens = await harness.exchange("k-alice")
    harness.clock.advance(600)
    status, fresh, _ = await post(harness, REFRESH, {"refresh_token": tokens["refresh_token"]})
    assert status == 200
    _, me = await harness.whoami(fresh["access_token"])
    assert me["authenticated_at_ns"] == START_NS


async def test_secrets_never_reach_logs_or_details(harness: Harness, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    signed = harness.signed("k-alice")
    tokens = await harness.exchange("k-alice")
    seen = [signed["signature"], tokens["access_token"], tokens["refresh_token"]]
    bodies = [
        await post(harness, KEY_TOKEN, attempt)
        for attempt in (
            {**signed, "key_id": "k-bob"},
            {**signed, "timestamp": signed["timestamp"] + 100},
        )
    ]
    bodies.append(await post(harness, REFRESH, {"refresh_token": tokens["refresh_token"] + "x"}))
    await post(harness, REFRESH, {"refresh_token": tokens["refresh_token"]})
    bodies.append(await post(harness, REFRESH, {"refresh_token": tokens["refresh_token"]}))
    harness.clock.advance(7200)
    bodies.append((*(await harness.whoami(tokens["access_token"])), None))
    text = caplog.text + repr([b for _, b, _ in bodies])
    for secret in seen:
        assert secret not in text
    assert all(status == 401 for status, _, _ in bodies)
