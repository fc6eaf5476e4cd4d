"""The architecture's rules, checked on the source with ``ast`` (tests/import_graph.py), nothing imported.

For engine/ (``cefisim.engine``) and api/ (``cefisim.api``):

- no import cycle inside either package. An import under ``if TYPE_CHECKING:`` counts (a
  type-only import is still a dependency), and so does one deferred into a function body. A failure
  names one shortest cycle per knot, each edge with its file:line, and the other modules in the knot.
  :data:`KNOWN_KNOTS` lists the knots still there, each waiting for its own change: a new knot fails,
  and so does a listed one that is gone, so the list stays true;
- rooms (a sub-package, or a module directly in the package) import each other round no loop, not
  even two rooms of one layer (:data:`KNOWN_ROOM_KNOTS`), and each room imports only rooms of its own
  layer or below (:data:`LAYERS`, :data:`KNOWN_UPWARD`): so ``api/web/server/`` imports neither interface
  it serves, and only the app (``api/web/app/``) wires them in. A room is a folder (or a module directly in
  the package); api/'s folders are wings by role (``web/``, ``cli/``...), each holding its rooms;
- docs/architecture.md's drawing of api/ is its folder tree: every folder drawn and no other, each room's
  layer tag its place in :data:`LAYERS`, and no room importing a wing (a folder directly in api/) drawn
  above its own, so the wings are layers too;
- the engine's operation modules work on ``core.VenueCore`` and never import ``venue``;
- no two modules share a last name (a package's is its folder's) but those :data:`SHARED_NAMES`
  lists, each with why;
- api/, the package root and the tests import absolutely (``from cefisim.api.x import y``);
- an import deferred into a function body carries a comment saying why, on its line (any line of a
  multi-line statement) or on a comment line just above; a bare ``# noqa`` is no reason;
- no module imports another module's underscore name (``from m import _x``; dunders are public);
- engine/ imports nothing from ``cefisim.api``, not even for type checking;
- every ``# type: ignore`` in the type-checked packages (the package root, engine/, api/) names its
  error code and gives a reason after it: ``# type: ignore[attr-defined]  # set by the decorator``.

Also: docs/architecture.md's module table (written by tools/module_table.py) lists every module of
the product and no other, and the mypy mirror (tools/typecheck/cefisim/, see pyproject.toml) links
every folder of the package-dir mapping and every module of the package root, so ``mypy`` checks the
whole product.
The second half proves each check on small packages written to a temporary folder.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from tests.import_graph import (
    Import,
    Module,
    bad_type_ignore,
    comments,
    cycles,
    describe,
    discover,
    explained,
    graph,
    imports,
    room_graph,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"cefisim.engine": ROOT / "engine", "cefisim.api": ROOT / "api"}
MODULES = discover(PACKAGES, base=ROOT)
TYPE_CHECKED = discover({"cefisim": ROOT / "cefisim", **PACKAGES}, base=ROOT)


#: knots (strongly connected modules) still in the graph: none since issue #13 took apart the client
#: records (``Client`` and ``Account``) and the recorded market's modules (``recorded.queue.Market``)
KNOWN_KNOTS: dict[str, list[set[str]]] = {
    "cefisim.engine": [],
    "cefisim.api": [],
}


def _cycle_report(modules: dict[str, Module], package: str) -> list[str]:
    edges = graph(modules, package)
    known = [{f"{package}.{m}" for m in knot} for knot in KNOWN_KNOTS.get(package, [])]
    found = cycles(edges)
    report = [describe(cycle, component, edges) for cycle, component in found if set(component) not in known]
    gone = [knot for knot in known if knot not in [set(component) for _, component in found]]
    return report + [f"listed in KNOWN_KNOTS but gone (take it off the list): {sorted(k)}" for k in gone]


#: room-level knots (a room is a sub-package, or a module directly in the package; tests/import_graph.py
#: ``room``) still in the graph: none since issue #28 gave the shared edge utilities a room of their own
#: (api/edge/), assembled the app above the interfaces (api/web/app/) and moved the records of state beside
#: the engine (api/side_state/side_states.py, api/side_state/venue_faults.py) below both the scenario and the
#: runtime. A new knot fails the test, even between two rooms of one layer, and so does a listed one that is gone.
KNOWN_ROOM_KNOTS: dict[str, list[set[str]]] = {
    "cefisim.engine": [],
    "cefisim.api": [],
}

#: the layers of each package's rooms, lowest first: a room imports rooms of its own layer or below.
#: api/ as docs/architecture.md draws it (L1 first; a room is named by its folder, ``web.cefi`` for
#: api/web/cefi/): the edge's shared utilities, the records of state beside the engine and what every
#: command shares; the Auth interface and the recording files, which need no simulation; the scenario;
#: the runtime; web/server/, the HTTP layer around a running simulation and each venue's state there;
#: the CeFi interface and the control plane, side by side (neither imports the other); the assembled app;
#: the commands and clients; the CLI, the pytest plugin and the face on top, with the wings that are
#: only folders of rooms (web/, formats/: their __init__ imports nothing).
LAYERS: dict[str, list[set[str]]] = {
    "cefisim.engine": [
        {
            "book",
            "clock",
            "commands",
            "core",
            "entry",
            "events",
            "journal",
            "ledger",
            "levels",
            "lifecycle",
            "matching",
            "modify",
            "nocython",
            "opening",
            "pricing",
            "queries",
            "quotes",
            "records",
            "reference",
            "rejects",
            "retention",
            "state",
            "timers",
            "transfers",
            "units",
            "venue",
            "vocabulary",
        },
        {"recorded"},
        {"simulation"},
        {"engine"},
    ],
    "cefisim.api": [
        {"side_state", "cli.common", "edge"},
        {"auth", "formats.recorded"},
        {"formats.scenario"},
        {"runtime"},
        {"web.server"},
        {"web.cefi", "web.control"},
        {"web.app"},
        {"cli.backtest", "cli.data", "cli.journal_tools", "cli.sweep", "client"},
        {"api", "cli", "formats", "pytest_plugin", "web"},
    ],
}

#: room imports that go up a layer, (from room, to room), each waiting for its own change: none since #28
KNOWN_UPWARD: dict[str, set[tuple[str, str]]] = {
    "cefisim.engine": set(),
    "cefisim.api": set(),
}

#: last names that more than one module of engine/ and api/ may share, each with why it is still shared.
#: Every other module's last name (a package's is its folder's) is its own: ``import x`` or a traceback's
#: ``x.py`` names one thing. A name listed here that is no longer shared fails the test.
SHARED_NAMES: dict[str, str] = {
    "backtest": "engine/simulation/backtest.py is the engine's harness; api/cli/backtest/ is the command around it",
    "recorded": "engine/recorded/ replays a recorded market into a book; api/formats/recorded/ reads and writes the "
    "recording files",
    "scenario": "engine/simulation/scenario.py runs a scenario's turns; api/formats/scenario/ reads the scenario file",
    "simulation": "engine/simulation/ holds the drivers (scenario runner, agents, harness); "
    "api/runtime/simulation.py is the running simulation that journals and applies their commands",
}


def _short(name: str, package: str) -> str:
    """A room's name without its package (``cefi`` for ``cefisim.api.web.cefi``; the package itself by its
    last part)."""
    return name[len(package) + 1 :] if name != package else package.rsplit(".", 1)[1]


def _room_cycle_report(modules: dict[str, Module], package: str, known_knots: list[set[str]]) -> list[str]:
    rooms = room_graph(graph(modules, package), package)
    found = cycles(rooms)
    knots = [{_short(r, package) for r in component} for _, component in found]
    report = [
        describe(cycle, component, rooms)
        for (cycle, component), knot in zip(found, knots, strict=True)
        if knot not in known_knots
    ]
    gone = [knot for knot in known_knots if knot not in knots]
    return report + [f"listed in KNOWN_ROOM_KNOTS but gone (take it off the list): {sorted(k)}" for k in gone]


def _layer_report(
    modules: dict[str, Module], package: str, layers: list[set[str]], known_upward: set[tuple[str, str]]
) -> list[str]:
    rooms = room_graph(graph(modules, package), package)
    layer = {room: n for n, names in enumerate(layers) for room in names}
    found = [f"room {_short(r, package)} is in no layer of LAYERS" for r in rooms if _short(r, package) not in layer]
    found += [
        f"LAYERS names {r}, which is no room"
        for r in sorted(layer)
        if f"{package}.{r}" not in rooms and r != _short(package, package)
    ]
    upward = set()
    for here, targets in rooms.items():
        for there, imp in targets.items():
            a, b = _short(here, package), _short(there, package)
            if a in layer and b in layer and layer[b] > layer[a]:
                upward.add((a, b))
                if (a, b) not in known_upward:
                    found.append(f"{imp.where}: {a} (layer {layer[a]}) imports {b} (layer {layer[b]})")
    found += [
        f"listed in KNOWN_UPWARD but gone (take it off the list): {a} -> {b}" for a, b in sorted(known_upward - upward)
    ]
    return found


def _shared_name_report(modules: dict[str, Module], shared: dict[str, str]) -> list[str]:
    """Last names (a package's is its folder's) that more than one module holds, unless listed in
    ``shared``; and listed names that are no longer shared."""
    holders: dict[str, list[str]] = {}
    for module in modules.values():
        last = module.name.rsplit(".", 1)[-1]
        if not last.startswith("__"):
            holders.setdefault(last, []).append(module.shown)
    found = [
        f"{name} names {len(paths)} modules: {', '.join(sorted(paths))}"
        for name, paths in sorted(holders.items())
        if len(paths) > 1 and name not in shared
    ]
    return found + [
        f"listed in SHARED_NAMES but no longer shared (take it off the list): {name}"
        for name in sorted(shared)
        if len(holders.get(name, [])) < 2
    ]


def _relative_import_report(modules: dict[str, Module]) -> list[str]:
    found = []
    for module in modules.values():
        tree = ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))
        found += [
            f"{module.shown}:{node.lineno}: `from {'.' * node.level}{node.module or ''} import ...` is relative"
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level
        ]
    return sorted(found)


def _undeferred_report(modules: dict[str, Module]) -> list[str]:
    found = []
    for module in modules.values():
        notes = comments(module.path)
        found += [
            f"{imp.where}: `{imp.module}` imported inside a function with no comment saying why"
            for imp in imports(module, modules)
            if imp.deferred and not explained(imp, notes)
        ]
    return found


def _private_report(modules: dict[str, Module]) -> list[str]:
    found = []
    for module in modules.values():
        for imp in imports(module, modules):
            private = [n for n in imp.names if n.startswith("_") and not n.endswith("__")]
            found += [f"{imp.where}: imports the underscore name {n} of {imp.module}" for n in private]
    return found


def _upward_report(modules: dict[str, Module]) -> list[str]:
    found = []
    for module in modules.values():
        if module.name.startswith("cefisim.engine"):
            for imp in imports(module, modules):
                api = [t for t in (imp.module, *imp.targets) if t == "cefisim.api" or t.startswith("cefisim.api.")]
                found += [f"{imp.where}: engine imports {api[0]}"] if api else []
    return found


def _type_ignore_report(modules: dict[str, Module]) -> list[str]:
    found = []
    for module in modules.values():
        for line, text in sorted(comments(module.path).text.items()):
            why = bad_type_ignore(text)
            if why:
                found.append(f"{module.shown}:{line}: `{text.strip()}` {why}")
    return found


def _fail(title: str, found: list[str]) -> None:
    if found:
        pytest.fail(f"{title} ({len(found)}):\n" + "\n".join(found), pytrace=False)


# --- the rules, on the product ---------------------------------------------------------------------


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycle_inside_a_package(package: str) -> None:
    _fail(f"import cycles inside {package}", _cycle_report(MODULES, package))


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_import_cycle_between_rooms(package: str) -> None:
    _fail(
        f"import cycles between the rooms of {package}", _room_cycle_report(MODULES, package, KNOWN_ROOM_KNOTS[package])
    )


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_rooms_import_only_their_layer_or_below(package: str) -> None:
    _fail(
        f"room imports against the layers of {package}",
        _layer_report(MODULES, package, LAYERS[package], KNOWN_UPWARD[package]),
    )


def test_the_operation_modules_do_not_import_the_venue() -> None:
    edges = graph(MODULES, "cefisim.engine")
    operations = (
        "core",
        "entry",
        "lifecycle",
        "matching",
        "modify",
        "opening",
        "pricing",
        "transfers",
        "retention",
        "timers",
        "ledger",
        "book",
    )
    _fail(
        "operation modules importing cefisim.engine.venue",
        [
            f"{edges[f'cefisim.engine.{m}']['cefisim.engine.venue'].where}: {m} imports the venue"
            for m in operations
            if "cefisim.engine.venue" in edges[f"cefisim.engine.{m}"]
        ],
    )


def test_no_two_modules_share_a_last_name() -> None:
    _fail("module names used twice in engine/ and api/", _shared_name_report(MODULES, SHARED_NAMES))


def test_every_import_is_absolute() -> None:
    """One import style: ``from cefisim.engine.x import y`` says where ``y`` lives wherever the line is
    read, as the ``.pxd`` files' cimports do (ruff's TID252 says the same in ``make lint``)."""
    roots = {"cefisim": ROOT / "cefisim", **PACKAGES, "tests": ROOT / "tests"}
    _fail("relative imports (write `from cefisim.api.x import y`)", _relative_import_report(discover(roots, base=ROOT)))


def test_imports_deferred_into_functions_say_why() -> None:
    _fail("deferred imports without a reason", _undeferred_report(MODULES))


def test_no_module_imports_another_modules_underscore_names() -> None:
    _fail("underscore names imported across modules", _private_report(MODULES))


def test_the_engine_never_imports_the_api() -> None:
    _fail("engine -> api imports", _upward_report(MODULES))


def test_every_type_ignore_names_its_code_and_a_reason() -> None:
    _fail("type: ignore comments that do not read `# type: ignore[code]  # reason`", _type_ignore_report(TYPE_CHECKED))


def test_the_mypy_mirror_links_the_whole_installed_layout() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    mirror = ROOT / "tools" / "typecheck"
    problems = []
    for package, folder in setuptools["package-dir"].items():
        if package == "cefisim":
            for path in sorted((ROOT / folder).glob("*.py")):
                link = mirror / "cefisim" / path.name
                if not (link.is_symlink() and link.resolve() == path.resolve()):
                    problems.append(f"{link.relative_to(ROOT)} should link {folder}/{path.name}")
        else:
            link = mirror.joinpath(*package.split("."))
            if not (link.is_symlink() and link.resolve() == (ROOT / folder).resolve()):
                problems.append(f"{link.relative_to(ROOT)} should link the folder {folder}/")
            if link.is_symlink() and Path(link.readlink()).is_absolute():
                problems.append(f"{link.relative_to(ROOT)} must be a relative link (checkouts move)")
    _fail("the mypy mirror tools/typecheck/ misses part of the installed layout", problems)


def test_the_architecture_doc_lists_every_module_and_no_other() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    product = {
        p.relative_to(ROOT).as_posix()
        for folder in set(setuptools["package-dir"].values())
        for p in (ROOT / folder).rglob("*.py")
    }
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([^`]+\.py)` \|", text, flags=re.MULTILINE))
    _fail(
        "docs/architecture.md's module table is stale: run python tools/module_table.py",
        [f"{p} is not listed" for p in sorted(product - listed)]
        + [f"{p} is listed but is no module" for p in sorted(listed - product)],
    )


def _drawing(text: str) -> list[tuple[str, int | None]]:
    """The folder tree of docs/architecture.md's "The layers": each drawn folder of api/ (``""`` for api/
    itself, ``"web/cefi"``...) with its layer tag (``L3`` -> 3; None when untagged), in drawn order."""
    block = text.split("## The layers", 1)[1].split("```", 2)[1]
    drawn: list[tuple[str, int | None]] = []
    stack: list[str] = []
    for line in block.splitlines():
        m = re.match(r"^(?P<tree>[ │├└─]*)(?P<name>[\w.]+)/\s+(?:L(?P<layer>\d+))?", line)
        if not m or line.startswith(" ─"):
            continue
        depth = len(m["tree"]) // 4
        if depth == 0 and m["name"] != "api":
            continue
        stack[depth:] = [m["name"]]
        drawn.append(("/".join(stack[1:]), int(m["layer"]) if m["layer"] else None))
    return drawn


def _drawing_report(
    drawn: list[tuple[str, int | None]], folders: set[str], layers: list[set[str]], rooms: dict[str, dict[str, Import]]
) -> list[str]:
    """The drawing against the folders and LAYERS: every folder drawn and every drawn folder there, each
    tag the room's place in ``layers`` (1 = lowest), an untagged folder a room that imports nothing."""
    layer = {room: n + 1 for n, names in enumerate(layers) for room in names}

    def shown(folder: str) -> str:
        return f"api/{folder}/" if folder else "api/"

    found = [f"{shown(f)} is a folder the drawing leaves out" for f in sorted(folders - {f for f, _ in drawn})]
    found += [f"the drawing names {shown(f)}, which is no folder" for f, _ in drawn if f not in folders]
    for folder, tag in drawn:
        name = folder.replace("/", ".") or "api"
        if tag is None and rooms.get(name):
            found.append(f"{shown(folder)} imports other rooms but the drawing gives it no layer")
        elif tag is not None and layer.get(name) != tag:
            found.append(f"the drawing puts {shown(folder)} in L{tag}, LAYERS in L{layer.get(name)}")
    return found


