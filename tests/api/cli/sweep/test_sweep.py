"""``cefisim sweep``: the same rows on every executor, failed runs as rows, files reaching workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cefisim.api.cli.main import main
from cefisim.api.cli.sweep import sweep_main
from cefisim.api.cli.sweep.grid import RunSpec, load_sweep_file
from cefisim.api.cli.sweep.run import UNSTABLE, Settings, run_task
from cefisim.api.cli.sweep.sources import Sources, load, referenced_files
from cefisim.api.formats.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[4]
DEMO = str(ROOT / "scenarios" / "demo.json")
STRATEGY = str(Path(__file__).with_name("strategies.py")) + ":Quoter"
# 2 quantities x 2 latencies x 2 seeds, 20 s of the demo market each: a fraction of a second in all
GRID = [
    DEMO,
    "--strategy",
    STRATEGY,
    "--seeds",
    "3-4",
    "--param",
    "qty=0.001,0.002",
    "--latency-ms",
    "0,5",
    "--until",
    "+20",
    "--quiet",
]


def sweep(tmp_path: Path, name: str, *extra: str, code: int = 0) -> Path:
    out = tmp_path / name
    assert sweep_main([*GRID, *extra, "--out", str(out)]) == code
    return out


def stable(out: Path) -> tuple[list[dict[str, Any]], str, bytes]:
    """The rows without the keys that may differ (wall time, traceback paths), the CSV without its
    last column (wall_s), and summary.json."""
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_bytes().splitlines()]
    for r in rows:
        for k in UNSTABLE:
            del r[k]
    csv = "".join(line.rpartition(",")[0] + "\n" for line in (out / "runs.csv").read_text().splitlines())
    return rows, csv, (out / "summary.json").read_bytes()


def test_serial_pool_and_dask_local_cluster_give_the_same_rows(tmp_path: Path) -> None:
    serial = stable(sweep(tmp_path, "serial", "--workers", "0"))
    rows = serial[0]
    assert [r["run"] for r in rows] == list(range(8))
    assert [(r["seed"], r["params"]["qty"], r["latency_ms"]) for r in rows[:4]] == [
        (3, "0.001", "0"),
        (4, "0.001", "0"),
        (3, "0.001", "5"),
        (4, "0.001", "5"),
    ]
    assert all(r["status"] == "ok" and r["fills"] >= 1 for r in rows)
    assert len({r["pnl"] for r in rows}) > 1  # the seeds and quantities make different markets and runs
    assert stable(sweep(tmp_path, "pool", "--workers", "2")) == serial
    assert stable(sweep(tmp_path, "dask", "--dask", "local", "--workers", "2")) == serial


def test_each_run_is_the_backtest_of_its_seed(tmp_path: Path) -> None:
    from cefisim.api.cli.backtest import WALL_FIELDS, backtest_main
    from cefisim.api.cli.sweep import plan_sweep, sweep_parser

    out = sweep(tmp_path, "serial", "--workers", "2", "--reports")
    row = json.loads((out / "runs.jsonl").read_bytes().splitlines()[3])  # seed 4, qty 0.001, latency 5
    plan = plan_sweep(sweep_parser().parse_args(GRID))
    assert plan.specs[3] == RunSpec(3, 4, (("qty", "0.001"),), "5")
    reseeded = tmp_path / "seed4.json"
    doc = json.loads(Path(DEMO).read_text())
    reseeded.write_text(json.dumps({**doc, "seed": 4}))
    report = tmp_path / "r.json"
    assert (
        backtest_main(
            [
                str(reseeded),
                "--strategy",
                STRATEGY,
                "--param",
                "qty=0.001",
                "--latency-ms",
                "5",
                "--until",
                "+20",
                "--quiet",
                "--report",
                str(report),
            ]
        )
        == 0
    )
    r = json.loads(report.read_text())
    assert (row["pnl"], row["fees"], row["volume"], row["fills"], row["events"]) == (
        r["pnl"]["total"],
        r["fees"]["total"],
        r["volume"]["total"],
        r["fills"]["count"],
        r["run"]["events"],
    )
    kept = json.loads((out / "reports" / "run-3.json").read_text())
    assert kept["scenario"] == DEMO and r["scenario"] == str(reseeded)
    for rep in (kept, r):
        del rep["scenario"]
        for key in WALL_FIELDS:
            del rep["run"][key]
    assert kept == r  # the sweep's run is that backtest, report and all
    assert len(list((out / "reports").iterdir())) == 8


def test_a_raising_strategy_gives_one_failed_row_and_the_others_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = sweep_main(
        [
            DEMO,
            "--strategy",
            STRATEGY,
            "--seeds",
            "5",
            "--param",
            "boom=no,yes",
            "--until",
            "+20",
            "--workers",
            "2",
            "--out",
            str(out),
        ]
    )
    assert code == 1
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_bytes().splitlines()]
    assert [r["status"] for r in rows] == ["ok", "failed"]
    bad = rows[1]
    assert bad["error"].startswith("the strategy failed in on_book at 2026-11-02T09:00:")
    assert bad["error"].endswith("ZeroDivisionError: boom on the first book")
    assert 'raise ZeroDivisionError("boom on the first book")' in bad["traceback"]
    assert bad["pnl"] is None and bad["seed"] == 5
    err = capsys.readouterr()
    assert "run 1 (seed 5 boom=yes) failed: the strategy failed in on_book" in err.err
    assert "Traceback (most recent call last)" in err.err
    summary = json.loads((out / "summary.json").read_text())
    assert [(s["ok"], s["failed"]) for s in summary["sets"]] == [(1, 0), (0, 1)]
    assert "boom=yes" in err.out and "boom=no" in err.out  # both sets are in the ranked table


def test_a_sweep_file_gives_the_same_runs_as_the_flags(tmp_path: Path) -> None:
    flags = stable(sweep(tmp_path, "flags", "--workers", "0"))
    toml = tmp_path / "sweep.toml"
    toml.write_text(
        f'scenario = "{DEMO}"\nstrategy = "{STRATEGY}"\nseeds = [3, 4]\nlatency_ms = [0, "5"]\nuntil = "+20"\n'
        '[params]\nqty = ["0.001", "0.002"]\n'
    )
    out = tmp_path / "file"
    assert sweep_main(["--file", str(toml), "--workers", "0", "--quiet", "--out", str(out)]) == 0
    assert stable(out) == flags


def test_a_sweep_file_names_a_shipped_scenario_and_strategy_from_any_folder(tmp_path: Path) -> None:
    toml = tmp_path / "sweep.toml"
    toml.write_text('scenario = "demo"\nstrategy = "simple_mm"\nseeds = [1, 2]\nuntil = "+10"\n')
    out = tmp_path / "out"
    assert sweep_main(["--file", str(toml), "--workers", "0", "--quiet", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_bytes().splitlines()]
    assert [r["status"] for r in rows] == ["ok", "ok"]
    (tmp_path / "demo").write_text("{}")  # a file of that name next to the sweep file wins
    assert load_sweep_file(toml)["scenario"] == str(tmp_path / "demo")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("seeds = 1.5", "give a range string"),
        ("colour = 1", "unknown key"),
        ("[params]\nqty = 0.01", 'write the value as a string or an integer ("0.01", not 0.01)'),
        ("latency_ms = [-1]", "$.latency_ms[0]: '-1' must be zero or more whole nanoseconds"),
        ("seeds = [", "invalid TOML"),
    ],
)
def test_a_bad_sweep_file_is_one_message_naming_the_key(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(text + "\n")
    assert sweep_main([DEMO, "--strategy", STRATEGY, "--file", str(f)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith(f"cefisim sweep: {f}") and "Traceback" not in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--seeds", "9-2"], "--seeds: '9-2': the range ends before it starts"),
        (["--seeds", "1,1"], "--seeds: 1 is given twice"),
        (["--param", "colour=red"], "raised TypeError"),
        (["--latency-ms", "0.0000001"], "--latency-ms: '0.0000001' must be zero or more whole nanoseconds"),
        (["--until", "soon"], "--until: 'soon' is not an ISO 8601"),
        (["--client", "nobody"], "--client: the scenario has no client 'nobody'"),
        (["--quote", "EUR"], "--quote: the scenario has no asset 'EUR'"),
        (["--dask", "tcp://10.0.0.1:8786", "--workers", "2"], "--workers does not go with a Dask scheduler"),
        (["--reports"], "--reports goes with --out DIR"),
        (["--out", __file__], f"--out {__file__}: File exists"),
        (["--plot", "pnl.txt"], "pnl.txt: the plot is written as .png, .svg, .pdf, .html"),
    ],
)
def test_bad_options_stop_before_any_run(extra: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert sweep_main([DEMO, "--strategy", STRATEGY, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_cli_dispatches_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", DEMO, "--strategy", STRATEGY, "--seeds", "1-2", "--until", "+5", "--workers", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == [
        "#",
        "parameters",
        "runs",
        "failed",
        "mean",
        "PnL",
        "USD",
        "std",
        "95%",
        "CI",
        "of",
        "the",
        "mean",
        "losing",
    ]
    assert out[1].split()[:5] == ["1", "latency", "as", "scenario", "2"]
    assert out[2].startswith("2 runs in ")


# --- files reaching the workers -------------------------------------------------------------------


def test_a_scenario_and_its_files_travel_with_the_task_and_load_from_a_copy(tmp_path: Path) -> None:
    scen_dir = tmp_path / "here"
    (scen_dir / "paths").mkdir(parents=True)
    src = ROOT / "scenarios"
    (scen_dir / "flash.json").write_bytes((src / "flash_crash.json").read_bytes())
    (scen_dir / "paths" / "flash_crash.txt").write_bytes((src / "paths" / "flash_crash.txt").read_bytes())
    scenario = load_scenario(scen_dir / "flash.json")
    assert referenced_files(scenario.doc) == ["paths/flash_crash.txt"]
    sources = Sources.collect(scenario, str(scen_dir / "flash.json"), STRATEGY, inline=True)
    assert sources.files is not None
    assert [n for n, _ in sources.files] == ["flash.json", "paths/flash_crash.txt", "strategy/strategies.py"]
    for f in (scen_dir / "paths" / "flash_crash.txt", scen_dir / "flash.json"):
        f.unlink()  # the worker has only what travelled
    loaded, cls = load(sources)
    assert loaded.source == str(scen_dir / "flash.json") and cls.__name__ == "Quoter"
    row = run_task(Settings(sources, loaded.start_ns + 5 * 10**9, None, None), RunSpec(0, 1, (), None))
    assert row["status"] == "ok"


def test_large_files_go_by_path_and_a_missing_one_is_a_clear_error_for_that_run(tmp_path: Path) -> None:
    scenario = load_scenario(DEMO)
    by_path = Sources.collect(scenario, DEMO, STRATEGY, inline=True, limit=100)
    assert by_path.files is None
    gone = Sources.collect(scenario, str(tmp_path / "nowhere" / "demo.json"), STRATEGY, inline=False)
    row = run_task(Settings(gone, None, None, None), RunSpec(7, 1, (), None))
    assert row["status"] == "error" and row["run"] == 7
    assert row["error"].startswith(f"the scenario {tmp_path / 'nowhere' / 'demo.json'} is not on worker ")
    assert "put it on a path every worker shares" in row["error"]


def test_plot_draws_the_distributions(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "pnl.png"
    assert sweep_main([*GRID, "--workers", "0", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


# --- Ctrl-C ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", [["--workers", "2"], ["--dask", "local", "--workers", "2"]], ids=["pool", "dask"])
def test_ctrl_c_stops_the_runs_and_writes_the_finished_rows(where: list[str], tmp_path: Path) -> None:
    """Runs 0-3 take no time, runs 4-7 sleep an hour: Ctrl-C once two of those have started must stop
    them (the sweep ends well within the timeout below), keep the four finished rows, and print one
    line, with no worker's log or traceback, however loaded the machine (no wall-time threshold)."""
    out, log = tmp_path / "out", tmp_path / "started.log"
    cmd = [
        sys.executable,
        "-m",
        "cefisim",
        "sweep",
        DEMO,
        "--strategy",
        STRATEGY,
        "--seeds",
        "1-4",
        "--param",
        "sleep=0,3600",  # parameter sets vary slowest: runs 0-3 sleep 0, runs 4-7 an hour
        "--param",
        f"log={log}",
        "--until",
        "+2",
        *where,
        "--out",
        str(out),
        "--quiet",
    ]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while (not log.exists() or len(log.read_text().splitlines()) < 6) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)  # until both workers are inside an hour-long run (4 quick runs + 2 started)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    _, err = proc.communicate(timeout=120)  # awaiting the runs in progress would take an hour
    assert proc.returncode == 130, err
    summary = json.loads((out / "summary.json").read_text())
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_bytes().splitlines()]
    assert [line for line in err.splitlines() if line.strip()] == [
        f"cefisim sweep: interrupted after {len(rows)} of 8 runs"
    ]
    assert summary["complete"] is False
    # the quick runs whose rows had come back (the last may have finished a moment before its row
    # reached the parent), never an hour-long one
    assert {r["run"] for r in rows} <= {0, 1, 2, 3} and len(rows) >= 2 and all(r["status"] == "ok" for r in rows)


