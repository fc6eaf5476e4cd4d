"""benchmarks/bench_agents.py counts the runner's turns by wrapping ``ScenarioRunner._turn``: a change
of that private signature breaks the benchmark, which no other test runs (its pass takes minutes)."""

from __future__ import annotations

from benchmarks import bench_agents


def test_the_benchmarks_counting_pass_runs_on_the_runners_turns() -> None:
    scenario = bench_agents.make_scenario(2, bench_agents.SEED)
    pairs, decisions = bench_agents.record(scenario)
    assert pairs, "a population run submits commands"
    assert decisions > 0, "agents took turns"