def _wing_report(drawn: list[tuple[str, int | None]], rooms: dict[str, dict[str, Import]]) -> list[str]:
    """Rooms importing a room of a wing (a folder directly in api/) drawn above their own; the face
    (``api``) is drawn above every wing."""
    wings = [f for f, _ in drawn if "/" not in f]  # "" first: api/ itself
    place = {wing: n for n, wing in enumerate(wings)}

    def wing(room: str) -> str:
        return "" if room == "api" else room.split(".")[0]

    found = []
    for here, targets in sorted(rooms.items()):
        for there, imp in targets.items():
            a, b = wing(here), wing(there)
            if a in place and b in place and place[b] < place[a]:
                found.append(f"{imp.where}: {here} (wing {a}/) imports {there} (wing {b}/, drawn above)")
    return found


def _api_rooms() -> dict[str, dict[str, Import]]:
    rooms = room_graph(graph(MODULES, "cefisim.api"), "cefisim.api")
    return {_short(r, "cefisim.api"): {_short(t, "cefisim.api"): i for t, i in ts.items()} for r, ts in rooms.items()}


def test_the_layers_drawing_is_api_s_folder_tree_and_agrees_with_layers() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    folders = {p.parent.relative_to(ROOT / "api").as_posix() for p in (ROOT / "api").rglob("__init__.py")}
    folders = {"" if f == "." else f for f in folders}
    _fail(
        "docs/architecture.md's drawing of api/ against its folders and LAYERS",
        _drawing_report(_drawing(text), folders, LAYERS["cefisim.api"], _api_rooms()),
    )


