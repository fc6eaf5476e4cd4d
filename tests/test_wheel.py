"""The proof that cefisim installs as a product: the wheel, in a fresh virtualenv, in someone else's project.

Builds the wheel from this checkout, installs it with its ``[pytest]`` extra into a new virtualenv
outside the checkout (no system site-packages; pip takes the dependencies from its cache or the
index), and in a scratch project that has its own ``api/`` and ``engine/`` packages runs what the
README shows a new user: the plugin example (read from README.md, so the two cannot drift), ``cefisim
serve`` with no scenario on ``--port 0 --ready-file``, the README's signed request against it,
``cefisim --version`` and ``python -m cefisim --help``. Nothing named ``api``, ``engine`` or
``scenarios`` may be importable at the top level of that environment. One virtualenv serves every check.

That wheel is the compiled build where a C compiler exists (docs/build.md): platform-specific, its
extensions stripped. The pure wheel (``CEFISIM_NO_EXTENSIONS=1``) is ``py3-none-any``, installs into a
venv of its own and replays a shipped scenario to the digest the compiled one gives.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cefisim import __version__
from tests.api.test_cli_serve import wait_for_ready_file

# building and installing the wheel into a fresh venv (the first test pays for it) may take minutes
# on a machine whose pip cache is cold, and compiling the engine minutes more on a busy one: more than
# the suite's per-test timeout
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def readme_block(*needles: str) -> str:
    """The README's one ```python block that contains every needle."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    found = [b for b in blocks if all(n in b for n in needles)]
    assert len(found) == 1, f"README.md: expected one python block with {needles}, found {len(found)}"
    return found[0]


def _run(
    *argv: str | Path, cwd: Path, timeout: float = 300, set_env: dict[str, str] | None = None, **kw: object
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "CEFISIM_", "PYTEST_", "VIRTUAL_ENV"))}
    env.update(set_env or {})
    done = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, **kw
    )  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _wheel(work: Path, set_env: dict[str, str] | None = None) -> Path:
    """A wheel built from a copy of this checkout, into ``work/dist``."""
    dist = work / "dist"
    # from a copy of the sources: setuptools builds in ./build and would ship a module a developer's
    # earlier build left there after it was moved or deleted in the checkout (or an in-place .so)
    source = work / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "build", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache", "*.so"
        ),
    )
    # verbose: the build backend's own output is shown (and checked below); the compiled build takes
    # minutes of C
    built = _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "-v",
        "-w",
        dist,
        source,
        cwd=work,
        timeout=1800,
        set_env=set_env,
    )
    (work / "build.log").write_text(built.stdout + built.stderr)
    (wheel,) = dist.glob("cefisim-*.whl")
    return wheel


