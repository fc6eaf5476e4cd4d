"""``cefisim sweep``: plan the grid, run it on an executor, write the rows and the statistics.

``plan_sweep(args)`` checks everything it can before a single run (the scenario, the strategy, each
parameter set against the strategy's constructor, the options) and returns the :class:`Plan`;
``execute(plan, executor, rows)`` runs it; ``sweep_main(argv)`` is the command.

Exit status: 0 every run finished; 1 some run failed (its row says why; the others ran); 2 a
problem with the scenario, the sweep file, an option or ``--strategy`` (one message, no run
started); 130 interrupted (Ctrl-C): the rows of the finished runs are written, the summary says
``"complete": false``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from cefisim.api.cli.backtest.backtest_command import BacktestError, construct_strategy, load_strategy_class
from cefisim.api.cli.common.cli_env import examples
from cefisim.api.cli.sweep.executors import DaskExecutor, DaskMissing, PoolExecutor, SerialExecutor
from cefisim.api.cli.sweep.grid import (
    Axes,
    GridError,
    RunSpec,
    load_sweep_file,
    parse_latency,
    parse_param,
    parse_seeds,
    runs,
)
from cefisim.api.cli.sweep.output import table, write_reports, write_rows, write_summary
from cefisim.api.cli.sweep.run import Settings
from cefisim.api.cli.sweep.sources import Sources
from cefisim.api.cli.sweep.stats import DEFAULT_RESAMPLES, summarise
from cefisim.api.cli.sweep.sweep_plot import PlotUnavailable, check_target, plot_sets
from cefisim.api.formats.scenario import Scenario, ScenarioError, format_time, load_scenario, parse_time
from cefisim.api.formats.scenario.shipped import resolve

__all__ = ["Plan", "execute", "make_executor", "plan_sweep", "sweep_main", "sweep_parser"]

SHOWN_FAILURES = 10  # failed runs listed on the terminal; runs.jsonl has them all, with tracebacks


@dataclass
class Plan:
    """A checked sweep: what every run shares, the runs, and what ``summary.json`` says ran."""

    settings: Settings
    specs: list[RunSpec]
    quote: str
    meta: dict[str, Any]


def sweep_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="cefisim sweep",
        description="Run one strategy over a grid of scenario seeds, strategy parameters and latencies, "
        "locally or on a Dask cluster, with statistics per parameter set.",
        **examples(
            "cefisim sweep demo --strategy simple_mm --seeds 1-8 --param qty=0.01,0.05 --until +120 --out sweep",
            "cefisim sweep demo --strategy simple_mm --seeds 1-64 --dask local --workers 2 --out sweep --plot pnl.png",
        ),
    )
    p.add_argument(
        "scenario",
        nargs="?",
        help="scenario file (JSON), or the name of a shipped one; or `scenario` in the sweep file",
    )
    p.add_argument("--file", metavar="SWEEP.toml|.json", help="a sweep file giving any of the axes and options")
    p.add_argument(
        "--strategy",
        metavar="module:Class",
        help="package.module:Class, path/to/file.py:Class or a shipped one by name (simple_mm)",
    )
    p.add_argument("--seeds", metavar="A-B,C", help="scenario seeds, e.g. 1-64 (default: the scenario's seed)")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=V1,V2",
        help="values of a constructor argument (repeatable; every combination runs)",
    )
    p.add_argument("--latency-ms", metavar="N,M", help="strategy latencies in ms (default: the scenario's setting)")
    p.add_argument("--until", metavar="ISO|+seconds", help="stop each run at this engine time")
    p.add_argument("--client", metavar="ID|MNEMONIC", help="trade as this client (default: the first no agent uses)")
    p.add_argument("--quote", metavar="ASSET", help="asset PnL is valued in (default: the first instrument's quote)")
    p.add_argument(
        "--workers",
        type=_count,
        metavar="N",
        help="local worker processes (default: the machine's cores; 0: in this process), "
        "or the processes of a --dask local cluster",
    )
    p.add_argument("--dask", metavar="ADDRESS|local", help="run on a Dask cluster (tcp://host:8786) or a LocalCluster")
    p.add_argument("--out", metavar="DIR", help="write runs.csv, runs.jsonl and summary.json here")
    p.add_argument(
        "--reports",
        action="store_true",
        help="with --out: also write each run's backtest report as DIR/reports/run-N.json",
    )
    p.add_argument("--plot", metavar="FILE", help="draw the PnL distributions per parameter set (.png, .svg, .pdf)")
    p.add_argument(
        "--bootstrap",
        type=_count,
        default=DEFAULT_RESAMPLES,
        metavar="N",
        help=f"bootstrap resamples for the 95%% CI (default {DEFAULT_RESAMPLES})",
    )
    p.add_argument("--bootstrap-seed", type=_count, default=0, metavar="N", help="seed of the bootstrap (default 0)")
    p.add_argument("--quiet", action="store_true", help="print no table")
    return p


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


class SweepError(ValueError):
    """A problem found before any run: exit 2."""


def plan_sweep(args: argparse.Namespace) -> Plan:
    """Check the sweep and list its runs; SweepError (or GridError, BacktestError) names the problem."""
    file = load_sweep_file(args.file) if args.file else {}
    scenario_path = args.scenario or file.get("scenario")
    strategy = args.strategy or file.get("strategy")
    if scenario_path is None:
        raise SweepError("give the scenario file (or `scenario` in the sweep file)")
    scenario_path = str(resolve(scenario_path))
    if strategy is None:
        raise SweepError("give --strategy (or `strategy` in the sweep file)")
    try:
        scenario = load_scenario(scenario_path)
    except ScenarioError as exc:
        raise SweepError(str(exc)) from None
    cls = load_strategy_class(strategy)
    params = dict(file.get("params", {}))
    for item in args.param:
        key, values = parse_param(item)
        params[key] = values
    axes = Axes(
        seeds=parse_seeds(args.seeds) if args.seeds else file.get("seeds", [scenario.seed]),
        params=params,
        latency_ms=parse_latency(args.latency_ms) if args.latency_ms else file.get("latency_ms", [None]),
    )
    specs = runs(axes)
    until_text = args.until or file.get("until")
    until_ns = None
    if until_text is not None:
        try:
            until_ns = parse_time(until_text, scenario.start_ns)
        except ValueError as exc:
            raise SweepError(f"--until: {exc}") from None
        if until_ns < scenario.start_ns:
            raise SweepError(f"--until: {format_time(until_ns)} is before the scenario's start")
    client = args.client or file.get("client")
    if client is not None and scenario.client_id(client) is None:
        raise SweepError(f"--client: the scenario has no client {client!r}")
    quote = args.quote or file.get("quote")
    quote_name = _quote_name(scenario, quote)
    seen: set[tuple] = set()
    for spec in specs:  # each parameter set once: a constructor that refuses it stops the sweep here
        if spec.params not in seen:
            seen.add(spec.params)
            construct_strategy(cls, strategy, dict(spec.params))
    sources = Sources.collect(scenario, scenario_path, strategy, inline=args.dask is not None)
    settings = Settings(sources, until_ns, client, quote, reports=bool(getattr(args, "reports", False)))
    meta = {
        "scenario": scenario_path,
        "strategy": strategy,
        "until": None if until_ns is None else format_time(until_ns),
        "client": client,
        "quote_asset": quote_name,
        "seeds": axes.seeds,
        "params": axes.params,
        "latency_ms": axes.latency_ms,
        "runs": len(specs),
        "bootstrap": {"resamples": args.bootstrap, "seed": args.bootstrap_seed},
    }
    return Plan(settings, specs, quote_name, meta)


def _quote_name(scenario: Scenario, quote: str | None) -> str:
    if quote is not None:
        asset = scenario.asset_id(quote)
        if asset is None:
            raise SweepError(f"--quote: the scenario has no asset {quote!r}")
        return scenario.assets[asset].name
    first = next(iter(scenario.instruments.values()), None)
    if first is None:
        raise SweepError("the scenario has no instruments")
    return first.quote.name


def make_executor(args: argparse.Namespace) -> SerialExecutor | PoolExecutor | DaskExecutor:
    workers = (os.cpu_count() or 1) if args.workers is None else args.workers
    if args.dask is not None:
        return DaskExecutor(args.dask, workers)
    return SerialExecutor() if workers == 0 else PoolExecutor(workers)


def execute(
    plan: Plan,
    executor: SerialExecutor | PoolExecutor | DaskExecutor,
    rows: list[dict[str, Any]],
    progress: bool = False,
) -> None:
    """Run every spec of ``plan`` on ``executor``, appending rows to ``rows`` as they finish
    (KeyboardInterrupt propagates after the finished runs' rows are in)."""
    bar = tqdm(total=len(plan.specs), unit="run", file=sys.stderr, disable=not progress, dynamic_ncols=True)
    failed = 0

    def on_row(row: dict[str, Any]) -> None:
        nonlocal failed
        rows.append(row)
        if row["status"] != "ok":
            failed += 1
            bar.set_postfix(failed=failed, refresh=False)
        bar.update(1)

    try:
        executor.run(plan.settings, plan.specs, on_row)
    finally:
        bar.close()


def _report_failures(rows: list[dict[str, Any]]) -> None:
    bad = [r for r in rows if r["status"] != "ok"]
    for r in bad[:SHOWN_FAILURES]:
        what = " ".join(f"{k}={v}" for k, v in r["params"].items())
        lat = "" if r["latency_ms"] is None else f" latency {r['latency_ms']} ms"
        print(
            f"cefisim sweep: run {r['run']} (seed {r['seed']}{' ' + what if what else ''}{lat}) {r['status']}: "
            f"{r['error']}",
            file=sys.stderr,
        )
    if bad and bad[0]["traceback"]:
        print(bad[0]["traceback"].rstrip(), file=sys.stderr)
    if len(bad) > SHOWN_FAILURES:
        print(
            f"cefisim sweep: ... and {len(bad) - SHOWN_FAILURES} more failed runs (runs.jsonl lists them all, "
            "with their tracebacks)",
            file=sys.stderr,
        )


def sweep_main(argv: list[str]) -> int:
    parser = sweep_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage problem
        return exc.code if isinstance(exc.code, int) else 2
    if args.workers is not None and args.dask not in (None, "local"):
        print(
            "cefisim sweep: --workers does not go with a Dask scheduler's address (its workers run the sweep)",
            file=sys.stderr,
        )
        return 2
    if args.workers == 0 and args.dask == "local":
        print("cefisim sweep: --dask local needs --workers 1 or more", file=sys.stderr)
        return 2
    if args.reports and not args.out:
        print("cefisim sweep: --reports goes with --out DIR", file=sys.stderr)
        return 2
    try:
        if args.plot:
            check_target(args.plot)
        plan = plan_sweep(args)
        if args.out:
            Path(args.out).mkdir(parents=True, exist_ok=True)  # a bad --out stops the sweep before it runs
    except (SweepError, GridError, BacktestError, PlotUnavailable) as exc:
        print(f"cefisim sweep: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"cefisim sweep: --out {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []
    complete = True
    started = time.perf_counter()
    try:
        with make_executor(args) as executor:
            workers = executor.workers
            execute(plan, executor, rows, progress=sys.stderr.isatty())
    except DaskMissing as exc:
        print(f"cefisim sweep: {exc}", file=sys.stderr)
        return 2
    except (OSError, TimeoutError) as exc:  # a Dask scheduler that cannot be reached
        print(f"cefisim sweep: --dask {args.dask}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        complete = False
        workers = 0
        print(f"\ncefisim sweep: interrupted after {len(rows)} of {len(plan.specs)} runs", file=sys.stderr)
    wall = time.perf_counter() - started
    rows.sort(key=lambda r: r["run"])
    reports = [(r["run"], r.pop("report")) for r in rows if "report" in r]
    sets = summarise(rows, args.bootstrap, args.bootstrap_seed)
    if args.out:
        try:
            write_reports(Path(args.out), reports)
            write_rows(Path(args.out), rows)
            write_summary(Path(args.out), {**plan.meta, "complete": complete}, sets)
        except OSError as exc:
            print(f"cefisim sweep: {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    _report_failures(rows)
    if not args.quiet:
        print("\n".join(table(sets, plan.quote)))
        if complete:
            print(
                f"{len(rows)} runs in {wall:.1f} s wall on {workers} worker{'s' if workers != 1 else ''}: "
                f"{len(rows) / wall if wall > 0 else 0:.1f} runs/s"
            )
    if args.plot and any(s.pnl for s in sets):
        try:
            plot_sets(sets, args.plot, plan.quote)
        except (OSError, ValueError) as exc:  # unwritable path, unknown image format
            print(f"cefisim sweep: --plot {args.plot}: {exc}", file=sys.stderr)
            return 1
    if not complete:
        return 130
    return 1 if any(r["status"] != "ok" for r in rows) else 0
