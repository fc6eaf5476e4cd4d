"""Ctrl-C in ``cefisim backtest``: exit 130, one line, and the report of what ran marked incomplete."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[4]


class Ticker:
    """A timer every engine second that takes a little wall time: a run long enough to interrupt.
    Writes a line to ``log`` per tick, so the test knows the run is under way."""

    def __init__(self, log: str) -> None:
        self.log = log

    def on_start(self, ctx: Any) -> None:
        ctx.set_timer("tick", 1)

    def on_timer(self, ctx: Any, name: str) -> None:
        with open(self.log, "a") as f:
            f.write(f"{ctx.time}\n")
        time.sleep(0.05)  # 600 ticks of the demo: half a minute of wall time uninterrupted
        ctx.set_timer("tick", 1)


def test_ctrl_c_exits_130_with_one_line_and_the_report_of_what_ran(tmp_path: Path) -> None:
    log, report, png = tmp_path / "ticks.log", tmp_path / "report.json", tmp_path / "run.png"
    cmd = [
        sys.executable,
        "-m",
        "cefisim",
        "backtest",
        "demo",
        "--strategy",
        f"{__name__}:Ticker",
        "--param",
        f"log={log}",
        "--report",
        str(report),
        "--plot",
        str(png),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while (not log.exists() or len(log.read_text().splitlines()) < 3) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    (line,) = lines
    doc = json.loads(report.read_text())
    assert line == (
        f"cefisim backtest: interrupted at {doc['end']} after {doc['seconds']} s of engine time:"
        ' the report covers what ran ("complete": false)'
    )
    ticks = log.read_text().splitlines()
    assert doc["complete"] is False and doc["end"] == ticks[-1]  # stopped after the last step it took
    assert 3 <= len(ticks) < 600 and doc["end"] < "2026-11-02T09:10:00Z"
    assert out.startswith("scenario ") and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # the table and the plot too


def test_a_finished_run_is_complete(tmp_path: Path) -> None:
    from cefisim.api.cli.backtest import backtest_main

    report = tmp_path / "report.json"
    assert backtest_main(["demo", "--strategy", "simple_mm", "--until", "+5", "--report", str(report), "--quiet"]) == 0
    assert json.loads(report.read_text())["complete"] is True
