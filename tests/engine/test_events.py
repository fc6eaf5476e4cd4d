"""The venue's events are typed, defined once (``engine/events.py``), and digest as they always did."""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

import pytest

from cefisim.engine import events
from cefisim.engine.events import EVENT_TYPES, TRADE_DIGESTED, OrderEvent, TradeEvent, row
from cefisim.engine.journal import event_digest
from tests.engine.builders import ALICE, BOB, Sim

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "engine").rglob("*.py"), *(ROOT / "api").rglob("*.py")])
EVENT_NAMES = {"Event", *(cls.__name__ for cls in EVENT_TYPES)}


def definitions(source: str, filename: str) -> list[str]:
    """Module-level bindings (classes, assignments, imports as another name) of ``Event`` or an event
    type's name."""
    found = []
    for node in ast.parse(source, filename).body:
        names: list[str] = []
        if isinstance(node, ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.asname for a in node.names if a.asname and a.asname != a.name]
        found += [f"{filename}:{node.lineno}: {n}" for n in names if n in EVENT_NAMES]
    return found


def test_sources_found() -> None:
    assert ROOT / "engine" / "events.py" in SOURCES and ROOT / "api" / "web" / "server" / "stream_hub.py" in SOURCES


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_event_types_are_defined_only_in_engine_events(path: Path) -> None:
    if path == ROOT / "engine" / "events.py":
        assert len(definitions(path.read_text(encoding="utf-8"), path.name)) == len(EVENT_NAMES)
        return
    assert definitions(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))) == []


@pytest.mark.parametrize(
    "snippet", ["Event = tuple", "class TradeEvent:\n    pass", "from x import y as OrderEvent", "Event: type = tuple"]
)
def test_checker_catches(snippet: str) -> None:
    assert definitions(snippet, "x.py")


def test_kinds_are_distinct_and_every_type_is_in_the_union() -> None:
    kinds = [cls.kind for cls in EVENT_TYPES]
    assert len(set(kinds)) == len(kinds) == len(events.Event.__args__)  # type: ignore[attr-defined]
    assert set(EVENT_TYPES) == set(events.Event.__args__)  # type: ignore[attr-defined]
    assert all("kind" not in cls._fields for cls in EVENT_TYPES)


def test_the_engine_emits_typed_events_whose_row_is_the_old_positional_form() -> None:
    sim = Sim()
    sim.sell(ALICE, "1", "100.00")
    result = sim.buy(BOB, "0.4", "100.00")
    trade = next(e for e in result.events if isinstance(e, TradeEvent))
    assert all(type(e) in EVENT_TYPES for e in result.events)
    assert row(trade) == ("trade", *trade[:TRADE_DIGESTED]) and trade.lots == trade[4]
    assert trade.taker_order_id == result.order.id
    # the trade names both clients, outside the row the digest folds (pinned digests stay as they were)
    assert (trade.maker_client_id, trade.taker_client_id) == (ALICE, BOB)
    order = OrderEvent(5, 6, 7, "ACTIVE", None)
    # the digest folds the repr of the row, byte for byte what the untyped tuples gave
    assert event_digest([order]).hexdigest() == hashlib.sha256(b"('order', 5, 6, 7, 'ACTIVE', None)\n").hexdigest()


#: the modules whose events the compiled build makes from the call's own field tuple (engine/events.pxd)
IN_PLACE = sorted(
    p.with_suffix(".py") for p in (ROOT / "engine").rglob("*.pxd") if "cimport build_event" in p.read_text()
)


def in_place_violations(source: str, filename: str) -> list[str]:
    """``build_event`` calls whose fields are not a tuple display with a field that is not a constant.
    Compiled, the event is the display's own new tuple under the kind's type (engine/events.pxd): a
    tuple of constants is one object the module keeps, and a named tuple may be used again."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "build_event":
            fields = node.args[1] if len(node.args) == 2 else None
            if not (isinstance(fields, ast.Tuple) and any(not isinstance(e, ast.Constant) for e in fields.elts)):
                found.append(f"{filename}:{node.lineno}")
    return found


def test_compiled_events_are_built_from_a_new_field_tuple() -> None:
    assert ROOT / "engine" / "matching.py" in IN_PLACE
    for path in IN_PLACE:
        assert in_place_violations(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))) == []


@pytest.mark.parametrize("snippet", ["build_event(K, (1, None))", "build_event(K, fields)", "build_event(K, f())"])
def test_in_place_checker_catches(snippet: str) -> None:
    assert in_place_violations(snippet, "x.py")


def test_events_made_in_place_are_their_kind_and_fields() -> None:
    """Each event the order path makes is exactly its kind (compiled: the field tuple retyped), equal to
    its fields, and lives on by itself after the result goes."""
    sim = Sim()
    sim.sell(ALICE, "1", "100.00")
    result = sim.buy(BOB, "0.4", "100.00")
    kept = list(result.events)
    del result
    assert [type(e) for e in kept] == [OrderEvent, TradeEvent, OrderEvent]  # bob's ACTIVE, the trade, FILLED
    assert kept[0] == (kept[0].ts, kept[0].order_id, BOB, "ACTIVE", None) and kept[0].kind == "order"
    assert isinstance(kept[1], tuple) and len(kept[1]) == len(TradeEvent._fields)
