"""Engine throughput, per-op latency and memory, against a minimal floor book in the same run.

    PYTHONPATH=. python benchmarks/bench_engine.py [--quick] [--json] [--gc-on] [--reps N] [--seed S]
                                                  [--profile [cprofile|pyinstrument]]

Workloads (``benchmarks/streams.py`` states them exactly; sizes full / --quick):
  mixed   1,000,000 / 200,000 ops: 60% passive limits ~10 ticks behind the touch, 30% cancels of
          random resting orders, 10% limits 0-2 ticks through the contra touch
  add     1,000,000 / 200,000 non-crossing limits over 200 levels (also gives bytes per resting order)
  cancel  500,000 / 100,000 random cancels of the orders ``add`` left resting
  cross   100,000 / 20,000 orders that each take exactly 1-3 levels (set-up not timed)

Ours = the full engine: ``Venue.submit(PlaceOrder|CancelOrder, at=ns)`` with decimal strings, 8
clients with large balances, fees, STP NONE, ``VenueConfig(max_open_orders=None)``, each command
first written as a JSON line (``engine.journal.to_record`` + orjson: the record ``cefisim serve``'s runtime
journals before it submits, without the checksum its writer seals each line with since journal format
/3; the line a /2 journal holds) to a temp file. The yardstick measures the engine and keeps the
unsealed line so that its figures compare across rounds; bench_replay's replay pays the real writer,
seal included (docs/benchmarks.md). Engine time advances 1 µs per command (so the time a command is
journaled at is the one it applies at). Floor = ``benchmarks/floor_book.py`` on the same streams
as integers. Method: commands are generated before timing; a warm-up pass (the first 20,000 ops of
every phase); then N repetitions on fresh books, engine and floor in lockstep chunks of 10,000 ops,
each chunk timed with ``thread_time_ns`` (CPU time of the thread: other processes on the machine
do not count) and ``perf_counter_ns`` (wall); the rate is ops / median total CPU time, ours/floor
the median of the per-repetition ratios. p50/p99 come from a separate pass timing every op
(timer overhead printed). Bytes per resting order: a separate pass of ``add`` under tracemalloc
(traced memory after minus before, over the orders resting). GC: ``gc.freeze()`` after the streams are
built, ``gc.disable()`` around every timed phase for both books unless ``--gc-on``.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import io
import json
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from statistics import median

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for _p in (HERE, ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import streams  # noqa: E402
from floor_book import FloorBook  # noqa: E402

from cefisim.engine.reference import Asset, Client, Instrument  # noqa: E402
from cefisim.engine.venue import Venue, VenueConfig  # noqa: E402
from cefisim.engine.vocabulary import SelfTradePrevention  # noqa: E402

STP_NONE = SelfTradePrevention.NONE.value

START_NS = 1_767_225_600 * 1_000_000_000  # 2026-01-01T00:00:00Z, engine time
STEP_NS = 1_000  # engine time between two commands
SEED = 20260101
SIZES = {
    False: {"mixed": 1_000_000, "add": 1_000_000, "cancel": 500_000, "cross": 100_000},
    True: {"mixed": 200_000, "add": 200_000, "cancel": 100_000, "cross": 20_000},
}
WORKLOADS = ("mixed", "add", "cancel", "cross")
WARMUP = 20_000  # ops per phase in the warm-up pass
CHUNK = 10_000  # ops the books take in turn (see run_lockstep)


# --- the journal --------------------------------------------------------------------------------


def make_journal(sink):  # type: ignore[no-untyped-def]
    """A journal callback writing one line per command to ``sink`` (the record without the seal of a /3
    journal's writer: the module docstring); and a name for the method."""
    try:
        import orjson

        from cefisim.engine.journal import to_record

        write = sink.write
        dumps = orjson.dumps
        nl = orjson.OPT_APPEND_NEWLINE

        def journal(at: int, cmd: object) -> None:
            write(dumps(to_record(at, "ext", cmd), option=nl))

        journal(0, streams.CancelOrder(1, "1"))  # fail here, not in the timed loop
        sink.seek(0)
        sink.truncate()
        return journal, "engine.journal.to_record + orjson.dumps, one unsealed line per command, to a temp file"
    except (ImportError, AttributeError, TypeError, ValueError):  # pragma: no cover - no usable to_record
        write = sink.write

        def journal(at: int, cmd: object) -> None:
            write(b"%d %s\n" % (at, repr(cmd).encode()))

        return journal, "repr(cmd) line per command to a temp file (engine.journal not available)"


# --- the books ----------------------------------------------------------------------------------


def make_venue() -> Venue:
    v = Venue(START_NS, VenueConfig(max_open_orders=None))
    usd, btc = Asset(1, "USD", 2), Asset(2, "BTC", 8)
    v.add_asset(usd)
    v.add_asset(btc)
    v.add_instrument(
        Instrument(
            streams.INSTRUMENT_ID,
            "BTC-USD",
            btc,
            usd,
            streams.PRICE_GRID,
            streams.QTY_GRID,
            min_qty=1,
            price_band=500_000_000,
            maker_fee=1_000_000,
            taker_fee=2_000_000,  # 50%, 0.1%, 0.2%
        )
    )
    for cid in streams.CLIENT_IDS:
        v.add_client(Client(cid, f"C{cid}", self_trade_prevention=STP_NONE))
        v.credit(cid, usd.id, 10**15)
        v.credit(cid, btc.id, 10**17)
    return v


#: a book's whole resting state: (resting orders, bid levels, ask levels), each side best level first,
#: a level (price ticks, ((order id, open lots), ...) in queue order)
BookState = tuple[int, tuple, tuple]


def engine_state(v: Venue) -> BookState:
    """The engine book's resting state: every level and every order in FIFO order, not just counts."""
    book = v.books[streams.INSTRUMENT_ID]
    sides = tuple(
        tuple((lv.price, tuple((o.id, o.qty - o.executed) for o in lv.orders.values())) for lv in levels.values())
        for levels in (book.bids, book.asks)
    )
    return sum(len(orders) for side in sides for _, orders in side), sides[0], sides[1]


def floor_state(b: FloorBook) -> BookState:
    bids = tuple((-key, tuple((oid, o.qty) for oid, o in level.items())) for key, level in b.bids.items())
    asks = tuple((key, tuple((oid, o.qty) for oid, o in level.items())) for key, level in b.asks.items())
    return len(b), bids, asks


# --- running phases -----------------------------------------------------------------------------


class EngineRunner:
    """The full engine; ``items`` of a phase are its commands."""

    name = "ours"

    def __init__(self, journal_sink) -> None:  # type: ignore[no-untyped-def]
        self.sink = journal_sink
        self.journal, self.journal_method = make_journal(journal_sink)
        self.at = START_NS

    def new(self) -> Venue:
        self.sink.seek(0)
        self.sink.truncate()
        self.at = START_NS
        return make_venue()

    @staticmethod
    def items(phase: streams.Phase) -> list:
        return phase.cmds

    def run(self, v: Venue, cmds: list) -> tuple[int, int]:
        """(wall ns, CPU ns of this thread) to journal and submit ``cmds``."""
        submit, journal = v.submit, self.journal
        at = self.at
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        for cmd in cmds:
            at += STEP_NS
            journal(at, cmd)
            submit(cmd, at)
        t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
        self.at = at
        return t1 - t0, c1 - c0

    def run_each(self, v: Venue, cmds: list) -> tuple[list[int], int]:
        """Time every op; also count rejects (there must be none)."""
        submit, journal = v.submit, self.journal
        clock = time.perf_counter_ns
        at = self.at
        lat = [0] * len(cmds)
        rejects = 0
        i = 0
        for cmd in cmds:
            at += STEP_NS
            t0 = clock()
            journal(at, cmd)
            r = submit(cmd, at)
            lat[i] = clock() - t0
            i += 1
            if r.reject is not None:
                rejects += 1
        self.at = at
        return lat, rejects

    state = staticmethod(engine_state)


class FloorRunner:
    """The floor book; ``items`` of a phase are its integer ops."""

    name = "floor"

    def new(self) -> FloorBook:
        return FloorBook()

    @staticmethod
    def items(phase: streams.Phase) -> list:
        return phase.ops

    def run(self, b: FloorBook, ops: list) -> tuple[int, int]:
        """(wall ns, CPU ns of this thread) to apply ``ops``."""
        place, cancel = b.place, b.cancel
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        for oid, is_buy, price, qty in ops:
            if qty:
                place(oid, is_buy, price, qty)
            else:
                cancel(oid)
        t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
        return t1 - t0, c1 - c0

    def run_each(self, b: FloorBook, ops: list) -> tuple[list[int], int]:
        place, cancel = b.place, b.cancel
        clock = time.perf_counter_ns
        lat = [0] * len(ops)
        i = 0
        for oid, is_buy, price, qty in ops:
            if qty:
                t0 = clock()
                place(oid, is_buy, price, qty)
            else:
                t0 = clock()
                cancel(oid)
            lat[i] = clock() - t0
            i += 1
        return lat, 0

    state = staticmethod(floor_state)


def run_lockstep(  # type: ignore[no-untyped-def]
    runners, scen: streams.Scenario, gc_on: bool, each: bool = False
) -> dict:
    """Run ``scen`` on a fresh book of every runner, in lockstep chunks of CHUNK ops.

    Each timed phase goes chunk by chunk: the same CHUNK ops on one book, then on the next, so every
    book sees the machine in the same state (other processes, frequency) within a fraction of a
    second. Returns per runner: {phase: (wall ns, thread CPU ns)} (or, with ``each``, {phase: (sorted
    per-op ns, rejects)}) and the book's final state under "_state".
    """
    books = [r.new() for r in runners]
    out: dict = {r.name: {} for r in runners}
    for phase in scen.phases:
        if not phase.timed:
            for r, book in zip(runners, books, strict=True):
                r.run(book, r.items(phase))
            continue
        n = len(phase.ops)
        walls = [0] * len(runners)
        cpus = [0] * len(runners)
        lats: list[list[int]] = [[] for _ in runners]
        rejects = [0] * len(runners)
        for lo in range(0, n, CHUNK):
            for i, (r, book) in enumerate(zip(runners, books, strict=True)):
                chunk = r.items(phase)[lo : lo + CHUNK]
                if not gc_on:
                    gc.disable()
                try:
                    if each:
                        lat, rej = r.run_each(book, chunk)
                        lats[i].extend(lat)
                        rejects[i] += rej
                    else:
                        wall, cpu = r.run(book, chunk)
                        walls[i] += wall
                        cpus[i] += cpu
                finally:
                    gc.enable()
        for i, r in enumerate(runners):
            if each:
                lats[i].sort()
                out[r.name][phase.name] = (lats[i], rejects[i])
            else:
                out[r.name][phase.name] = (walls[i], cpus[i])
    for r, book in zip(runners, books, strict=True):
        out[r.name]["_state"] = r.state(book)
    del books, book
    gc.collect()
    return out


def check_same(scen: streams.Scenario, res: dict) -> None:
    """Every book must end in the same resting state (each level's orders, ids and open lots, in queue
    order): the same work done, and a LIFO level or a lost order fails the run."""
    (first, a), *others = ((name, r["_state"]) for name, r in res.items())
    for name, b in others:
        if a == b:
            continue
        why = f"{a[0]} against {b[0]} resting orders"
        for side, x, y in (("bid", a[1], b[1]), ("ask", a[2], b[2])):
            for lx, ly in zip(x, y, strict=False):  # the level counts may differ: the first difference
                if lx != ly:
                    why = (
                        f"first differing {side} level: {first} {lx[0]}: {lx[1][:5]}..., {name} {ly[0]}: {ly[1][:5]}..."
                    )
                    break
            else:
                continue
            break
        raise SystemExit(f"{scen.name}: the books ended differently: {why}")


def truncated(scen: streams.Scenario, n: int) -> streams.Scenario:
    """The first ``n`` ops of each phase (for the warm-up: some cancels may name unknown orders)."""
    phases = [streams.Phase(p.name, p.timed, p.ops[:n], p.cmds[:n]) for p in scen.phases]
    return streams.Scenario(scen.name, phases, scen.info)


def bytes_per_order(runner, scen: streams.Scenario) -> float:  # type: ignore[no-untyped-def]
    """Traced memory the ``add`` phase leaves behind, per resting order (a separate, untimed pass)."""
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        book = runner.new()
        before = tracemalloc.get_traced_memory()[0]
        phase = scen.phases[0]
        runner.run(book, runner.items(phase))
        used = tracemalloc.get_traced_memory()[0] - before
        n = runner.state(book)[0]
    finally:
        tracemalloc.stop()
        gc.enable()
    assert n == len(phase.ops), (n, len(phase.ops))
    del book
    gc.collect()
    return used / n


# --- reporting ----------------------------------------------------------------------------------


def pct(sorted_ns: list[int], q: float) -> float:
    return sorted_ns[min(len(sorted_ns) - 1, int(q * len(sorted_ns)))] / 1000


def timer_overhead_ns() -> int:
    clock = time.perf_counter_ns
    samples = []
    for _ in range(20_000):
        t0 = clock()
        samples.append(clock() - t0)
    return int(median(samples))


def revision() -> str:
    """The commit measured, with "+dirty" when engine/ differs from it ("" outside a git checkout)."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", "engine")
    except (OSError, subprocess.SubprocessError):
        return ""
    return head + ("+dirty" if head and dirty else "")


def loadavg() -> float | None:
    """The 1-minute load average (None where the OS has none): how busy the machine was."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # pragma: no cover
        return None


def cpu_name() -> str:
    """The processor's model name (Linux), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict:
    cpu = cpu_name()
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        nproc = os.cpu_count() or 0
    import sortedcontainers

    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "nproc": nproc,
        "cpu": cpu,
        "os": f"{platform.system()} {platform.release()}",
        "sortedcontainers": sortedcontainers.__version__,
    }


def json_header(name: str, args: argparse.Namespace, reps: int) -> dict:
    """The fields a benchmark's --json line starts with: what ran, when, where and how."""
    return {
        "benchmark": name,
        "date": datetime.date.today().isoformat(),
        "quick": args.quick,
        "gc": "on" if args.gc_on else "off",
        "machine": machine(),
        "seed": args.seed,
        "reps": reps,
    }


def bench_arguments(
    doc: str, quick: str, seed: int, gc_on: str = "leave the garbage collector on while timing"
) -> argparse.ArgumentParser:
    """A parser holding the flags every ``bench_*.py`` takes: --quick, --json, --gc-on, --reps, --seed."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help=quick)
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    ap.add_argument("--gc-on", action="store_true", help=gc_on)
    ap.add_argument("--reps", type=int, default=None, help="repetitions (default 3, --quick 1)")
    ap.add_argument("--seed", type=int, default=seed)
    return ap


def parse_bench_arguments(ap: argparse.ArgumentParser, argv: list[str] | None, name: str) -> argparse.Namespace:
    """Parse, ignoring (and saying so) flags meant for another benchmark: run_all.py passes every
    benchmark the same ones."""
    args, unknown = ap.parse_known_args(argv)
    if unknown:
        print(f"{name}: ignoring {' '.join(unknown)}", file=sys.stderr)
    return args


def main(argv: list[str] | None = None) -> int:
    ap = bench_arguments(__doc__, "smaller streams, 1 repetition (< 1 min)", SEED)
    ap.add_argument(
        "--profile",
        nargs="?",
        const="cprofile",
        choices=("cprofile", "pyinstrument"),
        help="only profile the engine on the mixed stream and print the hot spots",
    )
    args = parse_bench_arguments(ap, argv, "bench_engine")
    reps = args.reps or (1 if args.quick else 3)
    sizes = SIZES[args.quick]
    mach = machine()

    t_start = time.perf_counter()
    scen = {
        "mixed": streams.mixed(sizes["mixed"], args.seed),
        "add+cancel": streams.add_cancel(sizes["add"], sizes["cancel"], args.seed + 1),
        "cross": streams.cross(sizes["cross"], args.seed + 2),
    }
    gc.collect()
    gc.freeze()  # the pre-generated streams are never scanned by the collector
    t_gen = time.perf_counter() - t_start

    sink = tempfile.TemporaryFile()  # noqa: SIM115 - the runs write to it; the OS removes it at exit
    ours, floor = EngineRunner(sink), FloorRunner()
    if args.profile:
        return profile(ours, scen["mixed"], args.profile)

    gc_desc = (
        "on (gc.freeze() after building the streams)"
        if args.gc_on
        else "off during timed phases (gc.freeze() after building the streams, gc.disable())"
    )
    rev = revision()
    print(
        f"bench_engine: Python {mach['python']} ({mach['implementation']}), nproc {mach['nproc']}, "
        f"{mach['cpu']}, sortedcontainers {mach['sortedcontainers']}, revision {rev or '?'}"
    )
    load_start = loadavg()
    print(f"  quick={args.quick} seed={args.seed} reps={reps} (median) gc={gc_desc}")
    print(
        f"  load average at start {load_start} (rates use this thread's CPU time, so other processes "
        "matter little; wall rates and p99 do feel them)"
    )
    print(f"  journal: {ours.journal_method}")
    print(f"  streams built in {t_gen:.1f}s (not timed): " + "; ".join(f"{k} {v.info}" for k, v in scen.items()))

    # warm-up: the first WARMUP ops of every phase of every scenario on both books, discarded
    runners = (ours, floor)
    for s in scen.values():
        run_lockstep(runners, truncated(s, WARMUP), args.gc_on)

    # batches[runner][workload] = [(wall ns, CPU ns) per repetition]
    batches: dict[str, dict[str, list[tuple[int, int]]]] = {r.name: {w: [] for w in WORKLOADS} for r in runners}
    for _ in range(reps):
        for s in scen.values():
            res = run_lockstep(runners, s, args.gc_on)
            check_same(s, res)
            for r in runners:
                for w, times in res[r.name].items():
                    if w != "_state":
                        batches[r.name][w].append(times)

    # per-op latency pass (separate, so the timer's overhead stays out of the rates above)
    overhead = timer_overhead_ns()
    lats: dict[str, dict[str, list[int]]] = {r.name: {} for r in runners}
    for s in scen.values():
        res = run_lockstep(runners, s, args.gc_on, each=True)
        check_same(s, res)
        for r in runners:
            for w, item in res[r.name].items():
                if w == "_state":
                    continue
                lat, rejects = item
                if rejects:
                    raise SystemExit(f"{r.name} {w}: {rejects} rejects: the stream is not valid")
                lats[r.name][w] = lat

    mem_ours = bytes_per_order(ours, scen["add+cancel"])
    mem_floor = bytes_per_order(floor, scen["add+cancel"])
    total_s = time.perf_counter() - t_start

    counts = {w: sizes[w] for w in WORKLOADS}
    fig: dict[str, dict[str, float]] = {}
    for name in ("ours", "floor"):
        for w in WORKLOADS:
            cpu = [c for _, c in batches[name][w]]
            med = median(cpu)
            lat = lats[name][w]
            fig[f"{name}:{w}"] = {
                "ops_per_s": counts[w] / (med / 1e9),
                "us_per_op": med / 1000 / counts[w],
                "wall_ops_per_s": counts[w] / (median(t for t, _ in batches[name][w]) / 1e9),
                "p50_us": pct(lat, 0.50),
                "p99_us": pct(lat, 0.99),
                "spread": (max(cpu) - min(cpu)) / med,
            }
    # ours/floor: median over the repetitions of each repetition's own ratio (CPU time; wall time too)
    ratio, wall_ratio = {}, {}
    for w in WORKLOADS:
        pairs = list(zip(batches["ours"][w], batches["floor"][w], strict=True))
        ratio[w] = median(f[1] / o[1] for o, f in pairs)
        wall_ratio[w] = median(f[0] / o[0] for o, f in pairs)

    print()
    print(
        f"{'workload':<8} {'ops':>9} | {'ours ops/s':>10} {'us/op':>6} {'p50':>6} {'p99':>6} | "
        f"{'floor ops/s':>11} {'us/op':>6} {'p50':>6} {'p99':>6} | {'ours/floor':>10}"
    )
    for w in WORKLOADS:
        o, f = fig[f"ours:{w}"], fig[f"floor:{w}"]
        print(
            f"{w:<8} {counts[w]:>9,} | {o['ops_per_s']:>10,.0f} {o['us_per_op']:>6.2f} "
            f"{o['p50_us']:>6.2f} {o['p99_us']:>6.2f} | {f['ops_per_s']:>11,.0f} {f['us_per_op']:>6.2f} "
            f"{f['p50_us']:>6.2f} {f['p99_us']:>6.2f} | {ratio[w]:>9.1%}"
        )
    print(
        f"bytes per resting order after {sizes['add']:,} adds (tracemalloc): ours {mem_ours:.0f}, floor {mem_floor:.0f}"
    )
    print(
        f"ops/s, us/op: ops / median CPU time (thread_time_ns) of {reps} rep(s), each timed in lockstep "
        f"chunks of {CHUNK:,} ops (ours, then floor); ours/floor: median of the per-rep ratios"
    )
    print(
        "  by wall time (perf_counter_ns), ours/floor: "
        + ", ".join(
            f"{w} {fig['ours:' + w]['wall_ops_per_s']:,.0f}/{fig['floor:' + w]['wall_ops_per_s']:,.0f} "
            f"= {wall_ratio[w]:.1%}"
            for w in WORKLOADS
        )
    )
    if reps > 1:
        print(
            "  max-min spread of the reps, ours/floor: "
            + ", ".join(f"{w} {fig['ours:' + w]['spread']:.0%}/{fig['floor:' + w]['spread']:.0%}" for w in WORKLOADS)
        )
    print(
        f"p50/p99: every op timed with perf_counter_ns in a separate pass (timer overhead ~{overhead} ns "
        f"included); total wall time {total_s:.0f}s; load average at end {loadavg()}"
    )

    if args.json:
        out: dict = {
            "benchmark": "bench_engine",
            "timing": "CPU time of the thread (thread_time_ns) per batch; wall figures in *_wall_*",
            "date": datetime.date.today().isoformat(),
            "quick": args.quick,
            "gc": "on" if args.gc_on else "off",
            "gc_freeze": True,
            "python": mach["python"],
            "machine": mach,
            "revision": rev,
            "seed": args.seed,
            "reps": reps,
            "sizes": sizes,
            "journal": ours.journal_method,
            "timer_overhead_ns": overhead,
            "load_average": [load_start, loadavg()],
            "bytes_per_resting_order": round(mem_ours, 1),
            "floor_bytes_per_resting_order": round(mem_floor, 1),
        }
        for w in WORKLOADS:
            o, f = fig[f"ours:{w}"], fig[f"floor:{w}"]
            out[f"{w}_ops_per_s"] = round(o["ops_per_s"])
            out[f"{w}_us_per_op"] = round(o["us_per_op"], 3)
            out[f"{w}_p50_us"] = round(o["p50_us"], 2)
            out[f"{w}_p99_us"] = round(o["p99_us"], 2)
            out[f"floor_{w}_ops_per_s"] = round(f["ops_per_s"])
            out[f"floor_{w}_us_per_op"] = round(f["us_per_op"], 3)
            out[f"floor_{w}_p50_us"] = round(f["p50_us"], 2)
            out[f"floor_{w}_p99_us"] = round(f["p99_us"], 2)
            out[f"{w}_ratio_to_floor"] = round(ratio[w], 4)
            out[f"{w}_wall_ops_per_s"] = round(o["wall_ops_per_s"])
            out[f"floor_{w}_wall_ops_per_s"] = round(f["wall_ops_per_s"])
            out[f"{w}_wall_ratio_to_floor"] = round(wall_ratio[w], 4)
        print(json.dumps(out, sort_keys=True))
    return 0


def profile(ours: EngineRunner, scen: streams.Scenario, tool: str) -> int:
    """Profile the engine on the mixed stream (gc off, as in the timed runs) and print the top."""
    run_lockstep((ours,), truncated(scen, WARMUP), gc_on=False)  # warm-up
    v = ours.new()
    cmds = scen.phases[0].cmds
    gc.disable()
    if tool == "pyinstrument":
        from pyinstrument import Profiler

        prof = Profiler(interval=0.0005)
        prof.start()
        ours.run(v, cmds)
        prof.stop()
        gc.enable()
        print(prof.output_text(unicode=True, color=False, show_all=False))
        return 0
    import cProfile
    import pstats

    cprof = cProfile.Profile()
    cprof.enable()
    ours.run(v, cmds)
    cprof.disable()
    gc.enable()
    out = io.StringIO()
    pstats.Stats(cprof, stream=out).sort_stats("tottime").print_stats(45)
    print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
