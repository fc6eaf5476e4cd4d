"""cefisim.gym's speed: environment steps per second on shipped scenarios, with random actions.

    PYTHONPATH=. python benchmarks/bench_gym.py [--quick] [--json] [--gc-on] [--reps N] [--seed S]

Workloads (seeded; steps full / --quick): ``VenueEnv`` on ``demo`` (a maker and a noise taker on
three instruments) and on ``population`` (328 agents), one step = 1 s and 0.1 s of engine time,
actions drawn from the action space seeded with --seed. Each workload: reset(seed), then N steps
(2,000 / 200), resetting when an episode ends; the rate is steps / CPU time (``process_time_ns``, so
load from other processes does not count), the wall time beside it; median of the repetitions
(default 3, --quick 1). The engine work a step holds is the scenario's own over the step's slice, so
a longer slice or a busier scenario means fewer steps per second.
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import bench_engine  # noqa: E402
from cefisim.gym import VenueEnv  # noqa: E402

SEED = 7
STEPS = {False: 2000, True: 200}
WORKLOADS = [("demo", "1"), ("demo", "0.1"), ("population", "1"), ("population", "0.1")]


def run(scenario: str, step_seconds: str, steps: int, seed: int, gc_on: bool) -> tuple[float, float]:
    env = VenueEnv(scenario, step_seconds=step_seconds)
    env.reset(seed=seed)
    env.action_space.seed(seed)
    actions = [int(env.action_space.sample()) for _ in range(steps)]
    if not gc_on:
        gc.disable()
    wall, cpu = time.perf_counter_ns(), time.process_time_ns()
    for action in actions:
        if env.step(action)[3]:
            env.reset()
    cpu = time.process_time_ns() - cpu
    wall = time.perf_counter_ns() - wall
    gc.enable()
    return steps / (cpu / 1e9), steps / (wall / 1e9)


def main(argv: list[str] | None = None) -> int:
    ap = bench_engine.bench_arguments(__doc__, "200 steps a workload, 1 repetition (< 1 min)", SEED)
    args = bench_engine.parse_bench_arguments(ap, argv, "bench_gym")
    reps = args.reps or (1 if args.quick else 3)
    steps = STEPS[args.quick]
    results = {}
    for scenario, slice_s in WORKLOADS:
        rates = [run(scenario, slice_s, steps, args.seed, args.gc_on) for _ in range(reps)]
        cpu = statistics.median(r[0] for r in rates)
        wall = statistics.median(r[1] for r in rates)
        results[f"{scenario}@{slice_s}s"] = {"steps_per_s": round(cpu), "wall_steps_per_s": round(wall)}
        print(f"{scenario:>10}, {slice_s:>3} s a step: {cpu:8,.0f} steps/s CPU ({wall:,.0f} wall)")
    print(f"{steps} random steps a workload, seed {args.seed}, median of {reps} rep(s)")
    if args.json:
        out = {
            **bench_engine.json_header("bench_gym", args, reps),
            "steps": steps,
            "workloads": results,
        }
        print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
