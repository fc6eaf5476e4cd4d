"""Journal format versions: a ``cefisim-journal/1`` journal restores to what it recorded.

The commands of /1, /2 and /3 journals are written alike; /2 marks that some commands do other things
since (the opening uncross, a modify to zero, a WITHDRAW beyond the balance: docs/journal.md), /3 that
every line is sealed with a checksum chain. A journal is written here under the current rules, then
turned into /1's (checksums dropped): restored, it must give what a /1 server did with the same
commands, and a server that goes on with it keeps those rules and that format (so its next restart
agrees too). The /2 and /3 journals restore to the live state.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.journal_file import JOURNAL_FORMAT, JournalError
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.commands import (
    AdvanceClock,
    ModifyOrder,
    PlaceOrder,
    RequestTransfer,
    SetInstrumentStatus,
    SetSettlementDelay,
)
from cefisim.engine.events import TradeEvent
from cefisim.engine.venue import Venue
from tests.api.conftest import scenario_doc
from tests.api.runtime.journal_lines import as_format

ALICE, BOB = 100, 101


def _sim(path: Path) -> Simulation:
    return Simulation(parse_scenario(scenario_doc(), "s.json"), clock="virtual", journal_path=path)


def _run(sim: Simulation) -> list[TradeEvent]:
    """The commands whose outcome the rules' editions differ on, one of each."""
    trades: list[TradeEvent] = []
    sim.submit(SetInstrumentStatus(1, "OPENING"))
    sim.submit(PlaceOrder(ALICE, 1, "SELL", "LIMIT", "0.1", "100.00"))  # order 1
    sim.submit(PlaceOrder(BOB, 1, "BUY", "LIMIT", "0.1", "101.00"))  # order 2
    sim.submit(PlaceOrder(BOB, 1, "BUY", "LIMIT", "0.1", "102.00"))  # order 3
    trades += [e for e in sim.submit(SetInstrumentStatus(1, "ACTIVE")).events if isinstance(e, TradeEvent)]
    sim.submit(PlaceOrder(ALICE, 2, "SELL", "LIMIT", "1", "2000.00"))  # order 4
    sim.submit(ModifyOrder(ALICE, 4, None, "0", "2000.00"))
    sim.submit(SetSettlementDelay(5 * NS_PER_SECOND))
    sim.submit(RequestTransfer(ALICE, 2, "2000000", "WITHDRAW", "FIAT"))  # transfer 1: beyond the balance
    return trades


def _outcome(venue: Venue) -> tuple[object, ...]:
    orders = {oid: o.status for c in venue.accounts.values() for oid, o in c.orders.items()}
    transfer = venue.accounts[ALICE].transfers[1]
    return orders, transfer.status, venue.clock.last


def _as_version_1(path: Path) -> None:
    assert JOURNAL_FORMAT == "cefisim-journal/3"
    as_format(path, "cefisim-journal/1")


@pytest.mark.parametrize("fmt", [JOURNAL_FORMAT, "cefisim-journal/2"])
def test_a_journal_of_the_current_rules_restores_to_the_live_state(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "j.jsonl"
    sim = _sim(path)
    trades = _run(sim)
    assert [(t.maker_order_id, t.taker_order_id) for t in trades] == [(1, 3)]  # price-time: 102 first
    live = _outcome(sim.venue)
    assert live[0] == {1: "FILLED", 2: "ACTIVE", 3: "FILLED", 4: "CANCELED"} and live[1] == "INITIALIZED"
    sim.close()
    if fmt != JOURNAL_FORMAT:
        as_format(path, fmt)
    again = _sim(path)
    assert _outcome(again.venue) == live and again.venue.rules == 2
    # a /2 journal goes on in its own format, without checksums, and restores again
    again.submit(AdvanceClock(again.venue.clock.now + NS_PER_SECOND))
    state = _outcome(again.venue)
    again.close()
    assert orjson.loads(path.read_bytes().split(b"\n", 1)[0])["format"] == fmt
    assert (b'"crc32"' in path.read_bytes()) == (fmt == JOURNAL_FORMAT)
    # every record, the ones appended after the restart too: sealed (a fifth item) in /3, never in /2
    lengths = {len(orjson.loads(line)) for line in path.read_bytes().splitlines()[1:]}
    assert lengths == ({5} if fmt == JOURNAL_FORMAT else {4})
    last = _sim(path)
    assert _outcome(last.venue) == state
    last.close()


def test_a_version_1_journal_restores_to_what_it_recorded_and_goes_on_under_its_rules(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    sim = _sim(path)
    _run(sim)
    sim.close()
    _as_version_1(path)
    old = _sim(path)
    orders, transfer, _ = _outcome(old.venue)
    # the rules /1 journals were recorded under: the opening in arrival order (the 101 bid takes the
    # ask), the modify to zero refused (order 4 still working), the withdrawal REJECTED at once
    assert orders == {1: "FILLED", 2: "FILLED", 3: "ACTIVE", 4: "ACTIVE"} and transfer == "REJECTED"
    assert old.venue.rules == 1
    # commands applied after the restore are appended to the /1 journal: they follow its rules too
    assert old.submit(ModifyOrder(ALICE, 4, None, "0", "2000.00")).reject is not None
    old.submit(AdvanceClock(old.venue.clock.now + NS_PER_SECOND))
    state = _outcome(old.venue)
    old.close()
    assert orjson.loads(path.read_bytes().split(b"\n", 1)[0])["format"] == "cefisim-journal/1"
    again = _sim(path)
    assert _outcome(again.venue) == state
    again.reset()  # a reset starts a journal of the current format, and the current rules
    assert again.venue.rules == 2
    assert orjson.loads(path.read_bytes().split(b"\n", 1)[0])["format"] == JOURNAL_FORMAT
    again.close()


@pytest.mark.parametrize("fmt", ["cefisim-journal/0", "cefisim-journal/4", ["cefisim-journal/2"], None])
def test_a_journal_of_another_format_is_refused_naming_the_formats_restored(tmp_path: Path, fmt: object) -> None:
    path = tmp_path / "j.jsonl"
    _sim(path).close()
    header, rest = path.read_bytes().split(b"\n", 1)
    doc = orjson.loads(header)
    doc["format"] = fmt
    path.write_bytes(orjson.dumps(doc) + b"\n" + rest)
    with pytest.raises(JournalError, match="format cefisim-journal/1 or cefisim-journal/2 or cefisim-journal/3"):
        _sim(path)
