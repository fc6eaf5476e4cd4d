"""The clock policy of a simulation: how engine time relates to real time.

- ``virtual``: engine time starts at the scenario's ``start`` and moves only when something advances
  it: the control plane, ``cefisim replay`` (as fast as the CPU allows), or the ``--speed`` ticker
  (``api/web/server/ticker.py``: speed x the real time elapsed, through the same journaled advance).
  Requests apply at the current engine time. Fully deterministic: tests use it.
- ``wall``: engine time is the wall clock. The scenario is rebased to start when the simulation starts
  (its events and agents keep their spacing), each request applies at the wall time it arrives, and
  the server's ticker lets agents and timers run between requests. A venue fault may run this clock
  ahead or behind (:meth:`ClockPolicy.skew`).

The policy never moves the venue's clock itself: the simulation applies the journaled commands that do.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from cefisim.api.formats.scenario import Scenario, ScenarioError
from cefisim.engine.clock import NS_PER_SECOND

CLOCK_MODES = ("virtual", "wall")
MIN_WALL_INTERVAL_NS = NS_PER_SECOND // 10  # an agent's (mean) interval on the wall clock


def check_wall_clock(scenario: Scenario) -> None:
    """Raise :class:`ScenarioError` naming every agent that acts more often than the wall clock allows
    (``MIN_WALL_INTERVAL_NS``): on the wall clock a server that cannot keep up falls behind for ever."""
    problems = [
        (
            str(scenario.source),
            f"{scenario.agent_path(i)}.{name}",
            f"at least {MIN_WALL_INTERVAL_NS / NS_PER_SECOND:g} s on the wall clock (--clock wall)",
        )
        for i, spec in enumerate(scenario.agents)
        for name, attr in (("interval", "interval_ns"), ("mean_interval", "mean_interval_ns"))
        if getattr(spec, attr, MIN_WALL_INTERVAL_NS) < MIN_WALL_INTERVAL_NS
    ]
    problems = list(dict.fromkeys(problems))  # once per entry, not once per agent of a population
    if problems:
        raise ScenarioError(problems)


class ClockPolicy:
    """One simulation's clock mode and, on the wall clock, the (possibly skewed) wall clock it reads."""

    def __init__(self, mode: str, scenario: Scenario, wall_ns: Callable[[], int] = time.time_ns) -> None:
        """``ValueError`` for an unknown mode; :class:`ScenarioError` when ``scenario`` cannot run on the
        wall clock (:func:`check_wall_clock`)."""
        if mode not in CLOCK_MODES:
            raise ValueError("clock must be 'virtual' or 'wall'")
        if mode == "wall":
            check_wall_clock(scenario)
        self.mode = mode
        self.wall = mode == "wall"
        self.wall_ns = self._true_wall_ns = wall_ns

    def start_ns(self, scenario: Scenario) -> int:
        """Where a fresh run of ``scenario`` starts: its ``start``, or on the wall clock now."""
        return self.wall_ns() if self.wall else scenario.start_ns

    def now_ns(self, engine_now: int) -> int:
        """Engine time now, given where the venue's clock is (on the wall clock: the wall clock, never
        behind the venue's)."""
        return max(self.wall_ns(), engine_now) if self.wall else engine_now

    def skew(self, skew_ns: int) -> None:
        """Run the wall clock ``skew_ns`` ahead (negative: behind); 0 ends the skew. The clock function
        is swapped, so an unskewed clock costs nothing."""
        true = self._true_wall_ns
        self.wall_ns = true if skew_ns == 0 else (lambda: true() + skew_ns)
