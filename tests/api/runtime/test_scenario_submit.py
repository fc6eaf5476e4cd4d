"""The scenario's submit (``Simulation._bind``) journals each command at the time it applies at, the
time ``Venue.applies_at`` gives, though it asks only when that can differ from the time given."""

from __future__ import annotations

from pathlib import Path

from cefisim.api.formats.scenario import load_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine.commands import AdvanceClock, SetLatency
from tests.api.runtime.journal_lines import records

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"


def test_a_clock_move_and_a_command_before_the_clock_are_journaled_where_they_apply(tmp_path: Path) -> None:
    journal = tmp_path / "j.jsonl"
    sim = Simulation(load_scenario(SCENARIOS / "demo.json"), clock="virtual", journal_out=journal)
    now = sim.venue.clock.now
    submit = sim.scenario_submit
    submit(AdvanceClock(now + 5), now + 2)  # a clock move applies at its target
    submit(SetLatency(0, 0, 0), now + 3)  # given a time the clock has passed: applies at the clock
    submit(SetLatency(0, 0, 0), now + 9)  # later than the clock: applies at the time given
    sim.close()
    assert [(at, kind) for at, _, kind, _ in records(journal)[-3:]] == [
        (now + 5, "advance"),
        (now + 5, "latency"),
        (now + 9, "latency"),
    ]
    assert sim.venue.clock.now == now + 9
