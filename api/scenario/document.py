"""The decoded JSON document and how problems name places in it.

Contract: ``_pairs`` is the ``object_pairs_hook`` that keeps, on each object, the keys it saw more
than once (json keeps the last value); ``_no_constant`` refuses NaN and Infinity. ``_join`` builds
the JSON path of a problem (``$.a.b[2]``, ``$["odd key"]``), ``_kind`` names a value's JSON type in
a reason, and ``_plain`` turns a checked document back into plain dicts and fresh lists. No checks
of the format here: that is ``parser.py`` and the section modules.
"""

from __future__ import annotations

import json
import re
from typing import Any


class _Obj(dict):  # type: ignore[type-arg]
    """A JSON object that remembers keys it saw more than once (json keeps the last one)."""

    duplicates: list[str]


def _pairs(pairs: list[tuple[str, Any]]) -> _Obj:
    obj = _Obj()
    obj.duplicates = []
    for key, value in pairs:
        if key in obj and key not in obj.duplicates:
            obj.duplicates.append(key)
        obj[key] = value
    return obj


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _os_reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _plain(value: Any) -> Any:
    """A decoded document with plain dicts (no duplicate-key bookkeeping) and fresh lists."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if _IDENT_RE.match(key) else f"{path}[{json.dumps(key)}]"


def _kind(value: object) -> str:
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


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
