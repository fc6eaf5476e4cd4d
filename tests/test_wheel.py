"""The proof that cefisim installs as a product: the wheel, in a fresh virtualenv, in someone else's project.

The wheel built from this checkout, installed with its ``[pytest]`` extra into a new virtualenv
outside the checkout (``tests/wheel_support.py``: built once per session, or by ``make test``), and in a
scratch project that has its own ``api/`` and ``engine/`` packages runs what the
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

import pytest

from cefisim import __version__
from tests.wheel_support import GROUP, Installed, build_wheel, call, make_venv, readme_block, serve_installed

# building and installing the wheel into a fresh venv (the first test pays for it) may take minutes
# on a machine whose pip cache is cold, and compiling the engine minutes more on a busy one: more than
# the suite's per-test timeout
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400), GROUP]


def test_the_build_warns_of_no_package_left_out_of_the_configuration(installed: Installed) -> None:
    """setuptools' "Package 'cefisim.api.web.control.ui' is absent from the `packages` configuration"
    banner: every folder of package data is listed as a package."""
    log = installed.build_log.read_text()
    assert "Successfully built cefisim" in log or "Saved" in log
    assert "is absent from the `packages` configuration" not in log and "Package would be ignored" not in log


def test_the_docs_first_backtest_and_sweep_run_from_any_folder(installed: Installed) -> None:
    """The shipped scenario and example strategy by name, in an empty folder far from any checkout."""
    bin_ = installed.bin
    where = installed.empty_folder("elsewhere")
    call(
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
    call(
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
    shown = call(bin_ / "python", "-c", "import cefisim.strategies.simple_mm as m; print(m.__file__)", cwd=where)
    assert "site-packages" in shown.stdout


def test_readme_plugin_example_runs_beside_the_users_own_api_and_engine(installed: Installed) -> None:
    bin_, project = installed.bin, installed.project
    (project / "tests").mkdir(exist_ok=True)
    (project / "tests" / "test_readme.py").write_text(readme_block("def test_", "cefisim_client"))
    (project / "tests" / "test_own.py").write_text(
        "import api, engine\n\n\ndef test_own_packages():\n"
        '    assert (api.OWNER, engine.OWNER) == ("the user\'s own api", "the user\'s own engine")\n'
    )
    done = call(bin_ / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=project)
    assert "2 passed" in done.stdout


def test_nothing_but_cefisim_lands_at_the_top_level(installed: Installed) -> None:
    bin_, project = installed.bin, installed.project
    probe = (
        "import importlib.util as u, json; "
        "print(json.dumps({n: u.find_spec(n) is not None for n in ('api', 'engine', 'scenarios', 'cefisim')}))"
    )
    done = call(bin_ / "python", "-c", probe, cwd=project.parent)  # not the project: it has its own api/
    assert json.loads(done.stdout) == {"api": False, "engine": False, "scenarios": False, "cefisim": True}
    shown = call(
        bin_ / "python",
        "-c",
        "import cefisim, cefisim.api, cefisim.engine, cefisim.scenarios; "
        "print(cefisim.__version__, cefisim.Venue.__module__, cefisim.CefiClient.__module__)",
        cwd=project,
    )
    assert shown.stdout.split() == [__version__, "cefisim.engine.venue", "cefisim.api.client"]


def test_version_and_python_dash_m(installed: Installed) -> None:
    bin_, project = installed.bin, installed.project
    assert call(bin_ / "cefisim", "--version", cwd=project).stdout.strip() == f"cefisim {__version__} (compiled)"
    help_text = call(bin_ / "python", "-m", "cefisim", "--help", cwd=project).stdout
    assert "serve" in help_text and "scenarios" in help_text
    assert "demo" in call(bin_ / "cefisim", "scenarios", cwd=project).stdout


def test_serve_with_no_scenario_on_port_0_and_the_readme_signed_request(installed: Installed) -> None:
    bin_, project = installed.bin, installed.project
    with serve_installed(installed, project, "--quiet") as served:
        request = readme_block("x-svc-auth-signature", "urllib").replace("http://127.0.0.1:8080", served.url)
        balances = json.loads(call(bin_ / "python", "-c", request, cwd=project).stdout)
        assert {"1", "2"} <= {b["id"] for b in balances["data"]}
    assert served.returncode == 0, served.err
    # the packaged demo, not a file of the checkout
    assert "demo.json" in served.out and "site-packages" in served.out


def test_a_shipped_scenario_with_a_sibling_file_replays_from_the_package(installed: Installed) -> None:
    """flash_crash.json reads paths/flash_crash.txt next to it: from site-packages, to the pinned digest."""
    from tests.api.formats.scenario.test_scenario_shipped import GOLDEN

    bin_, project = installed.bin, installed.project
    done = call(bin_ / "cefisim", "replay", "flash_crash", "--quiet", cwd=project)
    assert done.stdout.strip() == f"sha256:{GOLDEN['flash_crash.json']}"


def test_the_pure_wheel_installs_and_replays_to_the_same_digest(
    tmp_path_factory: pytest.TempPathFactory, installed: Installed
) -> None:
    """CEFISIM_NO_EXTENSIONS=1: a py3-none-any wheel, for where no compiler exists, that runs the same engine."""
    from tests.api.formats.scenario.test_scenario_shipped import GOLDEN

    work = tmp_path_factory.mktemp("pure-wheel")
    wheel = build_wheel(work, {"CEFISIM_NO_EXTENSIONS": "1"})
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    bin_ = make_venv(work, str(wheel))
    # no Cython in the user's environment: the engine's decorators come from engine/nocython.py
    missing = call(bin_ / "python", "-c", "import importlib.util as u; print(u.find_spec('cython') is None)", cwd=work)
    assert missing.stdout.strip() == "True"
    assert call(bin_ / "cefisim", "--version", cwd=work).stdout.strip() == f"cefisim {__version__} (pure)"
    pure = call(bin_ / "cefisim", "replay", "flash_crash", "--quiet", cwd=work).stdout.strip()
    compiled = call(installed.bin / "cefisim", "replay", "flash_crash", "--quiet", cwd=work).stdout.strip()
    assert pure == compiled == f"sha256:{GOLDEN['flash_crash.json']}"
