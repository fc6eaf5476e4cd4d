"""OpenAPI building blocks every document shares: schema references, closed records, the JSON Schema
of a validation table (``api.edge.validate.F``), and the parts of an operation and a served document.

The CeFi document (``api/web/cefi/openapi_schemas.py``, ``openapi_operations.py``), the Auth operations
(``api/web/cefi/openapi_auth.py``) and the control plane's document (``api/web/control/openapi.py``) are built
from these, so a field's schema is written once and matches what ``check_object`` accepts.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from cefisim.api.edge.validate import EXTERNAL_ID_RE, MAX_DECIMAL, MAX_TEXT, POSITIVE_DECIMAL_RE, UUID4_RE, UUID_RE, F
from cefisim.engine.units import DECIMAL_RE, RATE_SCALE

ID_PATTERN = "^[1-9][0-9]*$"
ID0_PATTERN = "^(0|[1-9][0-9]*)$"
TIMESTAMP_PATTERN = "^[0-9]{19}$"
EXTERNAL_ID_PATTERN = f"({UUID4_RE.pattern})|({EXTERNAL_ID_RE.pattern})"
#: a rate as engine.units.parse_rate takes it (kind ``rate``: at most 9 significant decimals)
RATE_PATTERN = f"^[0-9]+(\\.[0-9]{{1,{RATE_SCALE}}}0*)?$"


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """The validator treats ``null`` like an absent optional field: say so.

    A nullable enumeration is its values and ``null``, without ``type``: the values already fix it, and
    openapi-python-client turns ``type: [string, null]`` beside an ``enum`` into three identical enum
    classes (one per reading of the type list) where ``enum`` alone gives one."""
    out = dict(schema)
    if "enum" in out:
        out.pop("type", None)
        out["enum"] = [*out["enum"], None]
        return out
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    return out


# --- rules across fields, in the shape code generators pass by --------------------------------
#
# A request body is one object schema holding every field, so openapi-python-client,
# datamodel-code-generator and openapi-typescript each make one model (one type) of it. A rule across
# fields ("id or external_id") is an ``if``/``then``/``else`` beside ``properties``: validators apply
# it, the generators read ``properties`` and ``required`` and pass it by. An ``anyOf`` or ``oneOf`` of
# ``required`` lists would not do: the generators read each branch as a model of its own (a union of
# models, none of which holds every field).


def present(name: str) -> dict[str, Any]:
    """``name`` is given and not ``null`` (the validator treats ``null`` as absent)."""
    return {"required": [name], "properties": {name: {"not": {"type": "null"}}}}


def at_least_one(*options: dict[str, Any]) -> dict[str, Any]:
    """The rule "at least one of ``options`` holds" (each a schema such as :func:`present`): when none
    but the last holds, the last must."""
    *rest, last = options
    return {"if": {"not": {"anyOf": rest}}, "then": last}


def exactly_one(*options: dict[str, Any]) -> dict[str, Any]:
    """The rule "exactly one of ``options`` holds": when the first holds none of the others may, else
    exactly one of the others must."""
    first, *rest = options
    if not rest:
        return first
    return {"if": first, "then": {"not": {"anyOf": rest}}, "else": exactly_one(*rest)}


def with_rules(schema: dict[str, Any], *rules: dict[str, Any], description: str) -> dict[str, Any]:
    """``schema`` (an object) with cross-field ``rules`` (from :func:`at_least_one`, :func:`exactly_one`)
    and the ``description`` that says them in words; several rules go under ``allOf``."""
    out = {**schema, "description": description}
    if len(rules) == 1:
        out.update(rules[0])
    else:
        out["allOf"] = list(rules)
    return out


def field_schema(f: F) -> dict[str, Any]:
    """The JSON Schema of one ``api.edge.validate.F`` field, exactly what ``check_object`` accepts."""
    kind = f.kind
    if kind == "str":
        return {"type": "string", "maxLength": MAX_TEXT}
    if kind == "id":
        return {"type": "string", "pattern": ID_PATTERN, "maxLength": 19}
    if kind == "id0":
        return {"type": "string", "pattern": ID0_PATTERN, "maxLength": 19}
    if kind == "decimal":
        return {"type": "string", "pattern": DECIMAL_RE.pattern, "maxLength": MAX_DECIMAL}
    if kind == "rate":
        return {
            "type": "string",
            "pattern": RATE_PATTERN,
            "maxLength": MAX_DECIMAL,
            "description": "a fraction with at most 9 significant decimals (trailing zeros aside)",
        }
    if kind == "whole":
        digits = "-?[0-9]{1,19}" if f.low < 0 else "[0-9]{1,19}"
        return {"type": ["integer", "string"], "minimum": f.low, "maximum": f.high, "pattern": f"^{digits}$"}
    if kind == "positive":
        return {
            "type": "string",
            "pattern": POSITIVE_DECIMAL_RE.pattern,
            "maxLength": MAX_DECIMAL,
            "description": "a decimal string greater than zero",
        }
    if kind == "number":
        return {"type": ["integer", "string"], "minimum": 0, "pattern": DECIMAL_RE.pattern}
    if kind == "enum":
        return {"type": "string", "enum": list(f.values)}
    if kind == "enums":
        return {"type": "array", "items": {"type": "string", "enum": list(f.values)}, "uniqueItems": True}
    if kind == "bool":
        return {"type": "boolean"}
    if kind == "external_id":
        return {
            "type": "string",
            "pattern": EXTERNAL_ID_PATTERN,
            "maxLength": 36,
            "description": "a lowercase hyphenated UUID v4, or 1 to 18 characters of letters, digits, -_.~",
        }
    if kind == "uuid":
        return {"type": "string", "pattern": UUID_RE.pattern}
    if kind == "object":
        return object_schema(f.fields, f.open)
    raise ValueError(f"no schema for field kind {kind!r}")  # pragma: no cover - a new kind in validate.py


def object_schema(
    spec: Mapping[str, F], open_: bool = False, overrides: Mapping[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """A closed (``additionalProperties: false``) object unless the validator leaves it open."""
    props: dict[str, Any] = {}
    for name, f in spec.items():
        schema = dict(overrides[name]) if overrides and name in overrides else field_schema(f)
        props[name] = schema if f.required else nullable(schema)
    out: dict[str, Any] = {"type": "object", "properties": props}
    required = [name for name, f in spec.items() if f.required]
    if required:
        out["required"] = required
    out["additionalProperties"] = bool(open_)
    return out


def string(**extra: Any) -> dict[str, Any]:
    return {"type": "string", **extra}


ID = string(pattern=ID_PATTERN)
DEC = string(pattern=DECIMAL_RE.pattern)
TS = string(pattern=TIMESTAMP_PATTERN, description="nanoseconds since the Unix epoch, 19 digits")


def record(props: dict[str, Any], required: list[str] | None = None, description: str | None = None) -> dict[str, Any]:
    """A closed record; every listed field is always present (``null`` when it has no value)."""
    out: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": list(props) if required is None else required,
        "additionalProperties": False,
    }
    if description:
        out["description"] = description
    return out


def described(table: dict[tuple[str, str], dict[str, Any]], method: str, path: str) -> dict[str, Any]:
    """The operation ``table`` describes for a served route (a copy), or a marker the tests fail on."""
    spec = table.get((method, path))
    if spec is None:
        return {
            "operationId": f"undocumented_{method.lower()}_{path.strip('/').replace('/', '_')}",
            "summary": "undocumented",
            "x-undocumented": True,
            "responses": {"default": {"description": "?"}},
        }
    return copy.deepcopy(spec)


def servers(url: str) -> list[dict[str, str]]:
    """``servers`` of a served document: the address its request came to."""
    return [{"url": url, "description": "the cefisim server this document was read from"}]
