"""One run of a sweep, on whichever worker gets it: an ordinary backtest, folded into one row.

Contract:
- ``run_task(settings, spec)`` is a pure function of (scenario, strategy, seed, params, latency, until,
  client, quote): it loads the files (:mod:`.sources`), reseeds the scenario's agents with the run's
  seed (``Scenario.seed``: every agent's generator derives from it), runs
  ``api.cli.backtest.run_backtest`` — the very run ``cefisim backtest`` makes, same report — and returns
  the row. It never raises for a run's own problem: a strategy that raised gives status ``failed``
  with ``error`` (one line) and ``traceback``; a file missing on the worker or a strategy constructor
  refusing the params gives status ``error``. Other runs are unaffected.
- Row keys, in order (:data:`ROW_KEYS`): ``run``, ``seed``, ``params``, ``latency_ms``, ``status``,
  ``pnl``, ``fees``, ``volume`` (decimal strings in the report's quote asset), ``fills``,
  ``max_inventory`` (base units), ``drawdown`` (quote asset), ``events``, ``commands``, ``error``,
  ``traceback``, ``wall_s``; with ``Settings.reports`` also ``report``, the run's whole backtest
  report (``docs/backtest.md``). Every key but :data:`UNSTABLE` is the same on every executor, worker
  count and machine; ``wall_s`` is wall time and ``traceback`` names files where the worker has them.
- ``max_inventory``: the largest |balance - start| over the inventory samples of the base asset of
  the first instrument the report lists under ``pnl.by_instrument`` (those the strategy traded or
  watched, in scenario order). ``drawdown``: the largest fall of the sampled PnL from its running
  peak. Both exact, in decimal, from the report's strings.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from cefisim.api.cli.backtest.backtest_command import BacktestError, StrategyFailed, run_backtest
from cefisim.api.cli.sweep.grid import RunSpec
from cefisim.api.cli.sweep.sources import Sources, WorkerFileError, load

__all__ = ["ROW_KEYS", "UNSTABLE", "Settings", "failed_row", "row_from_report", "run_task"]

ROW_KEYS = (
    "run",
    "seed",
    "params",
    "latency_ms",
    "status",
    "pnl",
    "fees",
    "volume",
    "fills",
    "max_inventory",
    "drawdown",
    "events",
    "commands",
    "error",
    "traceback",
    "wall_s",
)
UNSTABLE = ("traceback", "wall_s")  # differ between machines and runs; every other key does not


@dataclass(frozen=True)
class Settings:
    """What every run of a sweep shares."""

    sources: Sources
    until_ns: int | None
    client: str | None
    quote: str | None
    reports: bool = False  # also return each run's whole backtest report (``row["report"]``)


def run_task(s: Settings, spec: RunSpec) -> dict[str, Any]:
    """Run one backtest and return its row (never raises for the run's own problems)."""
    started = time.perf_counter()
    try:
        scenario, cls = load(s.sources)
        params = dict(spec.params)
        try:
            strategy = cls(**params)
        except Exception as exc:
            return failed_row(
                spec,
                "error",
                f"the strategy's constructor raised {type(exc).__name__}: {exc}",
                traceback.format_exc(),
                time.perf_counter() - started,
            )
        latency_ns = None if spec.latency_ms is None else int(Decimal(spec.latency_ms) * 1_000_000)
        meta = {"strategy": s.sources.strategy, "params": params}  # as cefisim backtest: the same report
        bt = run_backtest(
            replace(scenario, seed=spec.seed),
            strategy,
            client=s.client,
            until_ns=s.until_ns,
            latency_ns=latency_ns,
            quote=s.quote,
            meta=meta,
        )
    except StrategyFailed as exc:
        tb = "".join(traceback.format_exception(exc.exc))
        return failed_row(spec, "failed", f"the strategy failed in {exc}", tb, time.perf_counter() - started)
    except (WorkerFileError, BacktestError) as exc:
        return failed_row(spec, "error", str(exc), None, time.perf_counter() - started)
    row = row_from_report(spec, bt.report, scenario_base(bt.report, scenario), time.perf_counter() - started)
    if s.reports:
        row["report"] = bt.report
    return row


def scenario_base(report: dict[str, Any], scenario: Any) -> str | None:
    """The name of the base asset whose inventory ``max_inventory`` follows (see the contract)."""
    listed = report["pnl"]["by_instrument"]
    for inst in scenario.instruments.values():
        if inst.symbol in listed:
            return str(inst.base.name)
    return None


def empty_row(spec: RunSpec) -> dict[str, Any]:
    return dict.fromkeys(ROW_KEYS) | {
        "run": spec.index,
        "seed": spec.seed,
        "params": dict(spec.params),
        "latency_ms": spec.latency_ms,
    }


def failed_row(spec: RunSpec, status: str, error: str, tb: str | None, wall: float) -> dict[str, Any]:
    """The row of a run that did not finish: ``status`` ``failed`` (the strategy) or ``error``."""
    return empty_row(spec) | {"status": status, "error": error, "traceback": tb, "wall_s": round(wall, 6)}


def row_from_report(spec: RunSpec, report: dict[str, Any], base: str | None, wall: float) -> dict[str, Any]:
    """The row of a finished run, from its backtest report."""
    series = report["inventory"]["series"]
    max_inv: str | None = None
    if base is not None:
        start = Decimal(report["pnl"]["by_asset"][base]["start"])
        max_inv = str(max(abs(Decimal(p[base]) - start) for p in series))
    drawdown: str | None = None
    if series and all(p["pnl"] is not None for p in series):
        peak = Decimal(series[0]["pnl"])
        worst = peak - peak  # zero, with the asset's places
        for p in series:
            pnl = Decimal(p["pnl"])
            peak = max(peak, pnl)
            worst = max(worst, peak - pnl)
        drawdown = str(worst)
    return empty_row(spec) | {
        "status": "ok",
        "pnl": report["pnl"]["total"],
        "fees": report["fees"]["total"],
        "volume": report["volume"]["total"],
        "fills": report["fills"]["count"],
        "max_inventory": max_inv,
        "drawdown": drawdown,
        "events": report["run"]["events"],
        "commands": report["run"]["commands"],
        "wall_s": round(wall, 6),
    }
