"""AuthStore without HTTP: scenario validation, lifetimes, audience binding, memory, invariants."""

from __future__ import annotations

import base64
import copy
import dataclasses
import random
import re
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from cefisim.api.auth.store import AuthorizeRedirect, AuthStore, BadRequest, Forbidden, Unauthenticated
from tests.api.auth.auth_support import (
    REDIRECT,
    RESOURCE,
    START_NS,
    FakeClock,
    FakeWall,
    default_world,
    pkce,
    public_pem,
    sign,
)

NS = 1_000_000_000


def build(world: Any = None) -> tuple[AuthStore, FakeClock, FakeWall, Any]:
    world = world or default_world()
    clock, wall = FakeClock(), FakeWall()
    return AuthStore.from_scenario(world.api_keys, world.oauth_clients, clock, wall=wall), clock, wall, world


def exchange(store: AuthStore, wall: FakeWall, world: Any, key_id: str) -> Any:
    ts = int(wall.now)
    return store.exchange_key(key_id, ts, sign(world.private[key_id], key_id, ts))


# ------------------------------------------------------------------------------- scenario


def other_pem(kind: str) -> str:
    if kind == "unknown curve":  # a P-256 key whose curve OID is one cryptography does not know
        der = (
            ec.generate_private_key(ec.SECP256R1())
            .public_key()
            .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        )
        der = der.replace(bytes.fromhex("2a8648ce3d030107"), bytes.fromhex("2a8648ce3d030109"))
        return "-----BEGIN PUBLIC KEY-----\n" + base64.encodebytes(der).decode() + "-----END PUBLIC KEY-----\n"
    key = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        if kind == "rsa"
        else ec.generate_private_key(ec.SECP384R1())
    )
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("api_keys", {}, "api_keys: must be a list"),
        ("api_keys[0]", "x", "api_keys[0]: must be an object"),
        ("api_keys[0].public_key", "not pem", "api_keys[0].public_key: not a PEM public key"),
        ("api_keys[0].public_key", 5, "api_keys[0].public_key: must be a PEM string"),
        ("api_keys[0].public_key", "rsa", "api_keys[0].public_key: must be an EC P-256"),
        ("api_keys[0].public_key", "p384", "api_keys[0].public_key: must be an EC P-256"),
        ("api_keys[0].public_key", "unknown curve", "api_keys[0].public_key: must be an EC P-256"),
        ("api_keys[0].kind", "admin", "api_keys[0].kind: must be"),
        ("api_keys[0].key_id", "", "api_keys[0].key_id: must be a non-empty string"),
        ("api_keys[1].key_id", "k-alice", "api_keys[1].key_id: duplicate"),
        ("api_keys[0].client_id", None, "api_keys[0].client_id: must be a string of decimal digits"),
        ("api_keys[0].client_id", "0100", "api_keys[0].client_id"),
        ("api_keys[0].user_id", None, "api_keys[0].user_id: must be a non-empty string"),
        ("api_keys[0].colour", "red", "api_keys[0].colour: unknown key"),
        ("api_keys[0].users", [], "api_keys[0].users: only an organization key"),
        ("api_keys[2].users", {}, "api_keys[2].users: must be a list"),
        ("api_keys[2].users[0].client_id", "x", "api_keys[2].users[0].client_id"),
        ("api_keys[2].users[1].user_id", "u-carol", "api_keys[2].users[1].client_id: user u-carol is client 300"),
        ("api_keys[2].users[0].user_id", "u-alice", "api_keys[2].users[0].client_id: user u-alice is client 100"),
        ("api_keys[3].expires_at", "tomorrow", "api_keys[3].expires_at: must be an ISO 8601 time"),
        ("api_keys[3].expires_at", "2026-11-02T12:00:00", "api_keys[3].expires_at: must be an ISO 8601 time"),
        ("oauth_clients", None, None),  # None is "no clients"
        ("oauth_clients[0].redirect_uris", [], "oauth_clients[0].redirect_uris: must be a non-empty list"),
        (
            "oauth_clients[0].redirect_uris[0]",
            "https://a/cb#x",
            "oauth_clients[0].redirect_uris[0]: must be an absolute URI",
        ),
        ("oauth_clients[0].redirect_uris[0]", "/cb", "oauth_clients[0].redirect_uris[0]: must be an absolute URI"),
        ("oauth_clients[0].scopes[0]", "a b", "oauth_clients[0].scopes[0]: not a valid scope token"),
        ("oauth_clients[0].scopes", ["a", "a"], "oauth_clients[0].scopes: has duplicates"),
        ("oauth_clients[0].disabled", "yes", "oauth_clients[0].disabled: must be true or false"),
        ("oauth_clients[1].client_id", "cli-demo", "oauth_clients[1].client_id: duplicate"),
        ("oauth_clients[0].secret", "s", "oauth_clients[0].secret: unknown key"),
    ],
)
def test_bad_scenario_entries_name_their_json_path(path: str, value: Any, message: str | None) -> None:
    world = default_world()
    doc = {"api_keys": copy.deepcopy(world.api_keys), "oauth_clients": copy.deepcopy(world.oauth_clients)}
    if value in ("rsa", "p384", "unknown curve"):
        value = other_pem(value)
    parts = path.replace("]", "").replace("[", ".").split(".")
    target: Any = doc
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target[part]
    last = parts[-1]
    if last.isdigit():
        target[int(last)] = value
    elif value is None and last in target and path != "oauth_clients":
        del target[last]
    else:
        target[last] = value
    if message is None:
        AuthStore.from_scenario(doc["api_keys"], doc["oauth_clients"], FakeClock())
        return
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):  # the message starts with it
        AuthStore.from_scenario(doc["api_keys"], doc["oauth_clients"], FakeClock())