def test_no_room_imports_a_wing_drawn_above_its_own() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    _fail("room imports against the order of api/'s wings", _wing_report(_drawing(text), _api_rooms()))


# --- the checks themselves, on small packages --------------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, Module]:
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return discover({"top.pkg": tmp_path / "pkg"}, base=tmp_path)


def test_a_cycle_through_relative_and_absolute_imports_is_named_with_its_lines(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from . import b\n",
            "b.py": "import os\n\nfrom .sub.c import thing\n",
            "sub/__init__.py": "",
            "sub/c.py": "from ..a import name\n",
            "sub/d.py": "from top.pkg import sub\nfrom . import c\n",
        },
    )
    (report,) = _cycle_report(modules, "top.pkg")
    assert report.startswith("top.pkg.a -> top.pkg.b -> top.pkg.sub.c -> top.pkg.a (")
    assert "pkg/a.py:1 imports top.pkg.b" in report
    assert "pkg/b.py:3 imports top.pkg.sub.c" in report
    assert "pkg/sub/c.py:1 imports top.pkg.a" in report
    assert "also in this knot" not in report


def test_a_knot_lists_the_modules_beyond_its_shortest_cycle(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from top.pkg import b, c\n",
            "b.py": "import top.pkg.a\n",
            "c.py": "from top.pkg.a import x\n",
        },
    )
    (report,) = _cycle_report(modules, "top.pkg")
    assert report.startswith("top.pkg.a -> top.pkg.b -> top.pkg.a")
    assert report.endswith("also in this knot: top.pkg.c)")


