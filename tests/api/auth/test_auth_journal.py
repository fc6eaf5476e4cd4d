"""Auth state journaled with the venue: records replay to the same state, restarts and snapshots keep
every token, code, grant and revocation, the journal holds digests and never a secret."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cefisim.api.auth.auth_log import CODE, KEY_TOKENS, NAMESPACE
from cefisim.api.auth.store import AuthStore, BadRequest, Forbidden, Unauthenticated
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import JournalError, Simulation
from cefisim.api.runtime.snapshot import SnapshotError
from cefisim.api.web.app.application import auth_store_for
from cefisim.api.web.server.keys import ServerOptions
from cefisim.engine.commands import PlaceOrder
from tests.api.auth.auth_support import REDIRECT, RESOURCE, START_NS, FakeWall, default_world, pkce
from tests.api.auth.test_auth_store import build, exchange
from tests.api.conftest import scenario_doc
from tests.api.runtime.journal_lines import reseal_file

NS = 1_000_000_000
REFUSED = (BadRequest, Unauthenticated, Forbidden)


def approve(store: AuthStore, access_token: str, scope: str = "mcp:read mcp:trade") -> tuple[str, str]:
    """Consent for the token's user: (code, verifier)."""
    principal = store.authenticate_bearer(access_token, None)
    verifier, challenge = pkce()
    location = store.consent(principal, {
        "client_id": "cli-demo", "redirect_uri": REDIRECT, "response_type": "code", "code_challenge": challenge,
        "code_challenge_method": "S256", "resource": RESOURCE, "scope": scope,
    }, "approve")  # fmt: skip
    return location.split("code=")[1], verifier


