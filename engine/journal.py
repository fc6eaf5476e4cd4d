"""Commands to and from their journal form: plain dicts of str/int/bool/list/None.

The journal is a sequence of ``{"at": ns, "cmd": {...}}`` records, one per applied command; replaying
it on a venue built from the same scenario reproduces every event byte for byte. The engine does not
serialise: ``api/journal_file.py`` writes these dicts as JSON lines. ``event_digest`` folds a stream of
events into a stable hex digest so replays can be compared cheaply.
"""

from __future__ import annotations

import hashlib
from dataclasses import MISSING, fields
from typing import Any

from .commands import COMMAND_TYPES, Command, RequestTransfer

_TUPLE_FIELDS = {"flags", "exec_inst"}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {cls: tuple(f.name for f in fields(cls)) for cls in COMMAND_TYPES.values()}


def to_wire(cmd: Command) -> dict[str, Any]:
    """``PlaceOrder(...)`` -> ``{"kind": "place", "client_id": 100, ...}`` without None values."""
    out: dict[str, Any] = {"kind": cmd.kind}
    for name in _FIELD_NAMES[type(cmd)]:
        value = getattr(cmd, name)
        if value is None or value == ():
            continue
        if name in _TUPLE_FIELDS:
            value = list(value)
        elif name == "instructions":
            value = {k: v for k, v in value}
        out[name] = value
    return out


def from_wire(data: dict[str, Any]) -> Command:
    """Inverse of :func:`to_wire`; raises ValueError on anything it cannot rebuild."""
    if not isinstance(data, dict):
        raise ValueError("a command must be an object")
    kind = data.get("kind")
    cls = COMMAND_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown command kind {kind!r}")
    names = {f.name for f in fields(cls)}
    # to_wire leaves out None values, including those of fields without a default
    kwargs: dict[str, Any] = {
        f.name: None for f in fields(cls) if f.default is MISSING and "None" in str(f.type)
    }
    for key, value in data.items():
        if key == "kind":
            continue
        if key not in names:
            raise ValueError(f"{kind}: unknown field {key!r}")
        if key in _TUPLE_FIELDS:
            value = tuple(value)
        elif key == "instructions" and cls is RequestTransfer:
            value = tuple(sorted(value.items()))
        kwargs[key] = value
    try:
        return cls(**kwargs)  # type: ignore[no-any-return]
    except TypeError as exc:
        raise ValueError(f"{kind}: {exc}") from None


def event_digest(events: list[tuple], digest: Any | None = None) -> Any:
    """Feed events into a sha256 (created when None) in a stable text form; returns the hash object."""
    h = digest if digest is not None else hashlib.sha256()
    for event in events:
        h.update(repr(event).encode())
        h.update(b"\n")
    return h
