"""Isolated venues on one server (``api/web/control/isolated_venues.py``, ``api/runtime/venues.py``, docs/venues.md)."""

from __future__ import annotations

import asyncio
import gc
import time
import uuid
import weakref
from decimal import ROUND_UP, Decimal
from typing import Any

import orjson
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from cefisim.api.runtime.simulation import SimulationEnded
from cefisim.api.web.control.isolated_venues import VENUES
from cefisim.engine.commands import PlaceOrder
from tests.api.auth.auth_support import RESOURCE, new_key, pkce, public_pem
from tests.api.auth.auth_support import sign as sign_es256
from tests.api.conftest import ALICE_KEY, BOB_KEY, Api, scenario_doc


async def create(api: Api, **body: Any) -> dict[str, Any]:
    status, doc, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": scenario_doc(), **body})
    assert status == 201, doc
    return doc


def creds(venue: dict[str, Any], client_id: int) -> dict[str, str]:
    entry = next(c for c in venue["clients"] if c["client_id"] == str(client_id))
    return {"key": entry["key"], "secret": entry["secret"]}


async def signed(
    api: Api, venue: dict[str, Any] | None, method: str, path: str, client_id: int = 100, json: Any = None
) -> tuple[int, Any, Any]:
    """A signed request with the keys of ``venue`` (None: the default venue's)."""
    raw = orjson.dumps(json) if json is not None else b""
    extra = creds(venue, client_id) if venue is not None else {}
    headers = api.headers(client_id, method, path, raw, **extra)
    return await api.call(method, path, client_id=None, body=raw, headers=headers)


def order_body(client_id: int = 100, **info: Any) -> dict[str, Any]:
    return {
        "info": {
            "client_id": str(client_id),
            "instrument_id": "1",
            "side": "BUY",
            "type": "LIMIT",
            "qty": "1",
            "price": "50000.00",
            **info,
        }
    }


async def test_create_answers_id_and_minted_credentials_once(api: Api) -> None:
    first = await create(api)
    second = await create(api, seed=11)
    assert (first["id"], second["id"]) == ("v1", "v2")
    keys = [c["key"] for venue in (first, second) for c in venue["clients"]]
    secrets_ = [c["secret"] for venue in (first, second) for c in venue["clients"]]
    assert all(uuid.UUID(key).version == 4 for key in keys)
    assert len(set(keys) | {ALICE_KEY, BOB_KEY}) == len(keys) + 2  # nothing shared, nothing derived
    assert len(set(secrets_)) == len(secrets_) and all(len(s) >= 40 for s in secrets_)
    assert not {"alice-secret", "bob-secret"} & set(secrets_)
    assert second["seed"] == 11 and first["seed"] == 7
    status, listed, _ = await api.call("GET", "/_sim/venues", client_id=None)
    assert status == 200 and [v["id"] for v in listed] == ["default", "v1", "v2"]
    assert "clients" not in listed[1]
    status, one, _ = await api.call("GET", "/_sim/venues/v2", client_id=None)
    # the identifiers again, never a secret: those are answered by the create alone
    assert status == 200 and "secret" not in orjson.dumps(one).decode()
    assert one["clients"] == [{k: v for k, v in c.items() if k != "secret"} for c in second["clients"]]
    assert {k: v for k, v in one.items() if k != "clients"} == {k: v for k, v in second.items() if k != "clients"}


async def test_a_document_may_keep_its_own_credentials_if_no_other_venue_has_them(api: Api) -> None:
    own = "0b7c9e1a-1f0e-4c3b-9d7a-5e2f8a6b4c3d"
    doc = scenario_doc()
    doc["clients"][0]["key"], doc["clients"][0]["secret"] = own, "team-a-secret"
    doc["clients"][1]["key"] = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"
    status, venue, _ = await api.call(
        "POST", "/_sim/venues", client_id=None, json={"scenario": doc, "credentials": "document"}
    )
    assert status == 201 and creds(venue, 100) == {"key": own, "secret": "team-a-secret"}
    status, rec, _ = await signed(api, venue, "POST", "/v1/cefi/orders", json=order_body())
    assert status == 200 and rec["status"] == "ACTIVE"
    for taken in (doc, scenario_doc()):  # v1's key, then the default venue's
        status, problem, _ = await api.call(
            "POST", "/_sim/venues", client_id=None, json={"scenario": taken, "credentials": "document"}
        )
        assert status == 409 and problem["detail"].startswith("scenario.clients[0].key"), problem
    status, listed, _ = await api.call("GET", "/_sim/venues", client_id=None)
    assert [v["id"] for v in listed] == ["default", "v1"]
    assert (await create(api))["id"] == "v2"


