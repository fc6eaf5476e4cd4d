"""Every venue's state is one ``VenueState`` from the app's one factory; the server's app holds none.

(``api/web/server/venue_state.py``, ``api/web/app/application.py``: ``venue_states``, docs/venues.md.)
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from cefisim.api.web.control.isolated_venues import VENUES
from cefisim.api.web.server.keys import OPTIONS, VENUE_WORK
from cefisim.api.web.server.request_log import REQUEST_LOG
from cefisim.api.web.server.venue_state import VenueState
from tests.api.conftest import Api, scenario_doc

API = Path(__file__).resolve().parents[4] / "api"


async def _create(api: Api) -> dict[str, Any]:
    status, venue, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": scenario_doc()})
    assert status == 201, venue
    return venue


def _alice(venue: dict[str, Any]) -> dict[str, str]:
    entry = next(c for c in venue["clients"] if c["client_id"] == "100")
    return {"key": entry["key"], "secret": entry["secret"]}


async def test_the_server_app_holds_what_the_venues_share_and_no_venue_part(api: Api) -> None:
    await _create(api)
    app = api.client.app
    assert set(app) == {OPTIONS, VENUE_WORK, REQUEST_LOG, VENUES}
    hub = app[VENUES]
    states = [hub.default, hub.created["v1"]]
    assert [type(s) for s in states] == [VenueState, VenueState]
    assert [s.venue_id for s in states] == ["default", "v1"]
    assert hub.default.sim is api.sim and hub.created["v1"].sim is not api.sim
    # one factory: the stream hubs share the server's limits and its count of open streams
    default_hub, created_hub = (s.stream_hub for s in states)
    assert created_hub.settings is default_hub.settings and created_hub.server is default_hub.server
    assert [s.stream_hub.venue for s in states] == ["default", "v1"]


async def test_each_venue_has_its_own_http_fault_plan(api: Api) -> None:
    venue = await _create(api)
    plan = {"count": 1, "status": 503}
    status, _, _ = await api.call("POST", "/_sim/venues/v1/faults", client_id=None, json=plan)
    assert status == 200
    assert (await api.call("GET", "/_sim/faults", client_id=None))[1] is None
    status, body, _ = await api.call("GET", "/_sim/venues/v1/faults", client_id=None)
    assert status == 200 and body["count"] == 1 and body["hits"] == 0
    raw = b'{"info": {}}'
    headers = api.headers(100, "POST", "/v1/cefi/orders", raw)
    status, _, _ = await api.call("POST", "/v1/cefi/orders", client_id=None, body=raw, headers=headers)
    assert status == 400  # the default venue's request: no fault, its own answer to a bad body
    headers = api.headers(100, "POST", "/v1/cefi/orders", raw, **_alice(venue))
    status, problem, _ = await api.call("POST", "/v1/cefi/orders", client_id=None, body=raw, headers=headers)
    assert status == 503 and problem["error"]["type"].endswith("/injected-fault"), problem
    assert api.client.app[VENUES].created["v1"].http_faults.hits == 1
    assert api.client.app[VENUES].default.http_faults is None


def test_only_the_app_makes_an_aiohttp_application() -> None:
    """A venue's parts live in its ``VenueState``, never on a ``web.Application`` of their own: the one
    application api/ makes is the server's (``create_app``)."""
    makers = [
        f"{path.relative_to(API.parent)}:{node.lineno}"
        for path in sorted(API.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Application"
    ]
    assert [m.rpartition(":")[0] for m in makers] == ["api/web/app/application.py"], makers
