"""The clock ticker (api/web/server/ticker.py): a tick's advance runs as the venue's work, so that
venue's requests wait for a closing advance in steps while the other venues are served between them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.server import ticker
from cefisim.api.web.server.ticker import start_ticker, stop_ticker
from cefisim.api.web.server.venue_work import VenueWork
from tests.api.conftest import scenario_doc


class CountedWork(VenueWork):
    """The venues' work, remembering which simulation each run was for and that it ran to its end."""

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[Simulation] = []

    async def run(self, sim: Simulation, steps: Iterator[None]) -> None:
        assert sim not in self.running  # one run of a venue at a time
        await super().run(sim, steps)
        self.runs.append(sim)


@pytest.mark.parametrize("clock", ["virtual", "wall"])
async def test_every_tick_runs_as_the_venues_work(clock: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ticker, "TICK_SECONDS", 0.001)
    sim = Simulation(parse_scenario(scenario_doc(), "ticker.json"), clock=clock)
    work = CountedWork()
    start = sim.venue.clock.now
    task = start_ticker(sim, 1000.0 if clock == "virtual" else None, work)
    try:
        deadline = time.monotonic() + 60
        # (on the wall clock an idle venue's engine clock stays put: nothing was due, nothing journaled)
        while len(work.runs) < 3 or (clock == "virtual" and sim.venue.clock.now == start):
            assert time.monotonic() < deadline, "the ticker did not tick"
            await asyncio.sleep(0.01)
    finally:
        await stop_ticker(task)
    assert set(work.runs) == {sim}
    assert sim.venue.clock.now > start if clock == "virtual" else sim.venue.clock.now >= start
