"""Rebuilding a simulation from its journal: the records replayed in order, each of the scenario's checked.

:func:`recover` reads the journal after its header (``api/runtime/journal_file.py``, :class:`Records`)
and drives a simulation (:class:`Recoverable`, which ``api/runtime/simulation.py`` implements) through
the records with :class:`Replayer`, checking every command the scenario regenerates against the next
record (``docs/journal.md``, Recovery). A record whose kind has a dot (``auth.key_tokens``) is no
engine command but a :class:`SideStateRecord` of state kept beside the engine: the simulation applies it
in its place among the engine's records. A journal that does not replay raises :class:`JournalError`
naming the file, the record and its byte offset, and is left untouched; one that does has its torn
tail cut (:func:`cut_torn_tail`) and the rest of a scenario burst it ends in appended by the
simulation, unless the replay is read-only.

Journals written by ``cefisim replay --journal`` before it ran through the simulation hold the
scenario's settings (``latency``, ``settlement_delay``) as their first ``scn`` records, which the
simulation applies as it builds the venue and never journals: such records are checked and passed
over (:func:`written_settings`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cefisim.api.formats.scenario import Scenario
from cefisim.api.runtime.journal_file import Header, JournalError, RecordDamage, Records
from cefisim.api.runtime.journal_seal import open_regular
from cefisim.api.side_state.side_states import SideStateRecord
from cefisim.engine.commands import Command, PlaceOrder
from cefisim.engine.venue import Result
from cefisim.engine.vocabulary import OrderType, Side, TimeInForce

#: where the simulation hands each record during recovery, ``(at, src, command or side-state record)``
Expect = Callable[[int, str, Command | SideStateRecord], None]


def written_settings(scenario: Scenario) -> list[Command]:
    """The scenario's setting commands as an older ``cefisim replay`` wrote them first in its journals.
    Empty when the scenario has none, and when its first event at its start is the first of them (a
    journal of today's dialect would begin with the same record: it is read as today's)."""
    settings = [cmd for _, cmd in scenario.setting_commands()]
    first = next((cmd for at, cmd in scenario.events if at == scenario.start_ns), None)
    return [] if settings and first == settings[0] else settings


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

    def apply_side_state(self, where: tuple[int, int], at: int, record: SideStateRecord) -> None:
        """Apply a side-state record (or keep it until its state is attached)."""
        ...

    def check_with(self, expect: Expect | None) -> None:
        """Hand every record to ``expect`` instead of the journal (None: back to the journal)."""
        ...


class Replayer:
    """Rebuilds a simulation from its journal records, in order.

    - ``ext`` record: the scenario catches up to its time (as ``submit`` did live), then it applies;
      except the ``ext`` records at the start that precede the start instant's ``scn`` records (a
      backtest's ``on_start``, ``api/cli/backtest/backtest_command.py``): they apply before the scenario's first turn.
    - ``ext`` side-state record: applied where it stands, without the scenario catching up (the live server
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

    def __init__(self, sim: Recoverable, records: Records, settings: list[Command] | None = None) -> None:
        self.sim = sim
        self.records = records
        self.settings = settings or []  # written_settings(): passed over when the journal starts with them
        self.tail: list[tuple[int, Command | SideStateRecord]] = []
        self.unchecked = False

    def expect(self, at: int, src: str, cmd: Command | SideStateRecord) -> None:
        if src != "scn" or self.unchecked:
            return  # an external command this replay applies itself
        head = self.records.peek()
        if head is None:
            self.tail.append((at, cmd))
            return
        offset, rec_at, src, rec_cmd = head
        if src != "scn" or rec_at != at or rec_cmd != cmd:
            raise self.records.damage(
                offset,
                f"the scenario regenerates {cmd.kind} at {at} where the journal holds {src} {rec_cmd.kind} at {rec_at}",
            )
        self.records.take()

    def run(self) -> None:
        sim, records = self.sim, self.records
        self._pass_written_settings()
        head = records.peek()
        start = sim.start_ns
        # a backtest's strategy acts in on_start, before the scenario's start instant: external records
        # at the start come first, then the start instant's own (the scenario catches up after them)
        before_start = head is not None and head[2] == "ext" and head[1] == start and records.scenario_record_at(start)
        if not before_start and (head is None or head[2] != "scn" or head[1] != start):
            # the scenario's start instant, which journals of earlier versions did not hold
            self.unchecked = True
            try:
                sim.catch_up(sim.start_ns)
            finally:
                self.unchecked = False
        while (head := records.peek()) is not None:
            offset, at, src, cmd = head
            try:
                if isinstance(cmd, SideStateRecord):
                    if src == "ext":
                        records.take()
                        sim.apply_side_state((records.number, offset), at, cmd)
                        continue
                elif src == "ext":
                    if not before_start:
                        # as the live server did: every turn due by ``at`` first, never a closing
                        # advance (a journal that holds one holds it as a scn record before this one)
                        sim.catch_up(at, close=False)
                    if records.peek() is not head:  # pragma: no cover - expect() raises first
                        raise records.damage(offset, "out of order")
                    records.take()
                    if type(cmd) is PlaceOrder and (
                        cmd.side not in SIDES or cmd.type not in TYPES or cmd.tif not in TIMES_IN_FORCE
                    ):
                        raise ValueError(
                            f"{cmd.side} {cmd.type} {cmd.tif}: not an order's side, type and time in force"
                        )
                    sim.apply(cmd, at)
                    sim.recovered_commands += 1
                    continue
                before_start = False
                sim.catch_up(at, close=False)
                if records.peek() is head:
                    sim.run_scenario(at)  # the closing advance of a catch-up
                if records.peek() is head:
                    raise records.damage(offset, f"the scenario does not regenerate {cmd.kind} at {at}")
            except JournalError:
                raise
            except (
                ValueError,
                TypeError,
                KeyError,
                AttributeError,
                AssertionError,
                OverflowError,
                RecursionError,
            ) as exc:
                raise records.damage(offset, f"{cmd.kind} cannot be applied ({exc!r})") from None

    def _pass_written_settings(self) -> None:
        """Pass over the scenario's settings at the start of a journal of an older ``cefisim replay``
        (the venue was built with them); a journal that starts with only some of them is refused."""
        records, start = self.records, self.sim.start_ns
        for n, setting in enumerate(self.settings):
            head = records.peek()
            if head is not None and head[1:] == (start, "scn", setting):
                records.take()
            elif n:
                offset = records.complete_until if head is None else head[0]
                raise records.damage(
                    offset,
                    f"the scenario's settings are written up to {self.settings[n - 1].kind}; {setting.kind} is missing",
                )
            else:
                return


#: the words of an order the engine takes as given (the HTTP edge checks them before a request is
#: journaled): a record holding another is damage, not an order to rest with side "BUZ"
SIDES, TYPES, TIMES_IN_FORCE = frozenset(Side), frozenset(OrderType), frozenset(TimeInForce)


@dataclass
class Recovered:
    """What a recovery read: the records (where the complete ones end), the chain value there (the
    CRC-32 of the file's bytes before: ``journal_seal.py``; 0 for an unsealed journal) and the rest of a
    scenario burst the journal ends inside, regenerated (``(at, command)``), not written."""

    records: Records
    crc: int
    tail: list[tuple[int, Command | SideStateRecord]]


def recover(sim: Recoverable, path: Path, header: Header, settings: list[Command]) -> Recovered:
    """Re-apply the journal at ``path`` to ``sim``, record by record (:class:`Replayer`), writing
    nothing: a journal that does not replay raises :class:`JournalError` and is left as it is."""
    try:
        f = open_regular(path)
    except OSError as exc:
        raise JournalError(f"journal {path}: {exc.strerror or exc}") from None
    with f:
        f.seek(header.length)
        records = Records(f, path, header.length, header.sealed, header.crc)
        replayer = Replayer(sim, records, settings)
        sim.check_with(replayer.expect)
        try:
            replayer.run()
        except RecordDamage as exc:
            # a record that does not replay: when a checksum before it (or its own) fails, that is the
            # damage to name (an edited record the scenario then does not regenerate, say)
            found = records.first_damaged(exc.offset) if records.sealed else None
            raise (found or exc) from None
        finally:
            sim.check_with(None)
        crc = records.verify() if header.sealed else 0  # the whole journal, checked at once
    return Recovered(records, crc, replayer.tail)


def cut_torn_tail(path: Path, records: Records) -> None:
    """Cut off a torn last line (a write a stop tore) once the journal before it has replayed."""
    if records.complete_until < records.size:
        with open(path, "r+b") as f:
            f.truncate(records.complete_until)
            f.flush()
            os.fsync(f.fileno())
