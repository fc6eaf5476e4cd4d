"""Agent populations: 1,000 agents for a simulated hour, the agents' decisions per second and the
engine's share of the time.

    PYTHONPATH=. python benchmarks/bench_agents.py [--quick] [--json] [--gc-on] [--reps N] [--seed S]

Workload (seeded): ``scenarios/population.json``'s market scaled to 1,000 agents (20 inventory
makers, 300 value traders, 80 momentum traders, 600 noise traders, each its own client), run for
3,600 s of engine time (--quick: 300 s, the same 1,000 agents), through ``Scenario.runner(venue)
.run(end, on_step)`` as ``cefisim replay`` runs it (a callback per step, nothing kept).

Method: an untimed pass counts the agents' decisions (every turn an agent takes: a wake, whether or
not it sends anything; the runner's ``_turn`` wrapped to count) and records the ``(at, command)``
pairs. Then N repetitions (default 3, --quick 1) of two timed runs on fresh venues: ``population``,
the scenario run by its runner; ``direct``, the recorded pairs submitted straight to a venue (the
engine's part). The engine's share is ``direct / population`` time; decisions per second are the
decisions over the population run's time. Times are ``process_time_ns`` (CPU of this process, so
load from other processes does not count) with the wall time beside. Memory, from a first run that
keeps nothing per step: the peak resident set of the process (``ru_maxrss``) after it, and the
objects it built and left alive (the venue keeps its records, orders and fills, by design; the
runner and the agents hold one heap entry and a few orders each). GC frozen after setup and off
while timing unless --gc-on.
"""

from __future__ import annotations

import copy
import gc
import json
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import bench_engine  # noqa: E402
from cefisim.api.formats.scenario import Scenario, parse_scenario  # noqa: E402
from cefisim.engine.commands import Command  # noqa: E402

SEED = 31
SPAN_S = {False: 3600, True: 300}
COUNTS = {"maker": 20, "value": 300, "momentum": 80, "noise": 600}


def make_scenario(span_s: int, seed: int) -> Scenario:
    doc = json.loads((ROOT / "scenarios" / "population.json").read_text())
    doc = copy.deepcopy(doc)
    doc["seed"] = seed
    doc["end"] = f"+{span_s}"
    for entry in doc["agents"]:
        entry["count"] = COUNTS[entry["name"]]
    return parse_scenario(doc, str(ROOT / "scenarios" / "population.json"))


def memory(scenario: Scenario) -> dict[str, float]:
    """One run with nothing kept per step: the process's peak resident set after it, and how many
    objects the run left alive (the venue's records: orders, fills, trades it keeps by design)."""
    gc.collect()
    before = len(gc.get_objects())
    venue = scenario.build_venue()
    runner = scenario.runner(venue)
    built = len(gc.get_objects())
    runner.run(scenario.end_ns)
    gc.collect()
    after = len(gc.get_objects())
    fills = sum(len(a.fills) for a in venue.accounts.values())
    return {
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "objects_built": built - before,
        "objects_after_run": after - before,
        "fills_kept": fills,
    }


def record(scenario: Scenario) -> tuple[list[tuple[int, Command]], int]:
    """The commands of one run, and the agents' decisions (turns that were not an event)."""
    venue = scenario.build_venue()
    runner = scenario.runner(venue)
    turn = runner._turn
    counts = [0, 0]  # turns, events

    def counting(t: int, submit: Any) -> bool:
        before = runner._event_index
        taken = turn(t, submit)
        counts[0] += taken
        counts[1] += runner._event_index - before
        return taken

    runner._turn = counting  # type: ignore[method-assign]  # the counting pass only, never timed
    pairs: list[tuple[int, Command]] = []
    runner.run(scenario.end_ns, lambda at, cmd, _: pairs.append((at, cmd)))
    return pairs, counts[0] - counts[1]


def timed(fn: Any) -> tuple[int, int]:
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    fn()
    return time.process_time_ns() - cpu, time.perf_counter_ns() - wall


def main(argv: list[str] | None = None) -> int:
    ap = bench_engine.bench_arguments(__doc__, "300 s of engine time, 1 repetition (< 1 min)", SEED)
    args = bench_engine.parse_bench_arguments(ap, argv, "bench_agents")
    reps = args.reps or (1 if args.quick else 3)
    span = SPAN_S[args.quick]
    t0 = time.perf_counter()
    scenario = make_scenario(span, args.seed)
    agents = len(scenario.agents)
    mem = memory(scenario)  # first: the recorded commands below would dominate the resident set
    pairs, decisions = record(scenario)
    gc.collect()
    gc.freeze()
    rows: list[dict[str, int]] = []
    for _ in range(reps):
        venue = scenario.build_venue()
        runner = scenario.runner(venue)
        steps = [0]

        def population(runner: Any = runner, steps: list[int] = steps) -> None:
            runner.run(scenario.end_ns, lambda at, cmd, r: steps.__setitem__(0, steps[0] + 1))

        direct_venue = scenario.build_venue()

        def direct(venue: Any = direct_venue) -> None:
            submit = venue.submit
            for at, cmd in pairs:
                submit(cmd, at)

        if not args.gc_on:
            gc.disable()
        pop_cpu, pop_wall = timed(population)
        dir_cpu, dir_wall = timed(direct)
        gc.enable()
        assert steps[0] == len(pairs), "the timed run submitted what the counting pass recorded"
        rows.append({"pop_cpu": pop_cpu, "pop_wall": pop_wall, "dir_cpu": dir_cpu, "dir_wall": dir_wall})
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    per_s = decisions / (med["pop_cpu"] / 1e9)
    commands_per_s = len(pairs) / (med["pop_cpu"] / 1e9)
    share = med["dir_cpu"] / med["pop_cpu"]
    print(f"bench_agents: {agents} agents, {span} s of engine time, seed {args.seed}, {reps} rep(s)")
    print(f"decisions {decisions:,} ({decisions / span:,.0f} per engine second), commands {len(pairs):,}")
    print(
        f"population run: {med['pop_cpu'] / 1e9:.2f} s CPU ({med['pop_wall'] / 1e9:.2f} s wall): "
        f"{per_s:,.0f} decisions/s, {commands_per_s:,.0f} commands/s, "
        f"{span / (med['pop_cpu'] / 1e9):,.0f}x engine time"
    )
    print(f"engine's share of the time (direct / population, CPU): {share:.1%}")
    print(
        f"memory: peak resident set {mem['peak_rss_mib']:.0f} MiB after one run (nothing kept per step); "
        f"objects: {mem['objects_built']:,.0f} to build, {mem['objects_after_run']:,.0f} alive after the run "
        f"(the venue keeps its records: {mem['fills_kept']:,.0f} fills)"
    )
    print(f"total wall {time.perf_counter() - t0:.0f} s")
    if args.json:
        out = {
            **bench_engine.json_header("bench_agents", args, reps),
            "agents": agents,
            "span_s": span,
            "decisions": decisions,
            "commands": len(pairs),
            "cpu_s": round(med["pop_cpu"] / 1e9, 3),
            "wall_s": round(med["pop_wall"] / 1e9, 3),
            "decisions_per_s": round(per_s),
            "commands_per_s": round(commands_per_s),
            "engine_share": round(share, 4),
            "peak_rss_mib": round(mem["peak_rss_mib"], 1),
            "objects_built": mem["objects_built"],
            "objects_after_run": mem["objects_after_run"],
            "fills_kept": mem["fills_kept"],
        }
        print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