def private_key(venue: dict[str, Any], index: int = 0) -> tuple[str, ec.EllipticCurvePrivateKey]:
    """The key id and private key a create answered for an Auth key of the venue."""
    entry = venue["api_keys"][index]
    key = serialization.load_pem_private_key(entry["private_key"].encode(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return entry["key_id"], key


async def test_orders_stay_in_their_venue(api: Api) -> None:
    venue = await create(api)
    status, rec, _ = await signed(api, venue, "POST", "/v1/cefi/orders", json=order_body())
    assert status == 200, rec
    status, page, _ = await signed(api, venue, "GET", "/v1/cefi/orders/all")
    assert [o["id"] for o in page["data"]] == [rec["id"]]
    status, page, _ = await signed(api, None, "GET", "/v1/cefi/orders/all")
    assert status == 200 and page["data"] == []
    status, book, _ = await api.call("GET", "/_sim/venues/v1/book/1", client_id=None)
    assert status == 200 and book["bids"]
    status, book, _ = await api.call("GET", "/_sim/book/1", client_id=None)
    assert status == 200 and book["bids"] == []


async def test_a_key_of_one_venue_is_unknown_elsewhere_with_the_same_401(api: Api) -> None:
    venue = await create(api)
    unknown = {"key": "00000000-0000-4000-8000-000000000000", "secret": "alice-secret"}
    status_u, body_u, _ = await api.call(
        "GET", "/v1/cefi/balances", client_id=None, headers=api.headers(100, "GET", "/v1/cefi/balances", b"", **unknown)
    )
    assert status_u == 401
    status, _, _ = await api.call("DELETE", "/_sim/venues/v1", client_id=None)
    assert status == 200
    status, body, _ = await signed(api, venue, "GET", "/v1/cefi/balances")
    assert (status, body) == (status_u, body_u)


async def test_unknown_venue_is_a_404_problem(api: Api) -> None:
    for method, path in (
        ("GET", "/_sim/venues/v9"),
        ("DELETE", "/_sim/venues/v9"),
        ("GET", "/_sim/venues/v9/book/1"),
        ("POST", "/_sim/venues/v9/reset"),
    ):
        status, body, headers = await api.call(method, path, client_id=None)
        assert status == 404 and body["type"].endswith("/unknown-venue"), (path, body)
        assert headers["Content-Type"] == "application/problem+json"


@pytest.mark.parametrize("created", [False, True], ids=["no venue", "a venue"])
async def test_venue_in_the_query_is_the_stream_and_the_pages_alone(api: Api, created: bool) -> None:
    """``?venue=`` names a venue on the stream and the page; elsewhere it is a 400 that changes nothing
    (neither the venue it names nor, silently, the default one), venues or none."""
    if created:
        await create(api)
    await api.call("POST", "/_sim/clock/advance", client_id=None, json={"seconds": "60"})
    _, before, _ = await api.call("GET", "/_sim/clock", client_id=None)
    for method, path, query in (
        ("POST", "/_sim/reset", "v1"),
        ("POST", "/_sim/reset", "default"),
        ("POST", "/_sim/reset", "bogus"),
        ("GET", "/_sim/book/1", "v1"),
        ("POST", "/_sim/venues/default/reset", "v1"),
        ("GET", "/_sim/venues", "v1"),
    ):
        status, body, _ = await api.call(method, path, client_id=None, params={"venue": query})
        assert status == 400 and body["detail"].startswith("venue: "), (path, query, body)
        assert "/_sim/venues/{id}/" in body["detail"]
    _, after, _ = await api.call("GET", "/_sim/clock", client_id=None)
    assert after == before
    for path in ("/_sim/stream", "/_sim/ui/"):
        status, body, _ = await api.call("GET", path, client_id=None, params={"venue": "bogus", "instrument": "1"})
        assert status == 404 and body["type"].endswith("/unknown-venue"), (path, body)
    status, body, _ = await api.call("GET", "/_sim/no-such-route", client_id=None, params={"venue": "default"})
    assert status == 404 and body["type"].endswith("/not-found")


async def test_a_form_in_an_unknown_charset_routed_by_its_body_is_a_400(api: Api) -> None:
    """With venues, an OAuth form is read to find its venue: a charset Python does not know
    (``LookupError``) reaches the handler's own 400, never a 500."""
    await create(api)
    status, body, _ = await api.call(
        "POST",
        "/v1/auth/oauth/token",
        client_id=None,
        body=b"grant_type=refresh_token&refresh_token=v1.x",
        headers={"Content-Type": "application/x-www-form-urlencoded; charset=nonsense"},
    )
    assert status == 400 and body["error"] == "invalid_request", body


async def test_the_default_venue_cannot_be_deleted(api: Api) -> None:
    status, body, _ = await api.call("DELETE", "/_sim/venues/default", client_id=None)
    assert status == 409 and "cannot be deleted" in body["detail"]
    status, doc, _ = await api.call("GET", "/_sim/venues/default", client_id=None)
    assert status == 200 and doc["clients"][0]["key"] == ALICE_KEY


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "scenario"),
        ({"scenario": 5}, "scenario"),
        ({"scenario": "no-such-scenario"}, "scenario"),
        ({"scenario": "demo", "seed": "7"}, "seed"),
        ({"scenario": "demo", "seed": -1}, "seed"),
        ({"scenario": "demo", "colour": "red"}, "colour"),
        ({"scenario": {"seed": 1}}, "scenario"),
    ],
)
async def test_bad_bodies_are_400_naming_the_field(api: Api, body: dict[str, Any], field: str) -> None:
    status, problem, _ = await api.call("POST", "/_sim/venues", client_id=None, json=body)
    assert status == 400 and problem["detail"].startswith(field), problem
    status, listed, _ = await api.call("GET", "/_sim/venues", client_id=None)
    assert len(listed) == 1


