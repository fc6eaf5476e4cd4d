"""Where two journals part: the first record that differs, and the first state difference it makes.

Records are compared in step, number for number (time, source, kind, values). Two journals that hold
the same records for the same scenario and start (and the same snapshot, for a restored one) lead to
the same state; otherwise the state after the parting record is rebuilt in each
(:func:`~cefisim.api.cli.journal_tools.record_state.rebuild`) and its first differing fact named: an order, a balance
or a book level. Both journals are streamed; only the two states at the parting record are held.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest

from cefisim.api.cli.journal_tools.reader import Journal, Record
from cefisim.api.cli.journal_tools.record_state import facts, first_difference, journal_scenario, rebuild
from cefisim.api.cli.journal_tools.render import line
from cefisim.api.runtime.simulation import Simulation

#: the header fields that decide what the same records lead to
_STATE_HEADER = ("scenario_sha256", "start_ns", "snapshot")


@dataclass
class Parting:
    """Where two journals part: the record number (None: they hold the same records), each side's
    record there (None: that journal has ended) and the first differing fact of the states after it."""

    number: int | None
    a: Record | None
    b: Record | None
    headers_differ: list[str]
    state: tuple[str, str | None, str | None] | None

    def lines(self, a_name: str, b_name: str) -> list[str]:
        """What differs, said once: the headers, the records (from the first that differs), and then the
        state they lead to, or that the state is the same although the records are not."""
        out = []
        if self.headers_differ:
            out.append(f"headers differ: {', '.join(self.headers_differ)}")
        if self.number is not None:
            out.append(f"the journals part at record {self.number} of each: their records differ from there on")
            out.append(
                f"  {a_name}: " + (line(self.a) if self.a is not None else f"(ends after record {self.number - 1})")
            )
            out.append(
                f"  {b_name}: " + (line(self.b) if self.b is not None else f"(ends after record {self.number - 1})")
            )
        where = f"after record {self.number}" if self.number is not None else "at the end"
        if self.state is None:  # only when records part: the same records and state are no parting
            out.append(
                f"the venue states {where} are the same nonetheless: the records differ, the state they lead to "
                "does not"
            )
        else:
            label, va, vb = self.state
            out.append(f"first state difference {where}: {label}")
            out.append(f"  {a_name}: {va if va is not None else '(none)'}")
            out.append(f"  {b_name}: {vb if vb is not None else '(none)'}")
        return out


def compare(a: Journal, b: Journal, scenario_a: str | None = None, scenario_b: str | None = None) -> Parting | None:
    """None when both lead to the same commands and the same state, else where they part."""
    headers = [k for k in _STATE_HEADER if a.header.get(k) != b.header.get(k)]
    parting: tuple[int, Record | None, Record | None] | None = None
    count = 0
    for ra, rb in zip_longest(a.records(), b.records()):
        count += 1
        if ra is None or rb is None or (ra.at, ra.src, ra.kind, ra.values) != (rb.at, rb.src, rb.kind, rb.values):
            parting = (count, ra, rb)
            break
    if parting is None and not headers:
        return None
    at = parting[0] if parting is not None else count
    sim_a = _state_after(a, at, scenario_a, parting, 1)
    sim_b = _state_after(b, at, scenario_b, parting, 2)
    state_a, state_b = facts(sim_a.venue, sim_a.faults), facts(sim_b.venue, sim_b.faults)
    difference = first_difference(state_a, state_b)
    if parting is None and difference is None:
        return None  # another header, the same commands and the same state
    number, ra, rb = parting if parting is not None else (None, None, None)
    return Parting(number, ra, rb, headers, difference)


def _state_after(
    journal: Journal, at: int, scenario: str | None, parting: tuple[int, Record | None, Record | None] | None, side: int
) -> Simulation:
    """The simulation after record ``at`` of ``journal`` (read again from its start), or after its last
    record when it ended before the parting one."""
    if parting is not None and parting[side] is None:
        at -= 1
    with Journal(journal.path) as again:
        return rebuild(again, at, journal_scenario(again, scenario))