def test_a_worker_that_dies_gives_error_rows_and_the_sweep_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "out"
    dies = STRATEGY.replace(":Quoter", ":Dies")
    assert (
        sweep_main(
            [
                DEMO,
                "--strategy",
                dies,
                "--seeds",
                "1-3",
                "--param",
                "die=no,yes",
                "--until",
                "+2",
                "--workers",
                "1",
                "--quiet",
                "--out",
                str(out),
            ]
        )
        == 1
    )
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_bytes().splitlines()]
    assert [r["run"] for r in rows] == list(range(6))
    assert [r["status"] for r in rows[:2]] == ["ok", "ok"]
    assert [r["status"] for r in rows[3:]] == ["error"] * 3
    assert all(r["error"].startswith("a worker process died") for r in rows[3:])


def test_the_progress_bar_shows_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    from cefisim.api.cli.sweep import execute, plan_sweep, sweep_parser
    from cefisim.api.cli.sweep.executors import SerialExecutor

    plan = plan_sweep(sweep_parser().parse_args([DEMO, "--strategy", STRATEGY, "--seeds", "1-2", "--until", "+2"]))
    rows: list[dict[str, Any]] = []
    execute(plan, SerialExecutor(), rows, progress=False)
    assert capsys.readouterr().err == "" and len(rows) == 2
    execute(plan, SerialExecutor(), rows, progress=True)  # the command asks when stderr is a terminal
    assert "2/2" in capsys.readouterr().err and len(rows) == 4


