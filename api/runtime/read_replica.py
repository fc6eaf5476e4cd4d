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
- The copy is of the venue as it is when the replica is first used (the first command or read after
  the lag is switched on, or after a reset or restore replaced the venue, or the first of
  :meth:`ReadReplica.copy_steps`): nothing changed in between, so it is the state at the switch. It
  is made by ``api/runtime/state_copy.py`` (what a snapshot round trip makes, without the document),
  either at once or in steps of a bounded size (:meth:`ReadReplica.copy_steps`, which the server runs
  on its event loop with other requests let through between steps, ``api/web/server/venue_work.py``).
  While the steps make it the venue is still the state at the switch: a read answers from the venue
  itself (the same answer the copy will give), and a command finishes the copy at once before the
  venue applies it, so the copy is always of one instant, whatever arrives meanwhile. A first use
  that is not a step (recovery replaying the journal, an offline run) makes the copy at once.
- What changed before the switch is not rolled back (no history was kept then); for the first
  ``read_lag`` after it, reads show the state at the switch, less the records it holds that are
  newer than ``now - read_lag``: those the cursors hide (``VenueFaults.visible_before``, ``hides``)
  up to ``VenueFaults.replica_from``, the first stamp the copy did not take with the venue. Records
  from there on are in the copy only once the command that made them applied to it, so the cursors
  leave them alone (a command's records are stamped a few nanoseconds apart from its time: they
  appear together, with the command's other changes).
- A command applies to the copy when ``at <= now - read_lag``, as a record stamped ``now - read_lag``
  is visible; between two commands the copy is the state after the earlier one, as the venue was.
- The copy never goes back: a lag raised while on (or a clock skewed back) holds the reads at the
  newest state the copy reached until the new lag has passed it.
- A venue that replays a recorded market has no copy (its place in the recording lives in the file):
  its reads answer from the venue itself, records newer than ``now - read_lag`` hidden as before.
- Switched off, the replica is dropped at once: reads answer from the venue.

It costs nothing while the lag is 0 (the simulation's recording function is then the journal's own:
``Simulation._recording_of``); while it is on, every command is applied twice, once to the venue and
once, ``read_lag`` later, to the copy. Making the copy costs about 0.3 s of CPU for a venue holding
32,000 orders (a third of what the snapshot codec took).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from cefisim.api.runtime import state_copy
from cefisim.api.runtime.state_copy import StateCopy
from cefisim.api.side_state.venue_faults import NEVER, VenueFaults
from cefisim.engine.commands import Command
from cefisim.engine.venue import Venue


class ReadReplica:
    """A copy of one venue, ``read_lag`` behind it (the module docstring has the contract)."""

    __slots__ = ("_making", "_waiting", "copy", "faults", "source")

    def __init__(self, faults: VenueFaults) -> None:
        self.faults = faults  # the lag it keeps, and where it tells the cursors the copy is exact from
        faults.replica_from = NEVER
        self.source: Venue | None = None  # the venue this copies (a reset or restore replaces it)
        self.copy: Venue | None = None  # None: not taken (or not whole) yet, or a recorded market's
        self._making: StateCopy | None = None  # the copy of ``source`` while it is being made
        self._waiting: deque[tuple[int, Command]] = deque()  # commands the copy has yet to apply

    def follow(self, venue: Venue, cmd: Command, at: int) -> None:
        """``venue`` is about to apply ``cmd`` at engine time ``at``: the copy applies it ``read_lag``
        later (and now applies what ``read_lag`` has passed). A copy still being made is finished
        first: it is of the venue before ``cmd``."""
        copy = self._whole(venue)
        if copy is not None:
            self._waiting.append((at, cmd))
            self._catch_up(copy, at - self.faults.read_lag_ns)

    def as_of(self, venue: Venue, cutoff: int) -> Venue:
        """The venue as it was at engine time ``cutoff`` (as near as the contract allows). While
        :meth:`copy_steps` makes the copy, the venue itself: nothing applied since the copy began, so
        it is what the copy will be."""
        if self.source is venue and self._making is not None:
            return venue
        copy = self._whole(venue)
        if copy is None:
            return venue
        self._catch_up(copy, cutoff)
        return copy

    def pending(self, venue: Venue) -> bool:
        """Whether a copy of ``venue`` is yet to be made, or is being made (a recorded market's never is)."""
        return (self.source is not venue and not venue.feeds) or (self.source is venue and self._making is not None)

    def copy_steps(self, venue: Venue) -> Iterator[None]:
        """Make the copy of ``venue`` a step of about ``state_copy.STEP_VALUES`` values at a time
        (``StateCopy.step``: a few milliseconds), beginning it if it is not begun; a step is yielded
        between two. The state between two steps may be read but not changed (a command finishes the
        copy at once); it ends when the copy is whole, or when the replica was turned to another venue
        meanwhile. Whether the simulation still wants it (the lag still on, the venue not replaced) is
        the caller's to check between steps."""
        if self.source is not venue:
            self._begin(venue)
        while self.source is venue and self._making is not None:
            if self._making.step(state_copy.STEP_VALUES):
                self._install(venue)
                return
            yield

    def _whole(self, venue: Venue) -> Venue | None:
        """The copy of ``venue``, made whole now if it is not (None: a recorded market's, not copied)."""
        if self.source is not venue:
            self._begin(venue)
        if self._making is not None:
            self._making.finish()
            self._install(venue)
        return self.copy

    def _begin(self, venue: Venue) -> None:
        """Start the copy of ``venue`` as it is now (a recorded market's is never made)."""
        self.source = venue
        self.copy = None
        self._waiting.clear()
        if venue.feeds:
            self._making = None
            self.faults.replica_from = NEVER
        else:
            self._making = StateCopy({"venue": venue})
            self.faults.replica_from = venue.clock.peek()

    def _install(self, venue: Venue) -> None:
        making, self._making = self._making, None
        assert making is not None
        copy: Venue = making.roots["venue"]
        copy.use_rules(venue.rules)  # not state: the edition the venue was loaded under
        self.copy = copy

    def _catch_up(self, copy: Venue, cutoff: int) -> None:
        waiting = self._waiting
        while waiting and waiting[0][0] <= cutoff:
            at, cmd = waiting.popleft()
            copy.submit(cmd, at)
