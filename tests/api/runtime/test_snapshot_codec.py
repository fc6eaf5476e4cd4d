"""The snapshot codec: each engine class says what it saves and rebuilds the rest, and the format is
exactly what the classes declare (a renamed or added attribute fails here, not silently on restore)."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import Any

import orjson
import pytest

from cefisim.api.formats.scenario import load_scenario
from cefisim.api.runtime import snapshot
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine.levels import Levels
from cefisim.engine.state import saved_state
from tests.api.runtime import snapshot_steps as steps

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
FIELDS = Path(__file__).parent / "fixtures" / "snapshot_v3.fields.json"
_BUILTIN = (random.Random, Levels, deque)


def _attributes(obj: Any) -> set[str]:
    names = set(vars(obj)) if hasattr(obj, "__dict__") else set()
    for klass in type(obj).__mro__:
        names.update(s for s in getattr(klass, "__slots__", ()) if s != "__weakref__" and hasattr(obj, s))
    return names


def _engine_objects(root: list[Any]) -> list[Any]:
    """Every object of a snapshotted class reachable from ``root``, once each."""
    seen: set[int] = set()
    found: list[Any] = []
    todo = list(root)
    while todo:
        v = todo.pop()
        if v is None or isinstance(v, (bool, int, float, str)) or id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, (list, tuple, deque)):
            todo.extend(v)
        elif isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif not isinstance(v, _BUILTIN):
            fields = saved_state(type(v))
            assert fields is not None, f"{type(v).__qualname__} is in the state but declares nothing it saves"
            found.append(v)
            todo.extend(getattr(v, f) for f in fields)
    return found


@pytest.mark.parametrize("name", sorted(p.name for p in SCENARIOS.glob("*.json") if not p.name.startswith("recorded")))
def test_every_attribute_of_the_state_is_saved_or_rebuilt(name: str) -> None:
    sim = Simulation(load_scenario(SCENARIOS / name), clock="virtual")
    sim.advance(sim.venue.clock.now + 90 * 10**9)
    objects = _engine_objects([sim.venue, sim.runner])
    classes = {type(o).__name__ for o in objects}
    assert {"Venue", "Account", "Client", "Order", "Book", "ScenarioRunner"} <= classes
    for obj in objects:
        copy = type(obj).__new__(type(obj))  # a compiled class refuses object.__new__
        for attr in saved_state(type(obj)) or ():
            object.__setattr__(copy, attr, getattr(obj, attr))
        if hasattr(copy, "restored"):
            copy.restored()
        assert _attributes(copy) == _attributes(obj), type(obj).__qualname__


def test_the_format_is_what_the_classes_declare() -> None:
    """The classes and fields of cefisim-snapshot/3. When this fails the format changed: bump
    ``snapshot.FORMAT``, upgrade documents of the version before (as ``api/runtime/snapshot_v2.py``
    does), commit a fixture of the new version and the fields (docs/snapshot.md)."""
    classes = snapshot.state_tables()[0]
    declared = {name: list(saved_state(cls) or ()) for name, cls in classes.items() if cls not in _BUILTIN}
    assert snapshot.FORMAT == "cefisim-snapshot/3"
    assert declared == orjson.loads(FIELDS.read_bytes())


def _doc() -> dict[str, Any]:
    sim = Simulation(load_scenario(SCENARIOS / "demo.json"), clock="virtual")
    sim.advance(sim.venue.clock.now + 30 * 10**9)
    return sim.snapshot()


def _first(doc: dict[str, Any], cls: str) -> dict[str, Any]:
    return next(o for o in doc["objects"] if o.get("cls") == cls)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.pop("remaining"), r"\(Order\) must hold \[.*'remaining'.*\], not \[.*\]"),
        (lambda s: s.update(qty=1), r"\(Order\) must hold .* not \[.*'qty'"),
    ],
)
def test_an_object_must_hold_exactly_what_its_class_saves(change: Any, message: str) -> None:
    doc = _doc()
    change(_first(doc, "Order")["state"])
    with pytest.raises(snapshot.SnapshotError, match=message):
        snapshot.from_json(doc)


def test_a_class_that_declares_no_state_is_refused_both_ways() -> None:
    doc = _doc()
    _first(doc, "Order")["cls"] = "Counters"  # an engine class, but not state
    with pytest.raises(snapshot.SnapshotError, match="'Counters' is not engine state"):
        snapshot.from_json(doc)
    sim = Simulation(load_scenario(SCENARIOS / "demo.json"), clock="virtual")
    sim.venue.books[1].opening = {1: sim.venue.clock}  # not how a book holds orders, but declared state
    snapshot.to_json({"venue": sim.venue}, {})
    sim.venue.books[1].opening = {1: steps}  # a module is no engine state
    with pytest.raises(snapshot.SnapshotError, match="is not engine state"):
        snapshot.to_json({"venue": sim.venue}, {})


def test_the_class_tables_are_made_on_first_use_not_on_import() -> None:
    """Every ``cefisim`` command imports the codec (the control plane names ``SnapshotError``); finding
    the classes imports all of engine/, so it waits for the first snapshot taken or restored."""
    code = (
        "import cefisim.api.cli.main\n"
        "from cefisim.api.runtime import snapshot\n"
        "assert snapshot.state_tables.cache_info().currsize == 0, 'the class tables were made on import'\n"
        "assert 'Order' in snapshot.state_tables()[0] and snapshot.state_tables.cache_info().currsize == 1\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
