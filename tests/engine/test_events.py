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
