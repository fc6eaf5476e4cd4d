"""Recorded markets: replaying recorded depth and trades around one quoting strategy, against the floor.

    PYTHONPATH=. python benchmarks/bench_recorded.py [--quick] [--json] [--gc-on] [--reps N] [--no-hftbacktest]

Target: recorded events per second at least 50% of the floor book's rate on the same level updates
(an L2 update is one level write plus queue bookkeeping, not an order with a ledger).

Workloads (sizes full / --quick):
  recorded  ``scenarios/recordings/busy_btcusd.jsonl.gz`` (22,460 events: 21,128 level updates, 1,331
            trades, one snapshot; three minutes of ``scenarios/busy_market.json``), played 5 times
            back to back / once, loaded into memory before timing. The venue of
            ``scenarios/recorded_busy.json`` (risk-averse queue model, impact) with one strategy, alice,
            quoting both sides: every 100 ms of engine time it advances the clock (the venue applies
            the recorded events on the way), then keeps one 0.01 BTC GTC bid at the best recorded bid
            and one ask at the best recorded ask, cancelling and replacing a quote whose price is no
            longer the touch, and stops buying (selling) at a position of +0.1 (-0.1) BTC. Order
            latency 1 ms (the venue's entry, modify and cancel latency), feed latency 0. Timed: the
            whole loop in CPU time, with no clock read inside it; and, in a second run of the same
            (deterministic) replay, the strategy's own turns (counting its fills, deciding and sending
            its orders), each between two CPU-clock reads, less what those reads cost around empty
            turns (``empty_turns``). ``events_per_s`` = recorded events / (loop - strategy turns):
            the replay with its queue bookkeeping, fills and acknowledgements, and no clock reads;
            ``events_per_s_with_strategy`` counts the strategy's turns too (the loop);
            ``events_per_s_no_strategy`` is the same replay with nobody trading (the clock still moves
            every 100 ms), timed the same way.
  floor     ``benchmarks/floor_book.py`` on the same level updates, each one level write with the
            floor's own primitives: cancel the level's order if it has one, place the new size if it
            is not 0 (trades are not level writes: skipped). ``floor_add_ops_per_s`` = level updates /
            time.
  hftbacktest (when the ``bench`` extra is installed, unless --no-hftbacktest) the same recording, as
            hftbacktest events, through ``HashMapMarketDepthBacktest`` with the same strategy (numba),
            the risk-averse queue model, partial fills, the same fees and a constant 1 ms order
            latency; fills, filled quantity, position, PnL (marked to the last mid), fees and events/s
            side by side (``hft_compare.py`` counts hftbacktest's fills from its order copies, and
            says when its ``elapse`` stopped early); then the same for a second recording, ``SECOND``
            (played once, in both modes). ``docs/recorded.md`` explains the differences.

hftbacktest's rate over cefisim's, in the same run, is printed and kept (``per_cefisim``) for each recording;
on the busy one the target is at most 2.

Method: one warm-up run (discarded), then N repetitions (default 3, --quick 1) of recorded then the
two floor runs, interleaved; medians of CPU time of this process (``time.process_time``: the machine
is shared, and other processes' load would fall on the runs unevenly in wall time). GC:
``gc.freeze()`` after loading, ``gc.disable()`` around each timed run unless --gc-on.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from statistics import median
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

import bench_engine  # noqa: E402
from floor_book import FloorBook  # noqa: E402

from cefisim.api.formats.recorded.source import attach, mapped_events  # noqa: E402
from cefisim.api.formats.scenario import Scenario, load_scenario, parse_scenario  # noqa: E402
from cefisim.engine.commands import AdvanceClock, CancelOrder, PlaceOrder, SetLatency  # noqa: E402
from cefisim.engine.recorded.feed import SNAPSHOT, TRADE, UPDATE  # noqa: E402
from cefisim.engine.recorded.market import RecordedMarket  # noqa: E402
from cefisim.engine.simulation.figures import unrounded_fee  # noqa: E402
from cefisim.engine.venue import Venue  # noqa: E402
from cefisim.engine.vocabulary import WORKING, Side  # noqa: E402

BUY = Side.BUY
SELL = Side.SELL

SCENARIO = os.path.join(ROOT, "scenarios", "recorded_busy.json")
PASSES = {False: 5, True: 1}
#: the second recording of the hftbacktest comparison, relative to the scenario: 70 s of
#: ``scenarios/flash_crash.json`` (a 12% fall and recovery, five levels a side, sweeps)
SECOND = "recordings/flash_crash_btcusd.jsonl.gz"
STEP_NS = 100_000_000  # the strategy acts every 100 ms of engine time
LATENCY_NS = 1_000_000  # order latency: 1 ms
QTY_LOTS = 100  # 0.01 BTC on a 0.0001 grid
MAX_POSITION_LOTS = 1000  # 0.1 BTC
TARGET = 0.5


def load(passes: int, recording: str | None = None) -> tuple[Scenario, list[tuple]]:
    """The scenario (without its file-backed source) and the recording ``passes`` times, in engine time;
    ``recording``: another recording (relative to the scenario) in the scenario's place."""
    if recording is None:
        scenario = load_scenario(SCENARIO)
    else:
        with open(SCENARIO, encoding="utf-8") as f:
            doc = json.load(f)
        doc["recorded"][0]["file"] = recording
        scenario = parse_scenario(doc, SCENARIO)
    spec = scenario.recorded[0]
    inst = scenario.instruments[spec.instrument_id]
    one = list(mapped_events(spec, scenario.start_ns, inst))
    span = one[-1][1] - scenario.start_ns + 1_000_000_000
    events = []
    for k in range(passes):
        shift = k * span
        for ev in one:
            if ev[0] == SNAPSHOT:
                events.append((SNAPSHOT, ev[1] + shift, ev[2] + shift, ev[3], ev[4]))
            else:
                events.append((ev[0], ev[1] + shift, ev[2] + shift, ev[3], ev[4], ev[5]))
    return scenario, events