async def test_a_shipped_scenario_by_name(api: Api) -> None:
    status, doc, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": "demo"})
    assert status == 201 and doc["scenario"] == "demo" and doc["clients"]


async def test_max_venues_counts_the_default_and_the_next_is_a_429(api_factory: Any) -> None:
    api = await api_factory(max_venues=3)
    await create(api)
    await create(api)
    status, body, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": scenario_doc()})
    assert status == 429 and "at most 3 venues" in body["detail"] and "--max-venues" in body["detail"]
    await api.call("DELETE", "/_sim/venues/v1", client_id=None)
    assert (await create(api))["id"] == "v3"  # ids are never reused


async def test_clocks_are_per_venue_and_reset_is_per_venue(api: Api) -> None:
    await create(api)
    await create(api)
    status, clock, _ = await api.call("POST", "/_sim/venues/v1/clock/advance", client_id=None, json={"seconds": "60"})
    assert status == 200
    _, v1, _ = await api.call("GET", "/_sim/venues/v1/clock", client_id=None)
    assert clock["now_ns"] == v1["now_ns"]  # the advance answers the instant it reached
    _, v2, _ = await api.call("GET", "/_sim/venues/v2/clock", client_id=None)
    _, default, _ = await api.call("GET", "/_sim/clock", client_id=None)
    assert int(v1["now_ns"]) == int(v2["now_ns"]) + 60 * 10**9 and v2 == default
    status, _, _ = await api.call("POST", "/_sim/venues/v1/reset", client_id=None)
    _, v1, _ = await api.call("GET", "/_sim/venues/v1/clock", client_id=None)
    assert status == 200 and v1 == v2


@pytest.mark.parametrize("frozen", [False, True], ids=["collector", "frozen like cefisim serve"])
async def test_deleting_frees_the_venue_and_leaves_the_others(api: Api, frozen: bool) -> None:
    if frozen:
        gc.collect()
        gc.freeze()
    try:
        await _delete_one_of_two(api)
    finally:
        gc.unfreeze()


