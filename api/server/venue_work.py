"""Long work of one venue done in steps on the event loop, that venue's requests held meanwhile.

Every venue of a server shares one event loop, so work that takes long must not run in one piece:
the other venues' requests would wait behind it. The work here is the copy a read lag answers from
(``api/runtime/read_replica.py``): switching ``read_lag_ms`` on makes it due, and it takes time in
proportion to what the venue retains (~0.3 s of CPU for 32,000 orders).

Contract (:class:`VenueWork`, one per server, run by the middleware, ``api/server/middleware.py``):
- ``start(sim)``: when work is due on ``sim``'s venue and not running, it starts as a task of the loop:
  one bounded step (``ReadReplica.copy_steps``, a few milliseconds), then the loop runs whatever is
  ready (other venues' requests), then the next step, to the end. The middleware calls it after each
  request, so the copy starts as soon as the request that switched the lag on has been answered.
- ``hold(sim)``: a request for a venue with work due or running waits until it is done (starting it
  if needed), then runs: it never sees, nor has to finish at once, a copy half made. Other venues'
  requests are never held.
- The work ends early when the simulation no longer needs it (the lag switched off, the venue reset
  or restored); a request that then needs a copy makes one itself, at once, as without this module.
- What a step of the work raises ends the task (logged); the next request that needs the copy makes
  it itself and meets the same error as it would have without this module.
"""

from __future__ import annotations

import asyncio
import logging

from cefisim.api.runtime.read_replica import ReadReplica
from cefisim.api.runtime.simulation import Simulation

log = logging.getLogger("cefisim.app")


class VenueWork:
    """The long work of each venue of one server (the module docstring has the contract)."""

    def __init__(self) -> None:
        self._running: dict[ReadReplica, asyncio.Task[None]] = {}

    def start(self, sim: Simulation) -> asyncio.Task[None] | None:
        """The task doing the work due on ``sim``'s venue, started now if it was not running; None when
        nothing is due."""
        replica = sim.replica
        if replica is None or not replica.pending(sim.venue):
            return None
        task = self._running.get(replica)
        if task is None:
            task = asyncio.get_running_loop().create_task(_copy(sim, replica))
            self._running[replica] = task
            task.add_done_callback(lambda done: self._ended(replica, done))
        return task

    def _ended(self, replica: ReadReplica, task: asyncio.Task[None]) -> None:
        self._running.pop(replica, None)
        if not task.cancelled() and task.exception() is not None:
            log.error("a venue's read-lag copy failed; the next read makes it at once", exc_info=task.exception())

    async def hold(self, sim: Simulation) -> None:
        """Wait until no work is due on ``sim``'s venue (starting it if it is due)."""
        task = self.start(sim)
        if task is not None:
            # shielded: a request given up by its client must not cancel the venue's work; its error is
            # the task's, met again by whoever needs the copy next
            await asyncio.wait([asyncio.shield(task)])


async def _copy(sim: Simulation, replica: ReadReplica) -> None:
    venue = sim.venue
    for _ in replica.copy_steps(venue):
        await asyncio.sleep(0)  # the loop serves what is ready, then the next step
        if sim.replica is not replica or sim.venue is not venue:
            return  # the lag switched off, or the venue replaced: nothing to finish