def build(scenario: Scenario, events: list[tuple]) -> tuple[Venue, RecordedMarket]:
    bare = dataclasses.replace(scenario, recorded=[], events=[])
    venue = bare.build_venue()
    market = attach(venue, scenario.recorded[0], scenario.start_ns, iter(events))
    venue.submit(SetLatency(LATENCY_NS, LATENCY_NS, LATENCY_NS))
    return venue, market


def touch(market: RecordedMarket, levels: Any) -> int | None:
    """The best price of one side with recorded depth (the users' own orders are not the market)."""
    cp = market.counterparty
    for level in levels.values():
        for order in level.orders.values():
            if order.account is cp:
                return level.price
    return None


class Quoter:
    """The strategy: one bid at the best recorded bid, one ask at the best recorded ask."""

    def __init__(self, venue: Venue, market: RecordedMarket, client_id: int, quoting: bool = True) -> None:
        self.venue = venue
        self.market = market
        self.account = venue.accounts[client_id]
        self.inst = market.instrument
        self.quotes: dict[str, Any] = {BUY: None, SELL: None}
        self.commands = 0
        self.position = 0  # lots bought minus sold
        self.seen = 0  # the client's fills already counted in the position
        self.quoting = quoting  # False: only the clock moves (the replay alone, for comparison)

    def act(self, now: int) -> None:
        venue, book = self.venue, self.market.book
        pos = self.position
        for side, levels, allowed in (
            (BUY, book.bids, pos < MAX_POSITION_LOTS),
            (SELL, book.asks, pos > -MAX_POSITION_LOTS),
        ):
            target = touch(self.market, levels)
            current = self.quotes[side]
            if current is not None and current.status not in WORKING and current.status != "NEW_PENDING":
                current = self.quotes[side] = None
            if current is not None and (current.price != target or not allowed):
                if current.status == "ACTIVE":
                    venue.submit(CancelOrder(self.account.id, str(current.id)), at=now)
                    self.commands += 1
                continue  # a new quote goes in once the old one is gone
            if current is None and allowed and target is not None:
                text = self.inst.price_grid.format(target)
                result = venue.submit(PlaceOrder(self.account.id, self.inst.id, side, "LIMIT", "0.0100", text), at=now)
                self.commands += 1
                self.quotes[side] = result.order

    def turn(self, now: int) -> None:
        """The strategy's turn: count its fills since the last turn, then quote (``act``)."""
        fills = self.account.fills
        if len(fills) != self.seen:
            for f in fills[self.seen :]:
                self.position += f.qty if f.order.side == BUY else -f.qty
            self.seen = len(fills)
        if self.quoting:
            self.act(now)

    def run(self, end_ns: int, clock: Callable[[], float] | None = None) -> float:
        """Run to ``end_ns``, the clock advanced every ``STEP_NS`` and the strategy taking its turn after
        each advance. Without ``clock`` nothing is timed inside the loop (returns 0.0); with it, returns
        the sum over the turns of ``clock()`` read just after the advance and again after the turn."""
        venue = self.venue
        t = venue.clock.now
        turn = self.turn
        if clock is None:
            while t < end_ns:
                t += STEP_NS
                venue.submit(AdvanceClock(t), at=t)
                self.commands += 1
                turn(t)
            return 0.0
        in_turns = 0.0
        while t < end_ns:
            t += STEP_NS
            venue.submit(AdvanceClock(t), at=t)
            self.commands += 1
            t0 = clock()
            turn(t)
            in_turns += clock() - t0
        return in_turns


