"""Sweep throughput: the same sweep on 1 and on 2 workers, local process pool and Dask LocalCluster.

    PYTHONPATH=. python benchmarks/bench_sweep.py [--quick] [--json] [--reps N] [--seed N]

Target: 2 workers run at least 1.7 times the runs per second of 1 worker, for both executors (on a
2-core machine: runs are independent processes, so the rest is per-run overhead and the machine).

Workload: ``cefisim sweep demo --strategy simple_mm`` (the shipped example strategy) over seeds
(--quick 24 runs, full 48), each run the scenario's whole 600 s of engine time (~0.2 s of CPU a run
on an idle core), no latency, default client and quote: exactly what ``cefisim sweep`` plans
(``plan_sweep``) and runs (``PoolExecutor`` / ``DaskExecutor``).

Method: for each executor kind, a 1-worker and a 2-worker executor are started (start-up not timed)
and warmed with 2 runs each (workers import cefisim, load the scenario and the strategy). Then N
repetitions (default 3, --quick 1) of the whole sweep alternate between the two, so load from
other processes falls on both alike; runs/s = runs / wall time of the sweep (median over the
repetitions); the speed-up is the median of the per-repetition ratios. The rows of every sweep are
checked identical (but for wall time). The Dask overhead: 20 runs of 1 s of engine time submitted
one at a time to the 1-worker LocalCluster; overhead = submit-to-result time minus the run's own
wall time (``wall_s`` of its row), median. The same for the 1-worker pool, for comparison. The load
average before and after is printed: on a shared machine other processes take cores from the
2-worker sweep first, and the speed-up printed is then below what the code gives on idle cores.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_engine  # the shared flags and the machine description (found through the path above)

from cefisim.api.cli.sweep import plan_sweep, sweep_parser
from cefisim.api.cli.sweep.executors import DaskExecutor, PoolExecutor, run_spec
from cefisim.api.cli.sweep.run import UNSTABLE

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = str(ROOT / "scenarios" / "demo.json")
STRATEGY = "simple_mm"  # the shipped example (cefisim.strategies.simple_mm)
SEED = 1
RUNS = {True: 24, False: 48}
TARGET = 1.7
OVERHEAD_RUNS = 20


def plan(seed: int, runs: int, dask: bool, until: str | None = None) -> Any:
    argv = [SCENARIO, "--strategy", STRATEGY, "--seeds", f"{seed}-{seed + runs - 1}"]
    argv += ["--until", until] if until else []
    argv += ["--dask", "local"] if dask else []
    return plan_sweep(sweep_parser().parse_args(argv))


def sweep(executor: Any, p: Any) -> tuple[float, float, list[dict[str, Any]]]:
    """(wall time of the sweep, sum of the runs' own wall times, the rows less UNSTABLE keys)."""
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    executor.run(p.settings, p.specs, rows.append)
    wall = time.perf_counter() - started
    rows.sort(key=lambda r: r["run"])
    busy = sum(r["wall_s"] for r in rows)
    return wall, busy, [{k: v for k, v in r.items() if k not in UNSTABLE} for r in rows]


def overhead_ms(executor: Any, p: Any) -> float:
    """Median submit-to-result time less the run's own wall time, one small run at a time."""
    times = []
    for spec in p.specs:
        started = time.perf_counter()
        if isinstance(executor, DaskExecutor):
            row = executor.client.submit(run_spec, p.settings, spec, pure=False).result()
        else:
            got: list[dict[str, Any]] = []
            executor.run(p.settings, [spec], got.append)
            row = got[0]
        times.append(time.perf_counter() - started - row["wall_s"])
    return statistics.median(times) * 1000


def measure(kind: str, args: Any, runs: int, reps: int) -> dict[str, Any]:
    dask = kind == "dask"
    p = plan(args.seed, runs, dask)
    warm = plan(args.seed, 2, dask)
    make = (lambda n: DaskExecutor("local", n)) if dask else PoolExecutor
    started = time.perf_counter()
    one, two = make(1), make(2)
    try:
        for ex in (one, two):
            sweep(ex, warm)
        startup = time.perf_counter() - started  # both executors up and warm
        walls: dict[int, list[float]] = {1: [], 2: []}
        busy: dict[int, list[float]] = {1: [], 2: []}  # share of worker time spent inside runs
        per_run: dict[int, list[float]] = {1: [], 2: []}  # a run's own mean wall time
        ratios = []
        reference = None
        for _ in range(reps):
            for n, ex in ((1, one), (2, two)):
                wall, in_runs, rows = sweep(ex, p)
                if reference is None:
                    reference = rows
                assert rows == reference, "a sweep gave other rows"
                assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows if r["status"] != "ok"]
                walls[n].append(wall)
                busy[n].append(in_runs / (n * wall))
                per_run[n].append(in_runs / runs)
            ratios.append(walls[1][-1] / walls[2][-1])
        small = plan(args.seed, OVERHEAD_RUNS, dask, until="+1")
        over = overhead_ms(one, small)
    finally:
        one.close()
        two.close()
    return {
        "runs_per_s_1": runs / statistics.median(walls[1]),
        "runs_per_s_n": runs / statistics.median(walls[2]),
        "speedup": statistics.median(ratios),
        "overhead_ms": over,
        "startup_s": startup,
        "busy_1": statistics.median(busy[1]),
        "busy_n": statistics.median(busy[2]),
        "run_ms_1": statistics.median(per_run[1]) * 1000,
        "run_ms_n": statistics.median(per_run[2]) * 1000,
        "events": sum(r["events"] for r in reference or []),
    }