async def _delete_one_of_two(api: Api) -> None:
    await create(api)
    two = await create(api)
    await signed(api, two, "POST", "/v1/cefi/orders", json=order_body())
    sim_ref = weakref.ref(api.client.server.app[VENUES].created["v1"].sim)  # type: ignore[union-attr]
    status, _, _ = await api.call("DELETE", "/_sim/venues/v1", client_id=None)
    assert status == 200
    gc.collect()
    assert sim_ref() is None
    status, page, _ = await signed(api, two, "GET", "/v1/cefi/orders/all")
    assert status == 200 and len(page["data"]) == 1
    status, _, _ = await api.call("GET", "/_sim/venues/v1", client_id=None)
    assert status == 404


async def test_a_delete_frees_the_venue_by_reference_counting_with_no_collection(api: Api) -> None:
    """The server's heap is frozen (``cefisim serve``): a delete breaks the venue's reference cycles
    (its simulation's side-states and scenario submit, its stream hub's listening) so that the venue goes with
    its last reference, and runs no collection, whose cost would grow with every venue of the server. (A
    venue's state holds no cycle of its own: its parts going with it shows it went.)"""
    venue = await create(api)
    await signed(api, venue, "POST", "/v1/cefi/orders", json=order_body())
    status, _, _ = await api.call("POST", "/_sim/venues/v1/faults/venue", client_id=None, json={"read_lag_ms": 500})
    assert status == 200
    await signed(api, venue, "GET", "/v1/cefi/orders/all")  # answered from the lag's copy
    state = api.client.server.app[VENUES].created["v1"]  # type: ignore[union-attr]
    assert state.sim.replica is not None
    refs = [weakref.ref(x) for x in (state.sim, state.sim.runner, state.auth_store, state.stream_hub)]
    del state
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.freeze()
    gc.disable()
    gc.callbacks.append(seen)
    try:
        status, _, _ = await api.call("DELETE", "/_sim/venues/v1", client_id=None)
        assert status == 200
        assert [ref() for ref in refs] == [None] * len(refs)
        assert collections == []
    finally:
        gc.callbacks.remove(seen)
        gc.enable()
        gc.unfreeze()


async def test_a_deleted_venue_refuses_every_change_still_on_its_way(api: Api) -> None:
    """What ``Simulation.end`` leaves (its side-states are gone) is never used: a side-state change, reset,
    restore or snapshot of an ended simulation is refused like its commands (a 404 over HTTP)."""
    await create(api)
    sim = api.client.server.app[VENUES].created["v1"].sim  # type: ignore[union-attr]
    snapshot = sim.snapshot()
    status, _, _ = await api.call("DELETE", "/_sim/venues/v1", client_id=None)
    assert status == 200
    for change in (
        lambda: sim.set_venue_faults(100, 0, 0),
        sim.reset,
        lambda: sim.restore(snapshot),
        sim.snapshot,
        lambda: sim.scenario_submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", "50000.00"), sim.now_ns()),
    ):
        with pytest.raises(SimulationEnded):
            change()


# --- tokens of the Auth interface belong to their venue ------------------------------------------------


