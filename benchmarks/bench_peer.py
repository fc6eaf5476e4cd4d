"""The engine against a published pure-Python order book, on bench_engine's streams, in lockstep.

    pip install akhil4n-orderbook==0.1.1   # the peer (never a dependency of cefisim)
    PYTHONPATH=. python benchmarks/bench_peer.py [--quick] [--json] [--gc-on] [--reps N] [--seed S]

The peer is ``akhil4n-orderbook`` 0.1.1 (module ``orderbook``): a ``SortedDict`` of ``OrderedDict``
levels, dataclass orders, a trade record per fill, no accounts, fees or events. It gets the streams
as integers (``streams.py``'s ops: price ticks, lots), as the floor book does; ours is the full engine
exactly as in ``bench_engine.py`` (decimal strings, journal line per command, fees, balances, events).
Workloads, sizes, warm-up, chunked lockstep and CPU-time rates are bench_engine's; every repetition
runs ours, the peer and the floor book chunk by chunk, and a ratio is the median over repetitions of
that repetition's ours/peer (or ours/floor) CPU-time ratio. Each run must end with the same number of
resting orders in every book. ``cefisim.engine.build()`` names the build measured (docs/build.md).
"""

from __future__ import annotations

import gc
import json
import sys
import tempfile
import time
from statistics import median

import bench_engine as be
import streams

from cefisim.engine import build


class PeerRunner:
    """akhil4n-orderbook's OrderBook; ``items`` of a phase are its integer ops."""

    name = "peer"

    def __init__(self) -> None:
        import orderbook

        self.ak = orderbook
        self.ids: dict[int, str] = {}  # stream order id -> the peer's own id (it numbers orders itself)

    def new(self):  # type: ignore[no-untyped-def]
        self.ids = {}
        return self.ak.OrderBook()

    @staticmethod
    def items(phase: streams.Phase) -> list:
        return phase.ops

    def run(self, b, ops: list) -> tuple[int, int]:  # type: ignore[no-untyped-def]
        order, bid, ask = self.ak.Order, self.ak.OrderSide.BID, self.ak.OrderSide.ASK
        add, cancel, ids = b.add_limit_order, b.cancel_order, self.ids
        c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
        for oid, is_buy, price, qty in ops:
            if qty:
                o = order(bid if is_buy else ask, price, qty)
                ids[oid] = o.order_id
                add(o)
            else:
                cancel(ids.get(oid, ""))
        t1, c1 = time.perf_counter_ns(), time.thread_time_ns()
        return t1 - t0, c1 - c0

    @staticmethod
    def state(b) -> int:  # type: ignore[no-untyped-def]
        return len(b.orders)


def main(argv: list[str] | None = None) -> int:
    ap = be.bench_arguments(__doc__, "smaller streams, 1 repetition", be.SEED)
    args = be.parse_bench_arguments(ap, argv, "bench_peer")
    try:
        import orderbook  # noqa: F401
    except ImportError:
        why = "akhil4n-orderbook is not installed (pip install akhil4n-orderbook==0.1.1): skipped"
        print(f"bench_peer: {why}")
        if args.json:
            print(json.dumps({"skipped": why}))
        return 0
    reps = args.reps or (1 if args.quick else 3)
    sizes = be.SIZES[args.quick]
    scen = {
        "mixed": streams.mixed(sizes["mixed"], args.seed),
        "add+cancel": streams.add_cancel(sizes["add"], sizes["cancel"], args.seed + 1),
        "cross": streams.cross(sizes["cross"], args.seed + 2),
    }
    gc.collect()
    gc.freeze()
    sink = tempfile.TemporaryFile()  # noqa: SIM115 - the runs write to it; the OS removes it at exit
    runners = (be.EngineRunner(sink), PeerRunner(), be.FloorRunner())
    mach = be.machine()
    print(
        f"bench_peer: cefisim engine build {build()}, Python {mach['python']}, nproc {mach['nproc']}, "
        f"{mach['cpu']}, revision {be.revision() or '?'}, load average {be.loadavg()}"
    )
    print(f"  quick={args.quick} seed={args.seed} reps={reps} (median) gc={'on' if args.gc_on else 'off while timing'}")
    for s in scen.values():
        be.run_lockstep(runners, be.truncated(s, be.WARMUP), args.gc_on)
    cpu: dict[str, dict[str, list[int]]] = {r.name: {w: [] for w in be.WORKLOADS} for r in runners}
    for _ in range(reps):
        for s in scen.values():
            res = be.run_lockstep(runners, s, args.gc_on)
            resting = {name: r["_state"] if name == "peer" else r["_state"][0] for name, r in res.items()}
            if len(set(resting.values())) != 1:
                raise SystemExit(f"{s.name}: the books ended with different resting orders: {resting}")
            for name, r in res.items():
                for w, times in r.items():
                    if w != "_state":
                        cpu[name][w].append(times[1])
    out: dict[str, dict[str, float]] = {}
    print(
        f"\n{'workload':<8} {'ops':>9} | {'ours ops/s':>10} {'peer ops/s':>10} {'floor ops/s':>11} | "
        "ours/peer ours/floor"
    )
    for w in be.WORKLOADS:
        n = sizes[w]
        rate = {name: n / (median(cpu[name][w]) / 1e9) for name in cpu}
        vs_peer = median(p / o for o, p in zip(cpu["ours"][w], cpu["peer"][w], strict=True))
        vs_floor = median(f / o for o, f in zip(cpu["ours"][w], cpu["floor"][w], strict=True))
        out[w] = {"ours_ops_per_s": round(rate["ours"]), "peer_ops_per_s": round(rate["peer"])}
        out[w] |= {"floor_ops_per_s": round(rate["floor"]), "ours_per_peer": round(vs_peer, 3)}
        out[w]["ours_per_floor"] = round(vs_floor, 3)
        print(
            f"{w:<8} {n:>9,} | {rate['ours']:>10,.0f} {rate['peer']:>10,.0f} {rate['floor']:>11,.0f} | "
            f"{vs_peer:>8.2f}x {vs_floor:>9.1%}"
        )
    if args.json:
        print(json.dumps({"build": build(), "gc_on": args.gc_on, "quick": args.quick, "reps": reps, **out}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
