"""The scenario runner: timed events and agent actions, merged in engine-time order, into one venue.

Contract:
- Inputs are the scenario's timed events, a list of ``(at_ns, command)`` sorted by time (stably, so
  the file's order breaks ties), and agent specs (``engine/simulation/agents.py``,
  ``engine/simulation/population.py``). Agent number ``i`` gets its own generator
  ``make_rng(agent_seed(rng_seed, i))``, and the state shared by population entry ``g`` its own,
  ``make_rng(agent_seed(rng_seed, -1 - g))``: the caller passes ``random.Random`` so that nothing in
  ``engine/`` imports ``random``.
- ``run(t, on_step, submit=...)`` submits everything due at or before ``t`` with ``submit(command,
  time)`` in (time, sequence) order: at one instant the events come first in file order, then the
  agents in their declared order. It then moves the clock to ``t`` with an ``AdvanceClock`` submitted
  the same way (when the clock is not already there), so every timer due by ``t`` fires.
  ``on_step(at, command, result)`` is called after each submission; an agent gets each result back
  before it submits its next command. ``steps(t)`` is the same run as an iterator of ``(at, command,
  result)``: each turn's steps come once the turn (an event, or one agent's action) is done.
- ``submit`` defaults to ``venue.submit``. The runtime (``api/runtime/simulation.py``) passes its own,
  which journals each command before it applies it: the runner journals nothing and never submits
  around its caller's back.
- An agent's next action time must be later than the action it just took; a runner therefore always
  makes progress, and the same inputs give the same submissions, events and journal.
- The runner holds no state of the venue besides what the agents remember (their own orders); the
  API may submit its own commands to the same venue between two calls.

Complexity: O(log agents) per agent action plus the venue's own cost per command.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, ClassVar

from cefisim.engine.commands import AdvanceClock, Command
from cefisim.engine.simulation.agents import Submit, agent_seed
from cefisim.engine.simulation.population import AnySpec, build_agent

if TYPE_CHECKING:
    from random import Random

    from cefisim.engine.venue import Result, Venue

Step = tuple[int, Command, "Result"]
OnStep = Callable[[int, Command, "Result"], None]


class ScenarioRunner:
    SNAPSHOT: ClassVar[tuple[str, ...]] = ("venue", "_events", "_event_index", "agents", "_heap")  # snapshot.py

    def __init__(
        self,
        venue: Venue,
        events: Sequence[tuple[int, Command]],
        agents: Sequence[AnySpec],
        rng_seed: int,
        make_rng: Callable[[int], Random],
    ) -> None:
        self.venue = venue
        self._events = list(events)
        self._event_index = 0
        shared: dict[object, object] = {}  # the state each population entry's agents share (population.py)

        def shared_rng(group: int) -> Random:  # a seed no agent has: agents count up from 0
            return make_rng(agent_seed(rng_seed, -1 - group))

        self.agents = [
            build_agent(spec, make_rng(agent_seed(rng_seed, i)), shared, shared_rng) for i, spec in enumerate(agents)
        ]
        self._heap: list[tuple[int, int]] = []
        for i, agent in enumerate(self.agents):
            due = agent.next_time()
            if due is not None:
                self._heap.append((due, i))
        heapq.heapify(self._heap)

    def next_time(self) -> int | None:
        """When the next event or agent action is due; None when nothing is left."""
        due = self._events[self._event_index][0] if self._event_index < len(self._events) else None
        if self._heap and (due is None or self._heap[0][0] < due):
            due = self._heap[0][0]
        return due

    def bounded(self) -> bool:
        """Whether the run ends by itself (every agent has an end)."""
        return all(agent.spec.end_ns is not None for agent in self.agents)

    def run(
        self,
        t_ns: int,
        on_step: OnStep | None = None,
        advance_clock: bool = True,
        max_turns: int | None = None,
        submit: Submit | None = None,
    ) -> int:
        """Submit everything due at or before ``t_ns``, calling ``on_step`` after each submission; then
        move the clock to ``t_ns`` (``advance_clock=False``: leave it where the last submission put it,
        to run a scenario in slices that submit exactly what one run would). Returns ``t_ns``: every
        turn due by then is taken.

        ``max_turns``: stop once that many turns are taken and the instant they reached is complete
        (every turn due at that instant taken) and return that instant (before ``t_ns``), the clock
        left where the last submission put it: a state one ``run`` to ``t_ns`` passes through, so
        that the commands of a long stretch run in slices of any size are those of one run, and a
        caller may apply other commands in between at that instant. Memory stays flat:
        nothing is kept per step. ``submit``: how each command is applied (default ``venue.submit``)."""
        submit = self._stepping(self.venue.submit if submit is None else submit, on_step)
        if max_turns is None:
            turn = self._turn
            while turn(t_ns, submit):
                pass
        else:
            taken = 0
            while True:
                reached = self.next_time()  # the time of the turn about to be taken
                if not self._turn(t_ns, submit):
                    break
                taken += 1
                if taken >= max_turns:
                    due = self.next_time()
                    if reached is not None and due is not None and reached < due <= t_ns:
                        return reached
        if advance_clock:
            self._close(t_ns, submit)
        return t_ns

    def steps(self, t_ns: int, submit: Submit | None = None) -> Iterator[Step]:
        """:meth:`run` as an iterator: the steps of each turn, once the turn is done."""
        made: list[Step] = []

        def on_step(at: int, cmd: Command, result: Result) -> None:
            made.append((at, cmd, result))

        submit = self._stepping(self.venue.submit if submit is None else submit, on_step)
        while self._turn(t_ns, submit):
            yield from made
            made.clear()
        self._close(t_ns, submit)
        yield from made

    def _turn(self, t_ns: int, submit: Submit) -> bool:
        """Take the next turn due at or before ``t_ns``: one event, or one agent's action. False when
        nothing is due by then."""
        events = self._events
        heap = self._heap
        ev_due = events[self._event_index][0] if self._event_index < len(events) else None
        if heap and (ev_due is None or heap[0][0] < ev_due):
            now, i = heap[0]
            if now > t_ns:
                return False
            agent = self.agents[i]
            agent.act(self.venue, now, submit)
            # the agent's entry is still the heap's first: replace it (one sift instead of two;
            # entries are unique (time, index) pairs, so the order they come out in is the same)
            due = agent.next_time()
            if due is None:
                heapq.heappop(heap)
            else:
                assert due > now, f"agent {i} would act again at {due}, not after {now}"
                heapq.heapreplace(heap, (due, i))
            return True
        if ev_due is not None and ev_due <= t_ns:
            at, cmd = events[self._event_index]
            self._event_index += 1
            submit(cmd, at)
            return True
        return False

    @staticmethod
    def _stepping(submit: Submit, on_step: OnStep | None) -> Submit:
        """``submit``, calling ``on_step`` after each submission when one is given: made once a run,
        and handed to the agents as it is (an agent's commands cost no wrapper call of the runner's)."""
        if on_step is None:
            return submit

        def submit_step(cmd: Command, at: int) -> Result:
            result = submit(cmd, at)
            on_step(at, cmd, result)
            return result

        return submit_step

    def _close(self, t_ns: int, submit: Submit) -> None:
        if self.venue.clock.now < t_ns:
            submit(AdvanceClock(t_ns), t_ns)

    def run_until(self, t_ns: int) -> list[Result]:
        """:meth:`run` to ``t_ns``, collecting the results."""
        results: list[Result] = []
        self.run(t_ns, lambda at, cmd, result: results.append(result))
        return results

    def end_time(self) -> int | None:
        """The time by which every event and every bounded agent is done; None if an agent never ends."""
        if not self.bounded():
            return None
        last = self._events[-1][0] if self._events else self.venue.clock.now
        ends = [agent.spec.end_ns for agent in self.agents if agent.spec.end_ns is not None]
        return max(last, self.venue.clock.now, *ends)

    def run_to_end(self, limit_ns: int | None = None) -> list[Result]:
        """Run to ``limit_ns``, or when None to :meth:`end_time` (an error if an agent never ends)."""
        if limit_ns is None:
            limit_ns = self.end_time()
            if limit_ns is None:
                raise ValueError("an agent has no end: give run_to_end a limit")
        return self.run_until(limit_ns)


__all__ = ["OnStep", "ScenarioRunner", "Step", "Submit"]