def test_type_checking_and_deferred_imports_close_a_cycle_too(tmp_path: Path) -> None:
    base = {
        "__init__.py": "",
        "a.py": "from top.pkg import b\n",
        "b.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from top.pkg.a import A\n",
    }
    assert len(_cycle_report(_package(tmp_path / "1", base), "top.pkg")) == 1
    deferred = {**base, "b.py": "def f():\n    # the cycle breaks at import time only\n    from top.pkg import a\n"}
    assert len(_cycle_report(_package(tmp_path / "2", deferred), "top.pkg")) == 1


def test_a_deferred_import_needs_a_comment_that_says_why(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "ok.py": (
                "def f():\n    # matplotlib is optional: the plot extra\n    import matplotlib\n"
                "def g():\n    import json  # only the debug dump needs it\n"
                "async def h():\n    from top.pkg import (\n        ok,  # ok is heavy to load at start\n    )\n"
            ),
            "bad.py": (
                "import os\n\n"
                "class C:\n    def m(self):\n        if True:\n            import json\n"
                "def f():\n    x = 1  # a comment on the line above is about that line\n    import csv\n"
                "def g():\n    import re  # noqa: PLC0415\n"
                "def h():\n    return lambda: __import__('x')\n"
            ),
        },
    )
    report = _undeferred_report(modules)
    assert report == [
        "pkg/bad.py:6: `json` imported inside a function with no comment saying why",
        "pkg/bad.py:9: `csv` imported inside a function with no comment saying why",
        "pkg/bad.py:11: `re` imported inside a function with no comment saying why",
    ]


