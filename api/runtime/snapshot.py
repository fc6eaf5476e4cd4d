"""Snapshot the whole simulation state to JSON, and restore it.

The state is an object graph (venue, books, orders, balances, records, timers, the scenario runner and
its agents with their random generators). ``to_json`` walks it from the root in a fixed order and
writes every object once, in a table, with references between them, so shared objects (an order in a
book, in its client's records and in a timer) stay shared. ``from_json`` rebuilds the graph.

Only classes of the engine (and ``random.Random``, ``SortedDict``, ``deque``) can appear: a snapshot
names its classes and anything else is refused, so restoring a snapshot never runs foreign code.
Integers too large for JSON numbers travel as strings. Wiring (the venue's command dispatch table) and
caches are not state and are left out; the simulation rebuilds the dispatch table after a restore.

Restoring and continuing gives the same events as continuing without the round trip (a test checks).
"""

from __future__ import annotations

import enum
import importlib
import inspect
import pkgutil
import random
from collections import deque
from typing import Any

from sortedcontainers import SortedDict

from cefisim import engine

FORMAT = "cefisim-snapshot/2"  # /2: orders keep `remaining` and an execution record
_MAX_JSON_INT = 2**53
#: attributes that are wiring, not state
_TRANSIENT = {
    ("Venue", "_handlers"),
    ("Grid", "_cache"),
    ("Grid", "_texts"),
    ("Book", "band"),
}


def _registry() -> dict[str, type]:
    """Every class of the engine's modules, sub-packages included, named ``{module}.{Class}`` by the
    module's own name (``engine/simulation/scenario.py``'s runner stays ``scenario.ScenarioRunner``, its
    name from before the sub-package, so snapshots keep their names)."""
    classes: dict[str, type] = {"random.Random": random.Random, "SortedDict": SortedDict, "deque": deque}
    for info in pkgutil.walk_packages(engine.__path__, engine.__name__ + "."):
        if info.ispkg:
            continue
        module = importlib.import_module(info.name)
        short = info.name.rpartition(".")[2]
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                assert f"{short}.{name}" not in classes, f"two engine classes named {short}.{name}"
                classes[f"{short}.{name}"] = obj
    return classes


_CLASSES = _registry()
_NAMES = {cls: name for name, cls in _CLASSES.items()}
#: classes that have moved to another module since a snapshot of the current format was written: under
#: their former names they still restore (their attributes are unchanged). docs/snapshot.md
_FORMER_NAMES = {"venue.VenueConfig": "core.VenueConfig"}


class SnapshotError(ValueError):
    pass


def _slots(cls: type) -> list[str]:
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        for slot in getattr(klass, "__slots__", ()):
            if slot not in names and slot != "__weakref__":
                names.append(slot)
    return names


class _Writer:
    def __init__(self) -> None:
        self.table: list[Any] = []
        self.ids: dict[int, int] = {}
        self.keep: list[Any] = []  # keeps walked objects alive so id() stays unique during the walk

    def value(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, enum.Enum):
            return {"$enum": _NAMES[type(v)], "value": v.value}
        if isinstance(v, int):
            return v if -_MAX_JSON_INT < v < _MAX_JSON_INT else {"$int": str(v)}
        if isinstance(v, float):
            return {"$float": repr(v)}
        if isinstance(v, tuple):
            return {"$tuple": [self.value(x) for x in v]}
        if isinstance(v, (frozenset, set)):
            raise SnapshotError("sets have no stable order and must not be engine state")
        ref = self.ids.get(id(v))
        if ref is not None:
            return {"$ref": ref}
        ref = len(self.table)
        self.ids[id(v)] = ref
        self.keep.append(v)
        self.table.append(None)
        self.table[ref] = self.encode(v)
        return {"$ref": ref}

    def encode(self, v: Any) -> Any:
        if isinstance(v, list):
            return {"list": [self.value(x) for x in v]}
        if type(v) is dict:
            return {"dict": [[self.value(k), self.value(x)] for k, x in v.items()]}
        if isinstance(v, SortedDict):
            return {"cls": "SortedDict", "items": [[self.value(k), self.value(x)] for k, x in v.items()]}
        if isinstance(v, deque):
            return {"cls": "deque", "items": [self.value(x) for x in v]}
        if isinstance(v, random.Random):
            return {"cls": "random.Random", "state": self.value(v.getstate())}
        cls = type(v)
        name = _NAMES.get(cls)
        if name is None:
            raise SnapshotError(f"{cls.__module__}.{cls.__qualname__} is not engine state")
        short = cls.__name__
        attrs: dict[str, Any] = {}
        names = _slots(cls) + (list(vars(v)) if hasattr(v, "__dict__") else [])
        for attr in names:
            if (short, attr) in _TRANSIENT or not hasattr(v, attr):
                continue
            attrs[attr] = self.value(getattr(v, attr))
        return {"cls": name, "attrs": attrs}


