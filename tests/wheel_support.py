"""The installed wheel the installation tests share: built once, installed once, per test session.

The tests that check what a user of the wheel sees (``tests/test_wheel.py``, ``tests/test_installed.py``,
``tests/test_ci_docs.py``) take the ``installed`` fixture (registered in ``tests/conftest.py``): a fresh
virtualenv outside the checkout (no system site-packages; pip takes the dependencies from its cache or
the index) with the wheel and its ``[pytest]`` extra, and a scratch project beside it with its own
``api/`` and ``engine/`` packages. Nothing else is installed there: no matplotlib, gymnasium, numpy or
dask, so the extras' messages show as a user without them sees them.

The wheel is the compiled build where a C compiler exists (docs/build.md). ``make test`` builds it once
in the background and names it in ``CEFISIM_TEST_WHEEL`` (its extensions also serve the compiled pass);
without the variable the fixture builds it from a copy of this checkout. Under pytest-xdist these tests
carry the ``xdist_group("wheel")`` mark, and ``make test`` runs them with ``--dist loadgroup``, so one
worker builds and installs once.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import PIPE, CompletedProcess, Popen, run

import pytest

from tests.api.served import wait_for_ready_file

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
WHEEL_VARIABLE = "CEFISIM_TEST_WHEEL"
#: the mark of every test that takes ``installed``
GROUP = pytest.mark.xdist_group("wheel")


def user_env(set_env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a user's shell would have: none of this suite's Python, pytest or cefisim settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "CEFISIM_", "PYTEST_", "VIRTUAL_ENV"))}
    env.update(set_env or {})
    return env


def call(
    *argv: str | Path,
    cwd: Path,
    timeout: float = 300,
    set_env: dict[str, str] | None = None,
    check: bool = True,
    **kw: object,
) -> CompletedProcess[str]:
    """Run ``argv`` as a user would (``user_env``); with ``check``, a non-zero exit fails the test with its output.
    A new session: no controlling terminal, so a build's progress goes to the captured stderr."""
    done = run(
        [str(a) for a in argv],
        cwd=cwd,
        env=user_env(set_env),
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,
        **kw,  # type: ignore[arg-type]  # subprocess.run's keyword arguments, passed on
    )
    if check:
        assert done.returncode == 0, f"{argv}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def readme_block(*needles: str) -> str:
    """The README's one ```python block that contains every needle."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    found = [b for b in blocks if all(n in b for n in needles)]
    assert len(found) == 1, f"README.md: expected one python block with {needles}, found {len(found)}"
    return found[0]


def build_wheel(work: Path, set_env: dict[str, str] | None = None) -> Path:
    """A wheel built from a copy of this checkout, into ``work/dist``; its build log in ``work/build.log``."""
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
    # verbose: the build backend's own output is shown (and checked); the compiled build takes minutes of C
    built = call(
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


def make_venv(work: Path, requirement: str) -> Path:
    """A fresh venv in ``work/venv`` with ``requirement`` installed; its bin directory."""
    venv = work / "venv"
    call(sys.executable, "-m", "venv", venv, cwd=work)
    bin_ = venv / "bin"
    call(bin_ / "python", "-m", "pip", "install", "--quiet", requirement, cwd=work, timeout=600)
    return bin_


@dataclass(frozen=True)
class Installed:
    """The wheel installed for a user: ``bin`` (the venv's scripts), ``project`` (a scratch project with its
    own ``api/`` and ``engine/``), ``wheel`` and ``build_log`` (the wheel's build output)."""

    bin: Path
    project: Path
    wheel: Path
    build_log: Path

    def empty_folder(self, name: str) -> Path:
        """A new empty folder beside the project (far from any checkout): where a user starts."""
        folder = self.project.parent / name
        folder.mkdir()
        return folder


def install_wheel(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    given = os.environ.get(WHEEL_VARIABLE)
    if given:
        wheel = Path(given)
        log = wheel.parent / "build.log"
    else:
        wheel = build_wheel(work)
        log = work / "build.log"
    # the compiled build wherever this suite runs (CI has a compiler): a platform wheel, stripped
    assert not wheel.name.endswith("-none-any.whl"), wheel.name
    assert wheel.stat().st_size < 4_000_000, f"{wheel.name}: {wheel.stat().st_size:,} bytes (not stripped?)"
    bin_ = make_venv(work, f"{wheel}[pytest]")
    project = work / "project"
    for package in ("api", "engine"):
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text(f'OWNER = "the user\'s own {package}"\n')
    (project / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return Installed(bin_, project, wheel, log)


@dataclass
class Served:
    """A ``cefisim serve`` of the installed wheel: its ``url`` while it runs; once stopped (SIGTERM), its
    exit status and what it printed."""

    url: str = ""
    returncode: int | None = None
    out: str = ""
    err: str = field(default="", repr=False)


@contextmanager
def serve_installed(installed: Installed, where: Path, *flags: str) -> Iterator[Served]:
    """``cefisim serve --port 0 --ready-file ... *flags`` from the installed wheel in ``where``, as a user
    runs it; stopped with SIGTERM when the block ends."""
    ready = where / "ready.json"
    argv = [installed.bin / "cefisim", "serve", "--port", "0", "--ready-file", ready, *flags]
    proc = Popen(argv, cwd=where, env=user_env(), stdout=PIPE, stderr=PIPE, text=True)
    served = Served()
    try:
        served.url = str(wait_for_ready_file(ready, proc, 60)["url"])
        yield served
    finally:
        proc.send_signal(signal.SIGTERM)
        served.out, served.err = proc.communicate(timeout=30)
        served.returncode = proc.returncode