def empty_turns(steps: int, clock: Callable[[], float]) -> float:
    """What ``Quoter.run`` adds up over ``steps`` turns when a turn takes no time: the two clock reads
    around it, written exactly as there, with nothing between them."""
    in_turns = 0.0
    for _ in range(steps):
        t0 = clock()
        in_turns += clock() - t0
    return in_turns


def run_recorded(
    scenario: Scenario, events: list[tuple], gc_on: bool, quoting: bool = True
) -> tuple[float, dict[str, Any]]:
    """(CPU seconds of the replay without the strategy's own turns, figures of the run).

    The replay runs twice from scratch, the same run both times (the venue is deterministic): once
    timed as a whole with no clock read inside the loop (``total_s``), once with the clock read around
    each of the strategy's turns; the strategy's time (``strategy_s``) is what the second run's reads
    add up to, less what the same reads add up to around empty turns (``empty_turns``: the reads' own
    cost). The replay is ``total_s - strategy_s``: the first run without its strategy's turns, and
    without paying two CPU-clock reads (each a system call) per step."""
    client_id = scenario.client_id("alice")
    assert client_id is not None
    end_ns = events[-1][1] + STEP_NS
    venue, market = build(scenario, events)
    quoter = Quoter(venue, market, client_id, quoting)
    start_ns = venue.clock.now
    totals = venue.asset_totals()
    start_usd = venue.accounts[client_id].balances[2].total
    start_btc = venue.accounts[client_id].balances[1].total
    if not gc_on:
        gc.disable()
    t0 = time.process_time()
    quoter.run(end_ns)
    took = time.process_time() - t0
    gc.enable()
    again = Quoter(*build(scenario, events), client_id, quoting)
    if not gc_on:
        gc.disable()
    in_turns = again.run(end_ns, time.process_time)
    reads = empty_turns(-(-(end_ns - start_ns) // STEP_NS), time.process_time)  # as many as the turns
    gc.enable()
    assert again.commands == quoter.commands and len(again.account.fills) == len(quoter.account.fills)
    in_strategy = in_turns - reads
    assert market.applied == len(events), (market.applied, len(events))
    assert venue.asset_totals() == totals, "an asset was not conserved"
    venue.check_invariants()
    alice = venue.accounts[client_id]
    book = market.book
    bid, ask = touch(market, book.bids), touch(market, book.asks)
    mid2 = (bid or 0) + (ask or 0)
    d_usd = alice.balances[2].total - start_usd  # cents, fees paid
    d_btc = alice.balances[1].total - start_btc  # satoshis
    pnl_cents = d_usd + Fraction(d_btc * mid2, 2 * 10**8)  # mark: ticks of 0.01 USD per BTC
    fills = alice.fills
    figures = {
        "events": len(events),
        "fills": len(fills),
        # fills as a strategy that looks every STEP_NS sees them: one per order per step
        "pieces": len({(f.order.id, -(-(f.timestamp - start_ns) // STEP_NS)) for f in fills}),
        "filled_qty": sum(f.qty for f in fills) / 10**4,
        "position": d_btc / 10**8,
        "pnl": float(round(pnl_cents / 100, 2)),
        "fees": sum(f.fee for f in fills) / 100,
        "fees_unrounded": float(round(sum(map(unrounded_fee, fills), Fraction(0)) / 100, 2)),
        "rejected": sum(1 for o in alice.orders.values() if o.status == "REJECTED"),
        "commands": quoter.commands,
        "total_s": took,
        "strategy_s": in_strategy,
    }
    return took - in_strategy, figures


def run_floor(events: list[tuple], gc_on: bool) -> tuple[float, int]:
    floor = FloorBook()
    ids: dict[tuple[bool, int], int] = {}
    place, cancel = floor.place, floor.cancel
    writes = 0
    next_id = 1
    if not gc_on:
        gc.disable()
    t0 = time.process_time()
    for ev in events:
        kind = ev[0]
        if kind == TRADE:
            continue
        if kind == UPDATE:
            rows = ((ev[3] == BUY, ev[4], ev[5]),)
        else:
            for key in list(ids):
                cancel(ids.pop(key))
            rows = tuple((True, p, q) for p, q in ev[3]) + tuple((False, p, q) for p, q in ev[4])
        for is_buy, price, lots in rows:
            writes += 1
            key = (is_buy, price)
            old = ids.pop(key, None)
            if old is not None:
                cancel(old)
            if lots:
                place(next_id, is_buy, price, lots)
                ids[key] = next_id
                next_id += 1
    took = time.process_time() - t0
    gc.enable()
    return took, writes


def run_floor_adds(events: list[tuple], gc_on: bool) -> tuple[float, int]:
    """The floor's add rate on the same updates: every non-zero level update placed as a new order
    (asks moved 10**9 ticks up so that nothing ever crosses: pure adds, no matching)."""
    floor = FloorBook()
    place = floor.place
    rows = []
    for ev in events:
        if ev[0] == UPDATE and ev[5]:
            rows.append((ev[3] == BUY, ev[4] if ev[3] == BUY else ev[4] + 10**9, ev[5]))
        elif ev[0] == SNAPSHOT:
            rows += [(True, p, q) for p, q in ev[3]] + [(False, p + 10**9, q) for p, q in ev[4]]
    if not gc_on:
        gc.disable()
    t0 = time.process_time()
    oid = 0
    for is_buy, price, lots in rows:
        oid += 1
        place(oid, is_buy, price, lots)
    took = time.process_time() - t0
    gc.enable()
    return took, len(rows)


def compare(
    hft_compare: Any, name: str, events: list[tuple], scenario: Scenario, ours: dict[str, Any], gc_on: bool
) -> dict[str, Any]:
    """Run hftbacktest on ``events`` and print its figures beside cefisim's (``ours``)."""
    hft = hft_compare.run(events, scenario, STEP_NS, LATENCY_NS, QTY_LOTS, MAX_POSITION_LOTS, gc_on)
    rate = ours["events"] / (ours["total_s"] - ours["strategy_s"])
    print(f"\n{name}: {len(events):,} events")
    print(
        f"{'':<12} {'fills':>6} {'pieces':>6} {'filled BTC':>10} {'position':>9} {'PnL USD':>9} "
        f"{'fees USD':>9} {'unrounded':>9} {'events/s':>10}"
    )
    print(
        f"{'cefisim':<12} {ours['fills']:>6,} {ours['pieces']:>6,} {ours['filled_qty']:>10.4f} "
        f"{ours['position']:>9.4f} {ours['pnl']:>9.2f} {ours['fees']:>9.2f} {ours['fees_unrounded']:>9.2f} "
        f"{rate:>10,.0f}"
    )
    print(
        f"{'hftbacktest':<12} {'':>6} {hft['fills']:>6,} {hft['filled_qty']:>10.4f} {hft['position']:>9.4f} "
        f"{hft['pnl']:>9.2f} {hft['fees']:>9.2f} {hft['fees']:>9.2f} {hft['events_per_s']:>10,.0f}"
    )
    own = hft["own_state"]
    print(
        f"{'  its state':<12} {own['fills']:>6,} {'':>6} {own['filled_qty']:>10.4f} {own['position']:>9.4f} "
        f"{'':>9} {own['fees']:>9.2f}   (hftbacktest's own counters: a partly filled order's last piece only)"
    )
    # how many times cefisim's rate hftbacktest's is, in this run (the busy recording's target: at most 2)
    hft["per_cefisim"] = round(hft["events_per_s"] / rate, 3)
    print(f"hftbacktest / cefisim events/s: {hft['per_cefisim']:.2f}x")
    if not hft["complete"]:
        print(
            f"  hftbacktest STOPPED at {hft['stopped_at_s']} s of {hft['span_s']} s: elapse returned "
            f"{hft['elapse_code']} (its issue #312)"
        )
    return hft


def main(argv: list[str] | None = None) -> int:
    ap = bench_engine.bench_arguments(__doc__, "the recording once, 1 repetition (< 1 min)", 0)
    ap.add_argument("--no-hftbacktest", action="store_true", help="skip the hftbacktest comparison")
    args = bench_engine.parse_bench_arguments(ap, argv, "bench_recorded")
    reps = args.reps or (1 if args.quick else 3)
    mach = bench_engine.machine()
    t_start = time.perf_counter()
    scenario, events = load(PASSES[args.quick])
    updates = sum(1 for ev in events if ev[0] != TRADE)
    gc.collect()
    gc.freeze()
    print(
        f"bench_recorded: Python {mach['python']} ({mach['implementation']}), nproc {mach['nproc']}, "
        f"{mach['cpu']}, sortedcontainers {mach['sortedcontainers']}"
    )
    print(
        f"  quick={args.quick} reps={reps} (median) gc={'on' if args.gc_on else 'off while timing'}; "
        f"{len(events):,} recorded events ({updates:,} level updates), setup {time.perf_counter() - t_start:.1f}s"
    )
    run_recorded(scenario, events[: len(events) // 10], args.gc_on)  # warm-up, discarded
    run_floor(events[: len(events) // 10], args.gc_on)
    run_floor_adds(events[: len(events) // 10], args.gc_on)
    rec_t: list[float] = []
    alone_t: list[float] = []
    write_t: list[float] = []
    add_t: list[float] = []
    figures: dict[str, Any] = {}
    writes = adds = 0
    for _ in range(reps):
        took, figures = run_recorded(scenario, events, args.gc_on)
        rec_t.append(took)
        alone_t.append(run_recorded(scenario, events, args.gc_on, quoting=False)[0])
        took, writes = run_floor(events, args.gc_on)
        write_t.append(took)
        took, adds = run_floor_adds(events, args.gc_on)
        add_t.append(took)
    events_per_s = len(events) / median(rec_t)
    alone_per_s = len(events) / median(alone_t)
    writes_per_s = writes / median(write_t)
    adds_per_s = adds / median(add_t)
    ratio = median((len(events) / r) / (adds / a) for r, a in zip(rec_t, add_t, strict=True))
    ratio_writes = median((len(events) / r) / (writes / w) for r, w in zip(rec_t, write_t, strict=True))
    print()
    print(f"{'workload':<13} {'ops':>9} {'per s':>11} {'us each':>8}")
    with_strategy = len(events) / figures["total_s"]
    print(
        f"{'recorded':<13} {len(events):>9,} {events_per_s:>11,.0f} {1e6 / events_per_s:>8.2f}   "
        f"events: the clock advances that apply them, the fills and acknowledgements they bring"
    )
    print(
        f"{'  + strategy':<13} {figures['commands']:>9,} {with_strategy:>11,.0f} {1e6 / with_strategy:>8.2f}   "
        f"events per second counting the strategy's own turns too (its commands: the first column)"
    )
    print(
        f"{'  no strategy':<13} {'':>9} {alone_per_s:>11,.0f} {1e6 / alone_per_s:>8.2f}   "
        f"the same recording with nobody trading (the clock still advances every 100 ms)"
    )
    print(
        f"{'floor adds':<13} {adds:>9,} {adds_per_s:>11,.0f} {1e6 / adds_per_s:>8.2f}   "
        f"the non-zero level updates as non-crossing adds"
    )
    print(
        f"{'floor writes':<13} {writes:>9,} {writes_per_s:>11,.0f} {1e6 / writes_per_s:>8.2f}   "
        f"level writes (cancel the level's order, add the new size)"
    )
    verdict = "met" if ratio >= TARGET else "NOT met"
    print(
        f"recorded / floor adds: {ratio:.2f} (target >= {TARGET:.2f}: {verdict}); "
        f"recorded / floor level writes: {ratio_writes:.2f}"
    )
    out: dict[str, Any] = {
        "events_per_s": round(events_per_s),
        "events_per_s_with_strategy": round(with_strategy),
        "events_per_s_no_strategy": round(alone_per_s),
        "floor_add_ops_per_s": round(adds_per_s),
        "floor_level_writes_per_s": round(writes_per_s),
        "ratio": round(ratio, 3),
        "ratio_level_writes": round(ratio_writes, 3),
        "target": TARGET,
        "events": len(events),
        "cefisim": figures,
        "machine": mach,
        "quick": args.quick,
        "reps": reps,
    }
    if not args.no_hftbacktest:
        try:
            import hft_compare
        except ImportError as exc:
            print(f"\nhftbacktest: not run ({exc}); install the bench extra: pip install -e '.[bench]'")
            out["hftbacktest"] = None
        else:
            out["hftbacktest"] = hft = compare(hft_compare, "busy_btcusd", events, scenario, figures, args.gc_on)
            scenario2, events2 = load(1, SECOND)
            figures2 = run_recorded(scenario2, events2, args.gc_on)[1]
            out["second"] = {"cefisim": figures2}
            out["second"]["hftbacktest"] = compare(hft_compare, SECOND, events2, scenario2, figures2, args.gc_on)
            if not (hft["complete"] and out["second"]["hftbacktest"]["complete"]):
                print("hftbacktest stopped before the end of the data: its figures above are partial")
    print(f"total {time.perf_counter() - t_start:.1f}s")
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