def redeem(store: AuthStore, code: str, verifier: str) -> dict[str, Any]:
    return store.token({"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                        "client_id": "cli-demo", "code_verifier": verifier})  # fmt: skip


def rotate(store: AuthStore, token: str) -> dict[str, Any]:
    return store.token({"grant_type": "refresh_token", "client_id": "cli-demo", "refresh_token": token})


def outcome(call: Any) -> str:
    """What a client sees of a call: the refusal's error code, or "ok" and the token's principal."""
    try:
        return f"ok {call()!r}"
    except REFUSED as exc:
        return exc.error


def test_replaying_the_records_rebuilds_the_same_state_and_answers() -> None:
    """A seeded stream of every Auth operation; its records, through JSON, applied to a second store give
    the same state after every step, and every token gets the same answer from both."""
    rng = random.Random(32)
    store, clock, wall, world = build()
    records: list[tuple[int, str, Any]] = []
    store.auth_log.journal = lambda at, kind, values: records.append(orjson.loads(orjson.dumps([at, kind, values])))
    replica, _, _, _ = build(world)
    secrets: list[str] = []
    refresh: list[str] = []
    oauth_refresh: list[str] = []
    codes: list[tuple[str, str]] = []
    for _ in range(400):
        op = rng.choice(["exchange", "refresh", "code", "redeem", "oauth_refresh", "revoke", "advance"])
        try:
            if op == "exchange":
                issued = exchange(store, wall, world, rng.choice(["k-alice", "k-bob", "k-org"]))
                secrets.append(issued.access_token)
                refresh += [issued.refresh_token] if issued.refresh_token else []
            elif op == "refresh" and refresh:
                issued = store.refresh(rng.choice(refresh))
                secrets.append(issued.access_token)
                refresh.append(issued.refresh_token)  # type: ignore[arg-type]  # a user key's
            elif op == "code":
                codes.append(
                    approve(store, exchange(store, wall, world, rng.choice(["k-alice", "k-bob"])).access_token)
                )
            elif op == "redeem" and codes:  # sometimes a second time: the grant is revoked
                body = redeem(store, *rng.choice(codes))
                secrets.append(body["access_token"])
                oauth_refresh.append(body["refresh_token"])
            elif op == "oauth_refresh" and oauth_refresh:  # sometimes a used one: the grant is revoked
                body = rotate(store, rng.choice(oauth_refresh))
                secrets.append(body["access_token"])
                oauth_refresh.append(body["refresh_token"])
            elif op == "revoke" and rng.random() < 0.1:
                store.revoke_key(rng.choice(["k-alice", "k-bob"]))
            elif op == "advance":
                clock.advance(rng.choice([1, 600, 3600, 86_400]))
        except REFUSED:
            pass
        while records:
            at, kind, values = records.pop(0)
            replica.apply_record(at, kind, values)
        replica.check_invariants()
        assert replica.state() == store.state()
    kinds = ("revoked", "access", "key_refresh", "oauth_refresh", "codes", "grants")
    state = store.state()
    assert state is not None and all(state[k] for k in kinds), "the stream reached every table"
    assert any(g[-1] for g in state["grants"]), "the stream revoked a grant"
    for token in secrets:
        assert outcome(lambda t=token: store.authenticate_bearer(t, "u-carol")) == outcome(
            lambda t=token: replica.authenticate_bearer(t, "u-carol")
        )
    # a snapshot's state restores to the same state too
    restored, _, _, _ = build(world)
    restored.restore(orjson.loads(orjson.dumps(state)))()
    assert restored.state() == state


def test_records_hold_digests_never_secrets() -> None:
    store, _, wall, world = build()
    lines: list[bytes] = []
    store.auth_log.journal = lambda at, kind, values: lines.append(orjson.dumps([at, kind, values]))
    issued = exchange(store, wall, world, "k-alice")
    code, verifier = approve(store, issued.access_token)
    body = redeem(store, code, verifier)
    rotated = rotate(store, body["refresh_token"])
    text = b"".join(lines)
    for secret in (issued.access_token, issued.refresh_token, code, verifier, *body.values(), *rotated.values()):
        if isinstance(secret, str) and len(secret) > 20:
            assert secret.encode() not in text
    assert [orjson.loads(line)[1] for line in lines] == [KEY_TOKENS, CODE, "auth.oauth_tokens", "auth.oauth_tokens"]


def test_a_refused_journal_write_changes_nothing() -> None:
    store, _, wall, world = build()
    issued = exchange(store, wall, world, "k-alice")

    def full(at: int, kind: str, values: Any) -> None:
        raise OSError("disk full")

    store.auth_log.journal = full
    before = store.state()
    for call in (lambda: store.refresh(issued.refresh_token), lambda: store.revoke_key("k-alice"),  # type: ignore[arg-type]
                 lambda: approve(store, issued.access_token)):  # fmt: skip
        with pytest.raises(OSError, match="disk full"):
            call()
        assert store.state() == before


@pytest.mark.parametrize(
    ("kind", "values", "reason"),
    [
        ("auth.nothing", [], "unknown Auth record kind"),
        ("auth.revoke_key", ["k-nobody"], "no such API key"),
        ("auth.revoke_key", [], "expected 1 values"),
        ("auth.key_tokens", ["k-alice", 1, "zz" * 32, 5, None, None, None], "SHA-256 digest"),
        ("auth.key_tokens", ["k-org", 1, "ab" * 32, 5, "cd" * 32, 9, None], "for a user key only"),
        ("auth.oauth_tokens", ["code", "ab" * 32, [], "ab" * 32, 1, "cd" * 32, 2], "no such code"),
        ("auth.grant_revoked", ["token", "ab" * 32], "must be one of"),
    ],
)
def test_a_record_that_cannot_apply_is_refused_naming_why(kind: str, values: list[Any], reason: str) -> None:
    store, _, _, _ = build()
    with pytest.raises(ValueError, match=reason):
        store.apply_record(START_NS, kind, values)
    assert store.state() is None


_DIGESTS = ["ab" * 32, "cd" * 32, "ef" * 32]
_KEY = st.sampled_from(["k-alice", "k-org", "k-nobody"])
_NS = st.sampled_from([0, START_NS, START_NS + 3600 * NS, START_NS + 7200 * NS])
_DIGEST = st.sampled_from(_DIGESTS)
_SCOPES = st.lists(st.sampled_from(["mcp:read", "mcp:trade", "admin"]), max_size=2)
_FROM = st.sampled_from(["code", "refresh", "token"])
_TEXT = st.sampled_from(["cli-demo", "cli-nobody", REDIRECT, RESOURCE, "u-alice", "100", "k-alice"])
#: values of the right type for each kind (so that most records reach the rules), or anything at all
_SHAPED = {
    "auth.revoke_key": st.tuples(_KEY),
    "auth.key_tokens": st.tuples(_KEY, _NS, _DIGEST, _NS, st.none() | _DIGEST, st.none() | _NS, st.none() | _DIGEST),
    "auth.code": st.tuples(_DIGEST, _TEXT, _TEXT, _TEXT, _TEXT, _SCOPES, _TEXT, _TEXT, _KEY, _NS, _NS),
    "auth.oauth_tokens": st.tuples(_FROM, _DIGEST, _SCOPES, _DIGEST, _NS, _DIGEST, _NS),
    "auth.grant_revoked": st.tuples(_FROM, _DIGEST),
}
_ANY = st.lists(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3), _DIGEST), max_size=12)
_RECORD = st.one_of(
    *(st.tuples(st.just(kind), shape.map(list)) for kind, shape in _SHAPED.items()),
    st.tuples(st.sampled_from([*_SHAPED, "auth.x"]), _ANY),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_RECORD, max_size=10))
