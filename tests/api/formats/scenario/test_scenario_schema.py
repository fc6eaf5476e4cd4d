"""schema.json states exactly the keys the loader accepts, and every shipped scenario validates against it.

The validator below covers the subset of JSON Schema 2020-12 that schema.json uses (no new dependency).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cefisim.api.formats.scenario import loader
from tests.api.formats.scenario.replay_support import ROOT, SCENARIOS, full_doc

SCHEMA = json.loads((ROOT / "api" / "formats" / "scenario" / "schema.json").read_text())
TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
    "integer": int,
    "number": (int, float),
}
KNOWN = {
    "$schema",
    "$id",
    "$defs",
    "$ref",
    "title",
    "description",
    "type",
    "required",
    "additionalProperties",
    "properties",
    "items",
    "enum",
    "const",
    "pattern",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "uniqueItems",
    "oneOf",
    "anyOf",
    "not",
    "if",
    "then",
    "dependentRequired",
}


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, TYPES[name])


def errors(value: Any, schema: dict, path: str = "$") -> list[str]:
    """Problems of ``value`` against ``schema`` (an empty list when it validates)."""
    assert set(schema) <= KNOWN, set(schema) - KNOWN
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return errors(value, SCHEMA["$defs"][name], path)
    out: list[str] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, n) for n in names):
            return [f"{path}: not {schema['type']}"]
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: not one of {schema['enum']}")
    if isinstance(value, str):
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{path}: does not match {schema['pattern']}")
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", len(value)):
            out.append(f"{path}: bad length")
    if (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and (value < schema.get("minimum", value) or value > schema.get("maximum", value))
    ):
        out.append(f"{path}: out of range")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(f"{path}: too few items")
        if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
            out.append(f"{path}: items not unique")
        if "items" in schema:
            for i, item in enumerate(value):
                out += errors(item, schema["items"], f"{path}[{i}]")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                out.append(f"{path}.{key}: missing")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                out += errors(item, props[key], f"{path}.{key}")
            elif extra is False:
                out.append(f"{path}.{key}: not allowed")
            elif isinstance(extra, dict):
                out += errors(item, extra, f"{path}.{key}")
        for key, needs in schema.get("dependentRequired", {}).items():
            if key in value:
                out += [f"{path}.{n}: needed with {key}" for n in needs if n not in value]
    if "oneOf" in schema:
        passing = [s for s in schema["oneOf"] if not errors(value, s, path)]
        if len(passing) != 1:
            out.append(f"{path}: matches {len(passing)} of oneOf")
    if "anyOf" in schema and not any(not errors(value, s, path) for s in schema["anyOf"]):
        out.append(f"{path}: matches none of anyOf")
    if "not" in schema and not errors(value, schema["not"], path):
        out.append(f"{path}: matches not")
    if "if" in schema and not errors(value, schema["if"], path):
        out += errors(value, schema.get("then", {}), path)
    return out


@pytest.mark.parametrize("name", sorted(p.name for p in SCENARIOS.glob("*.json")))
def test_shipped_scenarios_validate(name: str) -> None:
    assert errors(json.loads((SCENARIOS / name).read_text()), SCHEMA) == []


def test_the_full_document_validates() -> None:
    assert errors(full_doc(), SCHEMA) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda d: d.update(colour=1), "$.colour: not allowed"),
        (lambda d: d["assets"][0].update(decimals="8"), "$.assets[0].decimals: not"),
        (lambda d: d["events"][0].pop("price"), "$.events[0]: matches 0 of oneOf"),
        (lambda d: d["agents"][0].update(random_walk={"start": "1", "step": "1"}), "$.agents[0]: matches 0 of oneOf"),
        (lambda d: d["clients"][0].pop("secret"), "$.clients[0].secret: needed with key"),
        (lambda d: d["api_keys"][0].update(users=[]), "$.api_keys[0]: matches not"),
    ],
)
def test_the_validator_catches_problems(change: Any, expected: str) -> None:
    doc = full_doc()
    change(doc)
    assert any(e.startswith(expected) for e in errors(doc, SCHEMA)), errors(doc, SCHEMA)


def _keys(defn: dict) -> tuple[set[str], set[str]]:
    return set(defn.get("required", ())), set(defn["properties"])


def _loader(
    table: tuple[tuple[str, ...], tuple[str, ...]], *more: tuple[tuple[str, ...], tuple[str, ...]]
) -> tuple[set[str], set[str]]:
    required = set(table[0]).union(*(m[0] for m in more))
    return required, required | set(table[1]).union(*(m[1] for m in more))


def test_schema_keys_are_the_loaders_keys() -> None:
    defs = SCHEMA["$defs"]
    pairs = {
        "$": (SCHEMA, loader.TOP_KEYS),
        "asset": (defs["asset"], loader.ASSET_KEYS),
        "instrument": (defs["instrument"], loader.INSTRUMENT_KEYS),
        "client": (defs["client"], loader.CLIENT_KEYS),
        "fee": (defs["fee"], loader.FEE_KEYS),
        "settings": (defs["settings"], loader.SETTINGS_KEYS),
        "latency": (defs["latency"], loader.LATENCY_KEYS),
        "api_key": (defs["api_key"], loader.API_KEY_KEYS),
        "api_key_user": (defs["api_key_user"], loader.API_KEY_USER_KEYS),
        "oauth_client": (defs["oauth_client"], loader.OAUTH_CLIENT_KEYS),
        "random_walk": (defs["random_walk"], loader.RANDOM_WALK_KEYS),
    }
    for name, (defn, table) in pairs.items():
        assert _keys(defn) == _loader(table), name
    assert [r["$ref"] for r in defs["event"]["oneOf"]] == [f"#/$defs/event_{t}" for t in loader.EVENT_KEYS]
    for etype, table in loader.EVENT_KEYS.items():
        defn = defs[f"event_{etype}"]
        assert _keys(defn) == _loader(loader.EVENT_COMMON, table), etype
        assert defn["properties"]["type"] == {"const": etype}
    assert [r["$ref"] for r in defs["agent"]["oneOf"]] == [f"#/$defs/agent_{t}" for t in loader.AGENT_KEYS]
    for atype, table in loader.AGENT_KEYS.items():
        defn = defs[f"agent_{atype}"]
        assert _keys(defn) == _loader(loader.AGENT_COMMON, table), atype
        assert defn["properties"]["type"] == {"const": atype}


def test_schema_enums_are_the_loaders() -> None:
    defs = SCHEMA["$defs"]
    order = defs["event_order"]["properties"]
    assert order["side"]["enum"] == list(loader.SIDES)
    assert order["order_type"]["enum"] == list(loader.ORDER_TYPES)
    assert order["tif"]["enum"] == list(loader.TIFS)
    assert order["flags"]["items"]["enum"] == list(loader.FLAGS)
    assert order["exec_inst"]["items"]["enum"] == list(loader.EXEC_INST)
    assert defs["stp"]["enum"] == list(loader.STP_VALUES)
    assert defs["instrument"]["properties"]["status"]["enum"] == list(loader.INSTRUMENT_STATUSES)
    assert defs["api_key"]["properties"]["kind"]["enum"] == list(loader.API_KEY_KINDS)
    assert defs["settings"]["properties"]["signature_layout"]["enum"] == list(loader.SIGNATURE_LAYOUTS)
    assert defs["event_transfer"]["properties"]["transfer_type"]["enum"] == list(loader.TRANSFER_TYPES)
    assert defs["event_transfer"]["properties"]["platform"]["enum"] == list(loader.PLATFORMS)
    for text in (
        "a",
        "x" * 18,
        "x" * 19,
        "a b",
        "2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f",
        "bid-1.~_",
        "2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5F",
        "2f1d7c9e-8a3b-3c5d-9e6f-0a1b2c3d4e5f",
    ):
        assert bool(re.search(defs["external_id"]["pattern"], text)) == loader.is_external_id(text), text


def test_schema_is_2020_12() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert Path(ROOT / "api" / "formats" / "scenario" / "schema.json").read_text().endswith("\n")