def _venv(work: Path, requirement: str) -> Path:
    """A fresh venv in ``work/venv`` with ``requirement`` installed; its bin directory."""
    venv = work / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=work)
    bin_ = venv / "bin"
    _run(bin_ / "python", "-m", "pip", "install", "--quiet", requirement, cwd=work, timeout=600)
    return bin_


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the venv's bin directory, a scratch project with its own api/ and engine/ packages)."""
    work = tmp_path_factory.mktemp("wheel")
    wheel = _wheel(work)
    # the compiled build wherever this suite runs (CI has a compiler): a platform wheel, stripped
    assert not wheel.name.endswith("-none-any.whl"), wheel.name
    assert wheel.stat().st_size < 4_000_000, f"{wheel.name}: {wheel.stat().st_size:,} bytes (not stripped?)"
    bin_ = _venv(work, f"{wheel}[pytest]")
    project = work / "project"
    for package in ("api", "engine"):
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text(f'OWNER = "the user\'s own {package}"\n')
    (project / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return bin_, project


def test_the_build_warns_of_no_package_left_out_of_the_configuration(installed: tuple[Path, Path]) -> None:
    """setuptools' "Package 'cefisim.api.control.ui' is absent from the `packages` configuration"
    banner: every folder of package data is listed as a package."""
    _, project = installed
    log = (project.parent / "build.log").read_text()
    assert "Successfully built cefisim" in log or "Saved" in log
    assert "is absent from the `packages` configuration" not in log and "Package would be ignored" not in log


def test_the_docs_first_backtest_and_sweep_run_from_any_folder(installed: tuple[Path, Path]) -> None:
    """The shipped scenario and example strategy by name, in an empty folder far from any checkout."""
    bin_, project = installed
    where = project.parent / "elsewhere"
    where.mkdir()
    _run(
        bin_ / "cefisim",
        "backtest",
        "demo",
        "--strategy",
        "simple_mm",
        "--param",
        "qty=0.05",
        "--until",
        "+60",
        "--report",
        "mm.json",
        "--quiet",
        cwd=where,
    )
    report = json.loads((where / "mm.json").read_text())
    assert report["complete"] is True and report["fills"]["count"] > 0 and report["strategy"] == "simple_mm"
    _run(
        bin_ / "cefisim",
        "sweep",
        "demo",
        "--strategy",
        "simple_mm",
        "--seeds",
        "1-2",
        "--until",
        "+20",
        "--workers",
        "0",
        "--out",
        "sweep",
        "--quiet",
        cwd=where,
    )
    rows = [json.loads(line) for line in (where / "sweep" / "runs.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["ok", "ok"]
    shown = _run(bin_ / "python", "-c", "import cefisim.strategies.simple_mm as m; print(m.__file__)", cwd=where)
    assert "site-packages" in shown.stdout


def test_readme_plugin_example_runs_beside_the_users_own_api_and_engine(installed: tuple[Path, Path]) -> None:
    bin_, project = installed
    (project / "tests").mkdir(exist_ok=True)
    (project / "tests" / "test_readme.py").write_text(readme_block("def test_", "cefisim_client"))
    (project / "tests" / "test_own.py").write_text(
        "import api, engine\n\n\ndef test_own_packages():\n"
        '    assert (api.OWNER, engine.OWNER) == ("the user\'s own api", "the user\'s own engine")\n'
    )
    done = _run(bin_ / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=project)
    assert "2 passed" in done.stdout


def test_nothing_but_cefisim_lands_at_the_top_level(installed: tuple[Path, Path]) -> None:
    bin_, project = installed
    probe = (
        "import importlib.util as u, json; "
        "print(json.dumps({n: u.find_spec(n) is not None for n in ('api', 'engine', 'scenarios', 'cefisim')}))"
    )
    done = _run(bin_ / "python", "-c", probe, cwd=project.parent)  # not the project: it has its own api/
    assert json.loads(done.stdout) == {"api": False, "engine": False, "scenarios": False, "cefisim": True}
    shown = _run(
        bin_ / "python",
        "-c",
        "import cefisim, cefisim.api, cefisim.engine, cefisim.scenarios; "
        "print(cefisim.__version__, cefisim.Venue.__module__, cefisim.CefiClient.__module__)",
        cwd=project,
    )
    assert shown.stdout.split() == [__version__, "cefisim.engine.venue", "cefisim.api.client"]


def test_version_and_python_dash_m(installed: tuple[Path, Path]) -> None:
    bin_, project = installed
    assert _run(bin_ / "cefisim", "--version", cwd=project).stdout.strip() == f"cefisim {__version__} (compiled)"
    help_text = _run(bin_ / "python", "-m", "cefisim", "--help", cwd=project).stdout
    assert "serve" in help_text and "scenarios" in help_text
    assert "demo" in _run(bin_ / "cefisim", "scenarios", cwd=project).stdout


def test_serve_with_no_scenario_on_port_0_and_the_readme_signed_request(installed: tuple[Path, Path]) -> None:
    bin_, project = installed
    ready = project / "ready.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "CEFISIM_", "VIRTUAL_ENV"))}
    proc = subprocess.Popen(
        [bin_ / "cefisim", "serve", "--port", "0", "--ready-file", ready, "--quiet"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = str(wait_for_ready_file(ready, proc, 60)["url"])
        request = readme_block("x-svc-auth-signature", "urllib").replace("http://127.0.0.1:8080", url)
        balances = json.loads(_run(bin_ / "python", "-c", request, cwd=project).stdout)
        assert {"1", "2"} <= {b["id"] for b in balances["data"]}
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "demo.json" in out and "site-packages" in out  # the packaged demo, not a file of the checkout


def test_a_shipped_scenario_with_a_sibling_file_replays_from_the_package(installed: tuple[Path, Path]) -> None:
    """flash_crash.json reads paths/flash_crash.txt next to it: from site-packages, to the pinned digest."""
    from tests.scenarios.test_scenario_shipped import GOLDEN

    bin_, project = installed
    done = _run(bin_ / "cefisim", "replay", "flash_crash", "--quiet", cwd=project)
    assert done.stdout.strip() == f"sha256:{GOLDEN['flash_crash.json']}"


def test_the_pure_wheel_installs_and_replays_to_the_same_digest(
    tmp_path_factory: pytest.TempPathFactory, installed: tuple[Path, Path]
) -> None:
    """CEFISIM_NO_EXTENSIONS=1: a py3-none-any wheel, for where no compiler exists, that runs the same engine."""
    from tests.scenarios.test_scenario_shipped import GOLDEN

    work = tmp_path_factory.mktemp("pure-wheel")
    wheel = _wheel(work, {"CEFISIM_NO_EXTENSIONS": "1"})
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    bin_ = _venv(work, str(wheel))
    # no Cython in the user's environment: the engine's decorators come from engine/nocython.py
    missing = _run(bin_ / "python", "-c", "import importlib.util as u; print(u.find_spec('cython') is None)", cwd=work)
    assert missing.stdout.strip() == "True"
    assert _run(bin_ / "cefisim", "--version", cwd=work).stdout.strip() == f"cefisim {__version__} (pure)"
    pure = _run(bin_ / "cefisim", "replay", "flash_crash", "--quiet", cwd=work).stdout.strip()
    compiled = _run(installed[0] / "cefisim", "replay", "flash_crash", "--quiet", cwd=work).stdout.strip()
    assert pure == compiled == f"sha256:{GOLDEN['flash_crash.json']}"
