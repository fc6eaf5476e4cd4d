"""Hostile input on the control plane (``/_sim/``): never a 5xx, every 4xx a bare problem, a 4xx
changes nothing.

The control plane is trusted (loopback, or ``--control-token``), but a test harness that sends it a
wrong body must get a clear 400, not a crash or a half-applied change. Every route the app serves
under ``/_sim/`` is fuzzed (taken from the router, so a new one is included). Values that would
make the engine walk a huge stretch of time are left out here: that is a known defect with its own
test (``test_control_robustness.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.fuzz.strategies import extra_headers, json_body, path_segment, query_string
from tests.fuzz.support import Client, Served, check_answer, examples, serve_sim

FUZZ = settings(
    max_examples=examples(20),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
MAX_ADVANCE_S = 30 * 86_400  # see the module docstring

TEMPLATES: dict[tuple[str, str], Any] = {
    ("POST", "/_sim/clock/advance"): {"seconds": "1.5"},
    ("POST", "/_sim/latency"): {"entry_ms": 0, "modify_ms": "0.5", "cancel_ms": 0},
    ("POST", "/_sim/settlement-delay"): {"ms": 0},
    ("POST", "/_sim/instruments/{instrument_id}/status"): {"status": "ACTIVE"},
    ("POST", "/_sim/faults"): {"count": 1, "status": 503, "path_prefix": "/v1/nowhere/", "delay_ms": 0},
    ("POST", "/_sim/reset"): {},
}


def _routes() -> list[tuple[str, str]]:
    from cefisim.api.web.control.faults import fault_routes
    from cefisim.api.web.control.plane import control_routes

    return [(r.method, r.path) for r in [*control_routes(), *fault_routes()]]  # type: ignore[attr-defined]


ROUTES = _routes()
SEGMENTS = path_segment(["1", "2", "3", "0", "k-alice", "k-org", "nope"])
QUERY = query_string(["depth", "limit", "version", "x"])
HEADERS = extra_headers()
BODIES = {route: json_body(TEMPLATES.get(route)) for route in ROUTES}


@pytest.fixture(scope="module")
def control() -> Iterator[tuple[Served, Client]]:
    with serve_sim() as served:
        client = Client(served.port)
        try:
            yield served, client
        finally:
            client.close()


def _advance_seconds(body: bytes) -> float:
    """How far a clock-advance body would move the clock (0 when it would be refused)."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        return 0
    if not isinstance(doc, dict):
        return 0
    value = doc.get("seconds")
    try:
        return float(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else 0
    except ValueError:
        return 0


def exchange(served: Served, client: Client, method: str, target: str, body: bytes, headers: dict[str, str]) -> None:
    before = served.snapshot()
    if body:
        headers.setdefault("Content-Type", "application/json")
    reply = client.request(method, target, body, headers)
    check_answer(method, target.split("?")[0], reply)
    if 400 <= reply.status < 500:
        assert served.snapshot() == before, (method, target, reply.status, reply.body[:300])


@pytest.mark.parametrize(("method", "path"), ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
@FUZZ
@given(data=st.data())
def test_control_route_survives_hostile_input(
    control: tuple[Served, Client], method: str, path: str, data: st.DataObject
) -> None:
    served, client = control
    target = path
    for name in ("{instrument_id}", "{key_id}"):
        target = target.replace(name, data.draw(SEGMENTS, label=name))
    body = data.draw(BODIES[(method, path)], label="body")
    if path == "/_sim/clock/advance":
        assume("to" not in body.decode("utf-8", "replace") and _advance_seconds(body) <= MAX_ADVANCE_S)
    query = data.draw(QUERY, label="query")
    exchange(served, client, method, target + (f"?{query}" if query else ""), body, data.draw(HEADERS, label="headers"))
    served.on_loop(_end_http_faults(served.app))  # an accepted fault plan must not outlive the example


def _end_http_faults(app: Any) -> Any:
    from cefisim.api.web.control.isolated_venues import VENUES

    def end() -> None:
        app[VENUES].default.http_faults = None

    return end


@st.composite
def _broken_snapshot(draw: st.DrawFn, doc: dict[str, Any]) -> bytes:
    """The live snapshot with its header or its shape damaged (deep damage: test_control_robustness.py)."""
    out = dict(doc)
    # start_ns is left out: a bad one is a 500 that half-applies (test_control_robustness.py)
    key = draw(st.sampled_from(["format", "scenario_sha256", "root", "objects", "clock", "extra"]))
    choice = draw(st.sampled_from(["drop", "null", "junk", "truncate", "dangling"]))
    if choice == "drop":
        out.pop(key, None)
    elif choice == "null":
        out[key] = None
    elif choice == "junk":
        ints = st.integers(min_value=-(2**63), max_value=2**64 - 1)  # what JSON (orjson) writes
        out[key] = draw(st.one_of(ints, st.text(max_size=5), st.lists(ints, max_size=3)))
    elif choice == "truncate":
        out["objects"] = list(doc["objects"])[: draw(st.integers(min_value=0, max_value=3))]
    else:
        out["root"] = {"venue": {"$ref": 10**6}, "runner": {"$ref": -1}}
    return orjson.dumps(out)


@settings(FUZZ, max_examples=examples(25))
@given(data=st.data())
def test_restoring_a_damaged_snapshot_is_400_and_changes_nothing(
    control: tuple[Served, Client], data: st.DataObject
) -> None:
    served, client = control
    doc = served.on_loop(served.sim.snapshot)
    body = data.draw(_broken_snapshot(doc))
    before = served.snapshot()
    reply = client.request("POST", "/_sim/snapshot", body, {"Content-Type": "application/json"})
    check_answer("POST", "/_sim/snapshot", reply)
    if reply.status != 200:
        assert reply.status == 400 and served.snapshot() == before