def to_json(root: dict[str, Any], header: dict[str, Any]) -> dict[str, Any]:
    writer = _Writer()
    top = {key: writer.value(value) for key, value in root.items()}
    return {**header, "format": FORMAT, "root": top, "objects": writer.table}


class _Reader:
    def __init__(self, table: list[Any]) -> None:
        self.table = table
        self.made: dict[int, Any] = {}

    def value(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, str, int)):
            return v
        if isinstance(v, dict):
            if "$ref" in v:
                return self.ref(v["$ref"])
            if "$int" in v:
                return int(v["$int"])
            if "$float" in v:
                return float(v["$float"])
            if "$tuple" in v:
                return tuple(self.value(x) for x in v["$tuple"])
            if "$enum" in v:
                return self._cls(v["$enum"])(v["value"])
        raise SnapshotError(f"unexpected value {str(v)[:80]}")

    def _cls(self, name: Any) -> type:
        cls = _CLASSES.get(_FORMER_NAMES.get(name, name)) if isinstance(name, str) else None
        if cls is None:
            raise SnapshotError(f"class {name!r} is not engine state")
        return cls

    def ref(self, ref: Any) -> Any:
        if not isinstance(ref, int) or not 0 <= ref < len(self.table):
            raise SnapshotError(f"dangling reference {ref!r}")
        if ref in self.made:
            return self.made[ref]
        spec = self.table[ref]
        if not isinstance(spec, dict):
            raise SnapshotError(f"object {ref} is malformed")
        if "list" in spec:
            out: Any = []
            self.made[ref] = out
            out.extend(self.value(x) for x in spec["list"])
        elif "dict" in spec:
            out = {}
            self.made[ref] = out
            for k, x in spec["dict"]:
                out[self.value(k)] = self.value(x)
        else:
            cls = self._cls(spec.get("cls"))
            if cls is SortedDict:
                out = SortedDict()
                self.made[ref] = out
                for k, x in spec["items"]:
                    out[self.value(k)] = self.value(x)
            elif cls is deque:
                out = deque()
                self.made[ref] = out
                out.extend(self.value(x) for x in spec["items"])
            elif cls is random.Random:
                out = random.Random()
                self.made[ref] = out
                out.setstate(self.value(spec["state"]))
            else:
                out = object.__new__(cls)  # a plain engine class: its attributes follow, no __init__
                self.made[ref] = out
                for attr, x in spec["attrs"].items():
                    object.__setattr__(out, attr, self.value(x))
                if hasattr(out, "reset_caches"):
                    out.reset_caches()  # memo caches are left out of snapshots
        return out


def from_json(doc: Any) -> dict[str, Any]:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SnapshotError(f"not a {FORMAT} document")
    table = doc.get("objects")
    root = doc.get("root")
    if not isinstance(table, list) or not isinstance(root, dict):
        raise SnapshotError("snapshot: objects or root missing")
    reader = _Reader(table)
    try:
        return {key: reader.value(value) for key, value in root.items()}
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        if isinstance(exc, SnapshotError):
            raise
        raise SnapshotError(f"snapshot is malformed: {exc}") from None
