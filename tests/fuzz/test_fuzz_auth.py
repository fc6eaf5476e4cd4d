"""Hostile input on the Auth and paper-trading routes: never a 5xx, the documented error shapes, and
a refused request leaves the venue alone.

Error shapes: RFC 7807 problems (with an ``error`` member) everywhere, except the OAuth token endpoint
(RFC 6749 ``{"error", "error_description"}``), the authorize endpoint (a 302 back to the client for
most failures) and the HTML consent page (an HTML error page). Requests start from valid ones (a
signed key exchange, live tokens, a real authorization code) and are mutated, so they reach the
checks behind the first one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.strategies import HEADER_TEXT, JSON_VALUES, extra_headers, json_body, mutated, path_segment
from tests.fuzz.support import (
    ORG_KEY,
    REDIRECT,
    RESOURCE,
    USER_KEY,
    Client,
    Served,
    check_answer,
    es256,
    examples,
    serve_sim,
)

FUZZ = settings(
    max_examples=examples(30),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
VERIFIER = "v" * 43 + "-._~0123456789"
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=").decode()
AUTHORIZE = {
    "client_id": "cli-demo",
    "redirect_uri": REDIRECT,
    "response_type": "code",
    "code_challenge": CHALLENGE,
    "code_challenge_method": "S256",
    "resource": RESOURCE,
    "scope": "mcp:read",
    "state": "st",
}


class World:
    """The server and live credentials the mutations start from."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.client = Client(served.port)
        ts = int(time.time())
        user = self.post_json(
            "/v1/auth/api-key/token",
            {"key_id": "k-alice", "timestamp": ts, "signature": es256(USER_KEY, "k-alice", ts)},
        )
        org = self.post_json(
            "/v1/auth/api-key/token", {"key_id": "k-org", "timestamp": ts, "signature": es256(ORG_KEY, "k-org", ts)}
        )
        self.user, self.org, self.refresh = user["access_token"], org["access_token"], user["refresh_token"]
        code = self.code()
        tokens = self.post_form(
            {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": REDIRECT,
                "client_id": "cli-demo",
                "code_verifier": VERIFIER,
            }
        )
        self.oauth, self.oauth_refresh = tokens["access_token"], tokens["refresh_token"]
        self.fresh_code = self.code()

    def post_json(self, path: str, body: Any, headers: dict[str, str] | None = None) -> Any:
        reply = self.client.request(
            "POST", path, orjson.dumps(body), {"Content-Type": "application/json", **(headers or {})}
        )
        assert reply.status == 200, reply.body
        return reply.json()

    def post_form(self, form: dict[str, str]) -> Any:
        reply = self.client.request(
            "POST",
            "/v1/auth/oauth/token",
            urlencode(form).encode(),
            {"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert reply.status == 200, reply.body
        return reply.json()

    def code(self) -> str:
        answer = self.post_json(
            "/v1/auth/oauth/consent", {**AUTHORIZE, "decision": "approve"}, {"Authorization": f"Bearer {self.user}"}
        )
        return parse_qs(urlsplit(answer["redirect_to"]).query)["code"][0]

    def bearer(self, mode: str) -> dict[str, str]:
        return {
            "user": {"Authorization": f"Bearer {self.user}"},
            "org": {"Authorization": f"Bearer {self.org}", "SVC-On-Behalf-Of": "u-bob"},
            "org-alone": {"Authorization": f"Bearer {self.org}"},
            "org-foreign": {"Authorization": f"Bearer {self.org}", "SVC-On-Behalf-Of": "u-alice"},
            "oauth": {"Authorization": f"Bearer {self.oauth}"},
            "garbage": {"Authorization": "Bearer not-a-token"},
            "basic": {"Authorization": "Basic YTpi"},
            "none": {},
        }[mode]

    def exchange(self, method: str, target: str, body: bytes, headers: dict[str, str]) -> None:
        before = self.served.snapshot()
        reply = self.client.request(method, target, body, headers)
        path = urlsplit(target).path
        check_answer(method, path, reply)
        if 400 <= reply.status < 500:
            assert self.served.snapshot() == before, (method, target, reply.status, reply.body[:300])


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with serve_sim() as served:
        w = World(served)
        try:
            yield w
        finally:
            w.client.close()


BEARERS = st.sampled_from(["user", "user", "org", "org-alone", "org-foreign", "oauth", "garbage", "basic", "none"])
HEADERS = extra_headers()
ANY_BODY = json_body(None)
STRINGY = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["", "S256", "plain", "code", "token", REDIRECT, "http://127.0.0.1:9/cb", "mcp:trade", RESOURCE]),
)


def _json_text(value: Any) -> str:
    # the standard library's encoder: the mutations include integers beyond 64 bits, which orjson refuses
    return json.dumps(value, default=str)


def _form(params: Any) -> str:
    """Mutated parameters as a query or form string (non-strings as JSON text; lists repeat)."""
    if not isinstance(params, dict):
        return quote(_json_text(params), safe="=&")
    pairs: list[tuple[str, str]] = []
    for k, v in params.items():
        pairs.extend(
            (str(k), item if isinstance(item, str) else _json_text(item))
            for item in (v if isinstance(v, list) else [v])
        )
    return urlencode(pairs, quote_via=quote)


