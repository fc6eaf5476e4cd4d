"""The two builds of the engine (docs/build.md): the pure ``.py`` files and the same source compiled.

- Every ``.pxd`` file declares exactly the ``__slots__`` (a dataclass: the fields, in order) of the
  classes it makes C types of: an attribute added to such a class in its ``.py`` file without a
  declaration would be an AttributeError only in the compiled build, so it fails here, in both builds,
  with the names to add.
- ``make test`` runs the engine's tests a second time on the compiled build with
  ``CEFISIM_EXPECT_BUILD=compiled``: then the engine must really be compiled, every module of it.
- With the compiled build in place, every shipped scenario gives byte-identical journals, event
  digests and snapshots in a process that runs the compiled engine and one that runs the ``.py`` files.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cefisim.engine import build

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "engine"
API = ROOT / "api"
PXDS = sorted(p for p in [*ENGINE.rglob("*.pxd"), *API.rglob("*.pxd")] if "cdef class" in p.read_text(encoding="utf-8"))
#: the modules setup.py compiles, by their installed names: the venue core's, the recorded market's and
#: the simulation's, and each module of api/ with a .pxd beside it (the journal's writer and seal)
COMPILED = sorted(
    [
        "cefisim.engine." + ".".join(p.relative_to(ENGINE).with_suffix("").parts)
        for p in [*ENGINE.glob("*.py"), *ENGINE.glob("recorded/*.py"), *ENGINE.glob("simulation/*.py")]
        if p.stem != "__init__"
    ]
    + ["cefisim.api." + ".".join(p.relative_to(API).with_suffix("").parts) for p in API.rglob("*.pxd")]
)


def _declared(pxd: Path) -> dict[str, list[str]]:
    """The attributes each ``cdef class`` of a .pxd file declares, in the order declared."""
    classes: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in pxd.read_text(encoding="utf-8").splitlines():
        head = re.match(r"cdef class (\w+)", line)
        if head:
            current = classes[head.group(1)] = []
            continue
        attrs = re.match(r"\s+cdef (?:public |readonly )?(?:unsigned |signed |long )*\w+ ([\w, ]+)$", line)
        if attrs and current is not None:
            # an instance dictionary (``cdef dict __dict__``) is not an attribute of the class's own
            current.extend(n for n in (name.strip() for name in attrs.group(1).split(",")) if n != "__dict__")
    return classes


def _is_dataclass(node: ast.ClassDef) -> bool:
    """Whether the class is decorated ``@dataclass`` or ``@dataclass(...)``."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Name) and target.id == "dataclass":
            return True
    return False


def _attributes(source: Path) -> dict[str, tuple[str, list[str]]]:
    """Per class of a module, read from its source (the same in both builds): ``("slots", names)`` for a
    class with ``__slots__``, ``("fields", names in order)`` for a dataclass (its annotated names but
    the ``ClassVar`` ones)."""
    out: dict[str, tuple[str, list[str]]] = {}
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.ClassDef):
            continue
        if _is_dataclass(node):
            fields = [
                stmt.target.id
                for stmt in node.body
                if isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and "ClassVar" not in ast.unparse(stmt.annotation)
            ]
            out[node.name] = ("fields", fields)
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__slots__" for t in stmt.targets
            ):
                out[node.name] = ("slots", list(ast.literal_eval(stmt.value)))
    return out


@pytest.mark.parametrize("pxd", PXDS, ids=[str(p.relative_to(ROOT)) for p in PXDS])
def test_every_pxd_declares_exactly_the_slots(pxd: Path) -> None:
    """A slotted class declares its slots (in any order); a dataclass its fields in the order of the
    dataclass, which the compiled dataclass takes from the .pxd (its __init__, repr and the journal's
    positional records follow it)."""
    declared = _declared(pxd)
    assert declared, f"{pxd.name} declares no cdef class"
    known = _attributes(pxd.with_suffix(".py"))
    source = pxd.with_suffix(".py").name
    for cls, attrs in declared.items():
        if not attrs:
            continue  # a C type that adds no attribute to its base (a subclass with an instance dictionary)
        assert cls in known, f"{pxd.name}: {cls} is neither slotted nor a dataclass in {source}"
        kind, names = known[cls]
        missing, extra = sorted(set(names) - set(attrs)), sorted(set(attrs) - set(names))
        assert not missing, f"{pxd.name}: declare {missing} in cdef class {cls} (its {kind} have them)"
        assert not extra, f"{pxd.name}: cdef class {cls} declares {extra}, which its {kind} lack"
        if kind == "fields":
            assert attrs == names, f"{pxd.name}: declare the fields of {cls} in its order in {source}: {names}"


