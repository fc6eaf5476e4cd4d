"""docs/ci.md's two CI jobs, their shell steps run as written, against the wheel this checkout builds.

The YAML blocks of docs/ci.md are parsed; every ``run:`` step of the GitHub Actions job (``uses:``
steps are the platform's own) runs with bash in a scratch project, in order, each step in a shell of its
own with the job's ``env`` and what earlier steps wrote to ``$GITHUB_ENV``; an ``if: failure()`` step
runs only after a failed one and ``if: always()`` always, as the runner does. The GitLab job's
``script`` lines run in one shell, as GitLab runs them. The project has a ``vendor/`` wheel at the
path the jobs name (the suite's installed wheel, copied there) and a ``tests/integration`` suite that
passes, then one that fails: the failing run must leave ``cefisim-requests.json`` with the requests
the server saw, the passing run none. Either way the server stops at the end.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.wheel_support import GROUP, Installed, user_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200), GROUP]

ROOT = Path(__file__).resolve().parents[1]

PASSING = """
import pytest


@pytest.mark.asyncio
async def test_an_order_rests(cefisim_venue):
    async with cefisim_venue.client("alice") as c:
        order = await c.place_order("1", "BUY", "LIMIT", "0.01", price="29000.00")
    assert order["status"] == "ACTIVE"
"""
FAILING = PASSING.replace('== "ACTIVE"', '== "FILLED"')


def jobs() -> tuple[dict[str, Any], dict[str, Any]]:
    """(the GitHub Actions workflow, the GitLab CI file) of docs/ci.md."""
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(b) for b in re.findall(r"^```yaml\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)]
    (github,) = [b for b in blocks if "jobs" in b]
    (gitlab,) = [b for b in blocks if "jobs" not in b]
    return github, gitlab


def project(installed: Installed, name: str, suite: str, wheel_path: str) -> Path:
    """A scratch project: its integration tests, the cefisim wheel where the job expects it."""
    where = installed.empty_folder(name)
    (where / "tests" / "integration").mkdir(parents=True)
    (where / "tests" / "integration" / "test_orders.py").write_text(suite)
    (where / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    target = where / wheel_path
    target.parent.mkdir(parents=True)
    shutil.copy(installed.wheel, target)
    return where


def environment(installed: Installed, extra: dict[str, str]) -> dict[str, str]:
    """A CI runner's: the venv's python and cefisim first on PATH (what setup-python or the image gives)."""
    env = user_env(extra)
    env["PATH"] = f"{installed.bin}{os.pathsep}{env.get('PATH', '')}"
    return env


def the_wheel_as_named(wheel_path: str, installed: Installed) -> str:
    """The jobs name the wheel of the docs' version; the test's wheel goes by that name (pip reads the
    version from the file's name, so the name keeps the real version and platform)."""
    return str(Path(wheel_path).parent / installed.wheel.name)


def run_github(installed: Installed, suite: str) -> tuple[Path, list[tuple[str, int]]]:
    workflow, _ = jobs()
    (job,) = workflow["jobs"].values()
    wheel_path = the_wheel_as_named(job["env"]["SIM_WHEEL"], installed)
    where = project(installed, f"github-{'pass' if suite is PASSING else 'fail'}", suite, wheel_path)
    github_env = where.parent / f"{where.name}.env"
    github_env.write_text("")
    ran, failed = [], False
    for step in job["steps"]:
        if "run" not in step:
            continue  # actions/checkout, setup-python, upload-artifact: the platform's
        condition = step.get("if", "success()")
        if (condition == "failure()" and not failed) or (condition == "success()" and failed):
            continue
        carried = dict(line.split("=", 1) for line in github_env.read_text().splitlines() if "=" in line)
        env = environment(installed, {**job["env"], "SIM_WHEEL": wheel_path, "GITHUB_ENV": str(github_env), **carried})
        done = subprocess.run(
            ["bash", "-e", "-c", step["run"]], cwd=where, env=env, capture_output=True, text=True, timeout=600
        )
        ran.append((step.get("name", step["run"][:30]), done.returncode))
        failed = failed or done.returncode != 0
    return where, ran


def stopped(where: Path, timeout: float = 60) -> bool:
    """Whether the server the job started has exited (its stop step only sends SIGTERM: the server then
    finishes its requests and removes its ready file), waiting for it up to ``timeout`` seconds."""
    pid = (
        json.loads((where / "cefisim-ready.json").read_text())["pid"] if (where / "cefisim-ready.json").exists() else 0
    )
    deadline = time.monotonic() + timeout
    while pid and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return not pid


def test_the_github_actions_job_runs_the_tests_against_a_started_server() -> None:
    workflow, gitlab = jobs()
    (job,) = workflow["jobs"].values()
    assert [s.get("uses", "").split("@")[0] for s in job["steps"] if "uses" in s] == [
        "actions/checkout",
        "actions/setup-python",
        "actions/upload-artifact",
    ]
    assert "--port 0 --ready-file" in json.dumps(job) and "--port 0 --ready-file" in json.dumps(gitlab)


def test_the_github_job_passes_and_leaves_nothing_running(installed: Installed) -> None:
    where, ran = run_github(installed, PASSING)
    assert [code for _, code in ran] == [0, 0, 0, 0], ran  # install, start, tests, stop
    assert not (where / "cefisim-requests.json").exists()
    assert stopped(where) and not (where / "cefisim-ready.json").exists()  # removed when the server stopped


def test_the_github_job_keeps_what_the_server_saw_when_the_tests_fail(installed: Installed) -> None:
    where, ran = run_github(installed, FAILING)
    assert [name for name, code in ran if code] == ["Integration tests"], ran
    assert [name for name, _ in ran][-2:] == ["What cefisim saw", "Stop cefisim"]
    seen = json.loads((where / "cefisim-requests.json").read_text())
    assert any(r["path"] == "/v1/cefi/orders" and r["method"] == "POST" for r in seen["requests"])
    assert stopped(where) and not (where / "cefisim-ready.json").exists()


@pytest.mark.parametrize("suite", [PASSING, FAILING], ids=["passing", "failing"])
def test_the_gitlab_job_script_runs_as_gitlab_runs_it(installed: Installed, suite: str) -> None:
    _, gitlab = jobs()
    (job,) = gitlab.values()
    wheel_path = the_wheel_as_named(job["variables"]["SIM_WHEEL"], installed)
    where = project(installed, f"gitlab-{'pass' if suite is PASSING else 'fail'}", suite, wheel_path)
    script = "\n".join(job["script"])
    env = environment(installed, {**job["variables"], "SIM_WHEEL": wheel_path})
    # GitLab ends the job's container, and the server with it: here, the test does
    done = subprocess.run(
        [
            "bash",
            "-e",
            "-c",
            script + '\nkill "$(python -c \'import json; print(json.load(open("cefisim-ready.json"))["pid"])\')"',
        ],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if suite is PASSING:
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert not (where / "cefisim-requests.json").exists()
    else:
        assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
        seen = json.loads((where / "cefisim-requests.json").read_text())
        assert any(r["path"] == "/v1/cefi/orders" for r in seen["requests"])
        ready = json.loads((where / "cefisim-ready.json").read_text())
        os.kill(ready["pid"], 15)
    assert stopped(where)
    assert set(job["artifacts"]["paths"]) == {"cefisim-requests.json", "cefisim.log"}