def main(argv: list[str] | None = None) -> int:
    ap = bench_engine.bench_arguments(__doc__, f"{RUNS[True]} runs, 1 repetition (< 1 min)", SEED)
    args = bench_engine.parse_bench_arguments(ap, argv, "bench_sweep")
    reps = args.reps or (1 if args.quick else 3)
    runs = RUNS[args.quick]
    mach = bench_engine.machine()
    load_before = os.getloadavg()
    results = {kind: measure(kind, args, runs, reps) for kind in ("pool", "dask")}
    load_after = os.getloadavg()
    print(
        f"sweep: {runs} runs of scenarios/demo.json (600 s engine time each) x SimpleMarketMaker, "
        f"{reps} repetition(s), median; {mach['nproc']} cores, {mach['cpu']}"
    )
    print(
        f"{'executor':<8} {'1 worker':>12} {'2 workers':>12} {'speed-up':>9} {'target':>7}  "
        f"{'busy 1/2':>9}  {'run ms 1/2':>11}  {'overhead/run':>12}  {'start+warm':>10}"
    )
    for kind, r in results.items():
        ok = "ok" if r["speedup"] >= TARGET else "MISSED"
        print(
            f"{kind:<8} {r['runs_per_s_1']:>8.2f} r/s {r['runs_per_s_n']:>8.2f} r/s {r['speedup']:>8.2f}x "
            f"{ok:>7}  {r['busy_1']:>4.0%}/{r['busy_n']:<4.0%}  {r['run_ms_1']:>5.0f}/{r['run_ms_n']:<5.0f}  "
            f"{r['overhead_ms']:>9.1f} ms  {r['startup_s']:>9.1f}s"
        )
    print(
        "busy: share of the workers' time inside runs (the rest is the executor's overhead); run ms: a run's "
        "own wall time, 1 and 2 workers (it grows when the machine has no free core for the second worker)"
    )
    print(f"overhead/run: submit to result of a 1 s run, less the run's own wall time (1 worker, {OVERHEAD_RUNS} runs)")
    print(
        f"load average (1 min) before {load_before[0]:.2f}, after {load_after[0]:.2f}: "
        "other processes on the machine depress the 2-worker rate first"
    )
    if args.json:
        pool, dsk = results["pool"], results["dask"]
        print(
            orjson.dumps(
                {
                    "runs": runs,
                    "reps": reps,
                    "workers": 2,
                    "runs_per_s_1": round(pool["runs_per_s_1"], 3),
                    "runs_per_s_n": round(pool["runs_per_s_n"], 3),
                    "speedup": round(pool["speedup"], 3),
                    "dask_runs_per_s_1": round(dsk["runs_per_s_1"], 3),
                    "dask_runs_per_s_n": round(dsk["runs_per_s_n"], 3),
                    "dask_speedup": round(dsk["speedup"], 3),
                    "busy_n": round(pool["busy_n"], 3),
                    "dask_busy_n": round(dsk["busy_n"], 3),
                    "run_ms_1": round(pool["run_ms_1"], 1),
                    "run_ms_n": round(pool["run_ms_n"], 1),
                    "dask_overhead_ms": round(dsk["overhead_ms"], 2),
                    "pool_overhead_ms": round(pool["overhead_ms"], 2),
                    "load_before": round(load_before[0], 2),
                    "load_after": round(load_after[0], 2),
                    "machine": mach,
                }
            ).decode()
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