async def test_auth_tokens_are_minted_and_honoured_per_venue(api_factory: Any) -> None:
    key = new_key()
    doc = scenario_doc(
        api_keys=[
            {
                "key_id": "k-alice",
                "kind": "user",
                "user_id": "u-alice",
                "client_id": "100",
                "public_key": public_pem(key),
            }
        ]
    )
    api = await api_factory(doc)
    status, venue, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": doc})
    key_id, venue_key = private_key(venue)
    assert status == 201 and key_id.startswith("k-alice-") and key_id.endswith("@v1")

    async def exchange(key_id: str, signer: ec.EllipticCurvePrivateKey = venue_key) -> tuple[int, Any]:
        ts = int(time.time())
        status, body, _ = await api.call(
            "POST",
            "/v1/auth/api-key/token",
            client_id=None,
            json={"key_id": key_id, "timestamp": ts, "signature": sign_es256(signer, key_id, ts)},
        )
        return status, body

    status, default_tokens = await exchange("k-alice", key)
    assert status == 200 and "." not in default_tokens["access_token"]
    assert (await exchange(key_id, key))[0] == 401  # the document's key pair is not the venue's
    status, tokens = await exchange(key_id)
    assert status == 200 and tokens["access_token"].startswith("v1.")

    async def fund(token: str) -> tuple[int, Any]:
        status, body, _ = await api.call(
            "POST",
            "/v1/paper-trading/funds",
            client_id=None,
            json={"asset": "USD", "amount": "5"},
            headers={"Authorization": f"Bearer {token}"},
        )
        return status, body

    assert (await fund(tokens["access_token"]))[0] == 200
    _, balances, _ = await signed(api, venue, "GET", "/v1/cefi/balances")
    _, default_balances, _ = await signed(api, None, "GET", "/v1/cefi/balances")
    assert balances != default_balances  # the 5 USD went to the venue's alice only
    status, body, _ = await api.call(
        "POST", "/v1/auth/token/refresh", client_id=None, json={"refresh_token": tokens["refresh_token"]}
    )
    assert status == 200 and body["access_token"].startswith("v1.")
    fresh = body["access_token"]
    await api.call("DELETE", "/_sim/venues/v1", client_id=None)
    unknown = await fund("v1." + "A" * 43)
    assert await fund(fresh) == unknown and unknown[0] == 401
    assert await exchange(key_id) == await exchange("k-nobody")


async def test_the_oauth_screens_of_a_created_venue_are_its_own(api_factory: Any) -> None:
    """The authorize redirect and the consent page carry no token: their client_id routes them."""
    key = new_key()
    redirect = "https://app.example/cb"
    doc = scenario_doc(
        api_keys=[
            {
                "key_id": "k-alice",
                "kind": "user",
                "user_id": "u-alice",
                "client_id": "100",
                "public_key": public_pem(key),
            }
        ],
        oauth_clients=[{"client_id": "cli-x", "name": "X", "redirect_uris": [redirect], "scopes": ["mcp:read"]}],
    )
    api = await api_factory(scenario_doc())  # the default venue has no OAuth client at all
    status, venue, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": doc})
    client_id = venue["oauth_clients"][0]["client_id"]
    assert status == 201 and client_id.startswith("cli-x-") and client_id.endswith("@v1")
    verifier, challenge = pkce()
    params = {
        "client_id": client_id,
        "redirect_uri": redirect,
        "response_type": "code",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "scope": "mcp:read",
        "resource": RESOURCE,
    }

    async def screen(path: str) -> Any:
        return await api.client.get(path, params=params, allow_redirects=False)

    authorize = await screen("/v1/auth/oauth/authorize")
    assert authorize.status == 302 and authorize.headers["Location"].startswith("/v1/auth/oauth/consent?")
    page = await screen("/v1/auth/oauth/consent")
    assert page.status == 200 and "X" in await page.text()

    ts = int(time.time())
    key_id, venue_key = private_key(venue)
    status, tokens, _ = await api.call(
        "POST",
        "/v1/auth/api-key/token",
        client_id=None,
        json={"key_id": key_id, "timestamp": ts, "signature": sign_es256(venue_key, key_id, ts)},
    )
    assert status == 200
    status, body, _ = await api.call(
        "POST",
        "/v1/auth/oauth/consent",
        client_id=None,
        json={**params, "decision": "approve"},
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
    )
    assert status == 200, body
    code = body["redirect_to"].split("code=")[1].split("&")[0]
    resp = await api.client.post(
        "/v1/auth/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect,
            "client_id": client_id,
            "code_verifier": verifier,
        },
    )
    assert resp.status == 200 and (await resp.json())["access_token"].startswith("v1.")

    await api.call("DELETE", "/_sim/venues/v1", client_id=None)
    gone = await screen("/v1/auth/oauth/authorize")  # now the default venue's: an unknown client
    assert gone.status == 400 and (await gone.json())["error"] == "invalid_client"


# --- 16 venues at once ----------------------------------------------------------------------------------


