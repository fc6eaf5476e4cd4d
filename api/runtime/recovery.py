"""Reading a journal back: its header, its records a line at a time, and their replay.

``Records`` reads the file after its header with flat memory and tells a torn last record from damage.
A record whose kind has a dot (``auth.key_tokens``) is no engine command but a :class:`SideRecord`
of state kept beside the engine (the part before the dot names it): the replay hands it to the
simulation, which applies it to that state (:class:`Side`) in its place among the engine's records.
``Replayer`` drives a simulation (:class:`Recoverable`, which ``api/runtime/simulation.py`` implements)
through the records in their order, checking
every command the scenario regenerates against the next record (``docs/journal.md``, Recovery). Both
raise :class:`JournalError` naming the file and the byte offset; neither writes to the file.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import IO, Any, Protocol

import orjson

from cefisim.api.runtime.sides import SideRecord
from cefisim.api.scenario import Scenario
from cefisim.engine.commands import AdvanceClock, Command
from cefisim.engine.core import RULES
from cefisim.engine.journal import from_record
from cefisim.engine.venue import Result

log = logging.getLogger("cefisim.sim")

JOURNAL_FORMAT = "cefisim-journal/2"
#: every journal format a server restores, and the edition of the venue's rules (``engine/core.py``,
#: ``RULES``) its commands were recorded under. The records are the same in both; /2 marks that
#: commands do other things since (docs/journal.md, Format versions), and a /1 journal replays, and
#: goes on, under the rules it was written with
JOURNAL_RULES = {"cefisim-journal/1": 1, JOURNAL_FORMAT: RULES}
MAX_HEADER_BYTES = 1 << 30  # the header may hold a whole snapshot


class JournalError(Exception):
    """The journal file cannot be used (unreadable, corrupt in the middle, another scenario)."""


def scenario_digest(scenario: Scenario) -> str:
    """The sha256 of a scenario's document: a journal names the scenario it was written for."""
    return hashlib.sha256(orjson.dumps(scenario.doc, option=orjson.OPT_SORT_KEYS)).hexdigest()


