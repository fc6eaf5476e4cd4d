"""Commands to and from their journal record: a short positional list of str/int/bool/None.

A record is ``[at, src, kind, [field values in declaration order]]``: ``at`` the engine nanosecond the
command applied at, ``src`` who sent it (``"ext"`` from outside, ``"scn"`` from the scenario), ``kind``
the command's name, then every field of the command (``None`` included), tuples as lists. Replaying
the records on a venue built from the same scenario reproduces every event byte for byte.

Positional rather than keyed because the journal is written for every command on the order-entry
hot path: building this list is one C call, about a third of the cost of a dict of the set fields.
The field order of each kind is in ``docs/journal.md``. The engine does not serialise: ``api/``
writes records as JSON lines. ``event_digest`` folds a stream of events into a stable hex digest so
replays can be compared cheaply.
"""

from __future__ import annotations

import hashlib
from dataclasses import fields
from typing import Any

from cefisim.engine.commands import COMMAND_TYPES, Command, RequestTransfer
from cefisim.engine.events import EVENT_TYPES, Event, build_event, row

_TUPLE_FIELDS = ("flags", "exec_inst")
FIELD_NAMES: dict[str, tuple[str, ...]] = {
    kind: tuple(f.name for f in fields(cls)) for kind, cls in COMMAND_TYPES.items()
}


def _values_getter(names: tuple[str, ...]) -> Any:
    """A function returning a command's field values as a tuple, in declaration order.

    Written out as source (as ``dataclasses`` writes ``__init__``) because plain attribute loads in
    one function are about twice as fast as ``operator.attrgetter`` of many names, and the journal
    asks for every command.
    """
    body = "".join(f"c.{name}, " for name in names)
    scope: dict[str, Any] = {}
    exec(f"def values(c):\n    return ({body})\n", scope)
    return scope["values"]


#: command class -> its field values as a tuple: its own ``values`` where it has one (the order-entry
#: commands), else a generated getter
_VALUES = {
    cls: getattr(cls, "values", None) or _values_getter(FIELD_NAMES[kind]) for kind, cls in COMMAND_TYPES.items()
}


def to_record(at: int, src: str, cmd: Command) -> list[Any]:
    """``[at, src, kind, values]`` for the journal (values: a tuple, written as a JSON array)."""
    return [at, src, cmd.kind, _VALUES[type(cmd)](cmd)]


def from_record(record: Any) -> tuple[int, str, Command]:
    """Inverse of :func:`to_record` (after JSON); raises ValueError on anything it cannot rebuild."""
    if not isinstance(record, list) or len(record) != 4:
        raise ValueError("a journal record is [at, src, kind, values]")
    at, src, kind, values = record
    if not isinstance(at, int) or isinstance(at, bool) or not isinstance(src, str):
        raise ValueError("a journal record starts with an integer time and a source")
    cls = COMMAND_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown command kind {kind!r}")
    names = FIELD_NAMES[kind]
    if not isinstance(values, list) or len(values) != len(names):
        raise ValueError(f"{kind}: expected {len(names)} values")
    kwargs = dict(zip(names, values, strict=True))
    for name in _TUPLE_FIELDS:
        if name in kwargs:
            if not isinstance(kwargs[name], list):
                raise ValueError(f"{kind}: {name} must be a list")
            kwargs[name] = tuple(kwargs[name])
    if cls is RequestTransfer:
        pairs = kwargs["instructions"]
        if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise ValueError(f"{kind}: instructions must be a list of [key, value] pairs")
        kwargs["instructions"] = tuple((k, v) for k, v in pairs)
    return at, src, cls(**kwargs)


def _digest_line(cls: type[Event]) -> str:
    """The ``%`` format that writes an event of type ``cls`` as its digest line, ``repr(row(event))`` and
    a newline, in one C call with no row built: ``%r`` of each field the row keeps (the ``repr`` a
    tuple's own ``repr`` writes of each item), ``%.0s`` (which prints nothing) of each it leaves out.
    The kind and the number of kept fields are read off :func:`row` of a sample event, so the row's
    rules live in one place; tests/api/cli/test_replay_digest.py checks the two agree on any values."""
    width = len(cls._fields)
    sample = row(build_event(cls, (0,) * width))
    kept = len(sample) - 1
    items = ", ".join([repr(sample[0]).replace("%", "%%"), *["%r"] * kept])
    return f"({items}{',' if not kept else ''})" + "%.0s" * (width - kept) + "\n"


#: each event type's digest line (``_digest_line``)
_DIGEST_LINES = {cls: _digest_line(cls) for cls in EVENT_TYPES}


def event_digest(events: list[Event], digest: Any | None = None) -> Any:
    """Feed events into a sha256 (created when None) in a stable text form, the ``repr`` of each
    event's :func:`~cefisim.engine.events.row` and a newline; returns the hash object."""
    h = digest if digest is not None else hashlib.sha256()
    if events:  # one update of the whole text: the same hash as one per line, in fewer calls
        lines = _DIGEST_LINES
        h.update("".join([lines[type(event)] % event for event in events]).encode())
    return h
