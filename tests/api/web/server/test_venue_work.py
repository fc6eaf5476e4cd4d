"""Long work of one venue runs in steps on the event loop (api/web/server/venue_work.py): the copy a read lag
answers from is made a bounded step at a time after the switch is answered, the loop serving other work
between two steps; that venue's requests wait for it, other venues' do not."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cefisim.api.runtime import state_copy
from cefisim.api.runtime.state_copy import StateCopy
from cefisim.api.web.control.isolated_venues import VENUES
from tests.api.conftest import Api
from tests.api.web.control.test_venue_faults import _data, _set
from tests.api.web.control.test_venues import create, signed


class Steps:
    """Counts the copy's steps, and what a task that only yields to the loop counted at each."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, values: int) -> None:
        monkeypatch.setattr(state_copy, "STEP_VALUES", values)
        self.ticks = 0
        self.seen: list[int] = []
        step = StateCopy.step

        def counted(copy: StateCopy, budget: int = values) -> bool:
            self.seen.append(self.ticks)
            return step(copy, budget)

        monkeypatch.setattr(StateCopy, "step", counted)

    async def tick(self) -> None:
        while True:
            self.ticks += 1
            await asyncio.sleep(0)


async def _with_ticker(steps: Steps, work: Any) -> Any:
    ticker = asyncio.create_task(steps.tick())
    try:
        return await work
    finally:
        ticker.cancel()


async def test_the_copy_is_made_in_steps_after_the_switch_is_answered(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    for price in ("49000.00", "49100.00", "49200.00"):
        await api.order(price=price)
    await api.advance(2)
    steps = Steps(monkeypatch, values=40)

    async def switch_then_read() -> list[dict[str, Any]]:
        await _set(api, read_lag_ms=1000)
        replica = api.sim.replica
        assert replica is not None and replica.pending(api.sim.venue)  # answered before the copy is whole
        return await _data(api, "/v1/cefi/orders/all")  # held until it is, then read from it

    listed = await _with_ticker(steps, switch_then_read())
    assert [o["status"] for o in listed] == ["ACTIVE"] * 3
    replica = api.sim.replica
    assert replica is not None and not replica.pending(api.sim.venue) and api.sim.read_venue() is replica.copy
    assert len(steps.seen) > 5
    # the loop ran other work between every two steps: the ticker moved each time
    assert all(b > a for a, b in zip(steps.seen, steps.seen[1:], strict=False))


async def test_other_venues_are_served_while_one_venues_copy_is_made(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    venue = await create(api)
    sim = api.client.app[VENUES].created[venue["id"]].sim
    steps = Steps(monkeypatch, values=1)  # a step per value: hundreds of them
    status, body, _ = await api.call(
        "POST", f"/_sim/venues/{venue['id']}/faults/venue", client_id=None, json={"read_lag_ms": 1000}
    )
    assert status == 200, body
    assert sim.replica is not None and sim.replica.pending(sim.venue)
    # the default venue's reads are answered meanwhile, the copy of the other venue still being made
    for _ in range(3):
        assert len(await _data(api, "/v1/cefi/balances")) > 0
    assert sim.replica.pending(sim.venue) and len(steps.seen) > 0
    # the venue's own read waits for its copy
    answer = await _with_ticker(steps, signed(api, venue, "GET", "/v1/cefi/balances"))
    assert answer[0] == 200 and not sim.replica.pending(sim.venue)
    assert sim.read_venue() is sim.replica.copy