def test_any_record_applies_whole_or_not_at_all(records: list[tuple[str, list[Any]]]) -> None:
    """Whatever a damaged journal holds, a record applies (and the tables stay sound) or raises
    ValueError with nothing changed."""
    store, _, _, _ = build()
    for kind, values in records:
        before = store.state()
        try:
            store.apply_record(START_NS, kind, values)
        except ValueError:
            assert store.state() == before
        store.check_invariants()


# ------------------------------------------------------------------------ with the simulation


def _scenario() -> Any:
    world = default_world()
    doc = scenario_doc(api_keys=world.api_keys, oauth_clients=world.oauth_clients)
    doc["clients"] += [{"id": c, "mnemonic": f"c{c}", "balances": {}} for c in ("200", "300", "400", "500")]
    return world, parse_scenario(doc, "auth-journal.json")


class Server:
    """A simulation on a journal and its Auth store, as ``cefisim serve`` builds them."""

    def __init__(self, scenario: Any, path: Path, wall: FakeWall) -> None:
        self.sim = Simulation(scenario, clock="virtual", journal_path=path)
        self.store = auth_store_for(self.sim, ServerOptions(wall_s=wall))


def test_restarts_keep_every_token_and_revocation_on_the_engine_clock(tmp_path: Path) -> None:
    world, scenario = _scenario()
    wall, path = FakeWall(), tmp_path / "j.jsonl"
    server = Server(scenario, path, wall)
    sim, store = server.sim, server.store
    sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "49000.00"))
    alice = exchange(store, wall, world, "k-alice")
    org = exchange(store, wall, world, "k-org")
    code, verifier = approve(store, alice.access_token)
    oauth = redeem(store, code, verifier)
    spare_code = approve(store, alice.access_token)
    bob = exchange(store, wall, world, "k-bob")
    store.revoke_key("k-bob")
    rotated = store.refresh(alice.refresh_token)  # type: ignore[arg-type]  # a user key's
    minted_at = sim.now_ns()
    expected = store.state()
    sim.close()
    for _ in range(3):  # restart again and again on the same journal
        server = Server(scenario, path, wall)
        assert server.store.state() == expected
        assert server.sim.snapshot()["objects"] == sim.snapshot()["objects"]
        server.sim.close()
    store = server.store
    for token in (rotated.access_token, org.access_token, oauth["access_token"], bob.access_token):
        store.authenticate_bearer(token, "u-carol" if token == org.access_token else None)
    with pytest.raises(Unauthenticated, match="revoked"):
        exchange(store, wall, world, "k-bob")
    with pytest.raises(Unauthenticated):
        store.refresh(alice.refresh_token)  # type: ignore[arg-type]  # rotated before the restart
    assert redeem(store, *spare_code)["access_token"]  # a code still valid survives, once
    with pytest.raises(BadRequest):  # redeemed before the restart: a second redemption revokes the grant
        redeem(store, code, verifier)
    with pytest.raises(Unauthenticated):
        store.authenticate_bearer(oauth["access_token"], None)
    # lifetimes are the engine clock's: an access token lives an hour from when it was minted
    server = Server(scenario, path, wall)
    server.sim.advance(minted_at + 1800 * NS)
    late = exchange(server.store, wall, world, "k-alice")
    server.sim.close()
    server = Server(scenario, path, wall)
    server.sim.advance(minted_at + 3600 * NS - 1)
    server.store.authenticate_bearer(rotated.access_token, None)
    server.sim.advance(minted_at + 3600 * NS)
    with pytest.raises(Unauthenticated, match="expired"):
        server.store.authenticate_bearer(rotated.access_token, None)
    server.store.authenticate_bearer(late.access_token, None)
    server.sim.advance(minted_at + 5400 * NS)
    with pytest.raises(Unauthenticated, match="expired"):
        server.store.authenticate_bearer(late.access_token, None)
    assert server.store.refresh(late.refresh_token).access_token  # type: ignore[arg-type]  # 30 days
    server.sim.close()