def test_a_worker_reloads_a_scenario_that_changed_between_sweeps(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    doc = json.loads(Path(DEMO).read_text())
    path.write_text(json.dumps(doc))
    first = Sources.collect(load_scenario(path), str(path), STRATEGY, inline=False)
    assert load(first)[0].seed == doc["seed"]
    path.write_text(json.dumps({**doc, "seed": 99, "description": "edited"}))
    os.utime(path, ns=(1, 1))  # a different mtime even on a coarse clock
    second = Sources.collect(load_scenario(path), str(path), STRATEGY, inline=False)
    assert second.digest != first.digest and load(second)[0].seed == 99


def test_a_json_sweep_file_is_read_and_checked_like_toml(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "sweep.json"
    good.write_text(
        json.dumps(
            {
                "strategy": STRATEGY,
                "seeds": "3-4",
                "params": {"qty": ["0.001", "0.002"]},
                "latency_ms": [0, "5"],
                "until": "+20",
            }
        )
    )
    out = tmp_path / "out"
    assert sweep_main([DEMO, "--file", str(good), "--workers", "0", "--quiet", "--out", str(out)]) == 0
    assert stable(out)[0] == stable(sweep(tmp_path, "flags", "--workers", "0"))[0]
    bad = tmp_path / "bad.json"
    bad.write_text('{"seeds": "3-x"}')
    assert sweep_main([DEMO, "--strategy", STRATEGY, "--file", str(bad)]) == 2
    assert f"{bad}: $.seeds: '3-x' is not a seed or a range A-B" in capsys.readouterr().err


def test_a_shipped_scenario_is_named_like_serve_and_replay_name_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no file of that name here: the name is a shipped scenario's
    assert main(["sweep", "demo", "--strategy", STRATEGY, "--seeds", "1", "--until", "+2", "--workers", "0"]) == 0
    assert capsys.readouterr().out.splitlines()[2].startswith("1 runs in ")


def test_the_plot_names_the_median_the_runs_and_the_interval() -> None:
    """Every mark of the sweep plot is in its legend: the median line of each box above all."""
    pytest.importorskip("matplotlib")
    from cefisim.api.cli.sweep.stats import SetStats
    from cefisim.api.cli.sweep.sweep_plot import sets_figure

    def stats(params: dict[str, str], pnl: list[str]) -> SetStats:
        mean = str(sum(int(v) for v in pnl) / len(pnl))
        n = len(pnl)
        return SetStats(params, None, n, n, 0, mean, "1", "-1", "1", "0.5", pnl)

    fig = sets_figure([stats({"qty": "0.01"}, ["-2", "0", "1"]), stats({"qty": "0.05"}, ["-5", "-1", "3"])], "USD")
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["quartiles (box), 1.5 IQR (whiskers)", "median", "runs", "mean's 95% CI (bootstrap)"]
    medians = [line for line in ax.get_lines() if line.get_label() == "median"]
    assert medians and medians[0].get_color() == "tab:orange"
