"""engine/'s import graph: no import cycle among its modules (imports under TYPE_CHECKING count, as
they tie the modules together for a reader all the same), no import deferred into a function, and no
module importing another's underscore names. Read with ``ast``, nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"
PACKAGE = "cefisim.engine"

#: cycles still there, each waiting for its own change (a new one fails the test; so does one of these
#: that is gone, so that the list is kept true):
#: - the order and transfer records name their client, whose record holds its orders, fills, transfers
#:   and balances (``Client`` is the reference record and the live account at once);
#: - recorded_fills and recorded_queue name the RecordedMarket that calls them (the recorded markets).
KNOWN_CYCLES = [
    {"ledger", "order", "records", "reference"},
    {"recorded", "recorded_fills", "recorded_queue"},
]


def _imports(tree: ast.Module, here: str = "") -> tuple[set[str], list[str], list[str]]:
    """(engine modules imported anywhere, as dotted paths inside the engine; imports inside function
    bodies; underscore names imported). ``here``: the importing module's package inside the engine."""
    found: set[str] = set()
    deferred: list[str] = []
    private: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    deferred.append(f"{node.name}: line {inner.lineno}")
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            parts = here.split(".") if here else []
            base = parts[: len(parts) - (node.level - 1)]
        elif node.module and node.module.startswith(PACKAGE + "."):
            base = []
        else:
            continue
        module = (node.module or "")[len(PACKAGE) + 1:] if not node.level else (node.module or "")
        prefix = ".".join(p for p in (*base, module) if p)
        if node.module:
            found.add(prefix)
        found.update(f"{prefix}.{a.name}" if prefix else a.name for a in node.names)  # a module or a name
        private += [f"line {node.lineno}: {a.name}" for a in node.names if a.name.startswith("_")]
    return found, deferred, private


def _graph() -> tuple[dict[str, set[str]], dict[str, list[str]], dict[str, list[str]]]:
    """Every module of the engine and its sub-packages, by dotted path (``simulation.scenario``)."""
    trees = {}
    for path in ENGINE.rglob("*.py"):
        parts = path.relative_to(ENGINE).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        trees[name] = (ast.parse(path.read_text(), str(path)), name if parts[-1] == "__init__" else ".".join(parts[:-1]))
    graph, deferred, private = {}, {}, {}
    for name, (tree, here) in trees.items():
        deps, deferred[name], private[name] = _imports(tree, here)
        graph[name] = {d for d in deps if d in trees and d != name}
    return graph, deferred, private


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_cycles_finds_a_cycle_through_a_type_only_import() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .venue import Venue\n")
    assert "venue" in _imports(tree)[0]
    tree = ast.parse("from ..core import VenueCore\nfrom . import agents\n")
    assert {"core", "simulation.agents"} <= _imports(tree, "simulation")[0]


def test_engine_has_no_import_cycle_but_the_known_ones() -> None:
    graph, _, _ = _graph()
    assert sorted(map(sorted, cycles(graph))) == sorted(map(sorted, KNOWN_CYCLES))


def test_operation_modules_do_not_import_the_venue() -> None:
    """They work on ``core.VenueCore``; only the venue (and the drivers above it) import ``venue``."""
    graph, _, _ = _graph()
    for name in ("core", "entry", "lifecycle", "matching", "modify", "pricing", "transfers", "retention",
                 "timers", "ledger", "book"):
        assert "venue" not in graph[name], name


def test_no_deferred_import_and_no_underscore_name_imported() -> None:
    _, deferred, private = _graph()
    assert {k: v for k, v in deferred.items() if v} == {}
    assert {k: v for k, v in private.items() if v} == {}
