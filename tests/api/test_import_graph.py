"""The api package's import graph, read with ``ast``: no cycle, no import deferred into a function
body without a comment saying why, no module importing another module's underscore names.

An import counts wherever it is written (module top, ``if TYPE_CHECKING:``, a function body): a
type-only import is still a dependency. A deferred import is allowed with a comment on its line or
the line above (an optional dependency, or import-time cost).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import cefisim.api

ROOT = Path(cefisim.api.__file__).parent
PACKAGE = "cefisim.api"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join([PACKAGE, *parts])] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[tuple[str, list[str]]]:
    """(module imported, names taken from it) for each module of the package an import names."""
    if isinstance(node, ast.Import):
        return [(a.name, []) for a in node.names]
    base = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    if node.level:
        base = base[: len(base) - (node.level - 1)]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    submodules = [(f"{target}.{a.name}", []) for a in node.names if f"{target}.{a.name}" in MODULES]
    if len(submodules) == len(node.names):  # ``from package import module``: the module is what it needs
        return submodules
    return [(target, [a.name for a in node.names]), *submodules]


def _graph() -> tuple[dict[str, set[str]], list[str], list[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    deferred: list[str] = []
    private: list[str] = []
    for module, path in MODULES.items():
        source = path.read_text()
        lines = source.splitlines()
        tree = ast.parse(source)
        in_function = {
            id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))
        }
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            where = f"{path.relative_to(ROOT.parent)}:{node.lineno}"
            if id(node) in in_function:
                above = lines[node.lineno - 2] if node.lineno >= 2 else ""
                if "#" not in lines[node.lineno - 1] and not above.strip().startswith(("#", "try:  #")):
                    deferred.append(where)
            for target, names in _imported(module, path, node):
                if target in MODULES and target != module:
                    edges[module].add(target)
                    private += [f"{where} {target}.{n}" for n in names if n.startswith("_") and not n.startswith("__")]
    return edges, deferred, private


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


EDGES, DEFERRED, PRIVATE = _graph()


def test_the_api_package_has_no_import_cycle() -> None:
    assert _cycles(EDGES) == []


def test_no_import_is_deferred_without_a_reason() -> None:
    assert DEFERRED == []


def test_no_module_imports_another_modules_underscore_names() -> None:
    assert PRIVATE == []


def test_server_does_not_import_the_interfaces_it_serves() -> None:
    """``api/server/`` is generic HTTP; only the app (the composition root) wires the interfaces in."""
    server = {m for m in MODULES if m.startswith("cefisim.api.server.") and m != "cefisim.api.server.app"}
    leaks = {(m, t) for m in server for t in EDGES[m] if t.startswith(("cefisim.api.cefi", "cefisim.api.control"))}
    assert leaks == set()


@pytest.mark.parametrize(("edges", "expected"), [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_the_cycle_finder_finds_cycles(edges: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert _cycles(edges) == expected
