"""Strict parsing of request bodies and query strings: a 400 problem naming the field, or values.

Schemas are closed where the description's are (an unknown field is an error), types are exact (a
number where a string is expected is an error, never coerced), ids match ``^[1-9][0-9]*$`` and decimals
``^[0-9]+(\\.[0-9]+)?$``. Nothing here touches the venue: a request that fails here changes nothing.

A table of fields (``name -> F``) may carry rules across its fields (:class:`Fields`:
:class:`RequiredWhen`, :class:`AtLeastOne`), checked once every field of the object passed.
:func:`problem_in` answers the first problem as a value (:class:`FieldProblem`), for callers that are
no HTTP handler (``api/edge/intake.py``); :func:`check_object` raises it as the 400.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cefisim.api.edge.problems import Problem, bad_request
from cefisim.engine.reference import ID_RE
from cefisim.engine.units import DECIMAL_RE, parse_rate

UUID4_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
EXTERNAL_ID_RE = re.compile(r"^[A-Za-z0-9\-_.~]{1,18}$")
TIMESTAMP_RE = re.compile(r"^[0-9]{19}$")
#: a decimal string (``DECIMAL_RE``) with a non-zero digit: what an amount to move or quote must be
POSITIVE_DECIMAL_RE = re.compile(r"^([0-9]*[1-9][0-9]*(\.[0-9]+)?|[0-9]+\.[0-9]*[1-9][0-9]*)$")
MAX_DECIMAL = 40  # characters of a decimal string
MAX_TEXT = 256
MAX_QUERY_DIGITS = 12  # a whole-number query parameter longer than this is refused, not clamped
#: a whole number as a body may give it in text (kind ``whole``): ASCII digits, a sign only where the
#: bounds allow a negative number, at most 19 digits (so ``int`` never reads a long text)
WHOLE_RE = re.compile(r"^-?[0-9]{1,19}$")


def is_external_id(text: str) -> bool:
    """A lowercase hyphenated UUID v4, or 1 to 18 ASCII letters, digits, ``-_.~``."""
    return bool(UUID4_RE.fullmatch(text) or EXTERNAL_ID_RE.fullmatch(text))


#: a kind's check of a value: None when it fits, else ``(suffix of the path, reason)``, and for an
#: object the rule that refused it third (``(".info.price", reason, rule)``)
Check = Callable[[Any, "F"], "tuple[Any, ...] | None"]


@dataclass(frozen=True)
class F:
    """One field of a closed JSON object."""

    #: str | id | id0 | decimal | positive | rate | number | whole | enum | enums | bool | external_id | uuid | object
    kind: str
    required: bool = False
    values: tuple[str, ...] = ()
    fields: Mapping[str, F] = field(default_factory=dict)  # for kind == "object" (a Fields carries rules)
    open: bool = False  # for kind == "object": unknown keys allowed
    low: int = 0  # for kind == "whole": the smallest and the largest number taken
    high: int = 0
    #: the kind's check, looked up once here rather than by comparing ``kind`` for every value
    check: Check = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in _CHECKS:  # pragma: no cover - a bug in a schema table
            raise AssertionError(self.kind)
        object.__setattr__(self, "check", _CHECKS[self.kind])


# A rule across the fields of one object. Contract: ``broken(obj)`` says whether ``obj`` (whose fields
# each passed) breaks the rule, which it can only do while ``obj`` lacks ``field`` (absent or null),
# the field a problem names: so the check asks ``broken`` of an object that lacks it, and no other.


@dataclass(frozen=True, slots=True)
class RequiredWhen:
    """``field`` is required when ``other`` is ``value``, or (``unless``) when it is not."""

    field: str
    other: str
    value: str
    reason: str
    unless: bool = False

    def broken(self, obj: Mapping[str, Any]) -> bool:
        return obj.get(self.field) is None and (obj.get(self.other) == self.value) != self.unless


@dataclass(frozen=True, slots=True)
class AtLeastOne:
    """At least one of ``field`` and ``others`` is given; a problem names ``field``."""

    field: str
    others: tuple[str, ...]
    reason: str

    def broken(self, obj: Mapping[str, Any]) -> bool:
        return obj.get(self.field) is None and all(obj.get(name) is None for name in self.others)


Rule = RequiredWhen | AtLeastOne


class Fields(dict[str, F]):
    """A table of fields (``name -> F``, in order) and the rules across them: a plain table that
    learned the rules no single field states."""

    __slots__ = ("rules",)

    def __init__(self, fields: Mapping[str, F], *rules: Rule) -> None:
        super().__init__(fields)
        self.rules = rules


@dataclass(frozen=True, slots=True)
class FieldProblem:
    """Why fields were refused, as a value: ``field`` is where (a dotted path as the body nests it,
    ``info.qty``; ``[i]`` added for an item of an array), ``reason`` says why in the interface's words,
    ``rule`` is the rule across fields that refused them (None when one field alone did)."""

    field: str
    reason: str
    rule: Rule | None = None

    def http(self) -> Problem:
        """The 400 problem an HTTP handler answers: ``info.qty: must be a decimal string ...``."""
        return bad_request(self.field, self.reason)


def problem_in(value: Any, spec: Mapping[str, F], path: str = "", open_: bool = False) -> FieldProblem | None:
    """The first problem of ``value`` against ``spec`` (its fields in order, then its rules), or None.

    Paths are only built for the problem: the common, valid request pays for none of them.
    """
    found = _first(value, spec, open_)
    if found is None:
        return None
    suffix, reason, rule = found
    return FieldProblem((path + suffix if path else suffix[1:]) or "body", reason, rule)


def _first(value: Any, spec: Mapping[str, F], open_: bool) -> tuple[str, str, Rule | None] | None:
    """:func:`problem_in`'s walk: the problem's path below ``value`` (``""`` for itself, ``".name"``
    for a field), its reason and rule. A nested object is a field whose check walks it (``_object``)."""
    if not isinstance(value, dict):
        return "", "must be a JSON object", None
    if not open_ and not value.keys() <= spec.keys():
        unknown = next(key for key in value if key not in spec)
        return "." + unknown, "unknown field", None
    for name, f in spec.items():
        v = value.get(name)
        if v is None:
            if f.required:
                return "." + name, "is required", None
            continue
        problem = f.check(v, f)
        if problem is not None:
            return "." + name + problem[0], problem[1], problem[2] if len(problem) > 2 else None
    if type(spec) is Fields:
        for rule in spec.rules:
            if value.get(rule.field) is None and rule.broken(value):  # (the common object has the field)
                return "." + rule.field, rule.reason, rule
    return None


def check_object(value: Any, spec: Mapping[str, F], path: str, open_: bool = False) -> dict[str, Any]:
    """Validate ``value`` against ``spec``; returns the object (values unchanged), or raises the 400
    problem naming the field (:func:`problem_in`)."""
    problem = problem_in(value, spec, path, open_)
    if problem is not None:
        raise problem.http()
    return value


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


def _rate(v: Any, f: F) -> tuple[str, str] | None:
    """A decimal string with at most 9 significant decimals (``engine.units.parse_rate``; trailing zeros
    aside): a fee rate's syntax, which the OpenAPI document states as a pattern."""
    problem = _decimal(v, f)
    if problem is None and parse_rate(v) is None:
        return "", "has more than 9 decimals"
    return problem


def _whole(v: Any, f: F) -> tuple[str, str] | None:
    """A whole number from ``f.low`` to ``f.high``: an integer, or its decimal digits as text (a sign
    only where ``f.low`` is negative)."""
    if isinstance(v, int) and not isinstance(v, bool):
        number = v
    elif isinstance(v, str) and WHOLE_RE.fullmatch(v) and (f.low < 0 or v[0] != "-"):
        number = int(v)
    else:
        number = f.low - 1
    return None if f.low <= number <= f.high else ("", f"must be a whole number from {f.low} to {f.high}")


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


def _object(v: Any, f: F) -> tuple[str, str, Rule | None] | None:
    return _first(v, f.fields, f.open)


_CHECKS: dict[str, Check] = {
    "bool": _bool,
    "number": _number,
    "enums": _enums,
    "str": _str,
    "id": _id,
    "id0": _id0,
    "decimal": _decimal,
    "positive": _positive,
    "rate": _rate,
    "whole": _whole,
    "enum": _enum,
    "external_id": _external_id,
    "uuid": _uuid,
    "object": _object,
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