def test_scenario_names_and_initially_revoked_keys() -> None:
    world = default_world()
    world.add_key("k-old", user_id="u-old", client_id="600", name="retired", revoked=True)
    world.oauth_clients[0]["name"] = "Demo app"
    store, _, wall, _ = build(world)
    assert store.is_revoked("k-old") and not store.is_revoked("k-alice")
    with pytest.raises(Unauthenticated, match="revoked"):
        exchange(store, wall, world, "k-old")
    for bad, message in (
        ((("revoked", "yes")), "api_keys[4].revoked: must be true or false"),
        ((("name", 5)), "api_keys[4].name: must be a string"),
    ):
        w = default_world()
        w.add_key("k-x", user_id="u-x", client_id="700", **{bad[0]: bad[1]})
        with pytest.raises(ValueError, match=re.escape(message)):
            build(w)


def test_organization_key_with_its_own_user_may_act_for_it() -> None:
    world = default_world()
    world.add_key("k-org2", "organization", user_id="u-org2", client_id="900",
                  users=[{"user_id": "u-carol", "client_id": "300"}])  # fmt: skip
    store, _, wall, _ = build(world)
    issued = exchange(store, wall, world, "k-org2")
    assert issued.refresh_token is None
    assert store.authenticate_bearer(issued.access_token, "u-org2").client_id == "900"
    assert store.authenticate_bearer(issued.access_token, "u-carol").client_id == "300"
    with pytest.raises(Unauthenticated):
        store.authenticate_bearer(issued.access_token, None)


def test_an_organization_key_may_list_no_users() -> None:
    world = default_world()
    world.add_key("k-lonely", "organization")
    store, _, wall, _ = build(world)
    issued = exchange(store, wall, world, "k-lonely")
    with pytest.raises(Forbidden):
        store.authenticate_bearer(issued.access_token, "u-carol")


# ------------------------------------------------------------------------------ mechanics


def test_store_keeps_digests_not_secrets() -> None:
    store, _, wall, world = build()
    issued = exchange(store, wall, world, "k-alice")
    tables = (store.auth_log.access.rows, store.auth_log.key_refresh.rows)
    for table in tables:
        for key in table:
            assert isinstance(key, bytes) and len(key) == 32
    assert issued.access_token not in repr(vars(store)) and issued.refresh_token not in repr(tables)


def test_expired_rows_are_dropped_as_new_ones_are_minted() -> None:
    store, clock, wall, world = build()
    for _ in range(5):
        exchange(store, wall, world, "k-alice")
    assert len(store.auth_log.access) == 5 and len(store.auth_log.key_refresh) == 5
    clock.advance(3600)
    exchange(store, wall, world, "k-alice")
    assert len(store.auth_log.access) == 1 and len(store.auth_log.key_refresh) == 6  # refresh tokens live 30 days
    clock.advance(30 * 86_400)
    exchange(store, wall, world, "k-alice")
    assert len(store.auth_log.access) == 1 and len(store.auth_log.key_refresh) == 1
    store.check_invariants()