def test_underscore_names_of_other_modules_are_refused_dunders_are_not(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "from top import __version__\n",
            "a.py": (
                "from .b import _helper, public\nimport top.pkg._impl\nfrom ._impl import thing\nfrom . import _impl\n"
            ),
            "b.py": "_helper = public = 1\n",
            "_impl.py": "thing = 1\n",
        },
    )
    assert _private_report(modules) == [
        "pkg/a.py:1: imports the underscore name _helper of top.pkg.b",
        "pkg/a.py:4: imports the underscore name _impl of top.pkg",
    ]


def test_the_engine_importing_the_api_is_refused_even_for_type_checking(tmp_path: Path) -> None:
    for name, text in {
        "engine/__init__.py": "",
        "engine/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cefisim.api.x import Y\n",
        "engine/b.py": "def f():\n    # lazily\n    import cefisim.api\n",
        "engine/c.py": "from cefisim import api\nfrom cefisim.engine import a\n",
        "api/__init__.py": "",
        "api/x.py": "from cefisim.engine import a\n",
    }.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    modules = discover({"cefisim.engine": tmp_path / "engine", "cefisim.api": tmp_path / "api"}, base=tmp_path)
    assert _upward_report(modules) == [
        "engine/a.py:3: engine imports cefisim.api.x",
        "engine/b.py:3: engine imports cefisim.api",
        "engine/c.py:1: engine imports cefisim.api",
    ]


