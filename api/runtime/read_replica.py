"""Reads behind the engine (``docs/faults.md``): a read replica of the venue, ``read_lag`` behind it.

While the read lag is on, the simulation (``Simulation.apply``) hands every command it applies to a
:class:`ReadReplica` before the venue applies it. The replica is a copy of the venue that applies the
same commands at the same engine times, each only once ``read_lag`` has passed it, so that the CeFi
reads (``Simulation.read_venue``) answer from the venue as it was at ``now - read_lag``: an order
filled since still reads open with its old quantities, a balance holds what it held then. The engine
is deterministic, so the copy passes through exactly the states the venue passed through, as a venue
replayed from the journal up to ``now - read_lag`` would; a restart rebuilds it the same way, since the
journal's replay goes through ``Simulation.apply`` as the live server did.

Contract:
- The copy is taken lazily, of the venue as it is when the replica is first used (the first command
  or read after the lag is switched on, or after a reset or restore replaced the venue): nothing
  changed in between, so it is the state at the switch. What changed before the switch is not rolled
  back (no history was kept then); for the first ``read_lag`` after it, reads show the state at the
  switch, less the records it holds that are newer than ``now - read_lag``: those the cursors hide
  (``VenueFaults.visible_before``, ``hides``) up to ``VenueFaults.replica_from``, the first stamp
  the copy did not take with the venue. Records from there on are in the copy only once the command
  that made them applied to it, so the cursors leave them alone (a command's records are stamped a
  few nanoseconds apart from its time: they appear together, with the command's other changes).
- A command applies to the copy when ``at <= now - read_lag``, as a record stamped ``now - read_lag``
  is visible; between two commands the copy is the state after the earlier one, as the venue was.
- The copy never goes back: a lag raised while on (or a clock skewed back) holds the reads at the
  newest state the copy reached until the new lag has passed it.
- A venue that replays a recorded market has no copy (its place in the recording lives in the file):
  its reads answer from the venue itself, records newer than ``now - read_lag`` hidden as before.
- Switched off, the replica is dropped at once: reads answer from the venue.

It costs nothing while the lag is 0 (the simulation's recording function is then the journal's own:
``Simulation._recording_of``); while it is on, every command is applied twice, once to the venue and
once, ``read_lag`` later, to the copy.
"""

from __future__ import annotations

from collections import deque

from cefisim.api.runtime import snapshot
from cefisim.api.venue_faults import NEVER, VenueFaults
from cefisim.engine.commands import Command
from cefisim.engine.venue import Venue


class ReadReplica:
    """A copy of one venue, ``read_lag`` behind it (the module docstring has the contract)."""

    __slots__ = ("_waiting", "copy", "faults", "source")

    def __init__(self, faults: VenueFaults) -> None:
        self.faults = faults  # the lag it keeps, and where it tells the cursors the copy is exact from
        faults.replica_from = NEVER
        self.source: Venue | None = None  # the venue this copies (a reset or restore replaces it)
        self.copy: Venue | None = None  # None: not taken yet, or a recorded market's (not copied)
        self._waiting: deque[tuple[int, Command]] = deque()  # commands the copy has yet to apply

    def follow(self, venue: Venue, cmd: Command, at: int) -> None:
        """``venue`` is about to apply ``cmd`` at engine time ``at``: the copy applies it ``read_lag``
        later (and now applies what ``read_lag`` has passed)."""
        copy = self.copy if self.source is venue else self._take(venue)
        if copy is not None:
            self._waiting.append((at, cmd))
            self._catch_up(copy, at - self.faults.read_lag_ns)

    def as_of(self, venue: Venue, cutoff: int) -> Venue:
        """The venue as it was at engine time ``cutoff`` (as near as the contract allows)."""
        copy = self.copy if self.source is venue else self._take(venue)
        if copy is None:
            return venue
        self._catch_up(copy, cutoff)
        return copy

    def _take(self, venue: Venue) -> Venue | None:
        """Copy ``venue`` as it is now, through the snapshot codec (which shares what the venue shares)."""
        self.source = venue
        self._waiting.clear()
        if venue.feeds:
            self.copy = None
            self.faults.replica_from = NEVER
        else:
            self.copy = snapshot.from_json(snapshot.to_json({"venue": venue}, {}))["venue"]
            self.copy.use_rules(venue.rules)  # not state: the edition the venue was loaded under
            self.faults.replica_from = venue.clock.peek()
        return self.copy

    def _catch_up(self, copy: Venue, cutoff: int) -> None:
        waiting = self._waiting
        while waiting and waiting[0][0] <= cutoff:
            at, cmd = waiting.popleft()
            copy.submit(cmd, at)
