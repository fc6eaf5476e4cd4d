"""A book side's levels coming and going: ``engine.levels.Levels`` against ``sortedcontainers.SortedDict``.

    PYTHONPATH=. python benchmarks/bench_levels.py [--quick] [--json] [--gc-on] [--reps N] [--seed S]

Why: a book side gains a key for every new price level and loses one for every level that empties
(each cancel of a level's last order, each level a sweep or a recorded update clears). ``Levels`` keeps
the keys in a plain sorted list up to ``engine.levels.SPILL`` keys (bisect and a list insert or delete,
in C), then in a ``SortedList``; this measures what that buys and where the plain list stops paying.

Workload: a side of ``n`` levels (n = 100, 1,000, 10,000, and 100,000 without --quick) at even keys;
then 20,000 (--quick 5,000) pairs, each a new level at a seeded odd key and its deletion, the first
key read after each. ``us_per_pair`` = CPU time / pairs, medians of N repetitions (default 3,
--quick 1). The two containers run the same keys in the same process, interleaved.
"""

from __future__ import annotations

import gc
import json
import os
import random
import sys
import time
from collections.abc import Callable
from statistics import median
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import bench_engine  # noqa: E402
from sortedcontainers import SortedDict  # noqa: E402

from cefisim.engine.levels import SPILL, Levels  # noqa: E402


def churn(side: Any, first: Callable[[Any], object], n: int, keys: list[int]) -> float:
    """CPU seconds of ``keys`` new levels on ``side`` (filled with ``n`` levels first), each deleted at
    once and the first key read (``first``) after it."""
    for k in range(n):
        side[2 * k] = k
    t0 = time.process_time()
    for key in keys:
        side[key] = key
        del side[key]
        first(side)
    return time.process_time() - t0


CONTAINERS: dict[str, tuple[Callable[[], Any], Callable[[Any], object]]] = {
    "Levels": (Levels, Levels.first_key),
    "SortedDict": (SortedDict, lambda side: side.peekitem(0)),
}


def timed(name: str, n: int, keys: list[int], gc_on: bool) -> float:
    make, first = CONTAINERS[name]
    if not gc_on:
        gc.disable()
    try:
        return churn(make(), first, n, keys)
    finally:
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    ap = bench_engine.bench_arguments(__doc__, "three sizes, 5,000 pairs, 1 repetition (< 1 min)", 11)
    args = bench_engine.parse_bench_arguments(ap, argv, "bench_levels")
    reps = args.reps or (1 if args.quick else 3)
    sizes = (100, 1_000, 10_000) if args.quick else (100, 1_000, 10_000, 100_000)
    pairs = 5_000 if args.quick else 20_000
    mach = bench_engine.machine()
    print(f"bench_levels: Python {mach['python']}, nproc {mach['nproc']}, {mach['cpu']}, SPILL {SPILL}")
    print(f"  quick={args.quick} reps={reps} (median) {pairs:,} new-and-deleted levels per size, seed {args.seed}")
    print()
    print(f"{'levels':>8} {'Levels us/pair':>15} {'SortedDict us/pair':>19} {'ratio':>6}")
    rows: list[dict[str, Any]] = []
    for n in sizes:
        rng = random.Random(f"{args.seed}:{n}")
        keys = [2 * rng.randrange(n) + 1 for _ in range(pairs)]
        ours: list[float] = []
        theirs: list[float] = []
        for _ in range(reps):
            ours.append(timed("Levels", n, keys, args.gc_on))
            theirs.append(timed("SortedDict", n, keys, args.gc_on))
        a, b = median(ours) / pairs * 1e6, median(theirs) / pairs * 1e6
        print(f"{n:>8,} {a:>15.3f} {b:>19.3f} {a / b:>6.2f}")
        rows.append({"levels": n, "levels_us_per_pair": round(a, 4), "sorteddict_us_per_pair": round(b, 4)})
    if args.json:
        print(json.dumps({"spill": SPILL, "pairs": pairs, "sizes": rows, "machine": mach, "quick": args.quick}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
