"""The decoded JSON document and how problems name places in it.

Contract: ``object_pairs`` is the ``object_pairs_hook`` that keeps, on each object, the keys it saw more
than once (json keeps the last value); ``no_constant`` refuses NaN and Infinity. ``join_path`` builds
the JSON path of a problem (``$.a.b[2]``, ``$["odd key"]``), ``kind_of`` names a value's JSON type in
a reason, and ``plain_copy`` turns a checked document back into plain dicts and fresh lists. No checks
of the format here: that is ``parser.py`` and the section modules.
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeGuard


class CheckedObject(dict[str, Any]):
    """A JSON object that remembers keys it saw more than once (json keeps the last one)."""

    duplicates: list[str]


def object_pairs(pairs: list[tuple[str, Any]]) -> CheckedObject:
    obj = CheckedObject()
    obj.duplicates = []
    for key, value in pairs:
        if key in obj and key not in obj.duplicates:
            obj.duplicates.append(key)
        obj[key] = value
    return obj


def no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def os_reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def plain_copy(value: Any) -> Any:
    """A decoded document with plain dicts (no duplicate-key bookkeeping) and fresh lists."""
    if isinstance(value, dict):
        return {k: plain_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_copy(v) for v in value]
    return value


def join_path(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if _IDENT_RE.match(key) else f"{path}[{json.dumps(key)}]"


def kind_of(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