def test_the_build_is_all_or_nothing() -> None:
    """Either every module setup.py compiles is an extension or none is (a stale .so is a mixed build)."""
    extension = importlib.machinery.ExtensionFileLoader
    kinds = {name: isinstance(importlib.import_module(name).__loader__, extension) for name in COMPILED}
    assert len(set(kinds.values())) == 1, f"a mixed build: compiled {sorted(n for n, c in kinds.items() if c)}"
    assert build() == ("compiled" if all(kinds.values()) else "pure")
    expected = os.environ.get("CEFISIM_EXPECT_BUILD")
    if expected:
        assert build() == expected, f"CEFISIM_EXPECT_BUILD={expected} but the {build()} build runs"


def _untracked() -> dict[str, ast.ClassDef]:
    """Every class of engine/ the compiled build leaves out of the cycle collector (``@cython.no_gc``,
    docs/build.md), as ``module.Class``: read off the decorators, so a class newly marked is checked too."""
    found = {}
    for source in sorted(ENGINE.rglob("*.py")):
        module = ".".join(source.relative_to(ENGINE).with_suffix("").parts)
        for node in ast.parse(source.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and any(ast.unparse(d) == "cython.no_gc" for d in node.decorator_list):
                found[f"{module}.{node.name}"] = node
    return found


UNTRACKED = _untracked()
#: records that close cycles (an account lists them, they name it), broken when their venue goes
#: (``Account.release``, tested in tests/engine/test_release.py); the other untracked classes' fields hold
#: numbers, strings, None and tuples of strings, which can never lead back to them
RELEASED = {"records.Order", "records.Fill"}
VALUE_TYPES = {"int", "str", "str | None", "int | None", "tuple[str, ...]"}


def test_the_value_classes_are_untracked() -> None:
    assert {
        "records.Execution",
        "commands.PlaceOrder",
        "commands.ModifyOrder",
        "commands.CancelOrder",
    } | RELEASED <= set(UNTRACKED), f"@cython.no_gc is missing: {sorted(UNTRACKED)}"


def _fields(cls: ast.ClassDef) -> dict[str, str]:
    """A class's own instance fields and their types: its annotations (a dataclass), or what its
    ``__init__`` assigns to ``self`` (a slotted class), typed by the value or the parameter's annotation."""
    fields = {
        n.target.id: ast.unparse(n.annotation)
        for n in cls.body
        if isinstance(n, ast.AnnAssign)
        and isinstance(n.target, ast.Name)
        and not ast.unparse(n.annotation).startswith("ClassVar")
    }
    for f in cls.body:
        if not (isinstance(f, ast.FunctionDef) and f.name == "__init__"):
            continue
        params = {a.arg: ast.unparse(a.annotation) for a in f.args.args if a.annotation is not None}
        for a in f.body:
            if not isinstance(a, ast.Assign):
                continue
            value = a.value
            if isinstance(value, ast.Constant) and type(value.value) is int:
                kind = "int"
            elif isinstance(value, ast.Name) and value.id in params:
                kind = params[value.id]
            else:
                kind = ast.unparse(value)
            fields.update({t.attr: kind for t in a.targets if isinstance(t, ast.Attribute)})
    return fields


@pytest.mark.parametrize("name", sorted(set(UNTRACKED) - RELEASED))
def test_untracked_classes_hold_only_values(name: str) -> None:
    """A field that could hold a container (a list, a record) would let an untracked object close a
    reference cycle the collector never sees: every field of these classes is a value type. A class
    with no fields of its own inherits them from a base that is checked here too."""
    cls = UNTRACKED[name]
    module = name.rpartition(".")[0]
    fields = _fields(cls)
    if not fields:
        bases = [f"{module}.{ast.unparse(b)}" for b in cls.bases]
        assert bases and all(b in UNTRACKED for b in bases), f"{name}: no fields found, and no untracked base"
    for field, kind in fields.items():
        assert kind in VALUE_TYPES, f"{name}.{field} is {kind}: a value type only"


@pytest.mark.skipif(build() != "compiled", reason="the compiled build is not in place (make compiled)")
def test_the_compiled_build_leaves_value_classes_out_of_the_collector() -> None:
    import gc

    from cefisim.engine.commands import CancelOrder, PlaceOrder
    from cefisim.engine.records import Account, Execution

    assert not gc.is_tracked(Execution())
    assert not gc.is_tracked(PlaceOrder(1, 1, "BUY", "LIMIT", "1", "100"))
    assert not gc.is_tracked(CancelOrder(1, "1"))
    have_gc = 1 << 14  # Py_TPFLAGS_HAVE_GC: the type's objects are tracked
    assert Account.__flags__ & have_gc, "an account closes the cycles of its records: it must stay tracked"
    assert not Execution.__flags__ & have_gc
    for name in UNTRACKED:
        module, _, cls_name = name.rpartition(".")
        cls = getattr(importlib.import_module(f"cefisim.engine.{module}"), cls_name)
        assert not cls.__flags__ & have_gc, f"{name} is @cython.no_gc but its objects are tracked"


#: run in a child process: replay every shipped scenario, print hashes of its journal, event digest and
#: snapshot, and of the journal ``cefisim replay --journal`` writes (sealed, by the journal's writer).
#: With "pure" as argument, the .py files of engine/ and api/ are loaded even where extensions exist.
PROBE = r"""
import hashlib, importlib.util, json, sys, tempfile
from pathlib import Path

ROOT = Path(sys.argv[1])
FOLDERS = {"cefisim.engine.": ROOT / "engine", "cefisim.api.": ROOT / "api"}
if sys.argv[2] == "pure":
    class PureModules:
        @staticmethod
        def find_spec(name, path=None, target=None):
            for prefix, folder in FOLDERS.items():
                if name.startswith(prefix):
                    source = folder.joinpath(*name[len(prefix):].split(".")).with_suffix(".py")
                    return importlib.util.spec_from_file_location(name, source) if source.exists() else None
            return None
    sys.meta_path.insert(0, PureModules)

import orjson
from cefisim.api.cli.replay import run as replay_run
from cefisim.api.formats.scenario import load_scenario
from cefisim.api.runtime import snapshot
from cefisim.engine import build
from tests.api.formats.scenario.replay_support import SCENARIOS, SHIPPED, replay

out = {"build": build()}
work = Path(tempfile.mkdtemp())
for name in SHIPPED:
    run = replay(name, check_every=50)
    try:
        snap = orjson.dumps(snapshot.to_json({"venue": run.venue}, {}), option=orjson.OPT_SORT_KEYS)
    except snapshot.SnapshotError as e:  # a recorded market is not snapshotted (docs/snapshot.md)
        snap = str(e).encode()
    scenario = load_scenario(SCENARIOS / name)
    replay_run(scenario, scenario.end_ns, work / "journal.jsonl")
    out[name] = [
        hashlib.sha256(b"\n".join(run.journal)).hexdigest(),
        run.digest,
        hashlib.sha256(snap).hexdigest(),
        hashlib.sha256((work / "journal.jsonl").read_bytes()).hexdigest(),
    ]
print(json.dumps(out))
"""


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.skipif(build() != "compiled", reason="the compiled build is not in place (make compiled)")
def test_both_builds_write_the_same_journals_digests_and_snapshots() -> None:
    def probe(kind: str) -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(ROOT), kind],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=550,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        result: dict[str, object] = json.loads(done.stdout)
        return result

    compiled, pure = probe("compiled"), probe("pure")
    assert (compiled.pop("build"), pure.pop("build")) == ("compiled", "pure")
    assert len(compiled) >= 8
    for name, hashes in compiled.items():
        assert hashes == pure[name], f"{name}: (journal, digest, snapshot, sealed journal) differ between the builds"