MUTATED_AUTHORIZE = mutated({**AUTHORIZE}).map(_form)


def _live(value: Any, subst: dict[str, Any]) -> Any:
    """Replace placeholder strings (anywhere in a mutated document) with live values."""
    if isinstance(value, str):
        return subst.get(value, value)
    if isinstance(value, dict):
        return {k: _live(v, subst) for k, v in value.items()}
    if isinstance(value, list):
        return [_live(v, subst) for v in value]
    return value


KEY_EXCHANGE = mutated({"key_id": "k-alice", "timestamp": "<TS>", "signature": "<SIG>"})


@FUZZ
@given(doc=KEY_EXCHANGE, raw=st.one_of(st.none(), st.none(), ANY_BODY), headers=HEADERS)
def test_key_exchange(world: World, doc: Any, raw: bytes | None, headers: dict[str, str]) -> None:
    ts = int(time.time())
    live = _live(doc, {"<TS>": ts, "<SIG>": es256(USER_KEY, "k-alice", ts)})
    body = raw if raw is not None else _json_text(live).encode()
    world.exchange("POST", "/v1/auth/api-key/token", body, {**headers, "Content-Type": "application/json"})


@FUZZ
@given(
    body=st.one_of(
        ANY_BODY, st.builds(lambda v: _json_text({"refresh_token": v}).encode(), JSON_VALUES), st.just(b"template")
    ),
    headers=HEADERS,
)
def test_token_refresh(world: World, body: bytes, headers: dict[str, str]) -> None:
    if body == b"template":
        body = orjson.dumps({"refresh_token": world.refresh})
    world.exchange("POST", "/v1/auth/token/refresh", body, {**headers, "Content-Type": "application/json"})


@pytest.mark.parametrize("path", ["/v1/auth/oauth/authorize", "/v1/auth/oauth/consent"])
@FUZZ
@given(
    query=st.one_of(MUTATED_AUTHORIZE, st.lists(st.tuples(STRINGY, STRINGY), max_size=5).map(urlencode)),
    headers=HEADERS,
)
def test_authorize_and_consent_page(world: World, path: str, query: str, headers: dict[str, str]) -> None:
    world.exchange("GET", f"{path}?{query}", b"", headers)


@FUZZ
@given(
    body=st.one_of(mutated({**AUTHORIZE, "decision": "approve"}).map(lambda v: _json_text(v).encode()), ANY_BODY),
    bearer=BEARERS,
    headers=HEADERS,
)
def test_consent_decision(world: World, body: bytes, bearer: str, headers: dict[str, str]) -> None:
    world.exchange(
        "POST", "/v1/auth/oauth/consent", body, {**headers, **world.bearer(bearer), "Content-Type": "application/json"}
    )


@FUZZ
@given(
    grant=st.sampled_from(["code", "refresh"]),
    edits=mutated({"x": "y"}),
    raw=st.one_of(st.none(), ANY_BODY),
    content_type=st.sampled_from(
        ["application/x-www-form-urlencoded"] * 4
        + [
            "application/json",
            "text/plain",
            "multipart/form-data; boundary=x",
            "application/x-www-form-urlencoded; charset=latin-1",
        ]
    ),
    headers=HEADERS,
)
def test_oauth_token_endpoint(
    world: World, grant: str, edits: Any, raw: bytes | None, content_type: str, headers: dict[str, str]
) -> None:
    base = (
        {
            "grant_type": "authorization_code",
            "code": world.fresh_code,
            "redirect_uri": REDIRECT,
            "client_id": "cli-demo",
            "code_verifier": VERIFIER,
        }
        if grant == "code"
        else {
            "grant_type": "refresh_token",
            "refresh_token": world.oauth_refresh,
            "client_id": "cli-demo",
            "scope": "mcp:read",
        }
    )
    if isinstance(edits, dict):
        base.update({k: v for k, v in edits.items() if k != "x"})
    body = raw if raw is not None else _form(base).encode()
    world.exchange("POST", "/v1/auth/oauth/token", body, {**headers, "Content-Type": content_type})


PAPER = {"asset": "USD", "amount": "1.5"}


@pytest.mark.parametrize("path", ["/v1/paper-trading/funds", "/v1/paper-trading/funds/remove"])
@FUZZ
@given(
    body=json_body(PAPER),
    bearer=BEARERS,
    method=st.sampled_from(["POST"] * 6 + ["GET", "PUT", "DELETE"]),
    headers=HEADERS,
)
def test_paper_funds(world: World, path: str, body: bytes, bearer: str, method: str, headers: dict[str, str]) -> None:
    world.exchange(method, path, body, {**headers, **world.bearer(bearer), "Content-Type": "application/json"})


@settings(FUZZ, max_examples=examples(30))
@given(
    tail=st.lists(path_segment(["funds", "remove", "auth", "oauth", "token"]), min_size=0, max_size=3),
    prefix=st.sampled_from(["/v1/paper-trading", "/v1/auth", "/v1/auth/oauth"]),
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
    bearer=BEARERS,
    value=HEADER_TEXT,
)
def test_other_auth_and_paper_paths(
    world: World, tail: list[str], prefix: str, method: str, bearer: str, value: str
) -> None:
    path = prefix + "".join("/" + t for t in tail)
    world.exchange(method, path, b"", {**world.bearer(bearer), "X-Request-Id": value})
