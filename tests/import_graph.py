"""cefisim's import graph and comments, read with the standard library's ``ast`` and ``tokenize``.

Nothing is imported or executed: a module is a ``.py`` file under a package folder, named as it installs
(``engine/venue.py`` is ``cefisim.engine.venue``, the folder mapping given by the caller). Each import
statement is resolved to absolute module names: ``from . import x`` and ``from ..y import z`` relative
to the importing module's package, ``from p import m`` to the module ``p.m`` when that file exists and
to ``p`` itself otherwise (``m`` is then a name defined in ``p``). An import records whether it is
deferred (anywhere inside a function body) and whether it sits under ``if TYPE_CHECKING:``.

Used by ``tests/test_architecture.py``; every function here is pure over the files it is given.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Module:
    name: str
    path: Path
    is_package: bool
    shown: str  # the path as messages print it (relative to the folder discover() was given as base)


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement of ``source``: what it names and which modules it binds."""

    source: Module
    line: int
    end_line: int
    module: str  # the absolute module of `from module import ...`, or the module of `import module`
    names: tuple[str, ...]  # the names of `from module import a, b` (empty for `import module`)
    targets: tuple[str, ...]  # the absolute modules it binds (see the module docstring)
    deferred: bool  # inside a function body: runs when the function runs
    type_checking: bool  # under `if TYPE_CHECKING:`: never runs

    @property
    def where(self) -> str:
        return f"{self.source.shown}:{self.line}"


def discover(roots: Mapping[str, Path], base: Path | None = None) -> dict[str, Module]:
    """Every module under each folder, by installed name (``{"cefisim.engine": Path("engine")}``).

    Messages print a module's path relative to ``base`` when given.
    """
    modules: dict[str, Module] = {}
    for package, folder in roots.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            is_package = parts[-1] == "__init__"
            name = ".".join((package, *parts[:-1])) if is_package else ".".join((package, *parts))
            modules[name] = Module(name, path, is_package, str(path.relative_to(base) if base else path))
    return modules


def absolute(module: Module, level: int, name: str | None) -> str:
    """The absolute module that ``from <level dots><name> import ...`` in ``module`` names."""
    if level == 0:
        return name or ""
    base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(module: Module, modules: Mapping[str, Module]) -> Iterator[Import]:
    """Every import statement of ``module``, in source order, resolved against ``modules``."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))

    def visit(node: ast.AST, deferred: bool, type_checking: bool) -> Iterator[Import]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(
                    module,
                    node.lineno,
                    node.end_lineno or node.lineno,
                    alias.name,
                    (),
                    (alias.name,),
                    deferred,
                    type_checking,
                )
        elif isinstance(node, ast.ImportFrom):
            base = absolute(module, node.level, node.module)
            names = tuple(alias.name for alias in node.names)
            targets = tuple(dict.fromkeys(f"{base}.{n}" if f"{base}.{n}" in modules else base for n in names))
            yield Import(
                module, node.lineno, node.end_lineno or node.lineno, base, names, targets, deferred, type_checking
            )
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for stmt in node.body:
                yield from visit(stmt, deferred, True)
            for stmt in node.orelse:
                yield from visit(stmt, deferred, type_checking)
        else:
            inner = deferred or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            for child in ast.iter_child_nodes(node):
                yield from visit(child, inner, type_checking)

    yield from sorted(visit(tree, False, False), key=lambda imp: imp.line)


def graph(modules: Mapping[str, Module], package: str) -> dict[str, dict[str, Import]]:
    """Module -> imported module -> the first import making that edge, inside ``package`` only.

    An import under ``if TYPE_CHECKING:`` never runs but still ties the two modules together for a
    reader and for the type checker (a type-only import still counts), so it makes an edge;
    deferred imports do too (they run when the function does).
    """
    inside = {name for name in modules if name == package or name.startswith(package + ".")}
    edges: dict[str, dict[str, Import]] = {name: {} for name in sorted(inside)}
    for name in sorted(inside):
        for imp in imports(modules[name], modules):
            for target in imp.targets:
                if target in inside:
                    edges[name].setdefault(target, imp)
    return edges


def cycles(edges: Mapping[str, Mapping[str, Import]]) -> list[tuple[list[str], list[str]]]:
    """Per strongly connected component that holds a cycle: (a shortest cycle [a, b, ..., a], its members)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:  # Tarjan's algorithm; the graphs have tens of nodes
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            components.append(sorted(component))

    for v in edges:
        if v not in index:
            connect(v)
    found = []
    for component in sorted(components):
        start, members = component[0], set(component)
        paths = {start: [start]}
        queue = [start]
        for v in queue:  # breadth first: the first way back to start is a shortest cycle
            for w in sorted(edges[v]):
                if w == start:
                    found.append(([*paths[v], start], component))
                    break
                if w in members and w not in paths:
                    paths[w] = [*paths[v], w]
                    queue.append(w)
            else:
                continue
            break
    return found


