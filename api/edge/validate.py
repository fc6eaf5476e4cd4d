"""Strict parsing of request bodies and query strings: a 400 problem naming the field, or values.

Schemas are closed where the description's are (an unknown field is an error), types are exact (a
number where a string is expected is an error, never coerced), ids match ``^[1-9][0-9]*$`` and decimals
``^[0-9]+(\\.[0-9]+)?$``. Nothing here touches the venue: a request that fails here changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cefisim.api.edge.problems import bad_request
from cefisim.engine.reference import ID_RE
from cefisim.engine.units import DECIMAL_RE

UUID4_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
EXTERNAL_ID_RE = re.compile(r"^[A-Za-z0-9\-_.~]{1,18}$")
TIMESTAMP_RE = re.compile(r"^[0-9]{19}$")
#: a decimal string (``DECIMAL_RE``) with a non-zero digit: what an amount to move or quote must be
POSITIVE_DECIMAL_RE = re.compile(r"^([0-9]*[1-9][0-9]*(\.[0-9]+)?|[0-9]+\.[0-9]*[1-9][0-9]*)$")
MAX_DECIMAL = 40  # characters of a decimal string
MAX_TEXT = 256
MAX_QUERY_DIGITS = 12  # a whole-number query parameter longer than this is refused, not clamped


def is_external_id(text: str) -> bool:
    """A lowercase hyphenated UUID v4, or 1 to 18 ASCII letters, digits, ``-_.~``."""
    return bool(UUID4_RE.fullmatch(text) or EXTERNAL_ID_RE.fullmatch(text))


Check = Callable[[Any, "F"], "tuple[str, str] | None"]


@dataclass(frozen=True)
class F:
    """One field of a closed JSON object."""

    kind: str  # str | id | id0 | decimal | positive | number | enum | enums | bool | external_id | uuid | object
    required: bool = False
    values: tuple[str, ...] = ()
    fields: Mapping[str, F] = field(default_factory=dict)  # for kind == "object"
    open: bool = False  # for kind == "object": unknown keys allowed
    #: the kind's check, looked up once here rather than by comparing ``kind`` for every value
    check: Check = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind != "object" and self.kind not in _CHECKS:  # pragma: no cover - a bug in a schema table
            raise AssertionError(self.kind)
        object.__setattr__(self, "check", _CHECKS.get(self.kind, _no_check))


def check_object(value: Any, spec: Mapping[str, F], path: str, open_: bool = False) -> dict[str, Any]:
    """Validate ``value`` against ``spec``; returns the object (values unchanged).

    Paths are only built for the error message: the common, valid request pays for none of them.
    """
    if not isinstance(value, dict):
        raise bad_request(path or "body", "must be a JSON object")
    if not open_ and not value.keys() <= spec.keys():
        unknown = next(key for key in value if key not in spec)
        raise bad_request(_join(path, unknown), "unknown field")
    for name, f in spec.items():
        v = value.get(name)
        if v is None:
            if f.required:
                raise bad_request(_join(path, name), "is required")
            continue
        if f.kind == "object":
            check_object(v, f.fields, _join(path, name), f.open)
            continue
        problem = f.check(v, f)
        if problem is not None:
            suffix, reason = problem
            raise bad_request(_join(path, name) + suffix, reason)
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# Each check: (suffix of the path, reason) when ``v`` does not fit ``f``; None when it does.


def _bool(v: Any, f: F) -> tuple[str, str] | None:
    return None if isinstance(v, bool) else ("", "must be a boolean")


def _number(v: Any, f: F) -> tuple[str, str] | None:
    """A non-negative whole number, or a decimal string."""
    if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
        return None
    if not isinstance(v, str) or not DECIMAL_RE.fullmatch(v):
        return "", "must be a non-negative number or decimal string"
    return None


def _enums(v: Any, f: F) -> tuple[str, str] | None:
    if not isinstance(v, list):
        return "", "must be an array of strings"
    seen: list[str] = []
    for i, item in enumerate(v):
        if not isinstance(item, str) or item not in f.values:
            return f"[{i}]", "must be one of " + ", ".join(f.values)
        if item in seen:
            return f"[{i}]", f"duplicate value {item!r}"
        seen.append(item)
    return None


_NOT_A_STRING = ("", "must be a string")


def _str(v: Any, f: F) -> tuple[str, str] | None:
    if not isinstance(v, str):
        return _NOT_A_STRING
    return ("", f"longer than {MAX_TEXT} characters") if len(v) > MAX_TEXT else None


def _too_long(v: str, limit: int, pattern: re.Pattern[str], unit: str) -> tuple[str, str] | None:
    """The problem for a text past ``limit`` that otherwise fits ``pattern`` (a linear one): it names
    the length (the OpenAPI document's maxLength), not a pattern the value matches."""
    return ("", f"longer than {limit} {unit}") if len(v) > limit and pattern.fullmatch(v) else None


def _id(v: Any, f: F) -> tuple[str, str] | None:
    if not isinstance(v, str):
        return _NOT_A_STRING
    if len(v) > 19 or not ID_RE.fullmatch(v):
        return _too_long(v, 19, ID_RE, "digits") or ("", "must match ^[1-9][0-9]*$")
    return None


def _id0(v: Any, f: F) -> tuple[str, str] | None:
    if not isinstance(v, str):
        return _NOT_A_STRING
    if v == "0" or (len(v) <= 19 and ID_RE.fullmatch(v)):
        return None
    return _too_long(v, 19, ID_RE, "digits") or ("", 'must be "0" or match ^[1-9][0-9]*$')


def _decimal(v: Any, f: F) -> tuple[str, str] | None:
    if not isinstance(v, str):
        return _NOT_A_STRING
    if len(v) > MAX_DECIMAL or not DECIMAL_RE.fullmatch(v):
        return _too_long(v, MAX_DECIMAL, DECIMAL_RE, "characters") or (
            "",
            "must be a decimal string matching ^[0-9]+(\\.[0-9]+)?$",
        )
    return None


def _positive(v: Any, f: F) -> tuple[str, str] | None:
    """A decimal string greater than zero: a syntactic rule, so the OpenAPI schema states it too."""
    if not isinstance(v, str):
        return _NOT_A_STRING
    if len(v) > MAX_DECIMAL or not POSITIVE_DECIMAL_RE.fullmatch(v):
        # DECIMAL_RE, not POSITIVE_DECIMAL_RE, on a long text: the latter backtracks quadratically
        return _too_long(v, MAX_DECIMAL, DECIMAL_RE, "characters") or ("", "must be a decimal string greater than zero")
    return None


def _enum(v: Any, f: F) -> tuple[str, str] | None:
    if not isinstance(v, str):
        return _NOT_A_STRING
    return None if v in f.values else ("", "must be one of " + ", ".join(f.values))


def _external_id(v: Any, f: F) -> tuple[str, str] | None:
    if not isinstance(v, str):
        return _NOT_A_STRING
    if not is_external_id(v):
        return "", "must be a lowercase UUID v4 or 1-18 characters of letters, digits, -_.~"
    return None


def _uuid(v: Any, f: F) -> tuple[str, str] | None:
    if not isinstance(v, str):
        return _NOT_A_STRING
    return None if UUID_RE.fullmatch(v) else ("", "must be a UUID")


def _no_check(v: Any, f: F) -> tuple[str, str] | None:  # kind "object": check_object recurses instead
    return None


_CHECKS: dict[str, Check] = {
    "bool": _bool,
    "number": _number,
    "enums": _enums,
    "str": _str,
    "id": _id,
    "id0": _id0,
    "decimal": _decimal,
    "positive": _positive,
    "enum": _enum,
    "external_id": _external_id,
    "uuid": _uuid,
}


# --- query strings --------------------------------------------------------------------------------


def query_id(query: Mapping[str, str], name: str) -> int | None:
    raw = query.get(name)
    if raw is None:
        return None
    if not ID_RE.fullmatch(raw) or len(raw) > 19:
        raise bad_request(name, (_too_long(raw, 19, ID_RE, "digits") or ("", "must match ^[1-9][0-9]*$"))[1])
    return int(raw)


def ascii_digits(text: str) -> bool:
    """Whether ``text`` is one or more of the ASCII digits 0-9 (``str.isdigit`` alone also takes "²",
    which ``int`` then refuses)."""
    return text.isascii() and text.isdigit()


def query_int(query: Mapping[str, str], name: str, default: int, low: int, high: int, clamp: bool) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    if not ascii_digits(raw) or len(raw) > MAX_QUERY_DIGITS:
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
