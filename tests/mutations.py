"""Deliberate breaks, one at a time, and the test that catches each (run by hand, never collected).

    .venv/bin/python tests/mutations.py                  # every break against its narrow test selection
    .venv/bin/python tests/mutations.py --only 1,4,8     # some of them (numbers from the table)
    .venv/bin/python tests/mutations.py --bench          # also run the LIFO break through bench_engine --quick

Each break replaces one exact piece of source (it must occur in the file; ``nth`` picks among several
occurrences), runs ``pytest -x`` on the tests named for it, and restores the file whatever happens. A
break the tests do not catch is a hole in the suite: the script exits 1 and says so. Before it starts,
every file it will touch must be unchanged from git (so an interrupted run can be undone with
``git checkout``). Prints a Markdown table: break, file, caught by (the first failing test), seconds.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

KNOWN = "tests/api/edge/test_known_answers.py"
SPEC = "tests/api/web/cefi/test_spec_examples.py"
BOUNDS = "tests/engine/test_boundaries.py"
MODEL = "tests/engine/test_engine_stateful.py"


@dataclass(frozen=True)
class Break:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    nth: int = 0  # which occurrence of ``old`` to replace


BREAKS = [
    # --- the breaks the issue names ---------------------------------------------------------------------
    Break(
        "concat payload in the order method + timestamp + path + body",
        "api/edge/signing.py",
        'return f"{timestamp}{method.upper()}{path}".encode() + body',
        'return f"{method.upper()}{timestamp}{path}".encode() + body',
        (KNOWN,),
    ),
    Break(
        "seller's fee rounded down",
        "engine/matching.py",
        "s_fee = -(-sx.cum_fee // RATE_ONE) - sx.fees_paid",
        "s_fee = sx.cum_fee // RATE_ONE - sx.fees_paid",
        (BOUNDS, MODEL),
    ),
    Break(
        "modify with an equal quantity loses its place",
        "engine/modify.py",
        "new_qty <= order.qty and not to_market",
        "new_qty < order.qty and not to_market",
        (BOUNDS, MODEL),
    ),
    Break(
        "MARKET BUY protection price ceiled",
        "engine/pricing.py",
        "return base2 * (RATE_ONE + band) // (2 * RATE_ONE)",
        "return -(-base2 * (RATE_ONE + band) // (2 * RATE_ONE))",
        (BOUNDS, MODEL),
    ),
    Break(
        "LIFO within a price level",
        "engine/matching.py",
        "for maker in orders.values():",
        "for maker in reversed(orders.values()):",
        (MODEL,),
    ),
    Break(
        "a skipped e2e test passes in CI",
        "tests/e2e/conftest.py",
        'if report.skipped and os.environ.get(REQUIRED_ENV) == "1":',
        "if False:",
        ("tests/test_ci_policy.py",),
    ),
    # --- more, across api and engine -------------------------------------------------------------------
    Break(
        "newline payload in the order method, timestamp, path, body",
        "api/edge/signing.py",
        'f"{method.upper()}\\n{path}\\n{timestamp}\\n"',
        'f"{method.upper()}\\n{timestamp}\\n{path}\\n"',
        (KNOWN,),
    ),
    Break(
        "the query string counts in the signature",
        "api/web/server/http.py",
        "request.method, request.rel_url.raw_path, body",
        "request.method, request.rel_url.raw_path_qs, body",
        (KNOWN,),
    ),
    Break(
        "key exchange signs key_id:timestamp",
        "api/auth/store.py",
        'f"{key_id}.{timestamp}".encode()',
        'f"{key_id}:{timestamp}".encode()',
        (KNOWN,),
    ),
    Break(
        "expires_in with a +00:00 offset",
        "api/auth/auth_records.py",
        'strftime("%Y-%m-%dT%H:%M:%SZ")',
        'strftime("%Y-%m-%dT%H:%M:%S+00:00")',
        (KNOWN,),
    ),
    Break(
        "journal record: msg_id before external_id",
        "engine/commands.py",
        "    external_id: str | None = None\n    msg_id: str | None = None\n",
        "    msg_id: str | None = None\n    external_id: str | None = None\n",
        (KNOWN,),
    ),
    Break(
        "next_cursor is the newest record of the page",
        "engine/queries.py",
        "return out, last_ts  # an older record remains",
        "return out, stamp(out[0])  # an older record remains",
        (SPEC,),
    ),
    Break(
        "page size defaults to 20",
        "api/web/cefi/orders.py",
        'query_int(q, "size", 10, 1, 100, clamp=True)',
        'query_int(q, "size", 20, 1, 100, clamp=True)',
        (SPEC,),
    ),
    Break(
        "page size clamped to 50",
        "api/web/cefi/orders.py",
        'query_int(q, "size", 10, 1, 100, clamp=True)',
        'query_int(q, "size", 10, 1, 50, clamp=True)',
        (SPEC,),
    ),
    Break(
        "the field spelled executed_qty",
        "api/edge/serialize.py",
        '"exeuted_qty": qgrid.format(',
        '"executed_qty": qgrid.format(',
        (SPEC,),
    ),
    Break(
        "liq_flag MAKER and TAKER swapped",
        "engine/matching.py",
        "b_liq, s_liq = (TAKER, MAKER) if buyer is taker else (MAKER, TAKER)",
        "b_liq, s_liq = (MAKER, TAKER) if buyer is taker else (TAKER, MAKER)",
        (SPEC,),
    ),
    Break(
        "version header named X-Svc-Api-Version",
        "api/edge/versions.py",
        'HEADER = "X-Svc-Version"',
        'HEADER = "X-Svc-Api-Version"',
        (SPEC,),
    ),
    Break(
        "MARKET SELL protection price floored",
        "engine/pricing.py",
        "return max(1, -(-base2 * (RATE_ONE - band) // (2 * RATE_ONE)))",
        "return max(1, base2 * (RATE_ONE - band) // (2 * RATE_ONE))",
        (BOUNDS, MODEL),
    ),
    Break(
        "buyer's fee rounded down",
        "engine/matching.py",
        "b_fee = -(-bx.cum_fee // RATE_ONE) - bx.fees_paid",
        "b_fee = bx.cum_fee // RATE_ONE - bx.fees_paid",
        (MODEL,),
    ),
    Break(
        "BUY holds its fee at the maker rate",
        "engine/ledger.py",
        "return maker if maker > taker else taker",
        "return maker",
        (MODEL,),
    ),
    Break(
        "entry balance check ignores holds",
        "engine/entry.py",
        "if bal.total - bal.hold < held:",
        "if bal.total < held:",
        (MODEL,),
    ),
    Break(
        "withdrawal checked against the total, not the available balance",
        "engine/transfers.py",
        "if bal.total - bal.hold < units:",
        "if bal.total < units:",
        (MODEL,),
    ),
    Break(
        "MARKET remainder reported as IOC_REMAINDER",
        "engine/lifecycle.py",
        "end_order(v, order, CANCELED, CancelReason.MARKET_REMAINDER.value, events)",
        "end_order(v, order, CANCELED, CancelReason.IOC_REMAINDER.value, events)",
        (MODEL,),
    ),
    Break(
        "hourly fee sweep skipped",
        "engine/timers.py",
        "if bal is not None and bal.unsettled_fees:",
        "if False:",
        (MODEL,),
    ),
    # the reference model alone (test_engine_stateful.py) on the engine breaks
    Break(
        "seller's fee rounded down (the model alone)",
        "engine/matching.py",
        "s_fee = -(-sx.cum_fee // RATE_ONE) - sx.fees_paid",
        "s_fee = sx.cum_fee // RATE_ONE - sx.fees_paid",
        (MODEL,),
    ),
    Break(
        "modify with an equal quantity loses its place (the model alone)",
        "engine/modify.py",
        "new_qty <= order.qty and not to_market",
        "new_qty < order.qty and not to_market",
        (MODEL,),
    ),
    Break(
        "MARKET BUY protection price ceiled (the model alone)",
        "engine/pricing.py",
        "return base2 * (RATE_ONE + band) // (2 * RATE_ONE)",
        "return -(-base2 * (RATE_ONE + band) // (2 * RATE_ONE))",
        (MODEL,),
    ),
    Break(
        "price band check exclusive at its edges",
        "engine/pricing.py",
        "return band[1] <= price <= band[2]",
        "return band[1] < price < band[2]",
        (MODEL,),
    ),
]

BENCH_BREAK = BREAKS[4]  # LIFO: the benchmark's full-state check must catch it too


def apply(b: Break) -> tuple[Path, str]:
    path = ROOT / b.path
    text = path.read_text()
    starts = [m.start() for m in re.finditer(re.escape(b.old), text)]
    if len(starts) <= b.nth:
        raise SystemExit(f"mutations: {b.path}: {b.old!r} not found (occurrence {b.nth}): update this script")
    at = starts[b.nth]
    path.write_text(text[:at] + b.new + text[at + len(b.old) :])
    return path, text


def run_tests(tests: tuple[str, ...]) -> tuple[int, str]:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "-rf",
        "--timeout",
        "300",
        "--hypothesis-profile=mutations",
        *tests,
    ]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return done.returncode, done.stdout + done.stderr


def first_failure(output: str) -> str:
    for line in output.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" - ")[0].split(" ", 1)[1].replace("tests/", "", 1)
    return "(no FAILED line: see the output)"


def run_bench() -> tuple[bool, str]:
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_engine.py", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    lines = (done.stdout + done.stderr).strip().splitlines()
    return done.returncode != 0, lines[-1] if lines else ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated numbers of the breaks to run (1-based, as in the table)")
    ap.add_argument("--bench", action="store_true", help="also run the LIFO break through bench_engine.py --quick")
    args = ap.parse_args(argv)
    chosen = list(enumerate(BREAKS, 1))
    if args.only:
        wanted = {int(n) for n in args.only.split(",")}
        chosen = [(i, b) for i, b in chosen if i in wanted]
    files = sorted({b.path for _, b in chosen})
    dirty = subprocess.run(["git", "status", "--porcelain", "--", *files], cwd=ROOT, capture_output=True, text=True)
    if dirty.stdout.strip():
        raise SystemExit(f"mutations: these files have changes; commit or stash them first:\n{dirty.stdout}")

    rows, missed = [], []
    for i, b in chosen:
        path, original = apply(b)
        t0 = time.monotonic()
        try:
            code, output = run_tests(b.tests)
        finally:
            path.write_text(original)
        seconds = time.monotonic() - t0
        timed_out = ("Timeout" in output and "Failed: Timeout" in output) or "+++ Timeout +++" in output
        caught = code != 0 and not timed_out
        where = first_failure(output) if caught else "TIMED OUT (not caught)" if timed_out else "NOT CAUGHT"
        if not caught:
            missed.append(b.name)
        rows.append((i, b.name, b.path, where, seconds))
        print(
            f"{i:>2} {'caught' if caught else 'MISSED'} {b.name} -> {where} ({seconds:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    if args.bench:
        path, original = apply(BENCH_BREAK)
        t0 = time.monotonic()
        try:
            caught, last = run_bench()
        finally:
            path.write_text(original)
        rows.append(
            (
                "b",
                BENCH_BREAK.name,
                BENCH_BREAK.path,
                f"benchmarks/bench_engine.py --quick: {last}" if caught else "NOT CAUGHT",
                time.monotonic() - t0,
            )
        )
        if not caught:
            missed.append(BENCH_BREAK.name + " (bench_engine)")

    print("| # | break | file | caught by | s |")
    print("|---|---|---|---|---|")
    for i, name, file, where, seconds in rows:
        print(f"| {i} | {name} | `{file}` | {where.replace('|', '/')} | {seconds:.0f} |")
    if missed:
        print(f"\nNOT CAUGHT: {', '.join(missed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
