"""Long work of one venue done in steps on the event loop, that venue's requests held meanwhile.

Every venue of a server shares one event loop, so work that takes long must not run in one piece:
the other venues' requests would wait behind it. The work here copies a venue's state
(``api/runtime/state_copy.py``, ~0.3 s of CPU for 32,000 orders), for two owners:
- the copy a read lag answers from (``api/runtime/read_replica.py``): switching ``read_lag_ms`` on
  makes it due;
- the copy a snapshot is written from (``api/runtime/snapshot_steps.py``): ``GET /_sim/snapshot``
  runs it (:meth:`VenueWork.run`), then writes the document from the copy in a thread.

Contract (:class:`VenueWork`, one per server, run by the middleware, ``api/web/server/middleware.py``):
- The work runs as a task of the loop: one bounded step (a few milliseconds), then the loop runs
  whatever is ready (other venues' requests), then the next step, to the end.
- ``start(sim)``: when a read-lag copy is due on ``sim``'s venue and nothing runs there, it starts.
  The middleware calls it after each request, so the copy starts as soon as the request that
  switched the lag on has been answered.
- ``run(sim, steps)``: runs ``steps`` (an iterator yielding between two steps) as the venue's work,
  once the work running there has ended; returns when it is done, raising what a step raised.
- ``hold(sim)``: a request for a venue with work running (or a read-lag copy due, which it then
  starts) waits until it is done, then runs: it never sees, nor has to finish at once, a copy half
  made. Other venues' requests are never held. The middleware calls it only while some work runs or
  the venue has a read lag (``running``), so it costs nothing otherwise.
- A read-lag copy ends early when the simulation no longer needs it (the lag switched off, the venue
  reset or restored); a request that then needs a copy makes one itself, at once, as without this
  module. What a step raises ends the work: a read-lag copy's is logged (the next request that needs
  the copy makes it itself and meets the same error), ``run``'s is its caller's.
- The work goes on when the request that asked for it is given up by its client (its steps are what
  the venue's state needs finished before it changes).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

from cefisim.api.runtime.read_replica import ReadReplica
from cefisim.api.runtime.simulation import Simulation

log = logging.getLogger("cefisim.app")


class VenueWork:
    """The long work of each venue of one server (the module docstring has the contract)."""

    def __init__(self) -> None:
        self.running: dict[Simulation, asyncio.Task[None]] = {}  # the work of each venue, while it runs

    def start(self, sim: Simulation) -> asyncio.Task[None] | None:
        """The task of the work running on ``sim``'s venue, or of its read-lag copy started now if that
        is due; None when nothing runs nor is due."""
        task = self.running.get(sim)
        if task is not None:
            return task
        replica = sim.replica
        if replica is None or not replica.pending(sim.venue):
            return None
        failure = "a venue's read-lag copy failed; the next read makes it at once"
        return self._begin(sim, _replica_copy(sim, replica), failure)

    async def run(self, sim: Simulation, steps: Iterator[None]) -> None:
        """Run ``steps`` as ``sim``'s venue's work, its requests held meanwhile; what a step raises is raised."""
        while (other := self.running.get(sim)) is not None:
            await _wait(other)
        task = self._begin(sim, steps, None)
        await _wait(task)
        task.result()

    async def hold(self, sim: Simulation) -> None:
        """Wait until the work running on ``sim``'s venue is done, and its read-lag copy if due."""
        task = self.running.get(sim)
        if task is not None:
            await _wait(task)
        task = self.start(sim)
        if task is not None:
            await _wait(task)

    def _begin(self, sim: Simulation, steps: Iterator[None], failure: str | None) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(_step_through(steps))
        self.running[sim] = task
        task.add_done_callback(lambda done: self._ended(sim, done, failure))
        return task

    def _ended(self, sim: Simulation, task: asyncio.Task[None], failure: str | None) -> None:
        if self.running.get(sim) is task:
            del self.running[sim]
        if task.cancelled():
            return
        error = task.exception()  # retrieved here: run()'s caller may have been given up meanwhile
        if error is not None and failure is not None:
            log.error(failure, exc_info=error)


async def _wait(task: asyncio.Task[None]) -> None:
    # shielded: a request given up by its client must not cancel the venue's work
    await asyncio.wait([asyncio.shield(task)])


async def _step_through(steps: Iterator[None]) -> None:
    for _ in steps:
        await asyncio.sleep(0)  # the loop serves what is ready, then the next step


def _replica_copy(sim: Simulation, replica: ReadReplica) -> Iterator[None]:
    venue = sim.venue
    for _ in replica.copy_steps(venue):
        yield
        if sim.replica is not replica or sim.venue is not venue:
            return  # the lag switched off, or the venue replaced: nothing to finish