@pytest.mark.parametrize(
    ("comment", "verdict"),
    [
        ("# type: ignore", "names no error code"),
        ("# type: ignore  # the stubs are wrong", "names no error code"),
        ("# type: ignore[arg-type]", "gives no reason after [arg-type]"),
        ("# type: ignore[arg-type]  # x", "gives no reason after [arg-type]"),
        ("# type: ignore[arg-type]  # noqa: E501", "gives no reason after [arg-type]"),
        ("# type: ignore[arg-type]  # aiohttp's stub takes no handler here", None),
        ("# type: ignore[attr-defined, union-attr] - set by the decorator", None),
        ("# type: ignore[misc]: Fraction sums are Fractions", None),
        ("# a comment about types", None),
    ],
)
def test_a_type_ignore_names_its_code_and_gives_a_reason(comment: str, verdict: str | None) -> None:
    found = bad_type_ignore(comment)
    if verdict is None:
        assert found is None
    else:
        assert found is not None and found.startswith(verdict)


def test_type_ignores_are_read_from_comments_not_strings(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": 'DOC = "# type: ignore"\nx: int = "1"  # type: ignore\n',
        },
    )
    assert _type_ignore_report(modules) == [
        "pkg/a.py:2: `# type: ignore` names no error code",
    ]


def test_rooms_knot_even_when_no_two_modules_do(tmp_path: Path) -> None:
    """a/x imports b/y and b/z imports a/w: no module cycle, but the rooms a and b import each other."""
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "",
            "a/x.py": "from top.pkg.b import y\n",
            "a/w.py": "",
            "b/__init__.py": "",
            "b/y.py": "",
            "b/z.py": "from ..a import w\n",
            "c.py": "from top.pkg.a import x\n",
        },
    )
    assert _cycle_report(modules, "top.pkg") == []
    (report,) = _room_cycle_report(modules, "top.pkg", [])
    assert report.startswith("top.pkg.a -> top.pkg.b -> top.pkg.a (")
    assert "pkg/a/x.py:1 imports top.pkg.b;" in report and "pkg/b/z.py:1 imports top.pkg.a)" in report
    assert _room_cycle_report(modules, "top.pkg", [{"a", "b"}]) == []
    assert _room_cycle_report(modules, "top.pkg", [{"a", "b"}, {"c"}]) == [
        "listed in KNOWN_ROOM_KNOTS but gone (take it off the list): ['c']"
    ]