def room(name: str, package: str, packages: Collection[str] = ()) -> str:
    """The room a module of ``package`` sits in: the folder it lies in (``cefisim.api.web.cefi.orders`` is in
    ``cefisim.api.web.cefi``, a package's ``__init__`` in its own folder's room), or the module itself when it
    lies directly in the package (``cefisim.engine.venue``); the package's own ``__init__`` is a room of its
    own. ``packages`` names the modules that are packages (folders); without it, the first folder below
    ``package`` is the room."""
    if name == package:
        return package
    parent = name.rsplit(".", 1)[0]
    if not packages:
        return ".".join([package, name[len(package) + 1 :].split(".")[0]])
    if name in packages:
        return name
    return name if parent == package else parent


def room_graph(edges: Mapping[str, Mapping[str, Import]], package: str) -> dict[str, dict[str, Import]]:
    """The module graph folded into rooms (:func:`room`): room -> imported room -> the first import making
    that edge (modules in sorted order); an import inside a room makes no edge."""
    packages = {name.rsplit(".", 1)[0] for name in edges if "." in name}
    rooms: dict[str, dict[str, Import]] = {room(name, package, packages): {} for name in edges}
    for name in sorted(edges):
        here = room(name, package, packages)
        for target, imp in sorted(edges[name].items()):
            there = room(target, package, packages)
            if there != here:
                rooms[here].setdefault(there, imp)
    return rooms


def describe(cycle: list[str], component: list[str], edges: Mapping[str, Mapping[str, Import]]) -> str:
    """``a -> b -> a (a.py:3 imports b; b.py:7 imports a)``, and the other modules tied into it."""
    steps = "; ".join(
        f"{edges[a][b].where} imports {b}{' in a function' if edges[a][b].deferred else ''}" for a, b in pairwise(cycle)
    )
    rest = sorted(set(component) - set(cycle))
    also = f"; also in this knot: {', '.join(rest)}" if rest else ""
    return f"{' -> '.join(cycle)} ({steps}{also})"


@dataclass(frozen=True, slots=True)
class Comments:
    """The comments of one file: line -> comment text, the lines holding nothing but a comment, and the
    lines that open a ``try:`` (the guard of an optional import says why on its own line)."""

    text: dict[int, str]
    alone: frozenset[int]
    tries: frozenset[int]


def comments(path: Path) -> Comments:
    text: dict[int, str] = {}
    code_lines: set[int] = set()
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            text[tok.start[0]] = tok.string
        elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            code_lines.update(range(tok.start[0], tok.end[0] + 1))
    tries = {n for n, line in enumerate(source.splitlines(), 1) if line.strip().startswith("try:")}
    return Comments(text, frozenset(set(text) - code_lines), frozenset(tries))


_PRAGMA = re.compile(r"#|type:\s*ignore(\[[^\]]*\])?|noqa(:\s*[A-Z]+[0-9]+(,\s*[A-Z]+[0-9]+)*)?|pragma:[^#]*")


def says_why(comment: str) -> bool:
    """A comment that explains: some words left once the tool pragmas (noqa, type: ignore) are gone."""
    return len(re.findall(r"[A-Za-z]{2,}", _PRAGMA.sub(" ", comment))) >= 2


def explained(imp: Import, notes: Comments) -> bool:
    """A comment on a line of the statement, or on the line just above it when that line holds only a
    comment or is the ``try:`` guarding the import, says why."""
    lines = [*range(imp.line, imp.end_line + 1)]
    if imp.line - 1 in notes.alone or imp.line - 1 in notes.tries:
        lines.append(imp.line - 1)
    return any(says_why(notes.text[n]) for n in lines if n in notes.text)


_IGNORE = re.compile(r"type:\s*ignore(?P<codes>\[[a-z0-9-]+(,\s*[a-z0-9-]+)*\])?(?P<rest>.*)")


def bad_type_ignore(comment: str) -> str | None:
    """Why a comment's ``# type: ignore`` breaks the rule (error code, then a reason), or None."""
    found = _IGNORE.search(comment)
    if found is None:
        return None
    if found["codes"] is None:
        return "names no error code"
    if not says_why(found["rest"]):
        return f"gives no reason after {found['codes']}"
    return None
