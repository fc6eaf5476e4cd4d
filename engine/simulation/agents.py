"""Scenario agents: pure, deterministic participants that trade through ordinary commands.

Contract:
- An agent acts only at engine times it chose itself (``next_time()``), reads the venue only through
  its state (books, instruments, its own orders) and changes it only through the commands it submits:
  ``act(venue, now, submit)`` calls ``submit(command, now)``, which applies the command at ``now``
  (the runner's, ``engine/simulation/scenario.py``, or its caller's), and gets the
  :class:`~engine.venue.Result` back before it makes the next. (A call, not a generator the runner
  drives: a turn then costs no generator switch per command and no ``StopIteration`` at its end,
  which matters for agents that send one order per turn; and the runner's own submit, time
  included, rather than one made per turn around it: no wrapper call per command.)
- Randomness comes only from the ``random.Random`` handed to the agent, seeded from
  ``agent_seed(scenario seed, agent index)``; this module never imports ``random`` and never uses
  float arithmetic on a price or quantity. Random draws that decide *when* or *what* never depend on
  the venue's state, so the same seed gives the same stream of draws.
- Specs (``MarketMakerSpec``, ``NoiseTakerSpec``) are frozen and hold integers on the instrument's
  grids: prices in ticks, quantities in lots, times in engine nanoseconds. The scenario loader builds
  them from the decimal strings of a scenario file.

Agents:
- :class:`MarketMaker` quotes ``levels`` price levels on each side around a mid price that follows a
  seeded binomial random walk or a given price series, and requotes every ``interval_ns``: it keeps
  its ladder when nothing changed, otherwise cancels its working orders and places the new ladder.
  It does not quote while its instrument is HALTED or DISABLED, and pulls its quotes at ``end_ns``.
- :class:`NoiseTaker` arrives at exponential inter-arrival times (mean ``mean_interval_ns``) and sends
  a MARKET order or a marketable IOC limit (``through`` ticks beyond the touch) of a uniform random
  size on a random side. It skips an arrival when the instrument is not ACTIVE or, for a limit, when
  the side it would take is empty.

Complexity: a requote is O(levels) commands; an arrival is O(1) commands.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from cefisim.engine.commands import CancelOrder, Command, PlaceOrder
from cefisim.engine.records import Order
from cefisim.engine.state import saves_fields
from cefisim.engine.units import RATE_ONE
from cefisim.engine.vocabulary import FINAL, ExecInst, InstrumentStatus, OrderStatus, OrderType, Side, TimeInForce

ACTIVE = OrderStatus.ACTIVE.value
ALO = ExecInst.ALO.value
BUY = Side.BUY.value
CANCEL_PENDING = OrderStatus.CANCEL_PENDING.value
GTC = TimeInForce.GTC.value
IOC = TimeInForce.IOC.value
LIMIT = OrderType.LIMIT.value
MARKET = OrderType.MARKET.value
SELL = Side.SELL.value
I_ACTIVE = InstrumentStatus.ACTIVE.value
OPENING = InstrumentStatus.OPENING.value

if TYPE_CHECKING:
    from random import Random

    from cefisim.engine.reference import Instrument
    from cefisim.engine.venue import Result, Venue

#: how a command is applied at an engine time (``Venue.submit``, or the runtime's journaling one)
Submit = Callable[[Command, int], "Result"]


def agent_seed(scenario_seed: int, index: int) -> int:
    """The seed of agent number ``index``: stable across runs, machines and Python versions."""
    digest = hashlib.sha256(f"cefisim-agent:{scenario_seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def exponential(rng: Random) -> float:
    """An Exp(1) variate by von Neumann's method: comparisons of uniforms only, no ``log``.

    Each uniform is an exact binary fraction from the Mersenne Twister, so the result is the same
    on every machine (``expovariate`` would depend on the platform's ``log``).
    """
    uniform = rng.random
    k = 0
    while True:
        first = prev = uniform()
        n = 1
        while True:
            u = uniform()
            if u >= prev:
                break
            prev = u
            n += 1
        if n % 2:
            return k + first
        k += 1


def below(rng: Random, n: int) -> int:
    """A uniform integer in [0, n), n >= 1, by rejection from ``getrandbits``.

    The draws of ``randrange(n)`` in CPython 3.11, written out: Python promises a stable stream for
    ``random()`` and ``getrandbits`` but not for how ``randrange`` uses them, and the agents' streams
    must not change with the interpreter (it is also two calls cheaper).
    """
    k = n.bit_length()
    r = rng.getrandbits(k)
    while r >= n:
        r = rng.getrandbits(k)
    return r


def chance(rng: Random, rate: int) -> bool:
    """True with probability ``rate`` / 10**9 (a fraction as :func:`engine.units.parse_rate` gives)."""
    return below(rng, RATE_ONE) < rate


# --- price paths -------------------------------------------------------------------------------


@saves_fields
@dataclass(frozen=True, slots=True)
class RandomWalk:
    """Mid price in ticks: each interval it makes ``vol`` fair steps of ``step`` ticks up or down."""

    start: int
    step: int
    vol: int
    floor: int = 1  # the mid never goes below this


@saves_fields
@dataclass(frozen=True, slots=True)
class PriceSeries:
    """Mid prices in ticks, one every ``every_ns`` from the agent's start; the last one holds."""

    prices: tuple[int, ...]
    every_ns: int


# --- specs -------------------------------------------------------------------------------------


@saves_fields
@dataclass(frozen=True, slots=True)
class MarketMakerSpec:
    kind: ClassVar[str] = "market_maker"
    client_id: int
    instrument_id: int
    path: RandomWalk | PriceSeries
    interval_ns: int
    levels: int
    spread: int  # ticks between the best bid and the best ask
    spacing: int  # ticks between two levels of a side
    qty: int  # lots at the best level
    qty_step: int = 0  # lots added per level further out
    post_only: bool = False  # quote with ALO
    start_ns: int = 0
    end_ns: int | None = None
    name: str = ""


@saves_fields
@dataclass(frozen=True, slots=True)
class NoiseTakerSpec:
    kind: ClassVar[str] = "noise_taker"
    client_id: int
    instrument_id: int
    mean_interval_ns: int
    qty_min: int  # lots
    qty_max: int  # lots
    market_rate: int = RATE_ONE  # fraction (1e-9) of arrivals sent as MARKET, the rest as IOC limits
    buy_rate: int = RATE_ONE // 2  # fraction (1e-9) of arrivals that buy
    through: int = 0  # ticks beyond the touch for a marketable limit
    start_ns: int = 0
    end_ns: int | None = None
    name: str = ""


AgentSpec = MarketMakerSpec | NoiseTakerSpec


# --- agents ------------------------------------------------------------------------------------


class MarketMaker:
    SNAPSHOT: ClassVar[tuple[str, ...]] = ("spec", "rng", "_next", "_mid", "_quoted", "_live")  # snapshot.py
    #: the most ladders :meth:`quotes` keeps (then it starts again): a walk keeps coming back to the
    #: mids it visited, and a requote at one of them then builds no command and formats no price
    QUOTES_KEPT: ClassVar[int] = 256

    def __init__(self, spec: MarketMakerSpec, rng: Random) -> None:
        self.spec = spec
        self.rng = rng
        self._next: int | None = spec.start_ns
        path = spec.path
        self._mid = path.start if isinstance(path, RandomWalk) else path.prices[0]
        self._quoted = False  # the walk starts at its start price, then moves once per interval
        self._live: list[Order] = []
        self.restored()

    def restored(self) -> None:
        """Rebuild what a snapshot leaves out (``api/runtime/snapshot.py``): the ladders kept by mid."""
        self._quotes: dict[int, tuple[list[tuple[str, int, int]], list[PlaceOrder]]] = {}

    def next_time(self) -> int | None:
        return self._next

    def mid_at(self, now: int) -> int:
        """The path's mid at ``now`` in ticks (advances the random walk by one interval)."""
        path = self.spec.path
        if isinstance(path, PriceSeries):
            i = (now - self.spec.start_ns) // path.every_ns
            return path.prices[min(max(i, 0), len(path.prices) - 1)]
        if self._quoted:
            ups = self.rng.getrandbits(path.vol).bit_count()
            self._mid = max(path.floor, self._mid + (2 * ups - path.vol) * path.step)
        self._quoted = True
        return self._mid

    def ladder(self, mid: int) -> list[tuple[str, int, int]]:
        """(side, price in ticks, lots) of the quotes around ``mid``, best levels first."""
        spec = self.spec
        bid0 = mid - spec.spread // 2
        ask0 = bid0 + spec.spread
        qty, qty_step, spacing = spec.qty, spec.qty_step, spec.spacing
        out = []
        for i in range(spec.levels):
            lots = qty + i * qty_step
            bid = bid0 - i * spacing
            if bid >= 1:
                out.append((BUY, bid, lots))
            out.append((SELL, ask0 + i * spacing, lots))
        return out

    def quotes(self, mid: int, inst: Instrument) -> tuple[list[tuple[str, int, int]], list[PlaceOrder]]:
        """The :meth:`ladder` around ``mid`` and the orders that place it, in its order: made once per
        mid and kept (a command is a value, never changed once made, so one can be sent again)."""
        kept = self._quotes.get(mid)
        if kept is None:
            spec = self.spec
            target = self.ladder(mid)
            price_text, qty_text = inst.price_grid.format, inst.qty_grid.format
            exec_inst = (ALO,) if spec.post_only else ()
            orders = [
                PlaceOrder(
                    spec.client_id,
                    spec.instrument_id,
                    side,
                    LIMIT,
                    qty_text(lots),
                    price_text(price),
                    GTC,
                    (),
                    exec_inst,
                )
                for side, price, lots in target
            ]
            if len(self._quotes) >= self.QUOTES_KEPT:
                self._quotes.clear()
            kept = self._quotes[mid] = (target, orders)
        return kept

    def act(self, venue: Venue, now: int, submit: Submit) -> None:
        spec = self.spec
        end = spec.end_ns
        if end is not None and now >= end:
            self._next = None
            self._cancel_all(submit, now)
            return
        nxt = now + spec.interval_ns
        self._next = nxt if end is None or nxt < end else end
        mid = self.mid_at(now)  # drawn whatever the venue's state, so the walk does not depend on it
        inst = venue.instruments[spec.instrument_id]
        if inst.status != I_ACTIVE and inst.status != OPENING:
            return
        target, orders = self.quotes(mid, inst)
        # an order that has not traded has no execution yet (and its qty is what remains)
        current = [(o.side, o.price, o.remaining) for o in self._live if o.status == ACTIVE and o.execution is None]
        if current == target and len(current) == len(self._live):
            return  # nothing changed: keep the queue position
        live = self._cancel_all(submit, now)
        for cmd in orders:
            order = submit(cmd, now).order
            if order is not None and order.status not in FINAL:
                live.append(order)

    def _cancel_all(self, submit: Submit, now: int) -> list[Order]:
        """Cancel every working order; orders still pending an acknowledgement are kept for later.
        Returns the orders kept (the new ``_live``)."""
        client_id = self.spec.client_id
        keep = []
        for order in self._live:
            if order.status == ACTIVE:
                submit(CancelOrder(client_id, str(order.id)), now)
            if order.status not in FINAL and order.status != CANCEL_PENDING:
                keep.append(order)
        self._live = keep
        return keep


class NoiseTaker:
    SNAPSHOT: ClassVar[tuple[str, ...]] = ("spec", "rng", "_next")  # api/runtime/snapshot.py

    def __init__(self, spec: NoiseTakerSpec, rng: Random) -> None:
        self.spec = spec
        self.rng = rng
        self._next: int | None = None
        self._schedule(spec.start_ns)

    def next_time(self) -> int | None:
        return self._next

    def _schedule(self, now: int) -> None:
        gap = int(exponential(self.rng) * self.spec.mean_interval_ns)
        nxt = now + max(1, gap)
        end = self.spec.end_ns
        self._next = nxt if end is None or nxt <= end else None

    def act(self, venue: Venue, now: int, submit: Submit) -> None:
        spec = self.spec
        rng = self.rng
        self._schedule(now)
        side = BUY if chance(rng, spec.buy_rate) else SELL
        lots = spec.qty_min + below(rng, spec.qty_max - spec.qty_min + 1)
        market = chance(rng, spec.market_rate)
        inst = venue.instruments[spec.instrument_id]
        if inst.status != I_ACTIVE:
            return
        qty = inst.qty_grid.format(lots)
        if market:
            submit(PlaceOrder(spec.client_id, spec.instrument_id, side, MARKET, qty), now)
            return
        book = venue.books[spec.instrument_id]
        touch = book.best_ask() if side == BUY else book.best_bid()
        if touch is None:
            return
        price = touch + spec.through if side == BUY else max(1, touch - spec.through)
        submit(
            PlaceOrder(spec.client_id, spec.instrument_id, side, LIMIT, qty, inst.price_grid.format(price), IOC), now
        )


Agent = MarketMaker | NoiseTaker


def build_agent(spec: AgentSpec, rng: Random) -> Agent:
    if isinstance(spec, MarketMakerSpec):
        return MarketMaker(spec, rng)
    return NoiseTaker(spec, rng)


__all__ = [
    "Agent",
    "AgentSpec",
    "MarketMaker",
    "MarketMakerSpec",
    "NoiseTaker",
    "NoiseTakerSpec",
    "PriceSeries",
    "RandomWalk",
    "Submit",
    "agent_seed",
    "below",
    "build_agent",
    "chance",
    "exponential",
]
