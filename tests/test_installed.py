"""What a user of the installed wheel reads, in an empty folder: every message says what to do.

The wheel is installed with its ``[pytest]`` extra only (``tests/wheel_support.py``), so each optional
extra is missing as it is for a user who did not ask for it: importing ``cefisim.gym``, running the gym
example, ``--plot`` and ``--dask`` each answer one line naming the extra to install. The serve flags'
mistakes (``--speed`` on the wall clock, ``--speed abc``, a journal in a folder that does not exist), a
strategy parameter that is not a number and a callback with the wrong arguments are one line each,
before anything runs. The installed pages are where ``cefisim docs`` says, and a running server serves
them and an index at ``GET /``.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from tests.wheel_support import GROUP, Installed, call, serve_installed

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400), GROUP]
NOT_A_NUMBER = "simple_mm(qty='abc') raised ValueError: qty='abc' is not a decimal number"


def fails(installed: Installed, where: Path, *argv: str, code: int = 2) -> str:
    """Run ``argv`` (its first word from the venv's bin) and return its stderr, which must be one line."""
    done = call(installed.bin / argv[0], *argv[1:], cwd=where, check=False, timeout=120)
    assert done.returncode == code, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def test_a_missing_extra_is_one_line_naming_it(installed: Installed) -> None:
    where = installed.empty_folder("extras")
    imported = call(installed.bin / "python", "-c", "from cefisim.gym import VenueEnv", cwd=where, check=False)
    assert imported.returncode == 1
    # an import in the user's own code: Python shows where, then the one line that says what to do
    assert imported.stderr.strip().splitlines()[-1] == (
        "cefisim.api.cli.common.extras.MissingExtra: cefisim.gym needs gymnasium: pip install 'cefisim[gym]'"
    )
    assert "No module named" not in imported.stderr and "During handling" not in imported.stderr
    example = fails(installed, where, "python", "-m", "cefisim.examples.gym_random_and_simple", code=1)
    assert example == "cefisim: this example needs numpy: pip install 'cefisim[gym]'"
    plot = fails(installed, where, "cefisim", "backtest", "demo", "--strategy", "simple_mm", "--plot", "run.png")
    assert plot == "cefisim backtest: --plot: a plot needs matplotlib: pip install 'cefisim[plot]'"
    dask = fails(installed, where, "cefisim", "sweep", "demo", "--strategy", "simple_mm", "--dask", "local")
    assert dask == "cefisim sweep: --dask needs dask: pip install 'cefisim[dask]'"
    assert not any(where.iterdir())  # refused before anything was written


def test_serve_refuses_what_it_cannot_do_in_one_line_that_says_what_to_do(installed: Installed) -> None:
    where = installed.empty_folder("serve-mistakes")
    speed = fails(installed, where, "cefisim", "serve", "--port", "0", "--speed", "10")
    assert speed.startswith("cefisim serve: --speed (CEFISIM_SPEED) needs --clock virtual")
    assert "add --clock virtual" in speed
    journal = fails(installed, where, "cefisim", "serve", "--port", "0", "--journal", "/nonexistent/dir/j.jsonl")
    assert journal == (
        "cefisim serve: --journal /nonexistent/dir/j.jsonl: no folder /nonexistent/dir: "
        "create it, or name a file in a folder that exists"
    )
    assert ".new" not in journal
    # a bad value of one flag: argparse's usage, then the line that names the flag and what it takes
    done = call(installed.bin / "cefisim", "serve", "--speed", "abc", "--clock", "virtual", cwd=where, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "cefisim serve: error: argument --speed: 'abc': expected times real time, a number above 0 and at most 1000000"
    )
    assert "invalid _speed value" not in done.stderr


def test_a_strategy_parameter_or_callback_that_cannot_work_is_refused_before_the_run(installed: Installed) -> None:
    where = installed.empty_folder("strategy-mistakes")
    qty = fails(installed, where, "cefisim", "backtest", "demo", "--strategy", "simple_mm", "--param", "qty=abc")
    assert qty == f"cefisim backtest: --strategy: {NOT_A_NUMBER}"
    (where / "mine.py").write_text("class Maker:\n    def on_fill(self, ctx):\n        pass\n")
    callback = fails(installed, where, "cefisim", "backtest", "demo", "--strategy", "mine.py:Maker", "--report", "r")
    assert callback == (
        "cefisim backtest: --strategy: mine.py:Maker.on_fill(self, ctx) cannot be called as on_fill(ctx, fill)"
        " (docs/backtest.md, the strategy API)"
    )
    assert not (where / "r").exists()
    sweep = fails(installed, where, "cefisim", "sweep", "demo", "--strategy", "simple_mm", "--param", "qty=0.01,abc")
    assert sweep == f"cefisim sweep: --strategy: {NOT_A_NUMBER}"


def test_the_installed_docs_are_found_and_served_and_get_slash_lists_them(installed: Installed) -> None:
    where = installed.empty_folder("docs")
    shown = call(installed.bin / "cefisim", "docs", cwd=where).stdout
    folder = Path(shown.splitlines()[0].split(": ", 1)[1])
    assert "site-packages" in str(folder) and (folder / "limits.md").is_file() and (folder / "index.md").is_file()
    assert "limits.md" in shown  # each page with its title
    with serve_installed(installed, where, "--control-token", "s3cret") as served:
        with urllib.request.urlopen(served.url + "/") as resp:
            index = resp.read().decode()
        assert '<a href="/_sim/ui/?instrument=1">' in index and '<a href="/docs/">' in index
        assert "#token=&lt;token&gt;" in index  # how to open the live page with the token
        with urllib.request.urlopen(served.url + "/docs/limits.md") as resp:
            assert resp.headers.get_content_type() == "text/plain"
            assert resp.read().decode() == (folder / "limits.md").read_text(encoding="utf-8")
    # the banner says why it prints no plain address of the live page, and how to open it
    assert "The live page needs the control token (--control-token); a browser passes it" in served.out
    assert f"{served.url}/_sim/ui/?instrument=1#token=<your token>" in served.out