def test_huge_timestamp_is_out_of_range_not_an_error() -> None:
    store, _, _, _ = build()
    with pytest.raises(Unauthenticated, match="timestamp"):
        store.exchange_key("k-alice", 10**400, "x")


def test_authorize_needs_no_http() -> None:
    store, _, _, _ = build()
    _, challenge = pkce()
    params = {"client_id": "cli-demo", "redirect_uri": REDIRECT, "response_type": "code", "code_challenge": challenge,
              "code_challenge_method": "S256", "resource": RESOURCE, "scope": "", "state": ""}  # fmt: skip
    req = store.authorize(params)
    assert req.scopes == ("mcp:read", "mcp:trade") and req.state is None  # empty counts as absent
    assert dict(req.params) == {k: v for k, v in params.items() if v}
    with pytest.raises(AuthorizeRedirect) as info:
        store.authorize({**params, "code_challenge_method": ["S256", "S256"]})
    assert "error=invalid_request" in info.value.location
    with pytest.raises(BadRequest):
        store.authorize({**params, "client_id": None})


def test_an_oauth_principal_cannot_consent() -> None:
    store, _, wall, world = build()
    principal = store.authenticate_bearer(exchange(store, wall, world, "k-alice").access_token, None)
    oauth = dataclasses.replace(principal, kind="oauth", audience=RESOURCE, oauth_client_id="cli-demo")
    _, challenge = pkce()
    params = {"client_id": "cli-demo", "redirect_uri": REDIRECT, "response_type": "code", "code_challenge": challenge,
              "code_challenge_method": "S256", "resource": RESOURCE}  # fmt: skip
    with pytest.raises(Unauthenticated, match="OAuth access token"):
        store.consent(oauth, params, "approve")
    assert "code=" in store.consent(principal, params, "approve")


def test_random_operations_keep_the_invariants() -> None:
    """A seeded stream of exchanges, refreshes, consents, token calls, revocations and clock moves."""
    rng = random.Random(4)
    store, clock, wall, world = build()
    users = {"k-alice": "u-alice", "k-bob": "u-bob"}
    refresh: list[str] = []
    oauth_refresh: list[str] = []
    access: list[str] = []
    for _ in range(600):
        op = rng.choice(["exchange", "refresh", "code", "oauth_refresh", "revoke", "advance", "auth"])
        try:
            if op == "exchange":
                key_id = rng.choice(["k-alice", "k-bob", "k-org"])
                issued = exchange(store, wall, world, key_id)
                access.append(issued.access_token)
                if issued.refresh_token:
                    refresh.append(issued.refresh_token)
            elif op == "refresh" and refresh:
                issued = store.refresh(rng.choice(refresh))
                refresh.append(issued.refresh_token)  # type: ignore[arg-type]
            elif op == "code":
                key_id = rng.choice(list(users))
                principal = store.authenticate_bearer(exchange(store, wall, world, key_id).access_token, None)
                verifier, challenge = pkce()
                location = store.consent(principal, {
                    "client_id": "cli-demo", "redirect_uri": REDIRECT, "response_type": "code",
                    "code_challenge": challenge, "code_challenge_method": "S256", "resource": RESOURCE,
                }, "approve")  # fmt: skip
                code = location.split("code=")[1]
                body = store.token({"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                                    "client_id": "cli-demo", "code_verifier": verifier})  # fmt: skip
                oauth_refresh.append(body["refresh_token"])
            elif op == "oauth_refresh" and oauth_refresh:
                body = store.token({"grant_type": "refresh_token", "client_id": "cli-demo",
                                    "refresh_token": rng.choice(oauth_refresh)})  # fmt: skip
                oauth_refresh.append(body["refresh_token"])
            elif op == "revoke" and rng.random() < 0.1:
                store.revoke_key(rng.choice(list(users)))
            elif op == "advance":
                clock.advance(rng.choice([1, 60, 1800, 86_400]))
            elif op == "auth" and access:
                store.authenticate_bearer(rng.choice(access), rng.choice([None, "u-carol"]))
        except (BadRequest, Unauthenticated, Forbidden):
            pass
        store.check_invariants()
    assert clock.now > START_NS


def test_public_pem_helper_round_trips() -> None:
    world = default_world()
    assert public_pem(world.private["k-alice"]) == world.api_keys[0]["public_key"]