def test_a_token_that_expired_while_the_server_was_down_is_refused(tmp_path: Path) -> None:
    """On the wall clock, the engine clock of a restarted server is the wall clock."""
    world, scenario = _scenario()
    wall, path = FakeWall(), tmp_path / "j.jsonl"
    now = [START_NS + 10**15]
    sim = Simulation(scenario, clock="wall", journal_path=path, wall_ns=lambda: now[0])
    store = auth_store_for(sim, ServerOptions(wall_s=wall))
    token = exchange(store, wall, world, "k-alice")
    sim.close()
    for down, valid in ((3599, True), (3601, False)):
        later = Simulation(scenario, clock="wall", journal_path=path, wall_ns=lambda d=down: now[0] + d * NS)
        store = auth_store_for(later, ServerOptions(wall_s=wall))
        assert outcome(lambda s=store: s.authenticate_bearer(token.access_token, None)).startswith("ok") == valid
        later.close()


def test_snapshot_and_restore_carry_the_auth_state(tmp_path: Path) -> None:
    world, scenario = _scenario()
    wall, path = FakeWall(), tmp_path / "j.jsonl"
    server = Server(scenario, path, wall)
    assert NAMESPACE not in server.sim.snapshot()  # as loaded: nothing to say
    first = exchange(server.store, wall, world, "k-alice")
    server.store.revoke_key("k-bob")
    doc = orjson.loads(orjson.dumps(server.sim.snapshot()))
    assert doc[NAMESPACE]["revoked"] == ["k-bob"]
    later = exchange(server.store, wall, world, "k-alice")
    server.sim.restore(doc)
    server.store.authenticate_bearer(first.access_token, None)
    with pytest.raises(Unauthenticated):
        server.store.authenticate_bearer(later.access_token, None)  # minted after the snapshot
    server.sim.close()
    restarted = Server(scenario, path, wall)  # the journal starts from the snapshot: its header holds it
    assert restarted.store.state() == server.store.state()
    bad = {**doc, NAMESPACE: {**doc[NAMESPACE], "revoked": ["k-nobody"]}}
    with pytest.raises(SnapshotError, match=r"auth.revoked\[0\]: 'k-nobody': no such API key"):
        restarted.sim.restore(bad)
    dangling = {**doc, NAMESPACE: {**doc[NAMESPACE], "oauth_refresh": [["ab" * 32, 3, 1, False]]}}
    with pytest.raises(SnapshotError, match=r"auth.oauth_refresh\[0\]: grant 3 is not in auth.grants"):
        restarted.sim.restore(dangling)
    assert restarted.store.state() == server.store.state()  # a refused snapshot changes nothing
    restarted.sim.reset()
    assert restarted.store.state() is None  # a reset forgets it, as it forgets the venue's
    restarted.sim.close()


def test_a_damaged_auth_record_refuses_the_start_naming_the_offset(tmp_path: Path) -> None:
    world, scenario = _scenario()
    wall, path = FakeWall(), tmp_path / "j.jsonl"
    server = Server(scenario, path, wall)
    exchange(server.store, wall, world, "k-alice")
    server.sim.close()
    text = path.read_bytes()
    offset = text.index(b'"auth.key_tokens"')
    offset = text.rindex(b"\n", 0, offset) + 1
    path.write_bytes(text.replace(b'"k-alice"', b'"k-nobody"') + text[offset:])  # not the last line
    reseal_file(path)  # sealed as written: what is tested is the record's content
    sim = Simulation(scenario, clock="virtual", journal_path=path)
    with pytest.raises(JournalError, match=rf"\(byte offset {offset}\): auth.key_tokens cannot be applied"):
        auth_store_for(sim, ServerOptions(wall_s=wall))
    sim.close()


def test_offline_replay_skips_the_auth_records(tmp_path: Path) -> None:
    world, scenario = _scenario()
    wall, path = FakeWall(), tmp_path / "j.jsonl"
    server = Server(scenario, path, wall)
    exchange(server.store, wall, world, "k-alice")
    server.sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "49000.00"))
    server.store.revoke_key("k-alice")
    server.sim.close()
    replayed = Simulation(scenario, clock="virtual", journal_path=path, read_only=True)
    assert replayed.recovered_commands == 1
    assert replayed.snapshot()["objects"] == server.sim.snapshot()["objects"]
