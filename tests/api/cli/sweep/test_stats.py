"""Sweep statistics: the bootstrap interval on known distributions, mean, std, losing share, ranking."""

from __future__ import annotations

import random
import statistics
from decimal import Decimal
from fractions import Fraction
from typing import Any

from cefisim.api.cli.sweep.grid import Axes, parse_latency, parse_seeds, runs
from cefisim.api.cli.sweep.stats import bootstrap_ci, ranked, summarise


def rows(pnls: list[str | None], params: dict[str, str] | None = None, start: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "run": start + i,
            "seed": i,
            "params": params or {},
            "latency_ms": None,
            "status": "ok" if p is not None else "failed",
            "pnl": p,
        }
        for i, p in enumerate(pnls)
    ]


def test_the_interval_of_a_constant_is_that_constant() -> None:
    assert bootstrap_ci([250] * 10, 500, seed=3) == (Fraction(250), Fraction(250))


def test_the_interval_of_a_normal_sample_is_mean_plus_minus_1_96_standard_errors() -> None:
    rng = random.Random(11)
    values = [round(rng.gauss(1000, 200)) for _ in range(400)]  # known: sigma 200, n 400 -> se 10
    low, high = bootstrap_ci(values, 4000, seed=1)
    mean = Fraction(sum(values), len(values))
    se = statistics.stdev(values) / 20
    assert abs(float(mean - low) - 1.96 * se) < 0.1 * 1.96 * se
    assert abs(float(high - mean) - 1.96 * se) < 0.1 * 1.96 * se
    assert abs(float(mean) - 1000) < 3 * 10  # and it covers the true mean


def test_the_interval_of_a_fair_coin_of_0_and_100() -> None:
    # mean 50, sd 50 (population), n 100 -> se 5: the 95% interval is 50 -/+ 9.8
    low, high = bootstrap_ci([0, 100] * 50, 4000, seed=5)
    assert 38.5 < low < 41.5 and 58.5 < high < 61.5


def test_the_interval_is_the_percentiles_of_the_seeded_resample_sums() -> None:
    values = [5, -3, 8, 0, 2]
    rng = random.Random(9)
    sums = sorted(sum(rng.choices(values, k=5)) for _ in range(40))
    assert bootstrap_ci(values, 40, seed=9) == (Fraction(sums[1], 5), Fraction(sums[38], 5))
    assert bootstrap_ci(values, 40, seed=9) == bootstrap_ci(values, 40, seed=9)
    assert bootstrap_ci(values, 40, seed=9) != bootstrap_ci(values, 40, seed=10)


def test_summary_per_parameter_set() -> None:
    a = rows(["1.50", "-0.50", "2.00", None], {"qty": "1"})
    b = rows(["-1.00", "-2.00"], {"qty": "2"}, start=4)
    sets = summarise(a + b, 1000, seed=0)
    first, second = sets
    assert (first.params, first.runs, first.ok, first.failed) == ({"qty": "1"}, 4, 3, 1)
    assert first.mean == "1.0000"  # (1.50 - 0.50 + 2.00) / 3, two more places than the PnL
    assert Decimal(first.std) == Decimal(statistics.stdev([1.5, -0.5, 2.0])).quantize(Decimal("0.01"))
    assert first.losing == "0.3333"
    assert Decimal(first.ci_low) <= Decimal(first.mean) <= Decimal(first.ci_high)
    assert (second.mean, second.std, second.losing) == ("-1.5000", "0.71", "1.0000")
    assert [s.params["qty"] for s in ranked(sets)] == ["1", "2"]
    lone = summarise(rows(["3.00"]), 100, 0)[0]
    assert (lone.mean, lone.std, lone.ci_low, lone.ci_high) == ("3.0000", None, "3.0000", "3.0000")
    none = summarise(rows([None]), 100, 0)[0]
    assert (none.mean, none.ci_low, none.losing, none.failed) == (None, None, None, 1)
    assert ranked([none, lone]) == [lone, none]


def test_the_grid_order_is_parameters_then_latency_then_seed() -> None:
    specs = runs(
        Axes(seeds=parse_seeds("1-2,7"), params={"a": ["x", "y"], "b": ["1"]}, latency_ms=parse_latency("0,0.5"))
    )
    assert len(specs) == 12 and [s.index for s in specs] == list(range(12))
    assert [(s.params, s.latency_ms, s.seed) for s in specs[:4]] == [
        ((("a", "x"), ("b", "1")), "0", 1),
        ((("a", "x"), ("b", "1")), "0", 2),
        ((("a", "x"), ("b", "1")), "0", 7),
        ((("a", "x"), ("b", "1")), "0.5", 1),
    ]
    assert specs[6].params == (("a", "y"), ("b", "1"))
    assert parse_latency("5.000,20") == ["5", "20"]
