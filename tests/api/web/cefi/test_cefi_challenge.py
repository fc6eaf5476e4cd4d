"""Every CeFi 401 names the scheme the routes take (RFC 9110 section 15.5.2): the x-svc-auth HMAC
signature and its four headers, never Bearer, whatever the request sent; the OAuth token endpoint's
invalid_client 401 names HTTP Basic (RFC 6749 section 5.2); the control plane's (``--control-token``)
names Bearer; the OpenAPI documents declare them."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

from cefisim.api.edge.signing import CHALLENGE, HEADERS
from cefisim.api.web.app.openapi_documents import openapi_document
from cefisim.api.web.control.openapi import control_document
from tests.api.conftest import Api

PATH = "/v1/cefi/balances"
# RFC 9110 section 11.3: auth-scheme 1*SP auth-param *( OWS "," OWS auth-param ), quoted values
SYNTAX = re.compile(r'[A-Za-z0-9!#$%&\'*+.^_`|~-]+ [a-z_]+="[^"\\]*"(, [a-z_]+="[^"\\]*")*')


def test_the_challenge_names_the_scheme_and_every_signing_header() -> None:
    assert SYNTAX.fullmatch(CHALLENGE), CHALLENGE
    scheme, _, params = CHALLENGE.partition(" ")
    assert scheme == "X-Svc-Auth"
    assert dict(re.findall(r'([a-z_]+)="([^"]*)"', params))["headers"].split() == sorted(
        HEADERS, key=["x-svc-auth-token", "x-svc-auth-userid", "x-svc-auth-timestamp", "x-svc-auth-signature"].index
    )


def _sent(api: Api, how: str, method: str, path: str, body: bytes) -> dict[str, str]:
    if how == "nothing":
        return {}
    if how == "bearer":
        return {"Authorization": "Bearer a-token-from-the-key-exchange"}
    headers = api.headers(100, method, path, body)
    if how == "wrong signature":
        headers["x-svc-auth-signature"] = "AAAA" + headers["x-svc-auth-signature"][4:]
    elif how == "stale":
        headers = api.headers(100, method, path, body, ts=1)
    elif how == "unknown key":
        headers["x-svc-auth-token"] = "00000000-0000-4000-8000-000000000000"
    return headers


@pytest.mark.parametrize("how", ["nothing", "bearer", "wrong signature", "stale", "unknown key"])
@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", PATH, b""),
        ("POST", "/v1/cefi/orders", orjson.dumps({"info": {"client_id": "100", "instrument_id": "1"}})),
        ("DELETE", "/v1/cefi/orders/x-1", b""),
    ],
)
async def test_every_cefi_401_carries_the_signature_challenge(
    api: Api, how: str, method: str, path: str, body: bytes
) -> None:
    resp = await api.client.request(method, path, data=body or None, headers=_sent(api, how, method, path, body))
    assert resp.status == 401, await resp.text()
    assert resp.headers.getall("WWW-Authenticate") == [CHALLENGE]


async def test_a_signed_request_gets_no_challenge(api: Api) -> None:
    resp = await api.client.get(PATH, headers=api.headers(100, "GET", PATH, b""))
    assert resp.status == 200 and "WWW-Authenticate" not in resp.headers


@pytest.mark.parametrize("authorization", [None, "Basic Y2xpLW5vYm9keTo=", "Bearer made-up"])
async def test_the_token_endpoints_invalid_client_carries_a_basic_challenge(
    api: Api, authorization: str | None
) -> None:
    form = {"grant_type": "refresh_token", "client_id": "cli-nobody", "refresh_token": "x"}
    headers = {"Authorization": authorization} if authorization else {}
    resp = await api.client.post("/v1/auth/oauth/token", data=form, headers=headers)
    assert resp.status == 401
    assert resp.headers["WWW-Authenticate"] == 'Basic realm="cefisim"'
    assert (await resp.json())["error"] == "invalid_client"
    resp = await api.client.post("/v1/auth/oauth/token", data={**form, "grant_type": "password"}, headers=headers)
    assert resp.status == 400 and "WWW-Authenticate" not in resp.headers  # only a 401 challenges


def _resolve(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = doc
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def test_the_openapi_document_declares_the_challenges() -> None:
    doc = openapi_document()
    seen = 0
    for path, item in doc["paths"].items():
        for method, op in item.items():
            answer = op.get("responses", {}).get("401") if isinstance(op, dict) else None
            if answer is None:
                continue
            header = _resolve(doc, _resolve(doc, answer)["headers"]["WWW-Authenticate"])
            assert header["required"] is True, (method, path)
            pattern, const = header["schema"].get("pattern"), header["schema"].get("const")
            if path.startswith("/v1/auth/oauth/token"):
                assert const == 'Basic realm="cefisim"'
            elif path.startswith(("/v1/auth", "/v1/paper-trading")):
                assert pattern is not None and re.fullmatch(pattern, 'Bearer realm="cefisim"'), (method, path)
            else:
                assert const == CHALLENGE, (method, path)
            seen += 1
    assert seen > 10


@pytest.mark.parametrize(
    ("authorization", "challenge"),
    [
        (None, 'Bearer realm="cefisim-control"'),
        ("Basic c2VzYW1lOg==", 'Bearer realm="cefisim-control"'),
        ("Bearer wrong", 'Bearer realm="cefisim-control", error="invalid_token"'),
    ],
)
async def test_the_control_planes_401_carries_a_bearer_challenge(
    api_factory: Any, authorization: str | None, challenge: str
) -> None:
    api = await api_factory(control_token="s3cret")
    headers = {"Authorization": authorization} if authorization else {}
    resp = await api.client.get("/_sim/health", headers=headers)
    assert resp.status == 401 and resp.headers["WWW-Authenticate"] == challenge
    doc = control_document("http://127.0.0.1:8080")
    header = doc["components"]["responses"]["Problem401"]["headers"]["WWW-Authenticate"]
    assert header["required"] and re.fullmatch(header["schema"]["pattern"], challenge)
    resp = await api.client.get("/_sim/health", headers={"Authorization": "Bearer s3cret"})
    assert resp.status == 200 and "WWW-Authenticate" not in resp.headers
