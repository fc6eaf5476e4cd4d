"""``make test``'s split of the suite holds: the HTTP tests run under asyncio's and aiohttp's debug checks,
and the tests of the installed wheel share one wheel on one worker.

The Makefile runs ``DEBUG_TESTS`` with ``PYTHONASYNCIODEBUG=1`` and the rest of the pure pass without it
(docs/testing.md): a test module elsewhere that serves HTTP in-process would lose that check without a
word, so this fails on one. ``INSTALLED_TESTS`` run on the wheel ``make test`` builds, under
``--dist loadgroup``: each must carry the ``xdist_group("wheel")`` mark, or a second worker would
build and install a second wheel.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
#: what marks a module that serves HTTP in-process (aiohttp, the app, the plugin's server fixtures)
HTTP = re.compile(
    r"^\s*(import aiohttp|from aiohttp)|\b(create_app|serving|api_factory|cefisim_server|cefisim_client)\b",
    flags=re.MULTILINE,
)


def make_list(name: str) -> list[str]:
    m = re.search(rf"^{name} \?= ((?:.*\\\n)*.*)$", MAKEFILE, flags=re.MULTILINE)
    assert m, f"the Makefile sets no {name}"
    return m.group(1).replace("\\\n", " ").split()


def test_every_module_that_serves_http_runs_under_the_debug_checks() -> None:
    debug = [ROOT / p for p in make_list("DEBUG_TESTS")]
    installed = [ROOT / p for p in make_list("INSTALLED_TESTS")]
    outside = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.is_relative_to(ROOT / "tests" / "e2e") or path in installed or path.name == Path(__file__).name:
            continue  # the browser tests (make e2e); the installed wheel's, in their own processes
        if any(path == d or path.is_relative_to(d) for d in debug):
            continue
        if HTTP.search(path.read_text(encoding="utf-8")):
            outside.append(str(path.relative_to(ROOT)))
    assert outside == [], "add them (or their folder) to DEBUG_TESTS in the Makefile"


def test_the_installed_wheels_tests_share_one_worker() -> None:
    takers = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "tests").rglob("test_*.py")
        if re.search(r"\binstalled: Installed\b", p.read_text(encoding="utf-8"))
    )
    assert takers == sorted(make_list("INSTALLED_TESTS"))
    for name in takers:
        assert "GROUP" in (ROOT / name).read_text(encoding="utf-8").split("pytestmark", 1)[1].split("\n", 1)[0], name
    assert "--dist loadgroup" in MAKEFILE


def test_the_compiled_pass_runs_the_engines_tests() -> None:
    """A list the recipe names but the Makefile never sets would run the compiled pass on nothing."""
    compiled = make_list("COMPILED_TESTS")
    assert {"tests/engine", "tests/api/formats/scenario", "tests/test_build.py"} <= set(compiled)
    assert all((ROOT / p).exists() for p in compiled)
    for name in re.findall(r"\$\(([A-Z_]+_TESTS)\)", MAKEFILE):
        assert make_list(name), name
