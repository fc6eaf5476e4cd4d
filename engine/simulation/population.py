"""Agent populations: value, momentum and noise traders and inventory-limited market makers.

Contract (on top of ``agents.py``'s, which holds for these agents too):
- A scenario's ``agents`` entry of one of these kinds becomes ``count`` agents (the loader expands it,
  one spec and one client per agent). Every agent is its own client with its own generator.
- State shared by the agents of one entry (the value traders' fundamental, the noise traders' activity
  regime) is one object per entry (:class:`Fundamental`, :class:`Activity`), advanced in fixed steps on a
  grid of engine times from its own generator: its path is the same whoever asks, and asking is
  always at the runner's current time, which never goes back.
- Entry latency: each agent draws its latency once, uniform in ``[latency_min_ns, latency_max_ns]``,
  from its own generator. A decision made at ``t`` from the venue's state at ``t`` reaches the venue at
  ``t + latency``: the agent wakes then and submits what it decided (cancels of the orders it chose,
  then its new orders), so a decision can arrive stale, as over a network.
- Each wake draws its random numbers before it looks at the venue, so the stream of draws, and with it
  the wake-up times, never depends on the market.
- Prices are integer ticks and sizes integer lots: reversion and smoothing are integer fractions
  (1e-9), noise is a binomial walk of whole ticks. The specs and the shared state are
  ``population_specs.py``.

Complexity: a wake is O(1) commands (O(levels) for a maker), plus O(``long``) for a momentum trader.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from cefisim.engine.commands import CancelOrder, PlaceOrder
from cefisim.engine.records import Order
from cefisim.engine.simulation.agents import (
    ACTIVE,
    ALO,
    BUY,
    GTC,
    I_ACTIVE,
    IOC,
    LIMIT,
    MARKET,
    SELL,
    AgentSpec,
    Submit,
    below,
    chance,
    exponential,
)
from cefisim.engine.simulation.agents import Agent as ScenarioAgent
from cefisim.engine.simulation.agents import build_agent as build_scenario_agent
from cefisim.engine.simulation.population_specs import (
    Activity,
    Fundamental,
    InventoryMakerSpec,
    MomentumTraderSpec,
    NoiseTraderSpec,
    PopulationSpec,
    Spec,
    ValueTraderSpec,
    binomial_noise,
    fraction_of,
    int_div,
)
from cefisim.engine.units import RATE_ONE
from cefisim.engine.vocabulary import FINAL

if TYPE_CHECKING:
    from random import Random

    from cefisim.engine.book import Book
    from cefisim.engine.reference import Instrument
    from cefisim.engine.venue import Venue


# --- the agents --------------------------------------------------------------------------------


class PopulationAgent:
    """The schedule, the latency and the order bookkeeping the kinds share; a kind says when it
    wakes next (``gap``) and what it decides (``decide``: fills ``_cancels`` and ``_places``)."""

    #: what every kind saves (api/runtime/snapshot.py); each kind's SNAPSHOT adds its own state
    SAVED: ClassVar[tuple[str, ...]] = (
        "spec",
        "rng",
        "latency",
        "_next",
        "_wake",
        "_sending",
        "_cancels",
        "_places",
        "_live",
    )

    spec: PopulationSpec

    def __init__(self, spec: PopulationSpec, rng: Random) -> None:
        self.spec = spec
        self.rng = rng
        spread = spec.latency_max_ns - spec.latency_min_ns
        self.latency = spec.latency_min_ns + (below(rng, spread + 1) if spread > 0 else 0)
        self._next: int | None = spec.start_ns + self.first_gap()
        self._wake: int | None = None
        self._sending = False
        self._cancels: list[Order] = []
        self._places: list[PlaceOrder] = []
        self._live: list[Order] = []

    def next_time(self) -> int | None:
        return self._next

    def first_gap(self) -> int:
        return self.gap()

    def gap(self) -> int:
        raise TypeError(f"{type(self).__name__} has no schedule")

    def decide(self, venue: Venue, inst: Instrument, now: int) -> None:
        raise TypeError(f"{type(self).__name__} decides nothing")

    def act(self, venue: Venue, now: int, submit: Submit) -> None:
        if self._sending:  # what was decided one latency ago reaches the venue now
            self._sending = False
            self._send(submit, now)
            self._next = self._wake
            return
        end = self.spec.end_ns
        self._live = [o for o in self._live if o.status not in FINAL]
        if end is not None and now >= end:
            self._next = None
            self._cancels = self._live
            self._send(submit, now)
            return
        wake = now + max(1, self.gap())  # drawn before looking at the venue
        if end is not None and wake > end:
            wake = end
        self.decide(venue, venue.instruments[self.spec.instrument_id], now)
        if not self._cancels and not self._places:
            self._next = wake
        elif self.latency:
            self._sending = True
            self._next = now + self.latency
            self._wake = max(wake, self._next + 1)
        else:
            self._send(submit, now)
            self._next = wake

    def _send(self, submit: Submit, now: int) -> None:
        client_id = self.spec.client_id
        for order in self._cancels:
            if order.status == ACTIVE:
                submit(CancelOrder(client_id, str(order.id)), now)
        for cmd in self._places:
            placed = submit(cmd, now).order
            if placed is not None and placed.status not in FINAL:
                self._live.append(placed)
        self._cancels, self._places = [], []

    def order(
        self, inst: Instrument, side: str, lots: int, price: int | None, tif: str = GTC, exec_inst: tuple[str, ...] = ()
    ) -> None:
        """Decide a limit order (a MARKET one when ``price`` is None)."""
        spec = self.spec
        qty = inst.qty_grid.format(lots)
        if price is None:
            self._places.append(PlaceOrder(spec.client_id, spec.instrument_id, side, MARKET, qty))
        else:
            text = inst.price_grid.format(max(1, price))
            cmd = PlaceOrder(spec.client_id, spec.instrument_id, side, LIMIT, qty, text, tif, (), exec_inst)
            self._places.append(cmd)

    def take(self, inst: Instrument, book: Book, side: str, lots: int, market: bool, through: int) -> None:
        """Decide a MARKET order, or an IOC limit ``through`` ticks beyond the touch (none when the
        side to take is empty)."""
        if market:
            self.order(inst, side, lots, None)
            return
        touch = book.best_ask() if side == BUY else book.best_bid()
        if touch is not None:
            self.order(inst, side, lots, touch + through if side == BUY else touch - through, IOC)


class PoissonAgent(PopulationAgent):
    spec: ValueTraderSpec | MomentumTraderSpec | NoiseTraderSpec

    def gap(self) -> int:
        return int(exponential(self.rng) * self.spec.mean_interval_ns)

    def lots(self) -> int:
        spec = self.spec
        return spec.qty_min + below(self.rng, spec.qty_max - spec.qty_min + 1)


def mid2(book: Book) -> int | None:
    """Twice the mid in ticks (exact), or None unless both sides have orders."""
    bid, ask = book.best_bid(), book.best_ask()
    return None if bid is None or ask is None else bid + ask


class ValueTrader(PoissonAgent):
    """Trades toward its own estimate of a fundamental value it sees only through noise: buys below
    it, sells above it, one resting order at a time (replaced at each wake)."""

    SNAPSHOT = (*PopulationAgent.SAVED, "fundamental", "_estimate")
    spec: ValueTraderSpec

    def __init__(self, spec: ValueTraderSpec, rng: Random, fundamental: Fundamental) -> None:
        self.fundamental = fundamental
        self._estimate: int | None = None
        super().__init__(spec, rng)

    def decide(self, venue: Venue, inst: Instrument, now: int) -> None:
        spec, rng = self.spec, self.rng
        seen = self.fundamental.value_at(now) + binomial_noise(rng, spec.noise_vol, spec.noise_step)
        est = seen if self._estimate is None else self._estimate + fraction_of(seen - self._estimate, spec.smoothing)
        self._estimate = est
        lots = self.lots()
        coin = chance(rng, RATE_ONE // 2)
        if inst.status != I_ACTIVE:
            return
        self._cancels = list(self._live)
        twice = mid2(venue.books[spec.instrument_id])
        buy = coin if twice is None or twice == 2 * est else 2 * est > twice
        self.order(inst, BUY if buy else SELL, lots, est - spec.margin if buy else est + spec.margin)


class MomentumTrader(PoissonAgent):
    """Follows the trend it samples at its own wakes: takes liquidity on the side the short average
    of the mid leads the long one by more than ``threshold`` ticks."""

    SNAPSHOT = (*PopulationAgent.SAVED, "_mids")
    spec: MomentumTraderSpec

    def __init__(self, spec: MomentumTraderSpec, rng: Random) -> None:
        self._mids: list[int] = []  # twice the mid, the last ``long`` wakes with a two-sided book
        super().__init__(spec, rng)

    def decide(self, venue: Venue, inst: Instrument, now: int) -> None:
        spec = self.spec
        lots = self.lots()
        market = chance(self.rng, spec.market_rate)
        book = venue.books[spec.instrument_id]
        twice = mid2(book)
        if inst.status != I_ACTIVE or twice is None:
            return
        mids = self._mids
        mids.append(twice)
        if len(mids) > spec.long:
            del mids[0]
        if len(mids) < spec.long:
            return
        # short/S - long/L against 2 * threshold (mids are doubled), multiplied out to integers
        lead = sum(mids[-spec.short :]) * spec.long - sum(mids) * spec.short
        bar = 2 * spec.threshold * spec.short * spec.long
        if lead > bar:
            self.take(inst, book, BUY, lots, market, spec.through)
        elif lead < -bar:
            self.take(inst, book, SELL, lots, market, spec.through)


class NoiseTrader(PoissonAgent):
    """Arrives at random (a Poisson process, thinned to ``calm_rate`` in the calm spells of a shared
    activity regime), then takes liquidity or rests a limit up to ``depth`` ticks behind the touch
    (its previous resting order is cancelled first)."""

    SNAPSHOT = (*PopulationAgent.SAVED, "activity")
    spec: NoiseTraderSpec

    def __init__(self, spec: NoiseTraderSpec, rng: Random, activity: Activity | None) -> None:
        self.activity = activity
        super().__init__(spec, rng)

    def decide(self, venue: Venue, inst: Instrument, now: int) -> None:
        spec, rng = self.spec, self.rng
        keep = chance(rng, spec.calm_rate)
        buy = chance(rng, spec.buy_rate)
        lots = self.lots()
        passive = chance(rng, spec.passive_rate)
        market = chance(rng, spec.market_rate)
        behind = below(rng, spec.depth + 1)
        if self.activity is not None and not self.activity.busy_at(now) and not keep:
            return
        if inst.status != I_ACTIVE:
            return
        book = venue.books[spec.instrument_id]
        side = BUY if buy else SELL
        if not passive:
            self.take(inst, book, side, lots, market, spec.through)
            return
        own, other = (book.best_bid(), book.best_ask()) if buy else (book.best_ask(), book.best_bid())
        if own is None and other is None:
            return
        self._cancels = list(self._live)
        # behind its own side's touch; a tick inside the other side when its own is empty
        if own is not None:
            touch = own
        else:
            assert other is not None
            touch = other - 1 if buy else other + 1
        self.order(inst, side, lots, touch - behind if buy else touch + behind)


class InventoryMaker(PopulationAgent):
    """Quotes ``levels`` a side around the last trade (else the mid, else ``reference``), moved
    against its inventory by up to ``skew`` ticks; stops quoting the side that would take it past
    ``max_inventory``. Keeps its ladder (and queue position) while nothing changed."""

    SNAPSHOT = (*PopulationAgent.SAVED, "_opening")
    spec: InventoryMakerSpec

    def __init__(self, spec: InventoryMakerSpec, rng: Random) -> None:
        self._opening: int | None = None  # base units held at the first wake
        super().__init__(spec, rng)

    def first_gap(self) -> int:
        return 0

    def gap(self) -> int:
        return self.spec.interval_ns

    def inventory(self, venue: Venue, inst: Instrument) -> int:
        """Lots bought minus lots sold since the first wake."""
        balance = venue.accounts[self.spec.client_id].balances.get(inst.base.id)
        held = balance.total if balance is not None else 0
        if self._opening is None:
            self._opening = held
        return int_div(held - self._opening, inst.base_per_lot)

    def decide(self, venue: Venue, inst: Instrument, now: int) -> None:
        spec = self.spec
        if inst.status != I_ACTIVE:
            return
        book = venue.books[spec.instrument_id]
        twice = mid2(book)
        centre = twice // 2 if twice is not None else book.last_price or spec.reference
        held = self.inventory(venue, inst)
        centre -= int_div(held * spec.skew, spec.max_inventory)
        bid0 = centre - spec.spread // 2
        ask0 = bid0 + spec.spread
        target = []
        for i in range(spec.levels):
            lots = spec.qty + i * spec.qty_step
            if held < spec.max_inventory and bid0 - i * spec.spacing >= 1:
                target.append((BUY, bid0 - i * spec.spacing, lots))
            if held > -spec.max_inventory:
                target.append((SELL, ask0 + i * spec.spacing, lots))
        live = self._live
        current = [(o.side, o.price, o.remaining) for o in live if o.status == ACTIVE and o.execution is None]
        if current == target and len(current) == len(live):
            return
        self._cancels = list(live)
        exec_inst = (ALO,) if spec.post_only else ()
        for side, price, lots in target:
            self.order(inst, side, lots, price, GTC, exec_inst)


# --- building ----------------------------------------------------------------------------------

AnySpec = AgentSpec | Spec
Agent = ScenarioAgent | PopulationAgent


def build_agent(spec: AnySpec, rng: Random, shared: dict[object, object], shared_rng: Callable[[int], Random]) -> Agent:
    """The agent of ``spec``. ``shared`` holds the state one entry's agents share, keyed by its spec
    (made on first use, its generator from ``shared_rng(group)``)."""
    if isinstance(spec, ValueTraderSpec):
        f = spec.fundamental
        fundamental = shared.get(f)
        if not isinstance(fundamental, Fundamental):
            fundamental = shared[f] = Fundamental(f, shared_rng(f.group))
        return ValueTrader(spec, rng, fundamental)
    if isinstance(spec, NoiseTraderSpec):
        a = spec.activity
        activity = None if a is None else shared.get(a)
        if a is not None and not isinstance(activity, Activity):
            activity = shared[a] = Activity(a, shared_rng(a.group))
        return NoiseTrader(spec, rng, activity if isinstance(activity, Activity) else None)
    if isinstance(spec, MomentumTraderSpec):
        return MomentumTrader(spec, rng)
    if isinstance(spec, InventoryMakerSpec):
        return InventoryMaker(spec, rng)
    return build_scenario_agent(spec, rng)
