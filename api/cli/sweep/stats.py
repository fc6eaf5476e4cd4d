"""Statistics of a sweep per parameter set (strategy parameters x latency; the seeds are the sample).

Contract:
- ``summarise(rows, resamples, seed)`` groups the rows by (params, latency_ms) in the grid's order
  and gives, over the runs with a PnL: ``mean``, ``std`` (sample standard deviation, n - 1), a
  bootstrap 95% confidence interval of the mean (``ci_low``, ``ci_high``), ``losing`` (share of runs
  with PnL < 0); plus ``runs``, ``ok`` and ``failed`` (failed or error rows, left out of the
  figures). Figures are decimal strings in the PnL's own decimals (the quote asset's; the mean and
  the interval with two more), rounded half-even; ``losing`` has 4 decimals. ``None`` where there is
  no run to count (a std needs two).
- Exact and reproducible: PnL strings become integers of the smallest unit; the mean and the
  interval are exact fractions of them; the std is a 40-digit ``Decimal`` square root. The bootstrap
  draws ``resamples`` samples of n with replacement from ``random.Random(seed)`` (``choices``: the
  same draws for the same seed on every platform), sums them (integers) and takes the percentile
  interval: the ``floor(0.025 B)``-th and the ``(ceil(0.975 B) - 1)``-th of the sorted sums, over n.
  Cost O(B n + B log B) per set.
- ``ranked(sets)``: best first by mean PnL, then by the interval's lower bound, then grid order;
  sets without a mean last.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from decimal import Context, Decimal
from fractions import Fraction
from typing import Any

from cefisim.api.cli.backtest.report import fixed

__all__ = ["DEFAULT_RESAMPLES", "SetStats", "bootstrap_ci", "ranked", "summarise"]

DEFAULT_RESAMPLES = 2000
LEVEL = Fraction(95, 100)


@dataclass
class SetStats:
    """One parameter set's figures (see the module's contract)."""

    params: dict[str, str]
    latency_ms: str | None
    runs: int
    ok: int
    failed: int
    mean: str | None
    std: str | None
    ci_low: str | None
    ci_high: str | None
    losing: str | None
    pnl: list[str]  # the PnL of each run with one, in run order (for plots)

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "pnl"}


def bootstrap_ci(values: list[int], resamples: int, seed: int, level: Fraction = LEVEL) -> tuple[Fraction, Fraction]:
    """The percentile bootstrap interval of the mean of ``values`` (exact fractions)."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    rng = random.Random(seed)
    sums = sorted(sum(rng.choices(values, k=n)) for _ in range(resamples))
    alpha = (1 - level) / 2
    lo = math.floor(alpha * resamples)
    hi = math.ceil((1 - alpha) * resamples) - 1
    return Fraction(sums[lo], n), Fraction(sums[hi], n)


def _decimals(texts: list[str]) -> int:
    return max((len(t.partition(".")[2]) for t in texts), default=0)


def _std(values: list[int], mean: Fraction, decimals: int) -> str:
    var = sum(((v - mean) ** 2 for v in values), Fraction(0)) / (len(values) - 1)
    ctx = Context(prec=40)
    root = ctx.sqrt(ctx.divide(Decimal(var.numerator), Decimal(var.denominator)))
    return str(root.scaleb(-decimals, ctx).quantize(Decimal(1).scaleb(-decimals)))


def summarise(rows: list[dict[str, Any]], resamples: int, seed: int) -> list[SetStats]:
    """Per parameter set, in the order the sets first appear in ``rows`` (sorted by run)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        key = repr((sorted(row["params"].items()), row["latency_ms"]))
        groups.setdefault(key, []).append(row)
    out = []
    for group in groups.values():
        texts = [r["pnl"] for r in group if r["status"] == "ok" and r["pnl"] is not None]
        d = _decimals(texts)
        values = [int(Decimal(t).scaleb(d)) for t in texts]
        n = len(values)
        mean = ci = std = losing = None
        if n:
            exact = Fraction(sum(values), n)
            mean = fixed(exact / 10**d, d + 2)
            low, high = bootstrap_ci(values, resamples, seed)
            ci = (fixed(low / 10**d, d + 2), fixed(high / 10**d, d + 2))
            losing = fixed(Fraction(sum(1 for v in values if v < 0), n), 4)
            if n > 1:
                std = _std(values, exact, d)
        first = group[0]
        out.append(
            SetStats(
                params=dict(first["params"]),
                latency_ms=first["latency_ms"],
                runs=len(group),
                ok=sum(1 for r in group if r["status"] == "ok"),
                failed=sum(1 for r in group if r["status"] != "ok"),
                mean=mean,
                std=std,
                ci_low=ci[0] if ci else None,
                ci_high=ci[1] if ci else None,
                losing=losing,
                pnl=texts,
            )
        )
    return out


def ranked(sets: list[SetStats]) -> list[SetStats]:
    """Best first (see the contract)."""

    def key(item: tuple[int, SetStats]) -> tuple:
        i, s = item
        if s.mean is None:
            return (1, 0, 0, i)
        return (0, -Decimal(s.mean), -Decimal(s.ci_low or s.mean), i)

    return [s for _, s in sorted(enumerate(sets), key=key)]
