"""Snapshot the whole simulation state to JSON, and restore it: the codec of ``cefisim-snapshot/3``.

The state is an object graph (venue, books, accounts, orders, records, timers, the scenario runner and
its agents with their random generators). ``to_json`` walks it from the root in a fixed order and
writes every object once, in a table, with references between them, so shared objects (an order in a
book, in its account's records and in a timer) stay shared. ``from_json`` rebuilds the graph.

Each engine class owns its part of the format:
- what it saves: the attributes named by its ``SNAPSHOT`` class attribute, in that order (a dataclass
  whose fields are its state says so with ``engine.state.saves_fields``; ``engine.state.saved_state`` reads both);
- what it restores beyond them: its ``restored()`` method, when it has one, rebuilds what is not state
  (memo caches, the venue's command table) once its saved attributes are back.

An object is named by its class's own name (``Order``, ``ScenarioRunner``), so moving a class between
modules leaves the format alone; renaming a saved attribute changes it (docs/snapshot.md: versions).
Only classes of the engine that declare their state (and ``random.Random``, ``deque``, a book side,
``engine.levels.Levels``, written ``SortedDict`` as since /1, and a scenario event of a side-state,
``api.side_state.side_states.SideStateRecord``, written ``SideRecord``, its name before it was renamed)
can appear: anything else is refused, so restoring a snapshot never runs foreign code.
Integers too large for JSON numbers travel as strings. A document of the previous version
(``cefisim-snapshot/2``) is upgraded on reading (``api/runtime/snapshot_v2.py``).

Restoring and continuing gives the same events as continuing without the round trip (a test checks).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import random
from collections import deque
from collections.abc import Callable
from typing import Any, cast

from cefisim import engine
from cefisim.api.runtime.snapshot_v2 import FORMAT_V2, upgrade_v2
from cefisim.api.side_state.side_states import SideStateRecord
from cefisim.engine.levels import Levels
from cefisim.engine.simulation.scenario import ScenarioRunner
from cefisim.engine.state import saved_state
from cefisim.engine.venue import Venue

FORMAT = "cefisim-snapshot/3"  # /3: explicit per-class state; a client's account apart from the client
_MAX_JSON_INT = 2**53
#: containers the codec writes itself, by these names
_BUILTIN: dict[str, type] = {"Random": random.Random, "SortedDict": Levels, "deque": deque}


class SnapshotError(ValueError):
    pass


def _registry() -> dict[str, type]:
    """Every engine class that declares its state (sub-packages included), by its own name."""
    classes = dict(_BUILTIN)
    # a scenario event of a side-state, pending in the runner (side_states.py); the name is the format's, kept
    # from before the class was renamed, so documents written since /3 still read
    classes["SideRecord"] = SideStateRecord
    for info in pkgutil.walk_packages(engine.__path__, engine.__name__ + "."):
        if info.ispkg:
            continue
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and saved_state(obj) is not None:
                name = obj.__name__  # its own name, not a module variable that also refers to it
                assert classes.get(name, obj) is obj, f"two engine classes named {name}: snapshots name classes"
                classes[name] = obj
    return classes


Tables = tuple[dict[str, type], dict[type, str], dict[type, tuple[str, ...]]]


@functools.cache
def state_tables() -> Tables:
    """Class name -> class for every class a snapshot can hold, class -> name, class -> saved fields.
    Made on first use, not on import: finding the classes imports every module of engine/, which a
    process that never takes or restores a snapshot should not pay for (every ``cefisim`` command
    imports this module, through the control plane's ``SnapshotError``: ~3% of a short replay's
    instructions)."""
    classes = _registry()
    return (
        classes,
        {cls: name for name, cls in classes.items()},
        {cls: saved_state(cls) or () for cls in classes.values()},
    )


class _Writer:
    def __init__(self) -> None:
        _, self.names, self.fields = state_tables()
        self.table: list[Any] = []
        self.ids: dict[int, int] = {}
        self.keep: list[Any] = []  # keeps walked objects alive so id() stays unique during the walk

    def value(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, str)):
            return v
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
        if isinstance(v, Levels):  # a book side: a mapping read in key order, "SortedDict" since /1
            return {"cls": "SortedDict", "items": [[self.value(k), self.value(x)] for k, x in v.items()]}
        if isinstance(v, deque):
            return {"cls": "deque", "items": [self.value(x) for x in v]}
        if isinstance(v, random.Random):
            return {"cls": "Random", "state": self.value(v.getstate())}
        cls = type(v)
        name = self.names.get(cls)
        if name is None:
            raise SnapshotError(f"{cls.__module__}.{cls.__qualname__} is not engine state")
        return {"cls": name, "state": {attr: self.value(getattr(v, attr)) for attr in self.fields[cls]}}


def to_json(root: dict[str, Any], header: dict[str, Any]) -> dict[str, Any]:
    writer = _Writer()
    top = {key: writer.value(value) for key, value in root.items()}
    return {**header, "format": FORMAT, "root": top, "objects": writer.table}


class _Reader:
    def __init__(self, table: list[Any]) -> None:
        self.classes, self.names, self.fields = state_tables()
        self.table = table
        self.made: dict[int, Any] = {}
        self.restored: list[Callable[[], None]] = []  # hooks, called once the whole graph is back

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
        raise SnapshotError(f"unexpected value {str(v)[:80]}")

    def _cls(self, name: Any) -> type:
        cls = self.classes.get(name) if isinstance(name, str) else None
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
            if cls is Levels:
                out = Levels()
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
                out = self._object(ref, cls, spec.get("state"))
        return out

    def _object(self, ref: int, cls: type, state: Any) -> Any:
        """An engine object from what its class saves: every attribute, and no other."""
        fields = self.fields[cls]
        if not isinstance(state, dict) or set(state) != set(fields):
            given = sorted(state) if isinstance(state, dict) else state
            raise SnapshotError(f"object {ref} ({self.names[cls]}) must hold {list(fields)}, not {given}")
        # its attributes follow, not its constructor's arguments (cls.__new__: a compiled class refuses
        # object.__new__)
        out: Any = cast(Any, cls).__new__(cls)
        self.made[ref] = out
        for attr in fields:
            object.__setattr__(out, attr, self.value(state[attr]))
        hook = getattr(out, "restored", None)
        if hook is not None:
            self.restored.append(hook)
        return out


def from_json(doc: Any) -> dict[str, Any]:
    """The root objects of a snapshot of this format or of the one before it."""
    if not isinstance(doc, dict) or doc.get("format") not in (FORMAT, FORMAT_V2):
        raise SnapshotError(f"not a {FORMAT} document")
    table = doc.get("objects")
    root = doc.get("root")
    if not isinstance(table, list) or not isinstance(root, dict):
        raise SnapshotError("snapshot: objects or root missing")
    try:
        if doc["format"] == FORMAT_V2:
            classes, _, fields = state_tables()
            table, root = upgrade_v2(table, root, classes, fields)
        reader = _Reader(table)
        out = {key: reader.value(value) for key, value in root.items()}
        for hook in reader.restored:
            hook()
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        if isinstance(exc, SnapshotError):
            raise
        raise SnapshotError(f"snapshot is malformed: {exc}") from None
    return out


def read_state(doc: dict[str, Any], start_ns: int) -> tuple[Venue, ScenarioRunner, int]:
    """The venue, its runner and the start (``start_ns`` when the document names none) of a simulation
    snapshot, rebuilt and checked whole (:class:`SnapshotError` otherwise): only a sound state may
    replace a running one."""
    start_ns = doc.get("start_ns", start_ns)
    if not isinstance(start_ns, int) or isinstance(start_ns, bool) or start_ns < 0:
        raise SnapshotError("snapshot: start_ns must be a nanosecond timestamp")
    root = from_json(doc)
    venue, runner = root.get("venue"), root.get("runner")
    if not isinstance(venue, Venue) or not isinstance(runner, ScenarioRunner) or runner.venue is not venue:
        raise SnapshotError("snapshot: no venue and runner at its root")
    try:
        venue.check_invariants()
    except (AssertionError, TypeError, AttributeError, KeyError, ValueError) as exc:
        raise SnapshotError(f"snapshot: the state it holds is not sound ({exc})") from None
    return venue, runner, start_ns
