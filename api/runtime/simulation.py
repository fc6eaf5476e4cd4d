"""The running simulation: one venue, its scenario runner, its clock mode and its journal.

Everything that changes the venue goes through this module (HTTP requests and the control plane by
:meth:`Simulation.submit`, the scenario's agents and events by the submit function it hands the
scenario runner), so there is one writer and one total order. It is the venue's only submitter: it
journals each command, with the source it knows, and only then submits it; the engine knows nothing
of the journal.

Clock modes:
- ``virtual``: engine time starts at the scenario's ``start`` and moves only when the control plane
  advances it (or, with ``speed``, at a multiple of real time). Requests are applied at the current
  engine time. Tests use this: it is fully deterministic.
- ``wall``: engine time is the wall clock. The scenario is rebased to start when the server starts
  (its events and agents keep their spacing), each request is applied at the wall time it arrives,
  and a ticker lets agents and timers run between requests.

Journal (``--journal FILE``): JSON lines. The first line is a header naming the scenario and the
effective start; each further line is a record ``[at, src, kind, values]`` (``engine/journal.py``) of
every command applied to the venue, written before it applies (so before its response; a command
the journal cannot take is not applied). ``src`` tells
commands that came from outside ("ext": requests, control plane, clock moves) from those the scenario
runner generated ("scn"). On start with an existing journal the server rebuilds the state record by
record (``api/runtime/recovery.py``): the scenario regenerates its own records, checked one by one, and the
external ones are re-applied where they stand; a torn tail is cut and a torn scenario burst finished.

State kept beside the engine (the Auth store's tokens and revocations) is journaled in the same file,
in the same order, by :meth:`Simulation.attach`: its records (kinds with a dot, ``auth.key_tokens``)
are written before the response like a command's, replayed where they stand, and its state goes into
snapshots under its namespace. The engine never sees them. The venue faults (``faults.venue``,
``api/runtime/venue_faults.py``) are such a side, attached here as the simulation is built; a
scenario event that sets them reaches :meth:`Simulation._apply_scenario_or_side` in a command's place and is
journaled ``scn`` (``api/runtime/sides.py``).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from cefisim.api.runtime import snapshot
from cefisim.api.runtime.recovery import (
    JOURNAL_RULES,
    MAX_HEADER_BYTES,
    JournalError,
    Records,
    Replayer,
    journal_header,
    scenario_digest,
)
from cefisim.api.runtime.sides import Side, SideError, SideRecord, Sides, side_record
from cefisim.api.runtime.venue_faults import NAMESPACE as FAULTS
from cefisim.api.runtime.venue_faults import VENUE, FaultsSide, VenueFaults, checked
from cefisim.api.scenario import Scenario, ScenarioError
from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.commands import (
    AdvanceClock,
    CancelOrder,
    Command,
    ModifyOrder,
    PlaceOrder,
    SetLatency,
    SetStatusRetention,
)
from cefisim.engine.journal import to_record
from cefisim.engine.recorded.market import latency_draw
from cefisim.engine.simulation.scenario import ScenarioRunner
from cefisim.engine.venue import Result, Venue, VenueConfig

log = logging.getLogger("cefisim.sim")

#: scenario turns per slice of a long advance: ~10-30 ms of CPU, so other requests get through
SLICE_TURNS = 500
MIN_WALL_INTERVAL_NS = NS_PER_SECOND // 10  # an agent's (mean) interval on the wall clock


def check_wall_clock(scenario: Scenario) -> None:
    """Raise :class:`ScenarioError` naming every agent that acts more often than the wall clock allows
    (``MIN_WALL_INTERVAL_NS``): on the wall clock a server that cannot keep up falls behind for ever."""
    problems = [
        (
            str(scenario.source),
            f"{scenario.agent_path(i)}.{name}",
            f"at least {MIN_WALL_INTERVAL_NS / NS_PER_SECOND:g} s on the wall clock (--clock wall)",
        )
        for i, spec in enumerate(scenario.agents)
        for name, attr in (("interval", "interval_ns"), ("mean_interval", "mean_interval_ns"))
        if getattr(spec, attr, MIN_WALL_INTERVAL_NS) < MIN_WALL_INTERVAL_NS
    ]
    problems = list(dict.fromkeys(problems))  # once per entry, not once per agent of a population
    if problems:
        raise ScenarioError(problems)


class JournalWriteError(Exception):
    """A command could not be written to the journal; it was not applied."""


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
    ) -> None:
        """``read_only``: rebuild from ``journal_path`` but never write to it (offline replay).
        ``on_result`` sees the result of every command the simulation applies (replay statistics)."""
        if clock not in ("virtual", "wall"):
            raise ValueError("clock must be 'virtual' or 'wall'")
        if clock == "wall":
            check_wall_clock(scenario)
        self.scenario = scenario
        self.clock_mode = clock
        self.venue_config = venue_config
        self._wall_ns = self._true_wall_ns = wall_ns
        self.faults = VenueFaults()  # what reads and the clock show, not engine state (venue_faults.py)
        self.journal_path = Path(journal_path) if journal_path else None
        self._journal: IO[bytes] | None = None
        self._journal_size = 0
        # where each command is recorded before it applies: the journal file (when open), or during
        # recovery the check that the scenario regenerates the records the journal holds
        self._record: Callable[[int, str, Command], None] = self._on_command
        self._recovering = False
        self._expect: Callable[[int, str, Command | SideRecord], None] | None = None  # recovery's check
        self.recovered_commands = 0
        self._on_result = on_result
        self._latency_spread = scenario.order_latency_range()
        # the runner's submit: one that also takes side records only when the scenario has such events,
        # so a scenario without them pays nothing per command for them
        sides = scenario.has_side_events()
        self._scenario_submit = self._apply_scenario_or_side if sides else self._apply_scenario
        self.start_ns = scenario.start_ns
        self._base_snapshot: dict[str, Any] | None = None  # the state a journal starts from, if not the scenario
        self.epoch = 0  # counts resets and restores: a sliced advance stops when its simulation was replaced
        self.sides = Sides()  # state kept beside the engine (attach)
        self.scenario_events = 0  # venue events of the scenario's own commands so far (never reset)
        existing = self._read_header() if self.journal_path else None
        if existing is not None:
            self.start_ns = existing[0]
        elif clock == "wall":
            self.start_ns = wall_ns()
        self._faults = FaultsSide(self.faults, self.skew_clock)
        self.attach(FAULTS, self._faults)
        if self._base_snapshot is not None:
            self._install(self._base_snapshot)
        else:
            self._build()
        if existing is not None:
            # an older journal goes on under the rules it was recorded with (a reset or a restore
            # starts a journal of the current format, and a venue of the current rules)
            self.venue.use_rules(existing[2])
            self._recover(existing[1], read_only)
        if self.journal_path and not read_only:
            self._open_journal(fresh=existing is None)
        if existing is None:
            self.catch_up(self.start_ns)  # the scenario's start instant, journaled like the rest

    # --- building and rebuilding --------------------------------------------------------------

    def _build(self) -> None:
        delta = self.start_ns - self.scenario.start_ns
        scenario = self.scenario.shifted(delta) if delta else self.scenario
        # the scenario's settings apply as the venue is built, before the journal opens: never written
        self.venue: Venue = scenario.build_venue(self.venue_config)
        self.runner = scenario.runner(self.venue, sides=True)

    def close(self) -> None:
        """Close the journal file (the server calls this on shutdown)."""
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    def end(self) -> None:
        """Close the journal for good: every later command raises :class:`SimulationEnded` before it
        applies (a request still in flight when its venue is deleted is refused, never applied
        unjournaled)."""
        self.close()
        self.journal_path = None  # a reset in flight must not open it again
        self._record = _ended

    # --- snapshots ------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The whole state as a JSON-ready document (``api/runtime/snapshot.py``)."""
        if self.venue.feeds:
            raise snapshot.SnapshotError(
                "a recorded market cannot be snapshotted: its position in the "
                "recording lives in the file; the journal restores it"
            )
        header = {
            "scenario": str(self.scenario.source),
            "scenario_sha256": self.scenario_digest(),
            "clock": self.clock_mode,
            "start_ns": self.start_ns,
        }
        return self.sides.snapshot_into(snapshot.to_json({"venue": self.venue, "runner": self.runner}, header))

    def restore(self, doc: Any) -> None:
        """Replace the state with a snapshot of this scenario. The journal starts anew from it."""
        if not isinstance(doc, dict) or doc.get("scenario_sha256") != self.scenario_digest():
            raise snapshot.SnapshotError("the snapshot was taken of another scenario")
        try:
            install_sides = self.sides.restore(doc)
        except SideError as exc:
            raise snapshot.SnapshotError(str(exc)) from None
        self._install(doc)
        install_sides()
        self.epoch += 1
        if self.journal_path:
            if self._journal is not None:
                self._journal.close()
            self._base_snapshot = doc
            self._open_journal(fresh=True)

    def _install(self, doc: dict[str, Any]) -> None:
        """Rebuild and check everything first; only a sound state replaces the current one."""
        start_ns = doc.get("start_ns", self.start_ns)
        if not isinstance(start_ns, int) or isinstance(start_ns, bool) or start_ns < 0:
            raise snapshot.SnapshotError("snapshot: start_ns must be a nanosecond timestamp")
        root = snapshot.from_json(doc)
        venue, runner = root.get("venue"), root.get("runner")
        if not isinstance(venue, Venue) or not isinstance(runner, ScenarioRunner) or runner.venue is not venue:
            raise snapshot.SnapshotError("snapshot: no venue and runner at its root")
        try:
            venue.check_invariants()
        except (AssertionError, TypeError, AttributeError, KeyError, ValueError) as exc:
            raise snapshot.SnapshotError(f"snapshot: the state it holds is not sound ({exc})") from None
        self.venue, self.runner = venue, runner
        self.start_ns = start_ns

    def reset(self) -> None:
        """Back to the scenario as loaded (in wall mode: starting now). The journal starts anew."""
        if self.clock_mode == "wall":
            self.start_ns = self._wall_ns()
        else:
            self.start_ns = self.scenario.start_ns
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        self._base_snapshot = None
        self.epoch += 1
        self._build()
        self.sides.restore(None)()
        if self.journal_path:
            self._open_journal(fresh=True)
        self.catch_up(self.start_ns)

    # --- time -----------------------------------------------------------------------------------

    def now_ns(self) -> int:
        """Engine time now (in wall mode, the wall clock, never behind the engine clock)."""
        if self.clock_mode == "wall":
            return max(self._wall_ns(), self.venue.clock.now)
        return self.venue.clock.now

    def set_venue_faults(self, read_lag_ms: int, fill_delay_ms: int, clock_skew_s: int) -> None:
        """Set the venue faults (all three; 0 is off) through the journal: written before they apply,
        :class:`JournalWriteError` (nothing changed) when the journal cannot take the record. The
        values are checked first (``venue_faults.checked``: ``ValueError``, nothing written)."""
        values = [read_lag_ms, fill_delay_ms, clock_skew_s]
        checked(values)
        at = self.now_ns()
        self._journal_side(at, VENUE, values)
        self._faults.apply_record(at, VENUE, values)

    def skew_clock(self, skew_ns: int) -> None:
        """Run the server's wall clock ``skew_ns`` ahead (negative: behind); 0 ends the skew. The clock
        function is swapped, so an unskewed clock costs nothing (``api/runtime/venue_faults.py``)."""
        true = self._true_wall_ns
        self._wall_ns = true if skew_ns == 0 else (lambda: true() + skew_ns)
        self.faults.clock_skew_ns = skew_ns

    def catch_up(self, at: int, close: bool = True, max_turns: int | None = None) -> bool:
        """Let the scenario act up to ``at`` before an external command applies there; with ``close``
        the runner then moves the clock to ``at`` (journaled as the scenario's ``advance``). With
        ``max_turns``: one slice (``ScenarioRunner.run``); False when more is due by ``at``."""
        due = self.runner.next_time()
        if due is None or due > at:
            return True  # nothing of the scenario's is due: the command itself moves the clock
        return self.run_scenario(at, close, max_turns)

    def run_scenario(self, at: int, close: bool = True, max_turns: int | None = None) -> bool:
        """The scenario's turns up to ``at`` (and its closing clock move), journaled as ``scn``."""
        return self.runner.run(at, advance_clock=close, max_turns=max_turns, submit=self._scenario_submit)

    # --- the one way in ---------------------------------------------------------------------------

    def submit(self, cmd: Command) -> Result:
        """Apply an external command (request or control plane) now. With a recorded source's order
        latency drawn per command, an order command is preceded by its own journaled SetLatency."""
        at = self.now_ns()
        self.catch_up(at)
        spread = self._latency_spread
        if spread is not None and type(cmd) in (PlaceOrder, ModifyOrder, CancelOrder):
            lat = latency_draw(self.scenario.seed, self.venue, *spread)
            self.apply(SetLatency(lat, lat, lat), at)
        return self.apply(cmd, at)

    def advance(self, to_ns: int) -> Result:
        """Move engine time forward (virtual clock), letting the scenario and timers act on the way."""
        for _ in self.advance_slices(to_ns):
            pass
        return self.finish_advance(to_ns)

    def advance_slices(self, to_ns: int, max_turns: int = SLICE_TURNS) -> Iterator[None]:
        """The scenario's part of an advance to ``to_ns``, one slice of about ``max_turns`` turns per
        step (a slice ends on a complete instant, the clock moved there). Between two steps the state
        is one a single run would also pass through, so other commands may apply there; finish with
        :meth:`finish_advance`. The wall-clock ticker and ``POST /_sim/clock/advance`` run it from the
        event loop so that other requests get through during a long advance."""
        while not self.catch_up(max(to_ns, self.venue.clock.now), close=False, max_turns=max_turns):
            yield

    def finish_advance(self, to_ns: int) -> Result:
        """The journaled ``advance`` that ends an advance: timers fire up to ``to_ns``."""
        to_ns = max(to_ns, self.venue.clock.now)
        self.catch_up(to_ns, close=False)
        return self.apply(AdvanceClock(to_ns), to_ns)

    def timers_due(self, at: int) -> bool:
        """Whether a venue timer (acknowledgement, expiry, settlement, housekeeping) falls due by ``at``."""
        return self.venue.quiet_until() <= at

    def tick(self) -> Iterator[None]:
        """Wall mode: let the scenario act up to now, then fire the venue timers due by now; a step
        per slice (``advance_slices``), so the server's ticker lets requests through a long catch-up.

        The scenario's own commands need no marker in the journal (recovery regenerates them from the
        records themselves); the timers do: they fire through a journaled ``advance`` to now, written
        only when one is due, so an idle server's journal does not grow."""
        now = self.now_ns()
        yield from self.advance_slices(now)
        if self.timers_due(now):
            self.finish_advance(now)

    def set_status_retention(self, retention_ns: int) -> None:
        """Change how long ended orders stay visible, through the journal (so a restart replays it at the
        point it changed); nothing is written when it already has that value."""
        if retention_ns != self.venue.config.status_retention_ns:
            self.submit(SetStatusRetention(retention_ns))

    def apply(self, cmd: Command, at: int, src: str = "ext") -> Result:
        """Every command goes through here, the live server's and its journal replay's alike: recorded
        (journaled, or checked during recovery) at the time it will apply, then submitted. A record
        that fails raises before the venue is touched. ``src``: "ext" from outside, "scn" the scenario's."""
        venue = self.venue
        at = venue.applies_at(cmd, at)
        self._record(at, src, cmd)
        result = venue.submit(cmd, at)
        if self._on_result is not None:
            self._on_result(result)
        return result

    def _apply_scenario(self, cmd: Command, at: int) -> Result:
        """The submit function the scenario runner is handed: its commands, journaled as "scn"; their
        events counted in ``scenario_events`` (what an advance reports it made happen)."""
        result = self.apply(cmd, at, "scn")
        self.scenario_events += len(result.events)
        return result

    def _apply_scenario_or_side(self, cmd: Command | SideRecord, at: int) -> Result:
        """:meth:`_apply_scenario` for a scenario with events that change a side (``venue_faults``)."""
        if isinstance(cmd, SideRecord):
            return self._scenario_side(cmd, at)
        return self._apply_scenario(cmd, at)

    def _scenario_side(self, record: SideRecord, at: int) -> Result:
        """A scenario event that changes a side (``venue_faults``): journaled as "scn" (during recovery:
        checked against the journal's next record, as the scenario's commands are), then applied."""
        if self._expect is None:
            self._journal_side(at, record.kind, record.values, "scn")
        else:
            self._expect(at, "scn", record)
        self.sides.attached[record.namespace].apply_record(at, record.kind, record.values)
        return Result()

    def set_listener(self, listener: Callable[[Result], None] | None) -> None:
        """Let ``listener`` see the result of every command applied from now on (requests, the control
        plane, the scenario's own), in order, after it applied; None removes it. It takes the place of
        ``on_result``: the live stream's hub (``api/control/stream_hub.py``) is the one listener of a server."""
        self._on_result = listener

    # --- state kept beside the engine ---------------------------------------------------------------

    def attach(self, namespace: str, side: Side) -> Callable[[int, str, list[Any]], None]:
        """Journal ``side`` with the venue under ``namespace`` (its record kinds are ``{namespace}.*``,
        ``api/runtime/sides.py``). Brings it to where the journal left it first (a record that does not
        apply is a :class:`JournalError` naming its offset) and returns the function that journals its
        records from now on, ``(at, kind, values)``: written before the change applies, it raises
        :class:`JournalWriteError` when the journal cannot take one."""
        try:
            self.sides.attach(namespace, side, self._base_snapshot, self.journal_path)
        except SideError as exc:
            raise JournalError(str(exc)) from None
        return self._journal_side

    def apply_side(self, offset: int, at: int, record: SideRecord) -> None:
        """A side record met in recovery (``recovery.Replayer``)."""
        self.sides.replay(offset, at, record)

    def _journal_side(self, at: int, kind: str, values: list[Any], src: str = "ext") -> None:
        if self._journal is not None:
            self._append(side_record(at, kind, values, src))

    # --- journal ----------------------------------------------------------------------------------

    def _on_command(self, at: int, src: str, cmd: Command) -> None:
        if self._journal is None:
            return
        self._append(orjson.dumps(to_record(at, src, cmd), option=orjson.OPT_APPEND_NEWLINE))

    def _append(self, data: bytes) -> None:
        """Write a whole record or nothing: a failed write is cut back to the last complete record."""
        f = self._journal
        assert f is not None
        try:
            view = memoryview(data)
            while view:
                written = f.write(view)
                view = view[written:]
        except OSError as exc:
            try:
                f.truncate(self._journal_size)
            except OSError:
                log.error("journal %s: could not cut back a partial record", self.journal_path)
            raise JournalWriteError(f"journal write failed: {exc.strerror or exc}") from None
        self._journal_size += len(data)

    def _header(self) -> bytes:
        return journal_header(self.scenario, self.start_ns, self.clock_mode, self._base_snapshot)

    def scenario_digest(self) -> str:
        return scenario_digest(self.scenario)

    def _open_journal(self, fresh: bool) -> None:
        """Unbuffered: each record reaches the operating system before the command applies.

        A fresh journal is written next to the file and renamed over it once its header is complete:
        a process killed meanwhile leaves the previous journal (or none), never a torn header."""
        path = self.journal_path
        assert path is not None
        if fresh:
            staged = path.with_name(path.name + ".new")
            with open(staged, "wb") as f:
                f.write(self._header())
            os.replace(staged, path)
        self._journal = open(path, "ab", buffering=0)  # noqa: SIM115 - open for the simulation's life
        self._journal_size = path.stat().st_size

    def _read_header(self) -> tuple[int, int, int] | None:
        """(start_ns, header length, edition of the rules its format was recorded under) of an existing
        journal, None when there is none (or it is empty).

        Anything but a complete, matching header refuses the start and leaves the file as it is."""
        path = self.journal_path
        assert path is not None
        if not path.exists() or path.stat().st_size == 0:
            return None
        with open(path, "rb") as f:
            line = f.readline(MAX_HEADER_BYTES)
        if not line.endswith(b"\n"):
            raise JournalError(
                f"journal {path}: byte offset 0: the header line is incomplete ({len(line)} bytes, "
                "no line end); the file is left as it is"
            )
        try:
            header = orjson.loads(line)
            if not isinstance(header, dict) or str(header.get("format")) not in JOURNAL_RULES:
                raise ValueError(f"not a cefisim journal header (format {' or '.join(JOURNAL_RULES)})")
            start_ns = header.get("start_ns")
            if not isinstance(start_ns, int) or isinstance(start_ns, bool) or start_ns < 0:
                raise ValueError("start_ns must be a nanosecond timestamp")
        except ValueError as exc:
            raise JournalError(f"journal {path}: byte offset 0: {exc}") from None
        if header.get("scenario_sha256") != self.scenario_digest():
            raise JournalError(f"journal {path} was written for another scenario ({header.get('scenario')})")
        self._base_snapshot = header.get("snapshot")
        return start_ns, len(line), JOURNAL_RULES[header["format"]]

    def _recover(self, header_bytes: int, read_only: bool) -> None:
        """Re-apply a journal, record by record, checking each of the scenario's own records as the
        scenario regenerates it (``recovery.Replayer``). A torn tail is cut back, and the rest of a scenario
        burst it tore is regenerated and appended, only once the whole journal has replayed: a journal
        that does not replay is left untouched."""
        assert self.journal_path is not None
        with open(self.journal_path, "rb") as f:
            f.seek(header_bytes)
            replayer = Replayer(self, Records(f, self.journal_path, header_bytes))
            self._record = self._expect = replayer.expect
            try:
                replayer.run()
            finally:
                self._record, self._expect = self._on_command, None
        records = replayer.records
        if read_only:
            return
        if records.complete_until < records.size:
            with open(self.journal_path, "r+b") as f:
                f.truncate(records.complete_until)
                f.flush()
                os.fsync(f.fileno())
        if replayer.tail:
            with open(self.journal_path, "ab") as f:
                f.write(
                    b"".join(
                        side_record(at, cmd.kind, cmd.values, "scn")
                        if isinstance(cmd, SideRecord)
                        else orjson.dumps(to_record(at, "scn", cmd), option=orjson.OPT_APPEND_NEWLINE)
                        for at, cmd in replayer.tail
                    )
                )
            log.warning(
                "journal %s: %d scenario records of the torn burst regenerated and appended",
                self.journal_path,
                len(replayer.tail),
            )


def _ended(at: int, src: str, cmd: Command) -> None:
    raise SimulationEnded("the simulation was ended; nothing was applied")