def journal_header(scenario: Scenario, start_ns: int, clock: str, snapshot: dict[str, Any] | None = None) -> bytes:
    """A journal's first line (``cefisim serve --journal`` and ``cefisim replay --journal`` alike)."""
    header = {
        "format": JOURNAL_FORMAT,
        "scenario": str(scenario.source),
        "scenario_sha256": scenario_digest(scenario),
        "start_ns": start_ns,
        "clock": clock,
        **({"snapshot": snapshot} if snapshot is not None else {}),
    }
    return orjson.dumps(header, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


class Records:
    """The records of a journal file after its header, read one line at a time (memory stays flat).

    ``peek()``/``take()`` give ``(offset, at, src, command)`` (a :class:`SideRecord` in the place of a
    command for a kind with a dot). A last line without a line end, or a
    last line that does not parse, is a torn record: reading stops before it (``complete_until``).
    A bad record anywhere else is a :class:`JournalError` naming its byte offset."""

    def __init__(self, f: IO[bytes], path: Path, offset: int) -> None:
        self._f = f
        self.path = path
        self.size = os.fstat(f.fileno()).st_size
        self.complete_until = offset
        self._offset = offset
        self._next_line = f.readline()
        self._head: tuple[int, int, str, Command | SideRecord] | None = None
        self._done = False

    def peek(self) -> tuple[int, int, str, Command | SideRecord] | None:
        if self._head is None and not self._done:
            self._head = self._read()
        return self._head

    def take(self) -> None:
        self._head = None

    def _read(self) -> tuple[int, int, str, Command | SideRecord] | None:
        line, offset = self._next_line, self._offset
        if not line:
            self._done = True
            return None
        self._next_line = self._f.readline()
        last = not self._next_line
        if not line.endswith(b"\n"):
            log.warning("journal %s: incomplete last record (%d bytes) cut off", self.path, len(line))
            self._done = True
            return None
        try:
            record = orjson.loads(line)
            cmd: Command | SideRecord
            try:
                at, src, cmd = from_record(record)
            except ValueError as exc:  # not an engine command: a side record, or damage
                at, src, cmd = _side(record, exc)
            if src not in ("ext", "scn"):
                raise ValueError(f"unknown source {src!r}")
        except (ValueError, TypeError) as exc:
            if last:
                log.warning("journal %s: corrupt last record at byte %d cut off (%s)", self.path, offset, exc)
                self._done = True
                return None
            raise JournalError(f"journal {self.path}: corrupt record at byte offset {offset}: {exc}") from None
        self._offset = offset + len(line)
        self.complete_until = self._offset
        return offset, at, src, cmd


def _side(record: Any, refused: ValueError) -> tuple[int, str, SideRecord]:
    """A record the engine refused (``refused``) read as a side record (a kind with a dot), or that
    refusal. Asked only after the engine's reading fails, so that its records cost nothing more."""
    if not (isinstance(record, list) and len(record) == 4 and isinstance(record[2], str) and "." in record[2]):
        raise refused
    at, src, kind, values = record
    if not isinstance(at, int) or isinstance(at, bool) or src not in ("ext", "scn") or not isinstance(values, list):
        raise ValueError(f'{kind}: a side record is [at, "ext" or "scn", kind, values]')
    return at, src, SideRecord(kind, values)


class Recoverable(Protocol):
    """What :class:`Replayer` drives: the running simulation, seen from its journal's replay."""

    start_ns: int
    recovered_commands: int

    def catch_up(self, at: int, close: bool = True, max_turns: int | None = None) -> bool:
        """Let the scenario run its turns up to ``at`` (closing with its advance when ``close``)."""
        ...

    def run_scenario(self, at: int, close: bool = True, max_turns: int | None = None) -> bool:
        """Run the scenario's turns up to ``at``."""
        ...

    def apply(self, cmd: Command, at: int, src: str = "ext") -> Result:
        """Record ``cmd`` (here: check it against the journal) and submit it at ``at``."""
        ...

    def apply_side(self, offset: int, at: int, record: SideRecord) -> None:
        """Apply a side record (or keep it until its state is attached)."""
        ...


class Replayer:
    """Rebuilds a simulation from its journal records, in order.

    - ``ext`` record: the scenario catches up to its time (as ``submit`` did live), then it applies.
    - ``ext`` side record: applied where it stands, without the scenario catching up (the live server
      wrote it without touching the venue). A ``scn`` one (a scenario event's) is checked as the
      scenario regenerates it, like the scenario's commands.
    - ``scn`` record the scenario has not regenerated yet: the scenario runs its turns up to that
      record's time; a record still not regenerated then is the closing ``advance`` of a catch-up,
      which the runner makes next. Turns run only up to times the journal shows, so a recovered
      scenario never runs ahead of what the live one had done when its next record was written.
    - every command the scenario submits meanwhile (``expect``, in the simulation's place of the
      journal writer) must be the next record; past the last record it is the rest of a torn burst
      (``tail``), kept for the file.
    """

    def __init__(self, sim: Recoverable, records: Records) -> None:
        self.sim = sim
        self.records = records
        self.tail: list[tuple[int, Command | SideRecord]] = []
        self.unchecked = False

    def expect(self, at: int, src: str, cmd: Command | SideRecord) -> None:
        if src != "scn" or self.unchecked:
            return  # an external command this replay applies itself
        head = self.records.peek()
        if head is None:
            self.tail.append((at, cmd))
            return
        offset, rec_at, src, rec_cmd = head
        if src != "scn" or rec_at != at or rec_cmd != cmd:
            raise JournalError(
                f"journal {self.records.path}: byte offset {offset}: the scenario regenerates {cmd.kind} at {at} "
                f"where the journal holds {src} {rec_cmd.kind} at {rec_at}"
            )
        self.records.take()

    def run(self) -> None:
        sim, records = self.sim, self.records
        head = records.peek()
        if head is None or head[2] != "scn" or head[1] != sim.start_ns:
            # the scenario's start instant, which journals of earlier versions did not hold
            self.unchecked = True
            try:
                sim.catch_up(sim.start_ns)
            finally:
                self.unchecked = False
        while (head := records.peek()) is not None:
            offset, at, src, cmd = head
            try:
                if isinstance(cmd, SideRecord):
                    if src == "ext":
                        records.take()
                        sim.apply_side(offset, at, cmd)
                        continue
                elif src == "ext":
                    sim.catch_up(at, close=not isinstance(cmd, AdvanceClock))
                    if records.peek() is not head:  # pragma: no cover - expect() raises first
                        raise JournalError(f"journal {records.path}: byte offset {offset}: out of order")
                    records.take()
                    sim.apply(cmd, at)
                    sim.recovered_commands += 1
                    continue
                sim.catch_up(at, close=False)
                if records.peek() is head:
                    sim.run_scenario(at)  # the closing advance of a catch-up
                if records.peek() is head:
                    raise JournalError(
                        f"journal {records.path}: byte offset {offset}: the scenario does not regenerate "
                        f"{cmd.kind} at {at}"
                    )
            except JournalError:
                raise
            except (ValueError, TypeError, KeyError, AttributeError, AssertionError, OverflowError) as exc:
                raise JournalError(
                    f"journal {records.path}: byte offset {offset}: {cmd.kind} cannot be applied ({exc!r})"
                ) from None
