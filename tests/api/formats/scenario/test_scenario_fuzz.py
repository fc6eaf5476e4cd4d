"""Random damage to a valid document: the loader answers with a Scenario or a ScenarioError, nothing else."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cefisim.api.formats.scenario import Scenario, ScenarioError, load_scenario, parse_scenario
from tests.api.formats.scenario.replay_support import SCENARIOS, SHIPPED, full_doc

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            "0",
            "1",
            "-1",
            "0.5",
            "1e3",
            "+1",
            "+0.000000001",
            "BTC",
            "USD",
            "alice",
            "BTC-USD",
            "ACTIVE",
            "LIMIT",
            "MARKET",
            "BUY",
            "2026-11-02T09:00:00Z",
            "1999-01-01T00:00:00Z",
            "99999999999999999999",
            "0.000000001",
            "30000.00",
            "2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f",
        ]
    ),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6,
)


def paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every location in the document, as a tuple of keys and indexes."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += paths(value, (*prefix, i))
    return out


def mutate(doc: dict, data: st.DataObject) -> None:
    where = data.draw(st.sampled_from(paths(doc)[1:]))
    parent: Any = doc
    for key in where[:-1]:
        parent = parent[key]
    last = where[-1]
    action = data.draw(st.sampled_from(["drop", "replace", "stringify", "add_key", "duplicate", "wrong_type"]))
    if action == "drop":
        del parent[last]
    elif action == "replace":
        parent[last] = data.draw(JSON_VALUES)
    elif action == "stringify":
        parent[last] = json.dumps(parent[last]) if not isinstance(parent[last], str) else parent[last] + "x"
    elif action == "add_key" and isinstance(parent[last], dict):
        parent[last][data.draw(st.text(max_size=8))] = data.draw(JSON_VALUES)
    elif action == "duplicate" and isinstance(parent, list):
        parent.append(json.loads(json.dumps(parent[last])))
    else:
        value = parent[last]
        parent[last] = [value] if not isinstance(value, list) else {"x": value}


def check_outcome(make: Any) -> None:
    try:
        scenario = make()
    except ScenarioError as exc:
        refused: ScenarioError | None = exc
    else:
        refused = None
    if refused is not None:
        event("refused")
        assert refused.problems, "a ScenarioError without problems"
        for source, path, reason in refused.problems:
            assert isinstance(source, str) and path.startswith("$") and reason
        return
    assert isinstance(scenario, Scenario)
    event("accepted")
    # what the loader accepts, the venue can run: build it and play the first instant
    venue = scenario.build_venue()
    scenario.runner(venue).run_until(scenario.start_ns)
    venue.check_invariants()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_documents_never_raise_anything_else(data: st.DataObject) -> None:
    doc = full_doc()
    for _ in range(data.draw(st.integers(1, 4))):
        if len(paths(doc)) > 1:
            mutate(doc, data)
    check_outcome(lambda: parse_scenario(doc, "fuzz.json"))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_damaged_text_never_raises_anything_else(data: st.DataObject) -> None:
    text = json.dumps(full_doc())
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text) - 1))
        cut = data.draw(st.integers(0, 3))
        text = (
            text[:i]
            + data.draw(st.sampled_from(["", "{", "}", "[", "]", ",", ":", '"', "\\", "\x00", "é", "1"]))
            + text[i + cut :]
        )
    fd, name = tempfile.mkstemp(suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        check_outcome(lambda: load_scenario(name))
    finally:
        os.unlink(name)


def collide(doc: dict, data: st.DataObject) -> None:
    """Give one list item another item's id or name: the earlier of the two becomes the duplicate."""
    lists = [v for v in doc.values() if isinstance(v, list) and sum(isinstance(x, dict) for x in v) > 1]
    if not lists:
        return
    items = [x for x in data.draw(st.sampled_from(lists)) if isinstance(x, dict)]
    i, j = data.draw(st.lists(st.integers(0, len(items) - 1), min_size=2, max_size=2, unique=True))
    shared = [k for k in items[i] if k in items[j] and isinstance(items[j][k], str)]
    if shared:
        key = data.draw(st.sampled_from(sorted(shared)))
        items[i][key] = items[j][key]


def one_message_per_problem(exc: ScenarioError, source: str) -> None:
    """What the CLI prints: one line per problem, ``file: $.json.path: reason``."""
    lines = str(exc).splitlines()
    assert len(lines) == len(exc.problems) >= 1
    for line, (src, path, reason) in zip(lines, exc.problems, strict=True):
        assert src == source and path.startswith("$") and reason
        assert line == f"{source}: {path}: {reason}"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(SHIPPED), data=st.data())
def test_mutated_shipped_scenarios_fail_with_one_message_each(name: str, data: st.DataObject) -> None:
    source = str(SCENARIOS / name)  # the real path: a prices_file next to it still resolves
    doc = json.loads((SCENARIOS / name).read_text(encoding="utf-8"))
    for _ in range(data.draw(st.integers(1, 3))):
        if data.draw(st.booleans()):
            collide(doc, data)
        elif len(paths(doc)) > 1:
            mutate(doc, data)
    try:
        scenario = parse_scenario(doc, source)
    except ScenarioError as exc:
        one_message_per_problem(exc, source)
        return
    scenario.runner(scenario.build_venue()).run_until(scenario.start_ns)


def test_a_dropped_duplicate_client_named_by_an_event_is_one_problem() -> None:
    doc = json.loads((SCENARIOS / "demo.json").read_text(encoding="utf-8"))
    doc["clients"][1]["id"] = doc["clients"][0]["id"]  # bob, whom the first event names, is dropped
    assert doc["events"][0]["client"] == doc["clients"][1]["mnemonic"]
    with pytest.raises(ScenarioError) as info:
        parse_scenario(doc, "demo.json")
    one_message_per_problem(info.value, "demo.json")
    assert info.value.problems[0] == ("demo.json", "$.clients[1].id", "duplicate id '100' (also clients[0])")
