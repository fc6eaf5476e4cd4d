"""The faults a venue itself shows its clients, beyond HTTP (``docs/faults.md``): reads behind the
engine, a skewed server clock, fills reported late.

A :class:`VenueFaults` belongs to one simulation (``Simulation.faults``) and is set by the control
plane (``/_sim/faults/venue``) or a scenario event (``venue_faults``). None of them changes the
venue's state, only what reads answer and the wall time, so they are no engine command: they are the
simulation's ``faults`` side-state (``api/side_state/side_states.py``, :class:`VenueFaultsState`), one record kind
``faults.venue`` ``[read_lag_ms, fill_delay_ms, clock_skew_s]`` that sets all three, written to the
journal before the answer, replayed on restart and held by snapshots under ``faults``. The venue's
own cancels, which do change the state, are a command (``engine.commands.VenueCancel``).

- ``read_lag_ns``: the CeFi account reads answer as of ``now - read_lag``: a record made since is not
  listed yet, an order placed since is not found by a status read, and what changed since (an order's
  status and quantities, balances) reads as it was then, from a read replica of the venue
  (``api/runtime/read_replica.py``). Market data (the book, quotes) is today's.
- ``fill_delay_ns``: a trade is made at once (balances, the order's status and the book move), but
  its trade records appear in ``/orders``, ``/orders/trade`` and the activity feed only
  ``fill_delay`` after it.
- ``clock_skew_ns``: the server's wall clock runs this far ahead (or, negative, behind): the
  signing window of CeFi requests is checked against it, and on the wall clock engine time follows
  it (never backwards: a clock skewed back waits until the true time passes the engine's).

The three settings and their bounds are :data:`SETTINGS`, one table the control plane, scenario events,
the journal and snapshots all check against (:func:`venue_faults_intake`, :func:`checked`).

Each costs nothing while 0: the readers check one integer, the simulation one attribute per command
(the read replica, None), the skew swaps the clock function.
All times are engine nanoseconds (``now`` is ``Simulation.now_ns``), so on the virtual clock a lag
passes only when the clock is advanced, as tests want.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cefisim.api.edge.validate import F, FieldProblem, problem_in

NAMESPACE = "faults"  # the side-state these records change (api/side_state/side_states.py)
VENUE = "faults.venue"  # the record kind: [read_lag_ms, fill_delay_ms, clock_skew_s], all three at once
MAX_LAG_MS = 3_600_000  # an hour, for the lag and the delay
MAX_SKEW_S = 86_400  # a day either way
#: the settings, in a record's order, and their bounds: whole milliseconds of lag and delay, whole
#: seconds of skew either way (a body may give a number as its digits: ``F("whole")``)
SETTINGS = {
    "read_lag_ms": F("whole", low=0, high=MAX_LAG_MS),
    "fill_delay_ms": F("whole", low=0, high=MAX_LAG_MS),
    "clock_skew_s": F("whole", low=-MAX_SKEW_S, high=MAX_SKEW_S),
}
FIELDS = tuple(SETTINGS)
NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000


NEVER = 2**63  # ``VenueFaults.replica_from`` while no read replica holds the venue's records


@dataclass(slots=True)
class VenueFaults:
    read_lag_ns: int = 0
    fill_delay_ns: int = 0
    clock_skew_ns: int = 0
    #: the first record stamp the read replica holds only because it applied the command that made it
    #: (``api/runtime/read_replica.py``): records from here on are exactly as of ``now - read_lag``;
    #: older ones, which the replica copied with the venue, are hidden while newer than that
    replica_from: int = NEVER

    def visible_before(self, now: int, before: int) -> int:
        """``before`` (a list's exclusive cursor) moved back to what a read lagging ``read_lag`` sees."""
        if not self.read_lag_ns:
            return before
        cutoff = now - self.read_lag_ns
        return before if cutoff >= self.replica_from else min(before, cutoff + 1)

    def hides(self, now: int, ts: int) -> bool:
        """Whether a record made at ``ts`` is newer than the state a lagging read sees."""
        return self.replica_from > ts > now - self.read_lag_ns

    def fills_before(self, now: int, before: int) -> int:
        """``before`` moved back past trade records that are still being reported late (and the lag)."""
        before = self.visible_before(now, before)
        return min(before, now - self.fill_delay_ns + 1) if self.fill_delay_ns else before

    def skewed_s(self, wall_s: float) -> float:
        """The server's clock, in seconds, given the true wall time ``wall_s`` (signing windows)."""
        skew = self.clock_skew_ns
        return wall_s + skew / NS_PER_S if skew else wall_s

    def values(self) -> list[int]:
        """The settings as a ``faults.venue`` record's values, in ``FIELDS`` order."""
        return [self.read_lag_ns // NS_PER_MS, self.fill_delay_ns // NS_PER_MS, self.clock_skew_ns // NS_PER_S]

    def describe(self) -> dict[str, int]:
        return dict(zip(FIELDS, self.values(), strict=True))


def venue_faults_intake(fields: Any) -> tuple[int, int, int] | FieldProblem:
    """The settings an object of :data:`SETTINGS`' fields asks for, ``(read_lag_ms, fill_delay_ms,
    clock_skew_s)`` (an absent or null one is 0: off), or the problem naming the field."""
    problem = problem_in(fields, SETTINGS)
    if problem is not None:
        return problem
    lag, delay, skew = (int(fields.get(name) or 0) for name in FIELDS)
    return lag, delay, skew


def checked(values: object) -> tuple[int, int, int]:
    """A ``faults.venue`` record's values, ``[read_lag_ms, fill_delay_ms, clock_skew_s]``, checked;
    ``ValueError`` naming the field when one is not an integer within :data:`SETTINGS`' bounds (the
    control plane and the scenario check first, so this refuses only a foreign or damaged journal or
    snapshot)."""
    if not isinstance(values, list) or len(values) != len(FIELDS):
        raise ValueError(f"{VENUE}: expected {len(FIELDS)} values ({', '.join(FIELDS)})")
    for (name, f), value in zip(SETTINGS.items(), values, strict=True):
        # the table's own bounds; a record holds integers, never their digits as text
        problem = f.check(value if isinstance(value, int) else None, f)
        if problem is not None:
            raise ValueError(f"{name}: {value!r} {problem[1]}")
    lag, delay, skew = values
    return lag, delay, skew


class VenueFaultsState:
    """The venue faults as a side-state of the simulation (``api/side_state/side_states.py``): the one writer of
    ``faults``, which ``skew`` (the simulation's clock swap) keeps the skew of and ``lag`` (the
    simulation's read replica, ``api/runtime/read_replica.py``) the read lag of."""

    def __init__(self, faults: VenueFaults, skew: Callable[[int], None], lag: Callable[[int], None]) -> None:
        self.faults = faults
        self._skew = skew
        self._lag = lag

    def set(self, read_lag_ms: int, fill_delay_ms: int, clock_skew_s: int) -> None:
        self._lag(read_lag_ms * NS_PER_MS)
        self.faults.fill_delay_ns = fill_delay_ms * NS_PER_MS
        self._skew(clock_skew_s * NS_PER_S)

    def apply_record(self, at: int, kind: str, values: Any) -> None:
        if kind != VENUE:
            raise ValueError(f"unknown venue faults record kind {kind!r}")
        self.set(*checked(values))

    def state(self) -> Any:
        values = self.faults.values()
        return None if not any(values) else self.faults.describe()

    def restore(self, state: Any) -> Callable[[], None]:
        if state is None:
            values = (0, 0, 0)
        elif not isinstance(state, dict) or set(state) != set(FIELDS):
            raise ValueError(f"{NAMESPACE}: must be an object of {', '.join(FIELDS)}")
        else:
            try:
                values = checked([state[name] for name in FIELDS])
            except ValueError as exc:
                raise ValueError(f"{NAMESPACE}.{exc}") from None
        return lambda: self.set(*values)
