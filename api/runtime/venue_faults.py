"""The faults a venue itself shows its clients, beyond HTTP (``docs/faults.md``): reads behind the
engine, a skewed server clock, fills reported late.

A :class:`VenueFaults` belongs to one simulation (``Simulation.faults``) and is set by the control
plane (``/_sim/faults/venue``). None of them changes the venue's state, only what reads answer and
the wall time, so they are not commands and the journal holds none of them: a journal replays to the
same state with or without them. The venue's own cancels, which do change the state, are a command
(``engine.commands.VenueCancel``), journaled like any other.

- ``read_lag_ns``: lists answer as of ``now - read_lag``: a record made since is not listed yet, and
  an order placed since is not found by a status read. (Statuses, balances and the book are today's:
  the lag hides what is new, it does not roll back what changed.)
- ``fill_delay_ns``: a trade is made at once (balances, the order's status and the book move), but
  its trade records appear in ``/orders``, ``/orders/trade`` and the activity feed only
  ``fill_delay`` after it.
- ``clock_skew_ns``: the server's wall clock runs this far ahead (or, negative, behind): the
  signing window of CeFi requests is checked against it, and on the wall clock engine time follows
  it (never backwards: a clock skewed back waits until the true time passes the engine's).

Each costs nothing while 0: the readers check one integer, the skew swaps the clock function.
All times are engine nanoseconds (``now`` is ``Simulation.now_ns``), so on the virtual clock a lag
passes only when the clock is advanced, as tests want.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class VenueFaults:
    read_lag_ns: int = 0
    fill_delay_ns: int = 0
    clock_skew_ns: int = 0

    def visible_before(self, now: int, before: int) -> int:
        """``before`` (a list's exclusive cursor) moved back to what a read lagging ``read_lag`` sees."""
        return min(before, now - self.read_lag_ns + 1) if self.read_lag_ns else before

    def hides(self, now: int, ts: int) -> bool:
        """Whether a record made at ``ts`` is newer than the state a lagging read sees."""
        return ts > now - self.read_lag_ns

    def fills_before(self, now: int, before: int) -> int:
        """``before`` moved back past trade records that are still being reported late (and the lag)."""
        before = self.visible_before(now, before)
        return min(before, now - self.fill_delay_ns + 1) if self.fill_delay_ns else before

    def describe(self) -> dict[str, int]:
        return {
            "read_lag_ms": self.read_lag_ns // 1_000_000,
            "fill_delay_ms": self.fill_delay_ns // 1_000_000,
            "clock_skew_s": self.clock_skew_ns // 1_000_000_000,
        }
