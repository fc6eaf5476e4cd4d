"""The specs of the population agents (``population.py``) and the state their entries share.

Contract: specs are frozen and hold integers on the instrument's grids (ticks, lots, engine ns,
fractions in 1e-9), as ``agents.py``'s do; the loader (``api/formats/scenario/population_entries.py``) builds them.
:class:`Fundamental` and :class:`Activity` are the state one ``agents`` entry's agents share: advanced
in fixed steps from their own seeded generator, asked only at the runner's current time (which never
goes back), so their path is the same whoever asks.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, ClassVar

from cefisim.engine.simulation.agents import exponential
from cefisim.engine.state import saves_fields
from cefisim.engine.units import RATE_ONE

if TYPE_CHECKING:
    from random import Random


def int_div(num: int, den: int) -> int:
    """``num / den`` rounded toward zero."""
    q = abs(num) // den
    return q if num >= 0 else -q


def fraction_of(value: int, rate: int) -> int:
    """``value * rate / 1e9`` rounded toward zero (so a pull toward a mean never overshoots it)."""
    return int_div(value * rate, RATE_ONE)


def binomial_noise(rng: Random, vol: int, step: int) -> int:
    """``vol`` fair steps of ``step`` ticks up or down, summed (0 when ``vol`` is 0)."""
    return (2 * rng.getrandbits(vol).bit_count() - vol) * step if vol else 0


# --- state shared by the agents of one entry ---------------------------------------------------


@saves_fields
@dataclass(frozen=True, slots=True)
class FundamentalSpec:
    """A mean-reverting path in ticks: every ``every_ns`` it closes ``reversion`` of its gap to
    ``mean`` and makes ``vol`` fair steps of ``step`` ticks (a discrete Ornstein-Uhlenbeck process)."""

    group: int  # the agents entry it belongs to: two entries never share a path
    start: int
    mean: int
    reversion: int  # fraction (1e-9) per step
    step: int
    vol: int
    every_ns: int
    start_ns: int


class Fundamental:
    SNAPSHOT: ClassVar[tuple[str, ...]] = ("spec", "rng", "_value", "_at")  # api/runtime/snapshot.py

    def __init__(self, spec: FundamentalSpec, rng: Random) -> None:
        self.spec = spec
        self.rng = rng
        self._value = spec.start
        self._at = spec.start_ns

    def value_at(self, now: int) -> int:
        spec = self.spec
        while self._at + spec.every_ns <= now:
            self._at += spec.every_ns
            moved = self._value + fraction_of(spec.mean - self._value, spec.reversion)
            self._value = max(1, moved + binomial_noise(self.rng, spec.vol, spec.step))
        return self._value


@saves_fields
@dataclass(frozen=True, slots=True)
class ActivitySpec:
    """Busy and calm spells of exponential lengths (means ``busy_ns``, ``calm_ns``), calm first."""

    group: int
    busy_ns: int
    calm_ns: int
    start_ns: int


class Activity:
    SNAPSHOT: ClassVar[tuple[str, ...]] = ("spec", "rng", "busy", "_until")  # api/runtime/snapshot.py

    def __init__(self, spec: ActivitySpec, rng: Random) -> None:
        self.spec = spec
        self.rng = rng
        self.busy = False
        self._until = spec.start_ns + self._spell()

    def _spell(self) -> int:
        mean = self.spec.busy_ns if self.busy else self.spec.calm_ns
        return max(1, int(exponential(self.rng) * mean))

    def busy_at(self, now: int) -> bool:
        while self._until <= now:
            self.busy = not self.busy
            self._until += self._spell()
        return self.busy


# --- specs -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PopulationSpec:
    client_id: int
    instrument_id: int
    _: KW_ONLY
    latency_min_ns: int = 0
    latency_max_ns: int = 0
    start_ns: int = 0
    end_ns: int | None = None
    name: str = ""


@saves_fields
@dataclass(frozen=True, slots=True)
class ValueTraderSpec(PopulationSpec):
    kind: ClassVar[str] = "value_trader"
    fundamental: FundamentalSpec
    mean_interval_ns: int
    qty_min: int
    qty_max: int
    noise_step: int  # ticks: an observation is the fundamental plus noise_vol fair steps of these
    noise_vol: int
    smoothing: int  # fraction (1e-9) of the gap to a new observation the estimate closes
    margin: int  # ticks: buys at estimate - margin, sells at estimate + margin


@saves_fields
@dataclass(frozen=True, slots=True)
class MomentumTraderSpec(PopulationSpec):
    kind: ClassVar[str] = "momentum_trader"
    mean_interval_ns: int
    qty_min: int
    qty_max: int
    short: int  # mids in the short average
    long: int  # mids in the long average (> short)
    threshold: int  # ticks the short average must lead the long one by
    market_rate: int = RATE_ONE
    through: int = 0


@saves_fields
@dataclass(frozen=True, slots=True)
class NoiseTraderSpec(PopulationSpec):
    kind: ClassVar[str] = "noise_trader"
    mean_interval_ns: int  # between arrivals (while busy, with an activity regime)
    qty_min: int
    qty_max: int
    activity: ActivitySpec | None = None
    calm_rate: int = RATE_ONE  # fraction (1e-9) of arrivals kept in a calm spell
    passive_rate: int = 0  # fraction of arrivals that rest a limit instead of taking
    depth: int = 0  # ticks: a resting limit goes up to this far behind the touch
    market_rate: int = RATE_ONE
    through: int = 0
    buy_rate: int = RATE_ONE // 2


@saves_fields
@dataclass(frozen=True, slots=True)
class InventoryMakerSpec(PopulationSpec):
    kind: ClassVar[str] = "inventory_maker"
    interval_ns: int
    levels: int
    spread: int
    spacing: int
    qty: int
    qty_step: int
    max_inventory: int  # lots: no more bids at +max, no more asks at -max
    skew: int  # ticks the quotes move against the inventory at max_inventory
    reference: int  # ticks: the centre until the book has traded or has both sides
    post_only: bool = False


Spec = ValueTraderSpec | MomentumTraderSpec | NoiseTraderSpec | InventoryMakerSpec
