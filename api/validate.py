"""Strict parsing of request bodies and query strings: a 400 problem naming the field, or values.

Schemas are closed where the description's are (an unknown field is an error), types are exact (a
number where a string is expected is an error, never coerced), ids match ``^[1-9][0-9]*$`` and decimals
``^[0-9]+(\\.[0-9]+)?$``. Nothing here touches the venue: a request that fails here changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from engine.reference import ID_RE
from engine.units import DECIMAL_RE

from .problems import bad_request

UUID4_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
EXTERNAL_ID_RE = re.compile(r"^[A-Za-z0-9\-_.~]{1,18}$")
TIMESTAMP_RE = re.compile(r"^[0-9]{19}$")
MAX_TEXT = 256


def is_external_id(text: str) -> bool:
    """A lowercase hyphenated UUID v4, or 1 to 18 ASCII letters, digits, ``-_.~``."""
    return bool(UUID4_RE.fullmatch(text) or EXTERNAL_ID_RE.fullmatch(text))


@dataclass(frozen=True)
class F:
    """One field of a closed JSON object."""

    kind: str  # str | id | id0 | decimal | number | enum | enums | bool | external_id | uuid | object
    required: bool = False
    values: tuple[str, ...] = ()
    fields: Mapping[str, "F"] = field(default_factory=dict)  # for kind == "object"
    open: bool = False  # for kind == "object": unknown keys allowed


def parse_json(body: bytes) -> Any:
    if not body:
        raise bad_request("body", "a JSON object is required")
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise bad_request("body", f"not valid JSON ({exc.args[0] if exc.args else 'parse error'})") from None


def check_object(value: Any, spec: Mapping[str, F], path: str, open_: bool = False) -> dict[str, Any]:
    """Validate ``value`` against ``spec``; returns the object (values unchanged)."""
    where = path or "body"
    if not isinstance(value, dict):
        raise bad_request(where, "must be a JSON object")
    if not open_:
        for key in value:
            if key not in spec:
                raise bad_request(_join(path, key), "unknown field")
    for name, f in spec.items():
        p = _join(path, name)
        if name not in value or value[name] is None:
            if f.required:
                raise bad_request(p, "is required")
            continue
        _check_value(value[name], f, p)
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check_value(v: Any, f: F, p: str) -> None:
    kind = f.kind
    if kind == "bool":
        if not isinstance(v, bool):
            raise bad_request(p, "must be a boolean")
        return
    if kind == "object":
        check_object(v, f.fields, p, f.open)
        return
    if kind == "number":  # a non-negative whole number, or a decimal string
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            return
        if not isinstance(v, str) or not DECIMAL_RE.fullmatch(v):
            raise bad_request(p, "must be a non-negative number or decimal string")
        return
    if kind == "enums":
        if not isinstance(v, list):
            raise bad_request(p, "must be an array of strings")
        seen: list[str] = []
        for i, item in enumerate(v):
            if not isinstance(item, str) or item not in f.values:
                raise bad_request(f"{p}[{i}]", "must be one of " + ", ".join(f.values))
            if item in seen:
                raise bad_request(f"{p}[{i}]", f"duplicate value {item!r}")
            seen.append(item)
        return
    if not isinstance(v, str):
        raise bad_request(p, "must be a string")
    if kind == "str":
        if len(v) > MAX_TEXT:
            raise bad_request(p, f"longer than {MAX_TEXT} characters")
    elif kind == "id":
        if not ID_RE.fullmatch(v) or len(v) > 19:
            raise bad_request(p, "must match ^[1-9][0-9]*$")
    elif kind == "id0":
        if not (v == "0" or (ID_RE.fullmatch(v) and len(v) <= 19)):
            raise bad_request(p, "must be \"0\" or match ^[1-9][0-9]*$")
    elif kind == "decimal":
        if not DECIMAL_RE.fullmatch(v) or len(v) > 40:
            raise bad_request(p, "must be a decimal string matching ^[0-9]+(\\.[0-9]+)?$")
    elif kind == "enum":
        if v not in f.values:
            raise bad_request(p, "must be one of " + ", ".join(f.values))
    elif kind == "external_id":
        if not is_external_id(v):
            raise bad_request(p, "must be a lowercase UUID v4 or 1-18 characters of letters, digits, -_.~")
    elif kind == "uuid":
        if not UUID_RE.fullmatch(v):
            raise bad_request(p, "must be a UUID")
    else:  # pragma: no cover - a bug in a schema table
        raise AssertionError(kind)


# --- query strings --------------------------------------------------------------------------------

def query_id(query: Mapping[str, str], name: str) -> int | None:
    raw = query.get(name)
    if raw is None:
        return None
    if not ID_RE.fullmatch(raw) or len(raw) > 19:
        raise bad_request(name, "must match ^[1-9][0-9]*$")
    return int(raw)


def query_int(query: Mapping[str, str], name: str, default: int, low: int, high: int, clamp: bool) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    if not raw.isascii() or not raw.isdigit() or len(raw) > 12:
        raise bad_request(name, f"must be a whole number from {low} to {high}")
    value = int(raw)
    if value < low or (value > high and not clamp):
        raise bad_request(name, f"must be a whole number from {low} to {high}")
    return min(value, high)


def query_timestamp(query: Mapping[str, str], name: str, required: bool) -> int | None:
    raw = query.get(name)
    if raw is None:
        if required:
            raise bad_request(name, "is required: 19 digits, nanoseconds since the Unix epoch")
        return None
    if not TIMESTAMP_RE.fullmatch(raw):
        raise bad_request(name, "must be 19 digits, nanoseconds since the Unix epoch")
    return int(raw)

