"""Determinism: the deterministic path never reads the wall clock, unseeded randomness or I/O.

Parses every module of ``engine/`` with ``ast`` and fails on any import of a forbidden module, wherever
it is (imports inside functions count). The one exception is an ``if TYPE_CHECKING:`` block: it never
runs, so ``from random import Random`` there only names the type of the seeded generator passed in.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"
FORBIDDEN = {"time", "datetime", "random", "uuid", "asyncio", "aiohttp", "json", "orjson"}
MODULES = sorted(ENGINE.rglob("*.py"))  # engine/simulation/ too


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def forbidden_imports(source: str, filename: str) -> list[str]:
    tree = ast.parse(source, filename)
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            typing_only.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__") or (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
        ):
            names = [a.value for a in node.args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        found.extend(f"{filename}:{node.lineno}: {name}" for name in names if name.split(".")[0] in FORBIDDEN)
    return found


def test_engine_modules_found() -> None:
    assert any(p.name == "venue.py" for p in MODULES) and any(p.name == "scenario.py" for p in MODULES)


def api_imports(source: str, path: Path) -> list[str]:
    """Imports of ``cefisim.api`` (absolute, or relative climbing out of ``cefisim.engine``) in the module
    at ``path`` under ``engine/``, type-only ones included: the engine is commands in, events out, and
    knows nothing of the layer that serves it."""
    package = ["cefisim", "engine", *path.relative_to(ENGINE).parent.parts]
    found = []
    for node in ast.walk(ast.parse(source, str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            names = [".".join([*base, node.module or ""]).rstrip(".")]
        found += [
            f"{path.name}:{node.lineno}: {n}"
            for n in names
            if n.split(".")[:2] == ["cefisim", "api"] or n.split(".")[0] == "api"
        ]
    return found


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ENGINE)) for p in MODULES])
def test_engine_module_imports_nothing_from_api(path: Path) -> None:
    assert api_imports(path.read_text(encoding="utf-8"), path) == []


@pytest.mark.parametrize(
    ("snippet", "where"),
    [
        ("from cefisim.api.runtime import simulation", "venue.py"),
        ("import cefisim.api", "venue.py"),
        ("from ..api import control", "venue.py"),
        ("from ...api.server import app", "simulation/scenario.py"),
        ("if TYPE_CHECKING:\n    from cefisim.api.runtime.simulation import Simulation", "venue.py"),
    ],
)
def test_api_import_checker_catches(snippet: str, where: str) -> None:
    assert api_imports(snippet, ENGINE / where)


@pytest.mark.parametrize(
    ("snippet", "where"),
    [
        ("from ..venue import Venue", "simulation/scenario.py"),
        ("from .events import Event", "venue.py"),
        ("from cefisim.engine import venue", "venue.py"),
        ("import apispec_like", "venue.py"),
    ],
)
def test_api_import_checker_allows(snippet: str, where: str) -> None:
    assert not api_imports(snippet, ENGINE / where)


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ENGINE)) for p in MODULES])
def test_engine_module_imports_nothing_nondeterministic(path: Path) -> None:
    assert forbidden_imports(path.read_text(encoding="utf-8"), path.name) == []


@pytest.mark.parametrize(
    "snippet",
    [
        "import time",
        "import datetime as dt",
        "from random import random",
        "import os, uuid",
        "def f():\n    import asyncio",
        "from aiohttp import web",
        "import json",
        "import orjson",
        "from time import monotonic_ns",
        "__import__('random')",
        "importlib.import_module('uuid')",
        "from datetime import timezone",
        "if TYPE_CHECKING:\n    pass\nelse:\n    import random",
    ],
)
def test_checker_catches(snippet: str) -> None:
    assert forbidden_imports(snippet, "x.py")


@pytest.mark.parametrize(
    "snippet",
    [
        "import heapq",
        "from .clock import Clock",
        "import timeit_like",
        "from . import time",
        "if TYPE_CHECKING:\n    from random import Random",
        "import typing\nif typing.TYPE_CHECKING:\n    import random",
    ],
)
def test_checker_allows(snippet: str) -> None:
    assert not forbidden_imports(snippet, "x.py")
