"""Let time pass between requests, for one simulation: the wall clock, or a virtual clock at a speed.

On the wall clock the scenario's agents and the venue's timers run as time passes. On a virtual clock
with a speed, engine time is advanced by speed × the real time elapsed, every tick, through the same
journaled command as ``POST /_sim/clock/advance``. Every venue of a server has its own ticker
(``api/web/app/application.py`` starts the default venue's, ``api/web/control/isolated_venues.py`` the others').

A tick the journal cannot take changes nothing (``api/runtime/journal_health.py``): the ticker goes on
ticking, and the simulation logs one line when its journal starts failing and one when it is written
again, however many ticks fail in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from cefisim.api.runtime.simulation import JournalWriteError, Simulation
from cefisim.api.web.server.venue_work import VenueWork

log = logging.getLogger("cefisim.app")
TICK_SECONDS = 0.05


def start_ticker(sim: Simulation, speed: float | None, work: VenueWork) -> asyncio.Task[None] | None:
    """The task that moves ``sim``'s time (None when nothing moves it: a virtual clock without speed).
    Call it with the event loop running; end the task with :func:`stop_ticker`. A tick's closing
    advance (timers, a recorded market's events) runs in steps as the venue's ``work``: its requests
    wait for it, the other venues' are served between the steps."""
    if sim.clock_mode == "wall":

        async def step() -> None:
            # a long catch-up (after a restart) runs in slices, the other venues served between them
            await work.run(sim, sim.tick())
    elif speed:
        last = time.monotonic()

        async def step() -> None:
            nonlocal last
            now = time.monotonic()
            target = sim.now_ns() + int((now - last) * speed * 1e9)
            await work.run(sim, sim.advance_steps(target))
            last = now
    else:
        return None

    async def run() -> None:
        while True:
            await asyncio.sleep(TICK_SECONDS)
            if sim.copying:
                continue  # a snapshot's copy in steps: moving time would finish it at once (the next tick catches up)
            try:
                await step()
            except JournalWriteError:
                pass  # nothing changed; the simulation said so when its journal started failing
            except Exception:  # a bug; keep serving and say so
                log.exception("clock tick failed")

    return asyncio.create_task(run())


async def stop_ticker(task: asyncio.Task[None] | None) -> None:
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
