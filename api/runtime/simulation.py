"""The running simulation: one venue, its scenario runner, its clock policy and its journal.

Everything that changes the venue goes through this module (HTTP requests and the control plane by
:meth:`Simulation.submit`, the scenario's agents and events by the submit function it hands the
scenario runner), so there is one writer and one total order. It is the venue's only submitter: it
journals each command, with the source it knows, and only then submits it; the engine knows nothing
of the journal. ``cefisim serve``, ``cefisim replay`` and the journal tools all run a scenario
through it, so they write and restore one journal dialect.

- Clock: :class:`~api.runtime.clock_policy.ClockPolicy` (``virtual`` or ``wall``).
- Journal (``--journal FILE``, ``api/runtime/journal_file.py``): a header, then a record ``[at, src,
  kind, values]`` of every command applied to the venue, written before it applies (so before its
  response; a command the journal cannot take is not applied). ``src`` tells commands that came from
  outside ("ext": requests, control plane, clock moves) from those the scenario runner generated
  ("scn"). The scenario's settings are applied as the venue is built and never journaled.
- Recovery (``api/runtime/recovery.py``): on start with an existing journal the state is rebuilt
  record by record: the scenario regenerates its own records, checked one by one, and the external
  ones are re-applied where they stand; a torn tail is cut and a torn scenario burst finished.
- Snapshots (``api/runtime/snapshot.py``) and reset start the journal anew: the fresh journal is made
  (staged beside the old one) before anything changes, so one that cannot be made changes nothing.
- Write discipline (``api/runtime/journal_health.py``): every operation — a request's command, a
  slice of the scenario's turns, a clock advance, a side-state record — is a unit that lands whole or
  changes nothing. A unit whose journal write fails after part of it applied (a turn's records half
  written) is rolled back: the journal cut back to where the unit began and the state rebuilt from
  it, exactly as a restart would. Then :class:`JournalWriteError` (a 503 at the HTTP edge).

State kept beside the engine (the Auth store's tokens and revocations) is journaled in the same file,
in the same order, by :meth:`Simulation.attach`: its records (kinds with a dot, ``auth.key_tokens``)
are written before the response like a command's, replayed where they stand, and its state goes into
snapshots under its namespace. The engine never sees them. The venue faults (``faults.venue``,
``api/side_state/venue_faults.py``) are such a side-state, attached here as the simulation is built; a
scenario event that sets them reaches the scenario's submit function in a command's place and is
journaled ``scn`` (``api/side_state/side_states.py``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

from cefisim.api.formats.scenario import Scenario
from cefisim.api.runtime import snapshot
from cefisim.api.runtime.clock_policy import ClockPolicy, check_wall_clock
from cefisim.api.runtime.journal_file import (
    Header,
    JournalError,
    JournalFile,
    JournalWriteError,
    damage,
    journal_header,
    read_header,
    record_json,
    scenario_digest,
    scenario_name,
)
from cefisim.api.runtime.journal_health import JournalHealth
from cefisim.api.runtime.read_replica import ReadReplica
from cefisim.api.runtime.recovery import Expect, Recovered, cut_torn_tail, recover, written_settings
from cefisim.api.runtime.snapshot_steps import SnapshotSteps
from cefisim.api.side_state.side_states import SideState, SideStateError, SideStateRecord, SideStates
from cefisim.api.side_state.venue_faults import NAMESPACE as FAULTS
from cefisim.api.side_state.venue_faults import VENUE, VenueFaults, VenueFaultsState, checked
from cefisim.engine.commands import (
    AdvanceClock,
    CancelOrder,
    Command,
    ModifyOrder,
    PlaceOrder,
    SetLatency,
    SetStatusRetention,
)
from cefisim.engine.recorded.market import latency_draw
from cefisim.engine.simulation.scenario import ScenarioRunner, Submit
from cefisim.engine.venue import Result, Venue, VenueConfig

# imported from here by the HTTP edge (api/web/server/middleware.py) and the CLI
__all__ = ["JournalError", "JournalWriteError", "Simulation", "SimulationEnded", "check_wall_clock"]

#: scenario turns per slice of a long advance (a turn: one event or one agent's action, a market
#: maker's requote of up to ~40 commands): a few ms of CPU, so other requests get through. The
#: journal and the events are the same whatever the slice (ScenarioRunner.run)
SLICE_TURNS = 25
#: recorded events and timers per step of an advance's closing command: a few ms of CPU (bench_tenants,
#: advance_rec: 250 gave the other venues' readers p50 22 / p99 49 ms where 2,000 gave 179 / 362)
ADVANCE_BUDGET = 250

log = logging.getLogger("cefisim.sim")

Record = Callable[[int, str, Command], None]


class SimulationEnded(Exception):
    """A command for a simulation that was ended (a deleted venue); it was not applied."""


class Simulation:
    def __init__(
        self,
        scenario: Scenario,
        clock: str = "virtual",
        journal_path: str | Path | None = None,
        venue_config: VenueConfig | None = None,
        wall_ns: Callable[[], int] = time.time_ns,
        read_only: bool = False,
        on_result: Callable[[Result], None] | None = None,
        journal_out: str | Path | None = None,
        start: bool = True,
    ) -> None:
        """``journal_path``: the journal to go on with (rebuilt from first when it exists), durable.
        ``journal_out``: a fresh journal of an offline run (``cefisim replay --journal``), replacing the
        file, buffered (complete once :meth:`close` returns). ``read_only``: rebuild from
        ``journal_path`` but never write to it (offline replay). ``on_result`` sees the result of every
        command the simulation applies (replay statistics). ``start=False``: the scenario's start instant
        is left to the caller (the backtest harness runs it after its strategy's ``on_start``)."""
        self.clock = ClockPolicy(clock, scenario, wall_ns)
        self.clock_mode = clock
        self.scenario = scenario
        self.venue_config = venue_config
        self.faults = VenueFaults()  # what reads and the clock show, not engine state (venue_faults.py)
        self.replica: ReadReplica | None = None  # the venue read_lag behind, while it is on (read_replica.py)
        self._copies: list[SnapshotSteps] = []  # snapshots taken in steps (snapshot_steps): finished before a change
        self._bound = False  # whether _bind made the scenario's submit yet (it needs the venue)
        self.ended = False  # end(): every later change is refused
        existing = Path(journal_path) if journal_path else None  # restored from, then appended to
        self.journal_path = existing or (Path(journal_out) if journal_out else None)
        self._durable = journal_out is None
        self._journal: JournalFile | None = None
        # where each command is recorded before it applies: the journal file (when open), during
        # recovery the check that the scenario regenerates the records the journal holds, else nothing
        self._record: Record | None = None
        self._recording: Record | None = None  # _record, and the read replica following (_bind)
        self._expect: Expect | None = None  # recovery's check
        self.recovered_commands = 0
        self._on_result = on_result
        self._latency_spread = scenario.order_latency_range()
        self._side_state_events = scenario.has_side_state_events()  # the runner's submit takes side-state records too
        self._base_snapshot: dict[str, Any] | None = None  # the state a journal starts from, if not the scenario
        self.epoch = 0  # counts resets and restores: a sliced advance stops when its simulation was replaced
        self.side_states = SideStates()  # state kept beside the engine (attach)
        self.scenario_events = 0  # venue events of the scenario's own commands so far (never reset)
        # the write discipline of a server's journal (journal_health.py); None offline and read-only
        self._health = JournalHealth(existing) if existing is not None and not read_only else None
        self._diverged = False  # a scenario record failed: the unit it was in must be rolled back
        header = read_header(existing, scenario) if existing else None
        if read_only and existing is not None and header is None:
            raise JournalError(f"journal {existing}: empty or missing, not a cefisim journal")
        if header is not None:
            self.start_ns = header.start_ns
            self._base_snapshot = header.snapshot
        else:
            self.start_ns = self.clock.start_ns(scenario)
        self.attach(FAULTS, VenueFaultsState(self.faults, self.skew_clock, self.lag_reads))
        if self._base_snapshot is not None:
            try:
                self._install(self._base_snapshot)
            except snapshot.SnapshotError as exc:
                raise JournalError(
                    f"journal {existing}: the header (byte offset 0): its snapshot cannot be restored ({exc})"
                ) from None
        else:
            self._build()
        if existing is not None and header is not None:
            # an older journal goes on under the rules it was recorded with (a reset or a restore
            # starts a journal of the current format, and a venue of the current rules)
            self.venue.use_rules(header.rules)
            recovered = recover(self, existing, header, written_settings(scenario))
            if not read_only:
                self._go_on(existing, header, recovered)
        elif self.journal_path and not read_only:
            header_line = journal_header(self.scenario, self.start_ns, self.clock_mode)
            self._journal = JournalFile.stage(self.journal_path, header_line, self._durable)
            self._set_record(self._journal.command_writer())
            try:
                if start:
                    self.catch_up(self.start_ns)  # the scenario's start instant, journaled like the rest
                self._journal.commit()
            except BaseException:
                self._journal.discard()
                self._journal = None
                raise
        elif start:
            self.catch_up(self.start_ns)

    def _go_on(self, path: Path, header: Header, recovered: Recovered) -> None:
        """Go on appending to a recovered journal: its torn tail cut, the rest of a scenario burst it
        ends inside (a fork, or a stop, mid-burst) regenerated and appended."""
        records = recovered.records
        cut_torn_tail(path, records)
        self._journal = JournalFile(path, self._durable, header.sealed, recovered.crc)
        self._set_record(self._journal.command_writer())
        tail = recovered.tail
        if tail:
            self._journal.append_records(record_json(at, "scn", cmd) for at, cmd in tail)
            log.info(
                "journal %s ends inside the scenario's burst of records at %d (a fork or a stop in its "
                "middle): its %d remaining records were regenerated and appended",
                path,
                tail[0][0],
                len(tail),
            )

    # --- building and rebuilding --------------------------------------------------------------

    def _build(self) -> None:
        delta = self.start_ns - self.scenario.start_ns
        scenario = self.scenario.shifted(delta) if delta else self.scenario
        # the scenario's settings apply as the venue is built, before the journal opens: never written
        venue = scenario.build_venue(self.venue_config)
        self._use(venue, scenario.runner(venue, side_states=True))

    def _use(self, venue: Venue, runner: ScenarioRunner) -> None:
        if self._copies:
            self._settle()  # a snapshot under way is of the state being replaced
        self.venue: Venue = venue
        self.runner = runner
        # the engine time up to which the scenario's turns are all taken (run_scenario); the clock may
        # stand behind it when the last turns submitted nothing
        self._ran_to = venue.clock.now
        self._bind()

    def close(self) -> None:
        """Close the journal file (the server calls this on shutdown). :class:`JournalWriteError` when
        what an offline run's journal buffered cannot be written (cut back to its last whole record)."""
        journal, self._journal = self._journal, None
        if journal is not None:
            self._set_record(None)
            journal.close()

    def end(self) -> None:
        """Close the journal for good: every later command, side-state change (venue faults, Auth), reset,
        restore or snapshot raises :class:`SimulationEnded` before it applies (a request still in
        flight when its venue is deleted is refused, never applied unjournaled); reads still answer
        from the state it had.

        Its reference cycles go too: its side-states and its scenario's submit function name it back, and
        a recorded market names its venue. A deleted venue is then freed by reference counting once
        the last request holding it is done, with no cycle collection (a server's heap is frozen,
        and a full collection would walk every venue of the server: docs/venues.md)."""
        self._settle()  # a snapshot under way is of the state before the end (its feeds dropped below)
        self.close()
        self.journal_path = None  # a reset in flight must not open it again
        self.ended = True
        self._set_record(_ended)
        self.side_states.attached.clear()
        self.venue.drop_feeds()

    def _refuse_if_ended(self) -> None:
        if self.ended:
            _ended()

    # --- snapshots ------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The whole state as a JSON-ready document (``api/runtime/snapshot.py``)."""
        header = self._snapshot_header()
        return self.side_states.snapshot_into(snapshot.to_json({"venue": self.venue, "runner": self.runner}, header))

    def snapshot_steps(self) -> SnapshotSteps:
        """The snapshot of the state as it is now, taken in steps (``api/runtime/snapshot_steps.py``):
        its document is what :meth:`snapshot` gives now. Until its copy is whole, anything that changes
        the state finishes it at once first (:meth:`_settle`)."""
        taking = SnapshotSteps(
            {"venue": self.venue, "runner": self.runner}, self._snapshot_header(), self.side_states.snapshot_into({})
        )
        self._copies = [*(c for c in self._copies if not c.done), taking]
        return taking

    @property
    def copying(self) -> bool:
        """Whether a snapshot's copy is under way (:meth:`snapshot_steps`)."""
        return any(not c.done for c in self._copies)

    def _settle(self) -> None:
        """Finish every snapshot copy under way, before the state changes."""
        copies, self._copies = self._copies, []
        for taking in copies:
            taking.finish()

    def _snapshot_header(self) -> dict[str, Any]:
        self._refuse_if_ended()  # its side-states are gone: a snapshot would not be whole
        if self.venue.feeds:
            raise snapshot.SnapshotError(
                "a recorded market cannot be snapshotted: its position in the "
                "recording lives in the file; the journal restores it"
            )
        return {
            "scenario": scenario_name(self.scenario),
            "scenario_sha256": self.scenario_digest(),
            "clock": self.clock_mode,
            "start_ns": self.start_ns,
        }

    def read_snapshot(self, doc: Any) -> tuple[Venue, ScenarioRunner, int]:
        """The state a snapshot of this scenario holds (its venue, runner and start), rebuilt and
        checked whole, not installed: it touches nothing of the simulation, so the server runs it in
        a thread (the codec's reader and the invariant check are most of a restore's CPU);
        :class:`~api.runtime.snapshot.SnapshotError` for an unsound snapshot."""
        if not isinstance(doc, dict) or doc.get("scenario_sha256") != self.scenario_digest():
            raise snapshot.SnapshotError("the snapshot was taken of another scenario")
        return snapshot.read_state(doc, self.start_ns)

    def restore(self, doc: Any, state: tuple[Venue, ScenarioRunner, int] | None = None) -> None:
        """Replace the state with a snapshot of this scenario. The journal starts anew from it: its
        header (holding the snapshot) is written first; :class:`JournalWriteError` when it cannot be,
        :class:`~api.runtime.snapshot.SnapshotError` for an unsound snapshot, and nothing changed.
        ``state``: what :meth:`read_snapshot` made of ``doc`` while the simulation was neither reset
        nor restored (the same ``epoch``); None: read here."""
        self._refuse_if_ended()
        if not isinstance(doc, dict) or doc.get("scenario_sha256") != self.scenario_digest():
            raise snapshot.SnapshotError("the snapshot was taken of another scenario")
        try:
            install_side_states = self.side_states.restore(doc)
        except SideStateError as exc:
            raise snapshot.SnapshotError(str(exc)) from None
        venue, runner, start_ns = state if state is not None else self.read_snapshot(doc)  # installed below
        if self.journal_path is not None:
            journal = JournalFile.stage(
                self.journal_path, journal_header(self.scenario, start_ns, self.clock_mode, doc), self._durable
            )
            journal.commit()
            self._switch_journal(journal)
        self.start_ns, self._base_snapshot = start_ns, doc
        self._use(venue, runner)
        install_side_states()
        self.epoch += 1

    def _install(self, doc: dict[str, Any]) -> None:
        """Rebuild and check everything first (``snapshot.read_state``); only a sound state replaces
        the current one."""
        venue, runner, self.start_ns = snapshot.read_state(doc, self.start_ns)
        self._use(venue, runner)

    def reset(self) -> None:
        """Back to the scenario as loaded (in wall mode: starting now). The journal starts anew: the
        fresh one (its header and the start instant's records) is staged beside the old one and takes
        its place only once complete; :class:`JournalWriteError` when it cannot be, and then the old
        journal and the state are as they were."""
        self._refuse_if_ended()
        start_ns = self.clock.start_ns(self.scenario)
        journal = None
        if self.journal_path is not None:
            header = journal_header(self.scenario, start_ns, self.clock_mode)
            journal = JournalFile.stage(self.journal_path, header, self._durable)
        before = (self.venue, self.runner, self.start_ns, self._base_snapshot, self._journal, self._ran_to)
        put_side_states_back = self.side_states.restore(self.side_states.snapshot_into({}))
        try:
            self.start_ns, self._base_snapshot, self._journal = start_ns, None, journal
            self._record = journal.command_writer() if journal is not None else None
            self._build()
            self.side_states.restore(None)()
            self.catch_up(start_ns)
            if journal is not None:
                journal.commit()
        except BaseException:
            if journal is not None:
                journal.discard()
            venue, runner, self.start_ns, self._base_snapshot, self._journal, ran_to = before
            self._record = self._journal.command_writer() if self._journal is not None else None
            self._use(venue, runner)
            self._ran_to = ran_to
            put_side_states_back()
            raise
        old = before[4]
        if old is not None:
            old.close()
        # the replaced venue's recorded markets name it back: without the cycle it goes with its last
        # reference (a server's heap is frozen: a cycle would never be collected; docs/venues.md)
        before[0].drop_feeds()
        if self._health is not None:
            self._health.broken = None  # the state is the fresh journal's again
        self.epoch += 1

    def _switch_journal(self, journal: JournalFile) -> None:
        """Write to ``journal`` (committed) from now on; the previous one is closed."""
        old, self._journal = self._journal, journal
        self._set_record(journal.command_writer())
        if self._health is not None:
            self._health.broken = None
        if old is not None:
            old.close()

    # --- time -----------------------------------------------------------------------------------

    def now_ns(self) -> int:
        """Engine time now (in wall mode, the wall clock), never behind the engine clock nor behind a
        turn of the scenario already taken: a request then always applies after every turn taken
        before it, as a restart replays it, even when the wall clock steps back (a skew, a clock
        adjustment) and the last turns submitted nothing."""
        now, ran_to = self.venue.clock.now, self._ran_to
        return self.clock.now_ns(ran_to if ran_to > now else now)

    def set_venue_faults(self, read_lag_ms: int, fill_delay_ms: int, clock_skew_s: int) -> None:
        """Set the venue faults (all three; 0 is off) through the journal: written before they apply,
        :class:`JournalWriteError` (nothing changed) when the journal cannot take the record. The
        values are checked first (``venue_faults.checked``: ``ValueError``, nothing written)."""
        values = [read_lag_ms, fill_delay_ms, clock_skew_s]
        checked(values)
        at = self.now_ns()
        self._write_side_state(at, VENUE, values)
        self.side_states.attached[FAULTS].apply_record(at, VENUE, values)

    def skew_clock(self, skew_ns: int) -> None:
        """Run the server's wall clock ``skew_ns`` ahead (negative: behind); 0 ends the skew
        (``api/side_state/venue_faults.py``)."""
        self.clock.skew(skew_ns)
        self.faults.clock_skew_ns = skew_ns

    def lag_reads(self, lag_ns: int) -> None:
        """Let the CeFi reads (:meth:`read_venue`) answer ``lag_ns`` behind the engine; 0 ends the lag
        at once. A read replica follows the venue while the lag is on (``api/runtime/read_replica.py``):
        kept when the lag changes, a new one when a reset or restore replaced the venue it follows."""
        self.faults.read_lag_ns = lag_ns
        replica = self.replica
        if not lag_ns:
            self.replica = None
        elif replica is None or (replica.source is not None and replica.source is not self.venue):
            self.replica = ReadReplica(self.faults)
        if self.replica is not replica and self._bound:
            self._bind()  # the scenario's submit takes the replica up (or drops it)

    def read_venue(self) -> Venue:
        """The venue the CeFi reads answer from: as it was ``read_lag`` ago while that fault is on."""
        replica = self.replica
        if replica is None:
            return self.venue
        return replica.as_of(self.venue, self.now_ns() - self.faults.read_lag_ns)

    def catch_up(self, at: int, close: bool = True, max_turns: int | None = None) -> bool:
        """Let the scenario act up to ``at`` before an external command applies there; with ``close``
        the runner then moves the clock to ``at`` (journaled as the scenario's ``advance``). With
        ``max_turns``: one slice (``ScenarioRunner.run``); False when more is due by ``at``."""
        due = self.runner.next_time()
        if due is None or due > at:
            return True  # nothing of the scenario's is due: the command itself moves the clock
        if self._health is not None and self._journal is not None:
            self._health.check_room()  # refused before a turn starts, not in its middle
        return self.run_scenario(at, close, max_turns)

    def run_scenario(self, at: int, close: bool = True, max_turns: int | None = None) -> bool:
        """The scenario's turns up to ``at`` (and its closing clock move), journaled as ``scn``."""
        if self._copies:
            self._settle()  # the turns change the runner and the venue: a snapshot under way first
        reached = self.runner.run(at, advance_clock=close, max_turns=max_turns, submit=self._scenario_submit)
        if reached > self._ran_to:  # every turn up to there taken (a slice: the instant it ended on)
            self._ran_to = reached
        return reached == at

    # --- the one way in ---------------------------------------------------------------------------

    def submit(self, cmd: Command) -> Result:
        """Apply an external command (request or control plane) now, once the scenario has taken every
        turn due by now. The command itself moves the clock (no closing ``advance`` of the scenario's:
        whether one would be written depended on whether a tick had taken those turns already, which
        the journal does not show). With a recorded source's order latency drawn per command, an order
        command is preceded by its own journaled SetLatency."""
        mark = self._begin()
        try:
            at = self.now_ns()
            self.catch_up(at, False)  # no closing advance (the docstring)
            spread = self._latency_spread
            if spread is not None and type(cmd) in (PlaceOrder, ModifyOrder, CancelOrder):
                lat = latency_draw(self.scenario.seed, self.venue, *spread)
                self.apply(SetLatency(lat, lat, lat), at)
            result = self.apply(cmd, at)
        except JournalWriteError as exc:
            self._refused(mark, exc)
            raise
        if mark is not None:
            self._landed()
        return result

    def advance(self, to_ns: int) -> Result:
        """Move engine time forward (virtual clock), letting the scenario and timers act on the way."""
        for _ in self.advance_slices(to_ns):
            pass
        return self.finish_advance(to_ns)

    def advance_steps(self, to_ns: int) -> Iterator[None]:
        """:meth:`advance` in steps: the scenario's slices, then the closing advance in steps of a budget
        (:meth:`finish_advance_steps`: run it as the venue's work, its requests held until the end)."""
        yield from self.advance_slices(to_ns)
        yield from self.finish_advance_steps(to_ns, Result())

    def advance_slices(self, to_ns: int, max_turns: int = SLICE_TURNS) -> Iterator[None]:
        """The scenario's part of an advance to ``to_ns``, one slice of about ``max_turns`` turns per
        step (a slice ends on a complete instant, the clock moved there). Between two steps the state
        is one a single run would also pass through, so other commands may apply there; finish with
        :meth:`finish_advance`. The wall-clock ticker and ``POST /_sim/clock/advance`` run it from the
        event loop so that other requests get through during a long advance. Each slice is a unit of
        the write discipline: one the journal cannot take is rolled back, and
        :class:`JournalWriteError` ends the advance where the slices before it brought it."""
        while True:
            mark = self._begin()
            try:
                done = self.catch_up(max(to_ns, self.venue.clock.now), close=False, max_turns=max_turns)
            except JournalWriteError as exc:
                self._refused(mark, exc)
                raise
            if mark is not None:
                self._landed()
            if done:
                return
            yield

    def finish_advance(self, to_ns: int) -> Result:
        """The journaled ``advance`` that ends an advance: timers fire up to ``to_ns``."""
        result = Result()
        for _ in self.finish_advance_steps(to_ns, result, 0):
            pass
        return result

    def finish_advance_steps(self, to_ns: int, result: Result, budget: int = ADVANCE_BUDGET) -> Iterator[None]:
        """:meth:`finish_advance` in steps of about ``budget`` recorded events and timers
        (``Venue.advance_steps``; 0: one step), its ``result`` gathered in ``result``. The one journaled
        ``AdvanceClock`` is written before the first step (:class:`JournalWriteError` there, nothing
        applied); nothing else may apply to the venue until the last step (``VenueWork`` holds its
        requests). Recovery replays the record whole, to the same state."""
        mark = self._begin()
        try:
            to_ns = max(to_ns, self.venue.clock.now)
            self.catch_up(to_ns, close=False)
            cmd = AdvanceClock(to_ns)
            venue, at = self._recorded(cmd, to_ns, "ext")
        except JournalWriteError as exc:
            self._refused(mark, exc)
            raise
        if mark is not None:
            self._landed()
        yield from venue.advance_steps(at, result, budget)
        if self._on_result is not None:
            self._on_result(result)

    def timers_due(self, at: int) -> bool:
        """Whether a venue timer (acknowledgement, expiry, settlement, housekeeping) falls due by ``at``."""
        return self.venue.quiet_until() <= at

    def tick(self) -> Iterator[None]:
        """Wall mode: let the scenario act up to now, then fire the venue timers due by now; a step
        per slice (``advance_slices``) and per budget of the closing advance, so the server's ticker,
        which runs it as the venue's work, serves the other venues through a long catch-up.

        The scenario's own commands need no marker in the journal (recovery regenerates them from the
        records themselves); the timers do: they fire through a journaled ``advance`` to now, written
        only when one is due, so an idle server's journal does not grow."""
        now = self.now_ns()
        yield from self.advance_slices(now)
        if self.timers_due(now):
            yield from self.finish_advance_steps(now, Result())

    def set_status_retention(self, retention_ns: int) -> None:
        """Change how long ended orders stay visible, through the journal (so a restart replays it at the
        point it changed); nothing is written when it already has that value."""
        if retention_ns != self.venue.config.status_retention_ns:
            self.submit(SetStatusRetention(retention_ns))

    def apply(self, cmd: Command, at: int, src: str = "ext") -> Result:
        """Every command from outside goes through here, the live server's and its journal replay's
        alike: recorded (journaled, or checked during recovery) at the time it will apply, then
        submitted. A record that fails raises before the venue is touched. ``src``: "ext" from outside,
        "scn" the scenario's (whose own commands take :meth:`_bind`'s path, the same steps)."""
        venue, at = self._recorded(cmd, at, src)
        result = venue.submit_at(cmd, at)
        if self._on_result is not None:
            self._on_result(result)
        return result

    def _recorded(self, cmd: Command, at: int, src: str) -> tuple[Venue, int]:
        """``cmd`` recorded at the time it will apply (:meth:`apply`): the venue and that time."""
        if self._copies:
            self._settle()  # a snapshot under way is of the state before this command
        venue = self.venue
        at = venue.applies_at(cmd, at)
        record = self._recording
        if record is not None:
            record(at, src, cmd)
        return venue, at

    def _bind(self) -> None:
        """Make what every command goes through before it applies, once per venue, journal, read
        replica and listener: :meth:`_recording_of` for :meth:`apply`, and the submit function the
        scenario runner is handed, :meth:`apply`'s steps for the scenario's commands ("scn"), their
        events counted in ``scenario_events`` (what an advance reports it made happen). Everything it
        needs is looked up here (the replay loop runs it for every command); a scenario with events
        that change a side-state (``venue_faults``) gets one that takes their records too."""
        self._bound = True
        if self.ended:  # the scenario's commands refused too, by a function that names nothing back
            self._recording = _ended
            self._scenario_submit: Submit = _ended
            return
        venue = self.venue
        applies_at, submit_at = venue.applies_at, venue.submit_at
        record, on_result = self._recording_of(venue), self._on_result
        self._recording = record

        def apply_scenario(cmd: Command, at: int) -> Result:
            at = applies_at(cmd, at)
            if record is not None:
                try:
                    record(at, "scn", cmd)
                except JournalWriteError:
                    self._diverged = True  # the turn is half done: its unit must be rolled back
                    raise
            result = submit_at(cmd, at)
            if on_result is not None:
                on_result(result)
            self.scenario_events += len(result.events)
            return result

        if not self._side_state_events:
            self._scenario_submit = apply_scenario
            return

        def apply_scenario_or_side_state(cmd: Command | SideStateRecord, at: int) -> Result:
            if isinstance(cmd, SideStateRecord):
                return self._scenario_side_state(cmd, at)
            return apply_scenario(cmd, at)

        self._scenario_submit = apply_scenario_or_side_state

    def _recording_of(self, venue: Venue) -> Record | None:
        """How a command is recorded before it applies to ``venue``: the journal's record (during
        recovery, the check), then, while reads lag the engine, the read replica follows it
        (``api/runtime/read_replica.py``); None when there is nothing to do."""
        journal, replica = self._record, self.replica
        if replica is None:
            return journal

        def record_and_follow(at: int, src: str, cmd: Command) -> None:
            if journal is not None:
                journal(at, src, cmd)
            replica.follow(venue, cmd, at)

        return record_and_follow

    @property
    def scenario_submit(self) -> Submit:
        """The submit function the scenario's runner is handed (:meth:`_bind`), for a caller that steps
        the runner itself (the backtest harness); it changes when the journal or the listener does."""
        return self._scenario_submit

    def _set_record(self, record: Record | None) -> None:
        self._record = record
        self._bind()

    def _scenario_side_state(self, record: SideStateRecord, at: int) -> Result:
        """A scenario event that changes a side-state (``venue_faults``): journaled as "scn" (during recovery:
        checked against the journal's next record, as the scenario's commands are), then applied."""
        if self._expect is None:
            try:
                self._journal_side_state(at, record.kind, record.values, "scn")
            except JournalWriteError:
                self._diverged = True
                raise
        else:
            self._expect(at, "scn", record)
        self.side_states.attached[record.namespace].apply_record(at, record.kind, record.values)
        return Result()

    def set_listener(self, listener: Callable[[Result], None] | None) -> None:
        """Let ``listener`` see the result of every command applied from now on (requests, the control
        plane, the scenario's own), in order, after it applied; None removes it. It takes the place of
        ``on_result``: the live stream's hub (``api/web/server/stream_hub.py``) is the one listener of a server."""
        self._on_result = listener
        self._bind()

    # --- state kept beside the engine ---------------------------------------------------------------

    def attach(self, namespace: str, side_state: SideState) -> Callable[[int, str, list[Any]], None]:
        """Journal ``side_state`` with the venue under ``namespace`` (its record kinds are ``{namespace}.*``,
        ``api/side_state/side_states.py``). Brings it to where the journal left it first (a record that does not
        apply is a :class:`JournalError` naming its offset) and returns the function that journals its
        records from now on, ``(at, kind, values)``: written before the change applies, it raises
        :class:`JournalWriteError` when the journal cannot take one."""
        try:
            self.side_states.attach(namespace, side_state, self._base_snapshot, self.journal_path)
        except SideStateError as exc:
            if exc.record is not None and self.journal_path is not None:
                raise damage(self.journal_path, *exc.record, exc.reason) from None
            raise JournalError(str(exc)) from None
        return self._write_side_state

    def apply_side_state(self, where: tuple[int, int], at: int, record: SideStateRecord) -> None:
        """A side-state record met in recovery (``recovery.Replayer``; ``where``: its number and byte offset)."""
        self.side_states.replay(where, at, record)

    def _journal_side_state(self, at: int, kind: str, values: list[Any], src: str = "ext") -> None:
        if self._journal is not None:
            self._journal.append_records([record_json(at, src, SideStateRecord(kind, values))])

    def _write_side_state(self, at: int, kind: str, values: list[Any]) -> None:
        """An ``ext`` side-state record, a unit of its own (written before its change applies)."""
        self._refuse_if_ended()
        mark = self._begin()
        try:
            self._journal_side_state(at, kind, values)
        except JournalWriteError as exc:
            self._refused(mark, exc)
            raise
        if mark is not None:
            self._landed()

    # --- write discipline (journal_health.py) -----------------------------------------------------

    def _begin(self) -> tuple[int, int] | None:
        """Where a unit of the write discipline starts (None: no server journal to keep whole);
        :class:`JournalWriteError` at once while the state could not be rolled back to the journal."""
        health, journal = self._health, self._journal
        if health is None or journal is None:
            return None
        if health.broken is not None:
            raise JournalWriteError(health.broken)
        return journal.size, journal.crc  # JournalFile.mark(), without the call (every request asks)

    def _landed(self) -> None:
        health = self._health
        if health is not None and health.failing is not None:
            health.succeeded()

    def _refused(self, mark: tuple[int, int] | None, exc: JournalWriteError) -> None:
        """A unit the journal could not take: what of it applied is rolled back (the journal cut back to
        ``mark`` and the state rebuilt from it), and the journal is failing."""
        health, journal = self._health, self._journal
        diverged, self._diverged = self._diverged, False
        if health is None or journal is None or mark is None:
            return
        health.failed(str(exc))
        if diverged or journal.size != mark[0]:
            self._roll_back(journal, mark)

    def _roll_back(self, journal: JournalFile, mark: tuple[int, int]) -> None:
        """Back to the state the journal up to ``mark`` holds, rebuilt from it as a restart would (the
        live stream's listener hears none of it); when that fails, the journal is broken."""
        health, path, listener = self._health, self.journal_path, self._on_result
        assert health is not None and path is not None
        self._journal, self._on_result = None, None  # recovery checks records, writes and tells nothing
        counted = self.recovered_commands
        try:
            journal.cut_to(mark)
            header = read_header(path, self.scenario)
            if header is None:
                raise JournalError(f"journal {path}: its header is gone")
            install_side_states = self.side_states.restore(self._base_snapshot)
            if self._base_snapshot is not None:
                self._install(self._base_snapshot)
            else:
                self._build()
            install_side_states()
            self.venue.use_rules(header.rules)
            recovered = recover(self, path, header, written_settings(self.scenario))
            if recovered.tail or recovered.crc != mark[1]:
                raise JournalError(f"journal {path}: does not end where the failed write began")
        except (OSError, ValueError, JournalError) as exc:
            health.broke(f"the state could not be rolled back to the journal ({exc})")
        finally:
            self.recovered_commands = counted
            self._journal, self._on_result = journal, listener
            self._set_record(journal.command_writer())
        self.epoch += 1
        log.warning("journal %s: the operation it could not take was rolled back", path)

    # --- journal ----------------------------------------------------------------------------------

    def check_with(self, expect: Expect | None) -> None:
        """Recovery (``recovery.recover``): every record goes to ``expect`` instead of the journal."""
        self._expect = expect
        self._set_record(expect)

    def scenario_digest(self) -> str:
        return scenario_digest(self.scenario)


def _ended(*_: object) -> NoReturn:
    """What an ended simulation records or submits a command with (and refuses anything else with)."""
    raise SimulationEnded("the simulation was ended; nothing was applied")
