"""A sweep's results as files (CSV, JSON lines, summary JSON) and as the ranked terminal table.

Contract:
- ``write_rows(dir, rows)`` writes ``runs.jsonl`` (one JSON object a run, keys in
  :data:`~.run.ROW_KEYS` order, ``params`` an object) and ``runs.csv`` (the same but ``traceback``;
  each parameter a column ``param.KEY``; null is empty), rows in run order. ``write_summary`` writes
  ``summary.json``: what ran, and per parameter set in grid order the figures of :mod:`.stats` with
  the rank. ``write_reports`` writes ``reports/run-N.json``, each run's backtest report
  (``--reports``). Given the same rows, every file is the same bytes but for the ``wall_s`` column and the
  ``traceback`` key (see :data:`~.run.UNSTABLE`).
- ``table(sets)`` is the ranked table (lines), best first.
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson

from cefisim.api.cli.sweep.run import ROW_KEYS
from cefisim.api.cli.sweep.stats import SetStats, ranked

__all__ = ["csv_text", "jsonl_bytes", "table", "write_rows", "write_summary"]


def jsonl_bytes(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps({k: r[k] for k in ROW_KEYS}, option=orjson.OPT_APPEND_NEWLINE) for r in rows)


def csv_text(rows: list[dict[str, Any]]) -> str:
    keys = list(rows[0]["params"]) if rows else []
    header = ["run", "seed", *(f"param.{k}" for k in keys)] + [k for k in ROW_KEYS[3:] if k != "traceback"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow(
            [r["run"], r["seed"], *(r["params"][k] for k in keys)]
            + ["" if r[k] is None else r[k] for k in ROW_KEYS[3:] if k != "traceback"]
        )
    return buf.getvalue()


def write_rows(out: Path, rows: list[dict[str, Any]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "runs.jsonl").write_bytes(jsonl_bytes(rows))
    (out / "runs.csv").write_text(csv_text(rows), encoding="utf-8")


def write_reports(out: Path, reports: list[tuple[int, dict[str, Any]]]) -> None:
    """``reports/run-N.json`` per run: the report ``cefisim backtest --report`` writes for that run."""
    if not reports:
        return
    folder = out / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    for run, report in reports:
        text = orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
        (folder / f"run-{run}.json").write_bytes(text)


def write_summary(out: Path, meta: dict[str, Any], sets: list[SetStats]) -> None:
    order = {id(s): i + 1 for i, s in enumerate(ranked(sets))}
    doc = {**meta, "sets": [{"rank": order[id(s)], **s.as_json()} for s in sets]}
    (out / "summary.json").write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE))


def label(s: SetStats) -> str:
    """``qty=0.01 spread=2 @5ms``: a parameter set in one short string."""
    parts = [f"{k}={v}" for k, v in s.params.items()]
    parts.append("latency " + (f"{s.latency_ms} ms" if s.latency_ms is not None else "as scenario"))
    return " ".join(parts)


def table(sets: list[SetStats], quote: str) -> list[str]:
    """The ranked table, best first."""
    head = ["#", "parameters", "runs", "failed", f"mean PnL {quote}", "std", "95% CI of the mean", "losing"]
    body = []
    for i, s in enumerate(ranked(sets), 1):
        ci = f"[{s.ci_low}, {s.ci_high}]" if s.ci_low is not None else "-"
        losing = percent(s.losing) if s.losing is not None else "-"
        body.append([str(i), label(s), str(s.runs), str(s.failed), s.mean or "-", s.std or "-", ci, losing])
    widths = [max(len(r[c]) for r in [head, *body]) for c in range(len(head))]
    right = {0, 2, 3, 4, 5, 7}
    return [
        "  ".join(
            cell.rjust(w) if c in right else cell.ljust(w) for c, (cell, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in [head, *body]
    ]


def percent(share: str) -> str:
    """``"0.1875"`` -> ``"18.8%"`` (half-even, from the exact decimal)."""
    return f"{(Decimal(share) * 100).quantize(Decimal('0.1'))}%"