async def test_sixteen_venues_driven_concurrently_never_see_each_other(api: Api) -> None:
    venues = [await create(api) for _ in range(16)]

    async def drive(n: int, venue: dict[str, Any]) -> list[str]:
        ids = []
        for i in range(n % 4 + 1):
            status, rec, _ = await signed(
                api, venue, "POST", "/v1/cefi/orders", json=order_body(price=f"{50000 + n}.00", qty=f"{i + 1}")
            )
            assert status == 200, rec
            ids.append(rec["id"])
        status, _, _ = await signed(api, venue, "DELETE", f"/v1/cefi/orders/{ids[0]}")
        assert status == 200
        return ids

    placed = await asyncio.gather(*(drive(n, v) for n, v in enumerate(venues)))
    for n, venue in enumerate(venues):
        _, page, _ = await signed(api, venue, "GET", "/v1/cefi/orders/all")
        assert sorted(o["id"] for o in page["data"]) == sorted(placed[n])
        assert {o["order_info"]["price"] for o in page["data"]} == {f"{50000 + n}.00"}
        _, active, _ = await signed(api, venue, "GET", "/v1/cefi/orders/active")
        assert len(active["data"]) == len(placed[n]) - 1
        _, activity, _ = await signed(api, venue, "GET", "/v1/cefi/orders/activity")
        assert {a["order_id"] for a in activity["data"]} <= set(placed[n])
        _, balances, _ = await signed(api, venue, "GET", "/v1/cefi/balances")
        usd = next(b for b in balances["data"] if b["id"] == "2")
        hold = next(e["amount"] for e in usd["balances"] if e["type"] == "HOLD")
        # qty 2, 3, ... of the orders after the cancelled first one, each with its fee hold rounded up
        held = sum(
            (q * (50000 + n) * Decimal("1.002")).quantize(Decimal("0.01"), ROUND_UP) for q in range(2, n % 4 + 2)
        )
        assert Decimal(hold) == held, (n, hold)  # no other venue's hold is in it
        _, book, _ = await api.call("GET", f"/_sim/venues/{venue['id']}/book/1", client_id=None)
        assert [lvl["price"] for lvl in book["bids"]] == ([f"{50000 + n}.00"] if n % 4 else [])
    # every venue numbers its own orders from the same start: ids mean nothing across venues
    assert len({ids[0] for ids in placed}) == 1
    _, default_page, _ = await signed(api, None, "GET", "/v1/cefi/orders/all")
    assert default_page["data"] == []
    await api.call("DELETE", f"/_sim/venues/{venues[3]['id']}", client_id=None)
    _, page, _ = await signed(api, venues[4], "GET", "/v1/cefi/orders/all")
    assert sorted(o["id"] for o in page["data"]) == sorted(placed[4])


# --- the live stream of a venue --------------------------------------------------------------------------


async def test_stream_and_page_take_a_venue_id(api: Api) -> None:
    venue = await create(api)
    await signed(api, venue, "POST", "/v1/cefi/orders", json=order_body(price="49999.00"))
    resp = await api.client.get("/_sim/stream", params={"venue": "v1", "instrument": "1"})
    assert resp.status == 200
    first = await resp.content.readuntil(b"\n\n")
    first += await resp.content.readuntil(b"\n\n")
    assert b"49999.00" in first and b'"venue":"v1"' in first
    resp.close()
    status, body, _ = await api.call("GET", "/_sim/stream", client_id=None, params={"venue": "v7", "instrument": "1"})
    assert status == 404 and body["type"].endswith("/unknown-venue")
    status, _, _ = await api.call("GET", "/_sim/ui/", client_id=None, params={"venue": "v1"})
    assert status == 200


# --- per-venue limits -------------------------------------------------------------------------------------


