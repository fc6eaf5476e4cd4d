"""A Gymnasium environment over any scenario (or recording): the agent is one client of the venue.

Needs the ``[gym]`` extra (``pip install 'cefisim[gym]'``). ``docs/gym.md`` is the user's guide.

Contract:
- ``VenueEnv(scenario, ...)``: ``scenario`` is a shipped scenario's name (``"population"``), a file
  (a scenario whose market may be a recording: its ``recorded`` section), or a loaded
  :class:`~cefisim.api.formats.scenario.Scenario`. The engine runs in-process, as ``cefisim backtest`` does.
- ``reset(seed=s)`` builds a fresh venue from the scenario with its agents seeded from ``s`` (None on
  the first reset: the scenario's own seed; on later resets: a seed drawn from ``np_random``), runs the
  scenario's start instant (and further steps, up to ``WARM_UP_STEPS``, until the book has both
  sides), and returns the first observation. The same seed and the same actions
  give the same observations, rewards and venue, bit for bit.
- ``step(action)`` applies the action's commands for the agent's client at the current engine time,
  then runs the scenario (its agents, events and the venue's timers) for ``step_seconds`` of engine
  time. ``terminated`` is always False (a market does not end); ``truncated`` is True after
  ``max_steps`` steps or at the scenario's ``end``.
- Action (``Discrete(4 + len(offsets))``): 0 nothing; 1 cancel the agent's open orders; 2 buy ``qty``
  at market; 3 sell ``qty`` at market; ``4 + k`` cancel, then quote a bid ``offsets[k]`` ticks below
  the mid and an ask as far above it (GTC limits of ``qty`` each).
- Observation (``Box`` of float32, ``4 * depth + 7`` values): for each of ``depth`` bid levels then
  ask levels, (distance from the mid in ticks, size in lots), zeros past the last level; then the
  inventory (lots bought minus sold since reset), the cash change since reset (quote currency), the
  agent's open bids and asks (counts), the spread (ticks), the mid's change since reset (ticks) and the
  agent's open quantity (lots).
- Reward: the change of the agent's equity (cash plus inventory at the mid, in quote currency) over
  the step, minus ``inventory_penalty`` times the absolute inventory in base units.

Complexity: a step costs the scenario's own work over ``step_seconds`` plus O(depth) to observe.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from cefisim.api.cli.common.extras import missing_extra

try:  # the [gym] extra: without it, one line naming the extra instead of "No module named 'gymnasium'"
    import gymnasium
    import numpy as np
    from gymnasium import spaces
except ModuleNotFoundError as exc:
    raise missing_extra(exc, "gym", "cefisim.gym") from None

from cefisim.api.cli.backtest.backtest_command import default_client
from cefisim.api.formats.scenario import Scenario, load_scenario
from cefisim.api.formats.scenario.shipped import resolve
from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.commands import CancelOrder, Command, PlaceOrder
from cefisim.engine.records import Order
from cefisim.engine.venue import Venue
from cefisim.engine.vocabulary import FINAL, OrderStatus, OrderType, Side, TimeInForce

BUY = Side.BUY.value
SELL = Side.SELL.value
ACTIVE = OrderStatus.ACTIVE.value
GTC = TimeInForce.GTC.value
NOTHING, CANCEL, MARKET_BUY, MARKET_SELL = range(4)
MAX_SEED = 2**63 - 1
WARM_UP_STEPS = 100  # steps reset() waits at most for a two-sided book


class VenueEnv(gymnasium.Env[np.ndarray, np.int64]):
    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 (gymnasium's own attribute)

    def __init__(
        self,
        scenario: str | Path | Scenario = "population",
        *,
        client: str | None = None,
        instrument: str | None = None,
        step_seconds: float | str = "1",
        depth: int = 5,
        offsets: Sequence[int] = (1, 2, 5),
        qty: str | None = None,
        inventory_penalty: float = 0.0,
        max_steps: int | None = None,
    ) -> None:
        self.scenario = scenario if isinstance(scenario, Scenario) else load_scenario(resolve(str(scenario)))
        sc = self.scenario
        self.client_id = default_client(sc) if client is None else _ref(sc.client_id(client), "client", client)
        first = next(iter(sc.instruments))
        self.instrument_id = (
            first if instrument is None else _ref(sc.instrument_id(instrument), "instrument", instrument)
        )
        inst = sc.instruments[self.instrument_id]
        self.step_ns = int(Decimal(str(step_seconds)) * NS_PER_SECOND)
        if self.step_ns <= 0:
            raise ValueError("step_seconds must be positive")
        self.depth = depth
        self.offsets = tuple(int(o) for o in offsets)
        self.qty_text = qty if qty is not None else inst.qty_grid.format(inst.min_qty)
        self.inventory_penalty = float(inventory_penalty)
        self.max_steps = max_steps
        self._tick = float(Decimal(inst.price_grid.format(1)))  # quote currency per tick
        self._base_unit = 10.0**-inst.base.decimals
        self._quote_unit = 10.0**-inst.quote.decimals
        self._base_per_lot = inst.base_per_lot
        self.action_space: spaces.Discrete = spaces.Discrete(4 + len(self.offsets))
        self._size = 4 * depth + 7
        top = float(np.finfo(np.float32).max)
        self.observation_space = spaces.Box(-top, top, shape=(self._size,), dtype=np.float32)
        self._episodes = 0
        self.venue: Venue | None = None

    # --- the Gymnasium interface -----------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        if seed is not None:
            run_seed = seed
        elif self._episodes == 0:
            run_seed = self.scenario.seed
        else:
            run_seed = int(self.np_random.integers(0, MAX_SEED))
        self._episodes += 1
        sc = dataclasses.replace(self.scenario, seed=run_seed)
        self.venue = venue = sc.build_venue()
        self.runner = sc.runner(venue)
        self.now = sc.start_ns
        self.end_ns = sc.end_ns
        self.runner.run(self.now)  # the start instant: makers quote before the agent acts
        for _ in range(WARM_UP_STEPS):  # their quotes may arrive later (entry latency): wait for a mid
            if self._mid_ticks() is not None or self.now + self.step_ns > self.end_ns:
                break
            self.now += self.step_ns
            self.runner.run(self.now)
        self.steps = 0
        self._orders: list[Order] = []
        self._mid = self._mid_ticks() or 0.0
        self._start_mid = self._mid
        self._start_base, self._start_quote = self._holdings()
        self._equity = self._equity_now()
        return self._observe(), {"seed": run_seed, "now_ns": self.now, "equity": self._equity}

    def step(self, action: np.int64 | int) -> tuple[np.ndarray, float, bool, bool, dict]:
        assert self.venue is not None, "call reset() first"
        act = int(action)
        if not 0 <= act < self.action_space.n:
            raise ValueError(f"action {act} is not in {self.action_space}")
        for cmd in self._commands(act):
            order = self.venue.submit(cmd, at=self.now).order
            if isinstance(cmd, PlaceOrder) and order is not None and order.status not in FINAL:
                self._orders.append(order)
        self.now += self.step_ns
        self.runner.run(self.now)
        self.steps += 1
        self._orders = [o for o in self._orders if o.status not in FINAL]
        equity = self._equity_now()
        inventory = self._holdings()[0] - self._start_base
        reward = equity - self._equity - self.inventory_penalty * abs(inventory) * self._base_unit
        self._equity = equity
        truncated = self.now >= self.end_ns or (self.max_steps is not None and self.steps >= self.max_steps)
        return self._observe(), float(reward), False, truncated, {"now_ns": self.now, "equity": equity}

    # --- inside ------------------------------------------------------------------------------

    def _commands(self, act: int) -> list[Command]:
        cid, iid = self.client_id, self.instrument_id
        if act == NOTHING:
            return []
        if act in (MARKET_BUY, MARKET_SELL):
            return [PlaceOrder(cid, iid, BUY if act == MARKET_BUY else SELL, OrderType.MARKET.value, self.qty_text)]
        cmds: list[Command] = [CancelOrder(cid, str(o.id)) for o in self._orders if o.status == ACTIVE]
        if act == CANCEL:
            return cmds
        assert self.venue is not None
        book = self.venue.books[iid]
        best_bid, best_ask = book.best_bid(), book.best_ask()
        if best_bid is None or best_ask is None:
            return cmds
        offset = self.offsets[act - 4]
        grid = self.venue.instruments[iid].price_grid
        twice = best_bid + best_ask
        for side, price in ((BUY, twice // 2 - offset), (SELL, (twice + 1) // 2 + offset)):
            if price >= 1:  # whole ticks either side of the mid
                text = grid.format(price)
                cmds.append(PlaceOrder(cid, iid, side, OrderType.LIMIT.value, self.qty_text, text, GTC))
        return cmds

    def _mid_ticks(self) -> float | None:
        assert self.venue is not None
        book = self.venue.books[self.instrument_id]
        bid, ask = book.best_bid(), book.best_ask()
        return None if bid is None or ask is None else (bid + ask) / 2

    def _holdings(self) -> tuple[int, int]:
        """The client's base and quote totals in the assets' smallest units."""
        assert self.venue is not None
        inst = self.venue.instruments[self.instrument_id]
        balances = self.venue.accounts[self.client_id].balances
        base = balances.get(inst.base.id)
        quote = balances.get(inst.quote.id)
        return (base.total if base else 0), (quote.total if quote else 0)

    def _equity_now(self) -> float:
        mid = self._mid_ticks()
        if mid is not None:
            self._mid = mid
        base, quote = self._holdings()
        return quote * self._quote_unit + base * self._base_unit * self._mid * self._tick

    def _observe(self) -> np.ndarray:
        assert self.venue is not None
        book = self.venue.books[self.instrument_id]
        obs = np.zeros(self._size, dtype=np.float32)
        mid = self._mid
        for k, side in enumerate((BUY, SELL)):
            first = 2 * self.depth * k
            for j, (price, lots, _) in enumerate(book.depth(side, self.depth)):
                obs[first + 2 * j] = abs(price - mid)
                obs[first + 2 * j + 1] = lots
        base, quote = self._holdings()
        bids = [o for o in self._orders if o.side == BUY]
        asks = [o for o in self._orders if o.side == SELL]
        best_bid, best_ask = book.best_bid(), book.best_ask()
        spread = best_ask - best_bid if best_bid is not None and best_ask is not None else 0
        obs[4 * self.depth :] = (
            (base - self._start_base) / self._base_per_lot,
            (quote - self._start_quote) * self._quote_unit,
            len(bids),
            len(asks),
            spread,
            mid - self._start_mid,
            sum(o.remaining for o in self._orders),
        )
        return obs


def _ref(found: int | None, kind: str, ref: str) -> int:
    if found is None:
        raise ValueError(f"the scenario has no {kind} {ref!r}")
    return found


gymnasium.register(id="cefisim/Venue-v0", entry_point="cefisim.gym:VenueEnv")

__all__ = ["VenueEnv"]
