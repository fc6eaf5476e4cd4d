"""Isolated venues on one server (``api/control/venues.py``, ``api/runtime/venues.py``, docs/venues.md)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

import orjson
import pytest

from cefisim.api.control.venues import VENUES
from cefisim.api.runtime.venues import derived_key, derived_key_id
from cefisim.api.server.keys import SIM
from tests.api.conftest import ALICE_KEY, BOB_KEY, Api, scenario_doc


async def create(api: Api, **body: Any) -> dict[str, Any]:
    status, doc, _ = await api.call("POST", "/_sim/venues", client_id=None,
                                    json={"scenario": scenario_doc(), **body})
    assert status == 201, doc
    return doc


def creds(venue: dict[str, Any], client_id: int) -> dict[str, str]:
    entry = next(c for c in venue["clients"] if c["client_id"] == str(client_id))
    return {"key": entry["key"], "secret": entry["secret"]}


async def signed(api: Api, venue: dict[str, Any] | None, method: str, path: str, client_id: int = 100,
                 json: Any = None) -> tuple[int, Any, Any]:
    """A signed request with the keys of ``venue`` (None: the default venue's)."""
    raw = orjson.dumps(json) if json is not None else b""
    extra = creds(venue, client_id) if venue is not None else {}
    headers = api.headers(client_id, method, path, raw, **extra)
    return await api.call(method, path, client_id=None, body=raw, headers=headers)


def order_body(client_id: int = 100, **info: Any) -> dict[str, Any]:
    return {"info": {"client_id": str(client_id), "instrument_id": "1", "side": "BUY", "type": "LIMIT",
                     "qty": "1", "price": "50000.00", **info}}


async def test_create_answers_id_and_derived_credentials(api: Api) -> None:
    first = await create(api)
    second = await create(api, seed=11)
    assert (first["id"], second["id"]) == ("v1", "v2")
    assert creds(first, 100) == {"key": derived_key(ALICE_KEY, "v1"), "secret": "alice-secret"}
    assert creds(second, 101)["key"] == derived_key(BOB_KEY, "v2")
    assert len({ALICE_KEY, creds(first, 100)["key"], creds(second, 100)["key"]}) == 3
    assert second["seed"] == 11 and first["seed"] == 7
    status, listed, _ = await api.call("GET", "/_sim/venues", client_id=None)
    assert status == 200 and [v["id"] for v in listed] == ["default", "v1", "v2"]
    assert "clients" not in listed[1]
    status, one, _ = await api.call("GET", "/_sim/venues/v2", client_id=None)
    assert status == 200 and one == second


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
        "GET", "/v1/cefi/balances", client_id=None,
        headers=api.headers(100, "GET", "/v1/cefi/balances", b"", **unknown))
    assert status_u == 401
    status, _, _ = await api.call("DELETE", "/_sim/venues/v1", client_id=None)
    assert status == 200
    status, body, _ = await signed(api, venue, "GET", "/v1/cefi/balances")
    assert (status, body) == (status_u, body_u)


async def test_unknown_venue_is_a_404_problem(api: Api) -> None:
    for method, path in (("GET", "/_sim/venues/v9"), ("DELETE", "/_sim/venues/v9"),
                         ("GET", "/_sim/venues/v9/book/1"), ("POST", "/_sim/venues/v9/reset")):
        status, body, headers = await api.call(method, path, client_id=None)
        assert status == 404 and body["type"].endswith("/unknown-venue"), (path, body)
        assert headers["Content-Type"] == "application/problem+json"


async def test_the_default_venue_cannot_be_deleted(api: Api) -> None:
    status, body, _ = await api.call("DELETE", "/_sim/venues/default", client_id=None)
    assert status == 409 and "cannot be deleted" in body["detail"]
    status, doc, _ = await api.call("GET", "/_sim/venues/default", client_id=None)
    assert status == 200 and creds(doc, 100)["key"] == ALICE_KEY


@pytest.mark.parametrize(("body", "field"), [
    ({}, "scenario"),
    ({"scenario": 5}, "scenario"),
    ({"scenario": "no-such-scenario"}, "scenario"),
    ({"scenario": "demo", "seed": "7"}, "seed"),
    ({"scenario": "demo", "seed": -1}, "seed"),
    ({"scenario": "demo", "colour": "red"}, "colour"),
    ({"scenario": {"seed": 1}}, "scenario"),
])
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
    status, clock, _ = await api.call("POST", "/_sim/venues/v1/clock/advance", client_id=None,
                                      json={"seconds": "60"})
    assert status == 200
    _, v1, _ = await api.call("GET", "/_sim/venues/v1/clock", client_id=None)
    _, v2, _ = await api.call("GET", "/_sim/venues/v2/clock", client_id=None)
    _, default, _ = await api.call("GET", "/_sim/clock", client_id=None)
    assert int(v1["now_ns"]) == int(v2["now_ns"]) + 60 * 10**9 and v2 == default
    status, _, _ = await api.call("POST", "/_sim/venues/v1/reset", client_id=None)
    _, v1, _ = await api.call("GET", "/_sim/venues/v1/clock", client_id=None)
    assert status == 200 and v1 == v2


async def test_deleting_frees_the_venue_and_leaves_the_others(api: Api) -> None:
    one, two = await create(api), await create(api)
    await signed(api, two, "POST", "/v1/cefi/orders", json=order_body())
    sim_ref = weakref.ref(api.client.server.app[VENUES].apps["v1"][SIM])  # type: ignore[union-attr]
    status, _, _ = await api.call("DELETE", "/_sim/venues/v1", client_id=None)
    assert status == 200
    gc.collect()
    assert sim_ref() is None
    status, page, _ = await signed(api, two, "GET", "/v1/cefi/orders/all")
    assert status == 200 and len(page["data"]) == 1
    status, _, _ = await api.call("GET", "/_sim/venues/v1", client_id=None)
    assert status == 404