async def test_the_venue_wide_open_order_limit(api_factory: Any) -> None:
    from cefisim.engine.venue import VenueConfig

    api = await api_factory(venue_config=lambda scenario: VenueConfig(max_venue_open_orders=2))
    venue = await create(api)
    for client_id in (100, 101):
        status, rec, _ = await signed(api, venue, "POST", "/v1/cefi/orders", client_id, json=order_body(client_id))
        assert rec["status"] == "ACTIVE"
    status, rec, _ = await signed(api, venue, "POST", "/v1/cefi/orders", 101, json=order_body(101))
    assert status == 200 and rec["status"] == "REJECTED" and rec["reject_reason"] == "TOO_MANY_OPEN_ORDERS"
    status, rec, _ = await signed(api, None, "POST", "/v1/cefi/orders", 101, json=order_body(101))
    assert rec["status"] == "ACTIVE"  # the default venue keeps its scenario's limits


def test_flags_and_their_variables_set_the_venue_limits() -> None:
    import argparse

    from cefisim.api.cli.common.cli_env import env_defaults
    from cefisim.api.cli.main import _serve_parser
    from cefisim.api.formats.scenario import parse_scenario
    from cefisim.api.web.server.keys import ServerOptions
    from cefisim.api.web.server.limit_flags import limit_options, venue_config_for

    sub = argparse.ArgumentParser().add_subparsers()
    serve = _serve_parser(sub)
    env_defaults(serve, {"CEFISIM_MAX_VENUES": "3", "CEFISIM_MAX_VENUE_OPEN_ORDERS": "500"})
    args = serve.parse_args(["--max-ended-orders", "1000", "--max-ended-orders-per-client", "10"])
    options = ServerOptions(**limit_options(args))
    assert options.max_venues == 3
    scenario = parse_scenario(scenario_doc(), "test")
    config = venue_config_for(scenario, args)
    assert options.venue_config is not None and options.venue_config(scenario) == config
    assert (config.max_venue_open_orders, config.max_ended_orders, config.max_ended_orders_per_client) == (
        500,
        1000,
        10,
    )
    default = venue_config_for(scenario, serve.parse_args([]))
    assert (default.max_venue_open_orders, default.max_ended_orders) == (500, 500_000)  # the variable, the engine's
    assert ServerOptions().max_venues == 64


async def test_on_the_wall_clock_each_venue_has_its_own_ticker() -> None:
    from aiohttp.test_utils import TestClient, TestServer

    from cefisim.api.formats.scenario import parse_scenario
    from cefisim.api.runtime.simulation import Simulation
    from cefisim.api.web.app.application import create_app

    app = create_app(Simulation(parse_scenario(scenario_doc(), "test"), clock="wall"))
    async with TestClient(TestServer(app)) as client:
        before = time.time_ns()
        resp = await client.post("/_sim/venues", json={"scenario": scenario_doc()})
        venue = await resp.json()
        assert resp.status == 201 and venue["clock"] == "wall" and int(venue["now_ns"]) >= before
        hub = app[VENUES]
        ticker = hub._tickers["v1"]
        assert ticker is not None and not ticker.done()
        await client.delete("/_sim/venues/v1")
        assert ticker.cancelled() and "v1" not in hub._tickers


async def test_the_stream_cap_is_per_server_whatever_the_venue(api: Api) -> None:
    # the limits every venue's hub shares (the app's factory made them all)
    api.client.app[VENUES].default.stream_hub.settings.max_streams = 2  # type: ignore[index]
    await create(api)
    await create(api)
    opened = []
    for venue in ("default", "v1"):
        resp = await api.client.get("/_sim/stream", params={"venue": venue, "instrument": "1"})
        assert resp.status == 200
        opened.append(resp)
    for venue in ("v2", "v1", "default"):
        status, body, _ = await api.call(
            "GET", "/_sim/stream", client_id=None, params={"venue": venue, "instrument": "1"}
        )
        assert status == 429 and body["type"].endswith("/too-many-streams"), venue
    for resp in opened:
        resp.close()


async def test_instruments_of_a_venue_on_the_control_plane(api: Api) -> None:
    doc = scenario_doc()
    doc["instruments"] = doc["instruments"][:1]
    await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": doc})
    status, own, _ = await api.call("GET", "/_sim/venues/v1/instruments", client_id=None)
    assert status == 200 and own == [{"instrument_id": "1", "symbol": "BTC-USD"}]
    status, default, _ = await api.call("GET", "/_sim/instruments", client_id=None)
    assert [i["symbol"] for i in default] == ["BTC-USD", "ETH-USD"]