def test_an_import_up_a_layer_is_named_unless_known(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "from top.pkg import high\n",
            "high.py": "",
            "mid/__init__.py": "from .. import low\n",
        },
    )
    layers = [{"low"}, {"mid"}, {"high", "pkg"}]
    assert _layer_report(modules, "top.pkg", layers, set()) == ["pkg/low.py:1: low (layer 0) imports high (layer 2)"]
    assert _layer_report(modules, "top.pkg", layers, {("low", "high")}) == []
    assert _layer_report(modules, "top.pkg", layers, {("low", "high"), ("mid", "high")}) == [
        "listed in KNOWN_UPWARD but gone (take it off the list): mid -> high"
    ]
    assert _layer_report(modules, "top.pkg", [{"low"}, {"high", "pkg"}], {("low", "high")}) == [
        "room mid is in no layer of LAYERS"
    ]


def test_rooms_of_one_layer_that_import_each_other_are_a_knot(tmp_path: Path) -> None:
    """Two rooms of one layer may import each other without going up a layer: the room cycle check
    is what refuses them."""
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "",
            "a/x.py": "from top.pkg.b import y\n",
            "b/__init__.py": "",
            "b/y.py": "",
            "b/z.py": "from top.pkg.a import x\n",
        },
    )
    layers = [{"a", "b"}, {"pkg"}]
    assert _layer_report(modules, "top.pkg", layers, set()) == []
    (report,) = _room_cycle_report(modules, "top.pkg", [])
    assert report.startswith("top.pkg.a -> top.pkg.b -> top.pkg.a (")


