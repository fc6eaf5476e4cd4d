"""CeFi request signing: every check, both layouts, and what a failure says."""

from __future__ import annotations

import hmac
import json
import time

import pytest

from cefisim.api.edge.signing import sign
from tests.api.conftest import ALICE_KEY, BOB_KEY, Api

PATH = "/v1/cefi/balances"


async def _get(api: Api, headers: dict[str, str]) -> tuple[int, dict]:
    resp = await api.client.get(PATH, headers=headers)
    return resp.status, await resp.json(content_type=None)


@pytest.mark.parametrize(
    "missing", ["x-svc-auth-token", "x-svc-auth-signature", "x-svc-auth-timestamp", "x-svc-auth-userid"]
)
async def test_missing_header_is_401_naming_it(api: Api, missing: str) -> None:
    headers = api.headers(100, "GET", PATH, b"")
    del headers[missing]
    status, problem = await _get(api, headers)
    assert status == 401 and problem["error"]["detail"] == f"missing header {missing}"


async def test_unknown_key(api: Api) -> None:
    headers = api.headers(100, "GET", PATH, b"", key="00000000-0000-4000-8000-000000000000")
    status, problem = await _get(api, headers)
    assert status == 401 and "unknown API key" in problem["error"]["detail"]


async def test_key_of_another_client(api: Api) -> None:
    headers = api.headers(100, "GET", PATH, b"")
    headers["x-svc-auth-token"] = BOB_KEY
    headers["x-svc-auth-signature"] = sign("bob-secret", headers["x-svc-auth-timestamp"], "GET", PATH, b"")
    status, problem = await _get(api, headers)
    assert status == 401 and "does not belong to client" in problem["error"]["detail"]


@pytest.mark.parametrize(
    ("offset", "ok", "word"), [(-14, True, ""), (-17, False, "older"), (0, True, ""), (3, False, "future")]
)
async def test_timestamp_window(api: Api, offset: int, ok: bool, word: str) -> None:
    headers = api.headers(100, "GET", PATH, b"", ts=int(time.time()) + offset)
    status, body = await _get(api, headers)
    if ok:
        assert status == 200
    else:
        assert status == 401 and word in body["error"]["detail"]


async def test_non_numeric_timestamp(api: Api) -> None:
    headers = api.headers(100, "GET", PATH, b"")
    headers["x-svc-auth-timestamp"] = "soon"
    status, problem = await _get(api, headers)
    assert status == 401 and "x-svc-auth-timestamp" in problem["error"]["detail"]


async def test_signature_mismatch_does_not_reveal_the_expected_value(api: Api) -> None:
    headers = api.headers(100, "GET", PATH, b"")
    good = headers["x-svc-auth-signature"]
    headers["x-svc-auth-signature"] = sign("wrong", headers["x-svc-auth-timestamp"], "GET", PATH, b"")
    status, problem = await _get(api, headers)
    assert status == 401 and "does not match" in problem["error"]["detail"]
    assert good not in str(problem) and "alice-secret" not in str(problem)
    assert hmac.new(
        b"alice-secret", f"{headers['x-svc-auth-timestamp']}GET{PATH}".encode(), "sha256"
    ).hexdigest() not in str(problem)


async def test_a_mismatch_states_the_layout_and_the_string_it_signed_in_signing_order(api: Api) -> None:
    body = b'{"info":{"client_id":"100"}}'
    headers = api.headers(100, "POST", "/v1/cefi/orders", b"{}")  # signed another body
    headers["Content-Type"] = "application/json"
    resp = await api.client.post("/v1/cefi/orders?skip=1", data=body, headers=headers)
    detail = (await resp.json(content_type=None))["error"]["detail"]
    ts = headers["x-svc-auth-timestamp"]
    assert resp.status == 401
    expected = json.dumps(f"{ts}POST/v1/cefi/orders".encode().decode() + body.decode())
    assert f"layout concat (timestamp + METHOD + path + body): {expected}" in detail
    assert "hex" not in detail


async def test_a_hex_signature_is_named(api: Api) -> None:
    headers = api.headers(100, "GET", PATH, b"")
    right = hmac.new(b"alice-secret", f"{headers['x-svc-auth-timestamp']}GET{PATH}".encode(), "sha256").hexdigest()
    status, problem = await _get(api, {**headers, "x-svc-auth-signature": right})
    assert status == 401 and "right HMAC-SHA256 but hex-encoded: send it base64-encoded" in problem["error"]["detail"]
    status, problem = await _get(api, {**headers, "x-svc-auth-signature": "ab" * 32})
    assert status == 401 and "looks hex-encoded (64 hex digits)" in problem["error"]["detail"]


async def test_signing_another_path_is_401(api: Api) -> None:
    headers = api.headers(100, "GET", "/v1/cefi/orders/all", b"")
    status, _ = await _get(api, headers)
    assert status == 401


async def test_signing_a_different_body_is_401(api: Api) -> None:
    body = b'{"info":{"client_id":"100","instrument_id":"1","side":"BUY","type":"LIMIT","qty":"1","price":"1.00"}}'
    headers = api.headers(100, "POST", "/v1/cefi/orders", body.replace(b'"1.00"', b'"2.00"'))
    headers["Content-Type"] = "application/json"
    resp = await api.client.post("/v1/cefi/orders", data=body, headers=headers)
    assert resp.status == 401


async def test_query_string_is_not_signed(api: Api) -> None:
    headers = api.headers(100, "GET", PATH, b"")
    resp = await api.client.get(PATH + "?asset_name=BTC", headers=headers)
    assert resp.status == 200
    body = await resp.json()
    assert [b["id"] for b in body["data"]] == ["1"]


async def test_newline_layout(api_factory) -> None:
    api = await api_factory(layout="newline")
    status, _, _ = await api.call("GET", PATH)
    assert status == 200
    concat = Api(api.client, api.sim, "concat")
    status, _, _ = await concat.call("GET", PATH)
    assert status == 401


async def test_either_layout_accepts_both(api_factory) -> None:
    api = await api_factory(layout="either")
    for layout in ("concat", "newline"):
        status, _, _ = await Api(api.client, api.sim, layout).call("GET", PATH)
        assert status == 200


async def test_client_id_in_query_must_be_the_signer(api: Api) -> None:
    status, _problem, _ = await api.call("GET", PATH, params={"client_id": "101"})
    assert status == 403
    status, _, _ = await api.call("GET", PATH, params={"client_id": "100"})
    assert status == 200


async def test_alice_key_constant_is_the_design_example() -> None:
    assert ALICE_KEY == "2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f"
