"""The running simulation: one venue, its scenario runner, its clock mode and its journal.

Everything that changes the venue goes through :meth:`Simulation.submit` (HTTP requests, the control
plane, the scenario's agents and events), so there is one writer and one total order.

Clock modes:
- ``virtual``: engine time starts at the scenario's ``start`` and moves only when the control plane
  advances it (or, with ``speed``, at a multiple of real time). Requests are applied at the current
  engine time. Tests use this: it is fully deterministic.
- ``wall``: engine time is the wall clock. The scenario is rebased to start when the server starts
  (its events and agents keep their spacing), each request is applied at the wall time it arrives,
  and a ticker lets agents and timers run between requests.

Journal (``--journal FILE``): JSON lines. The first line is a header naming the scenario and the
effective start; each further line is a record ``[at, src, kind, values]`` (``engine/journal.py``),
written before the command is applied (so before its response). ``src`` tells commands that came from
outside ("ext": requests, control plane, ticks) from those the scenario runner generated ("scn").
On start with an existing journal the server rebuilds the state: it re-runs the scenario and
re-applies the external commands at their recorded times, and checks that the scenario regenerates
exactly what was journaled.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import orjson

from cefisim.engine.commands import AdvanceClock, CancelOrder, Command, ModifyOrder, PlaceOrder, SetLatency
from cefisim.engine.journal import from_record, to_record
from cefisim.engine.recorded import latency_draw
from cefisim.engine.venue import Result, Venue, VenueConfig

from . import snapshot
from .scenario import Scenario

log = logging.getLogger("cefisim.sim")

JOURNAL_FORMAT = "cefisim-journal/1"


class JournalError(Exception):
    """The journal file cannot be used (unreadable, corrupt in the middle, another scenario)."""


class JournalWriteError(Exception):
    """A command could not be written to the journal; it was not applied."""


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
        self.scenario = scenario
        self.clock_mode = clock
        self.venue_config = venue_config
        self._wall_ns = wall_ns
        self.journal_path = Path(journal_path) if journal_path else None
        self._journal: IO[bytes] | None = None
        self._journal_size = 0
        self._source = "ext"
        self._recovering = False
        self.recovered_commands = 0
        self._on_result = on_result
        self._latency_spread = scenario.order_latency_range()
        self.start_ns = scenario.start_ns
        self._base_snapshot: dict[str, Any] | None = None  # the state a journal starts from, if not the scenario
        existing = self._read_journal() if self.journal_path else None
        if existing is not None:
            self.start_ns = existing[0]
        elif clock == "wall":
            self.start_ns = wall_ns()
        if self._base_snapshot is not None:
            self._install(self._base_snapshot)
        else:
            self._build()
        if existing is not None:
            self._recover(existing[1])
        if self.journal_path and not read_only:
            self._open_journal(fresh=existing is None)

    # --- building and rebuilding --------------------------------------------------------------

    def _build(self) -> None:
        delta = self.start_ns - self.scenario.start_ns
        scenario = self.scenario.shifted(delta) if delta else self.scenario
        self.venue: Venue = scenario.build_venue(self.venue_config, journal=self._on_command)
        self.runner = scenario.runner(self.venue)
        self._catch_up(self.start_ns)

    def close(self) -> None:
        """Close the journal file (the server calls this on shutdown)."""
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    # --- snapshots ------------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The whole state as a JSON-ready document (``api/snapshot.py``)."""
        if self.venue.feeds:
            raise snapshot.SnapshotError("a recorded market cannot be snapshotted: its position in the "
                                         "recording lives in the file; the journal restores it")
        header = {"scenario": str(self.scenario.source), "scenario_sha256": self.scenario_digest(),
                  "clock": self.clock_mode, "start_ns": self.start_ns}
        return snapshot.to_json({"venue": self.venue, "runner": self.runner}, header)

    def restore(self, doc: Any) -> None:
        """Replace the state with a snapshot of this scenario. The journal starts anew from it."""
        if not isinstance(doc, dict) or doc.get("scenario_sha256") != self.scenario_digest():
            raise snapshot.SnapshotError("the snapshot was taken of another scenario")
        self._install(doc)
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
        if not isinstance(venue, Venue) or runner is None or getattr(runner, "venue", None) is not venue:
            raise snapshot.SnapshotError("snapshot: no venue and runner at its root")
        venue.bind_handlers()
        try:
            venue.check_invariants()
        except (AssertionError, TypeError, AttributeError, KeyError, ValueError) as exc:
            raise snapshot.SnapshotError(f"snapshot: the state it holds is not sound ({exc})") from None
        venue.journal = self._on_command
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
        saved, self.journal_path = self.journal_path, None
        self._build()
        self.journal_path = saved
        if self.journal_path:
            self._open_journal(fresh=True)

    # --- time -----------------------------------------------------------------------------------

    def now_ns(self) -> int:
        """Engine time now (in wall mode, the wall clock, never behind the engine clock)."""
        if self.clock_mode == "wall":
            return max(self._wall_ns(), self.venue.clock.now)
        return self.venue.clock.now

    def _catch_up(self, at: int) -> None:
        """Let the scenario act up to ``at`` before an external command applies there."""
        due = self.runner.next_time()
        if due is None or due > at:
            return  # nothing of the scenario's is due: the command itself moves the clock
        self._source = "scn"
        try:
            for result in self.runner.run_until(at):
                if self._on_result is not None:
                    self._on_result(result)
        finally:
            self._source = "ext"

    # --- the one way in ---------------------------------------------------------------------------

    def submit(self, cmd: Command) -> Result:
        """Apply an external command (request or control plane) now. With a recorded source's order
        latency drawn per command, an order command is preceded by its own journaled SetLatency."""
        at = self.now_ns()
        self._catch_up(at)
        spread = self._latency_spread
        if spread is not None and type(cmd) in (PlaceOrder, ModifyOrder, CancelOrder):
            lat = latency_draw(self.scenario.seed, self.venue, *spread)
            self._apply(SetLatency(lat, lat, lat), at)
        return self._apply(cmd, at)

    def advance(self, to_ns: int) -> Result:
        """Move engine time forward (virtual clock), letting the scenario and timers act on the way."""
        to_ns = max(to_ns, self.venue.clock.now)
        self._catch_up(to_ns)
        return self._apply(AdvanceClock(to_ns), to_ns)

    def tick(self) -> Result | None:
        """Wall mode: run the scenario and due timers up to now (called periodically by the server)."""
        now = self.now_ns()
        self._catch_up(now)
        due = self.venue.next_due()
        if due is not None and due <= now:
            return self._apply(AdvanceClock(now), now)
        return None

    def _apply(self, cmd: Command, at: int) -> Result:
        """Every external command goes through here: the live server and its journal replay alike."""
        result = self.venue.submit(cmd, at=at)
        if self._on_result is not None:
            self._on_result(result)
        return result

    # --- journal ----------------------------------------------------------------------------------

    def _on_command(self, at: int, cmd: Command) -> None:
        if self._journal is None:
            return
        self._append(orjson.dumps(to_record(at, self._source, cmd), option=orjson.OPT_APPEND_NEWLINE))

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

    def _header(self) -> dict[str, Any]:
        return {
            "format": JOURNAL_FORMAT,
            "scenario": str(self.scenario.source),
            "scenario_sha256": self.scenario_digest(),
            "start_ns": self.start_ns,
            "clock": self.clock_mode,
            **({"snapshot": self._base_snapshot} if self._base_snapshot is not None else {}),
        }

    def scenario_digest(self) -> str:
        return hashlib.sha256(orjson.dumps(self.scenario.doc, option=orjson.OPT_SORT_KEYS)).hexdigest()

    def _open_journal(self, fresh: bool) -> None:
        """Unbuffered: each record reaches the operating system before the command applies."""
        assert self.journal_path is not None
        self._journal = open(self.journal_path, "wb" if fresh else "ab", buffering=0)
        self._journal_size = 0 if fresh else self.journal_path.stat().st_size
        if fresh:
            self._append(orjson.dumps(self._header(), option=orjson.OPT_SORT_KEYS) + b"\n")

    def _read_journal(self) -> tuple[int, list[tuple[int, str, Command]]] | None:
        """(start_ns, entries) of an existing journal; a torn last line is cut off."""
        path = self.journal_path
        assert path is not None
        if not path.exists() or path.stat().st_size == 0:
            return None
        data = path.read_bytes()
        lines = data.split(b"\n")
        complete_until = len(data)
        if not data.endswith(b"\n"):
            # a torn last write: keep everything up to the last complete record
            torn = lines.pop()
            complete_until = len(data) - len(torn)
            log.warning("journal %s: incomplete last record (%d bytes) cut off", path, len(torn))
        else:
            lines.pop()
        entries: list[tuple[int, str, Command]] = []
        offset = 0
        start_ns = None
        for number, raw in enumerate(lines):
            try:
                record = orjson.loads(raw)
                if number == 0:
                    if not isinstance(record, dict) or record.get("format") != JOURNAL_FORMAT:
                        raise ValueError("not a cefisim journal header")
                    if record.get("scenario_sha256") != self.scenario_digest():
                        raise JournalError(
                            f"journal {path} was written for another scenario ({record.get('scenario')})"
                        )
                    start_ns = int(record["start_ns"])
                    self._base_snapshot = record.get("snapshot")
                else:
                    entries.append(from_record(record))
            except JournalError:
                raise
            except (ValueError, KeyError, TypeError) as exc:
                if number == len(lines) - 1 and number > 0:
                    log.warning("journal %s: corrupt last record at byte %d cut off (%s)", path, offset, exc)
                    complete_until = offset
                    break
                raise JournalError(f"journal {path}: corrupt record at byte offset {offset}: {exc}") from None
            offset += len(raw) + 1
        if complete_until < len(data):
            with open(path, "r+b") as f:
                f.truncate(complete_until)
                f.flush()
                os.fsync(f.fileno())
        assert start_ns is not None
        return start_ns, entries

    def _recover(self, entries: list[tuple[int, str, Command]]) -> None:
        """Re-apply a journal: the scenario regenerates its own commands, external ones are replayed."""
        regenerated: list[tuple[int, Command]] = []
        journaled = [(at, cmd) for at, src, cmd in entries if src == "scn"]

        def record(at: int, cmd: Command) -> None:
            if self._source == "scn":
                regenerated.append((at, cmd))

        self.venue.journal = record
        try:
            for at, src, cmd in entries:
                if src == "scn":
                    continue
                self._catch_up(at)
                self._apply(cmd, at)
                self.recovered_commands += 1
            if entries:
                self._catch_up(max(at for at, _, _ in entries))
        finally:
            self.venue.journal = self._on_command
        if regenerated != journaled:
            raise JournalError(f"journal {self.journal_path}: the scenario does not regenerate what it journaled")