def test_a_last_name_held_twice_is_named_unless_listed(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "desks.py": "",
            "floor/__init__.py": "",
            "floor/desks.py": "",
            "tape/__init__.py": "",
            "tape/floor.py": "",
            "tape/__main__.py": "",
            "__main__.py": "",
        },
    )
    assert _shared_name_report(modules, {}) == [
        "desks names 2 modules: pkg/desks.py, pkg/floor/desks.py",
        "floor names 2 modules: pkg/floor/__init__.py, pkg/tape/floor.py",
    ]
    assert _shared_name_report(modules, {"desks": "why", "floor": "why"}) == []
    assert _shared_name_report(modules, {"desks": "why", "floor": "why", "pkg": "why"}) == [
        "listed in SHARED_NAMES but no longer shared (take it off the list): pkg"
    ]


def test_a_relative_import_is_named_with_its_line(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "from . import a\n",
            "a.py": "import os\n\nfrom top.pkg import b\n\n\ndef f():\n    from .b import c\n",
            "b.py": "from ..other import d\n",
        },
    )
    assert _relative_import_report(modules) == [
        "pkg/__init__.py:1: `from . import ...` is relative",
        "pkg/a.py:7: `from .b import ...` is relative",
        "pkg/b.py:1: `from ..other import ...` is relative",
    ]


_SMALL_DRAWING = """## The layers

```
api/             L3  the face
├── top/         L3  commands
├── mid/             a wing of rooms
│   └── room/    L2  a room
└── low/         L1  leaves
 ─── engine ───
```
"""


def test_the_drawing_is_read_as_a_tree_with_its_tags() -> None:
    assert _drawing(_SMALL_DRAWING) == [("", 3), ("top", 3), ("mid", None), ("mid/room", 2), ("low", 1)]


def test_the_drawing_is_held_against_the_folders_and_layers() -> None:
    drawn = _drawing(_SMALL_DRAWING)
    layers = [{"low"}, {"mid.room"}, {"api", "top", "mid"}]
    rooms: dict[str, dict[str, Import]] = {"api": {}, "top": {}, "mid": {}, "mid.room": {}, "low": {}}
    folders = {"", "top", "mid", "mid/room", "low"}
    assert _drawing_report(drawn, folders, layers, rooms) == []
    assert _drawing_report(drawn, folders | {"new"}, layers, rooms) == ["api/new/ is a folder the drawing leaves out"]
    assert _drawing_report(drawn, folders - {"mid/room"}, layers, rooms) == [
        "the drawing names api/mid/room/, which is no folder"
    ]
    assert _drawing_report(drawn, folders, [{"low", "mid.room"}, {"api", "top", "mid"}], rooms) == [
        "the drawing puts api/ in L3, LAYERS in L2",
        "the drawing puts api/top/ in L3, LAYERS in L2",
        "the drawing puts api/mid/room/ in L2, LAYERS in L1",
    ]


def test_a_room_importing_a_wing_drawn_above_its_own_is_named(tmp_path: Path) -> None:
    modules = _package(
        tmp_path,
        {
            "__init__.py": "",
            "top/__init__.py": "from top.pkg.low import x\n",
            "mid/__init__.py": "",
            "mid/room/__init__.py": "",
            "mid/room/a.py": "from top.pkg.low import x\n",
            "low/__init__.py": "",
            "low/x.py": "from top.pkg.mid.room import a\n",
        },
    )
    rooms = room_graph(graph(modules, "top.pkg"), "top.pkg")
    short = {_short(r, "top.pkg"): {_short(t, "top.pkg"): i for t, i in ts.items()} for r, ts in rooms.items()}
    short["api"] = short.pop("pkg")
    assert _wing_report(_drawing(_SMALL_DRAWING), short) == [
        "pkg/low/x.py:1: low (wing low/) imports mid.room (wing mid/, drawn above)"
    ]
