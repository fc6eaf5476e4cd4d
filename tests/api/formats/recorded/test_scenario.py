"""A scenario's ``recorded`` section: loading, refusing bad data, time mapping, conservation."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from cefisim.api.formats.recorded.source import COUNTERPARTY_BASE
from cefisim.api.formats.scenario import ScenarioError, load_scenario
from cefisim.engine.commands import AdvanceClock
from cefisim.engine.vocabulary import Side
from tests.api.formats.recorded.test_import import TARDIS_BOOK, TARDIS_TRADES

BUY = Side.BUY
SELL = Side.SELL

SCENARIOS = Path(__file__).resolve().parents[4] / "scenarios"
DOC: dict[str, Any] = json.loads((SCENARIOS / "recorded_busy.json").read_text())


def write(tmp_path: Path, recorded: list[dict], **top: Any) -> Path:
    doc = copy.deepcopy(DOC)
    doc["recorded"] = recorded
    doc["events"] = []
    doc.update(top)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    return path


def lines(path: Path, body: list[dict]) -> None:
    head = {"type": "header", "format": "cefisim-md", "version": 1}
    path.write_text("".join(json.dumps(x) + "\n" for x in [head, *body]))


def test_bad_data_refuses_the_scenario_with_the_data_files_line(tmp_path: Path) -> None:
    lines(
        tmp_path / "r.jsonl",
        [
            {"type": "update", "ts": 5, "local_ts": 5, "side": "bid", "price": "100.00", "qty": "1"},
            {"type": "update", "ts": 6, "local_ts": 6, "side": "bid", "price": "100.001", "qty": "1"},
        ],
    )
    with pytest.raises(ScenarioError) as err:
        load_scenario(write(tmp_path, [{"instrument": "BTC-USD", "file": "r.jsonl"}]))
    assert (
        f"$.recorded[0].file: {tmp_path / 'r.jsonl'}:3: price '100.001' is not a decimal string on the "
        "price grid 0.01" in str(err.value)
    )


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"instrument": "BTC-USD", "file": "recordings/x.jsonl"}, "$.recorded[0].file: "),
        ({"instrument": "DOGE", "file": "r.jsonl"}, "$.recorded[0].instrument: unknown instrument 'DOGE'"),
        ({"instrument": "BTC-USD", "file": "r.jsonl", "speed": "0"}, "$.recorded[0].speed: must be greater than 0"),
        ({"instrument": "BTC-USD", "file": "r.jsonl", "queue_model": "fifo"}, "$.recorded[0].queue_model: 'fifo'"),
        ({"instrument": "BTC-USD", "file": "r.jsonl", "depth": 5}, "$.recorded[0].depth: unknown key"),
        ({"instrument": "BTC-USD", "file": ["a", "b"]}, "$.recorded[0].file: the cefisim format is one file"),
    ],
)
def test_bad_items_are_named_by_their_json_path(tmp_path: Path, item: dict, message: str) -> None:
    lines(
        tmp_path / "r.jsonl", [{"type": "update", "ts": 5, "local_ts": 5, "side": "bid", "price": "1.00", "qty": "1"}]
    )
    with pytest.raises(ScenarioError, match=message.replace("[", r"\[").replace("$", r"\$")):
        load_scenario(write(tmp_path, [item]))


def test_two_sources_for_one_instrument_are_refused(tmp_path: Path) -> None:
    lines(
        tmp_path / "r.jsonl", [{"type": "update", "ts": 5, "local_ts": 5, "side": "bid", "price": "1.00", "qty": "1"}]
    )
    item = {"instrument": "BTC-USD", "file": "r.jsonl"}
    with pytest.raises(ScenarioError, match=r"\$\.recorded\[1\]\.instrument: BTC-USD already has a recorded source"):
        load_scenario(write(tmp_path, [item, item]))


def test_offset_and_speed_map_recording_time_onto_engine_time(tmp_path: Path) -> None:
    s = 10**9
    lines(
        tmp_path / "r.jsonl",
        [
            {"type": "update", "ts": 100 * s, "local_ts": 100 * s, "side": "bid", "price": "1.00", "qty": "1"},
            {"type": "update", "ts": 101 * s, "local_ts": 101 * s, "side": "bid", "price": "2.00", "qty": "1"},
            {"type": "update", "ts": 105 * s, "local_ts": 105 * s, "side": "ask", "price": "3.00", "qty": "1"},
        ],
    )
    scenario = load_scenario(
        write(tmp_path, [{"instrument": "BTC-USD", "file": "r.jsonl", "offset": "1", "speed": "2"}])
    )
    start = scenario.start_ns
    assert scenario.end_ns == start + 2 * s  # (105 - 100 - 1) / 2
    venue = scenario.build_venue()
    (market,) = venue.feeds
    # the skipped second played at once, when the venue was built
    assert venue.books[1].best_bid() == 200 and market.next_ts == start + 2 * s
    venue.submit(AdvanceClock(start + 2 * s))
    assert venue.books[1].best_ask() == 300 and market.next_ts is None


def test_tardis_files_are_a_source_too(tmp_path: Path) -> None:
    (tmp_path / "book.csv").write_text(TARDIS_BOOK)
    (tmp_path / "trades.csv").write_text(TARDIS_TRADES)
    scenario = load_scenario(
        write(tmp_path, [{"instrument": "BTC-USD", "file": ["book.csv", "trades.csv"], "format": "tardis"}])
    )
    venue = scenario.build_venue()
    venue.submit(AdvanceClock(scenario.end_ns))
    book = venue.books[1]
    assert (book.best_bid(), book.best_ask()) == (3000000, 3000200)
    venue.check_invariants()


def test_a_recorded_replay_conserves_every_asset_and_fills_through_the_venue() -> None:
    scenario = load_scenario(SCENARIOS / "recorded_busy.json")
    venue = scenario.build_venue()
    runner = scenario.runner(venue)
    totals = venue.asset_totals()
    runner.run(scenario.end_ns)
    venue.check_invariants()
    assert venue.asset_totals() == totals
    alice = venue.accounts[scenario.client_id("alice")]
    assert {f.order.side for f in alice.fills} == {BUY, SELL}
    assert all(f.liq_flag == "MAKER" for f in alice.fills)
    assert COUNTERPARTY_BASE in venue.clients


def test_a_constant_order_latency_is_the_venues_and_refused_twice(tmp_path: Path) -> None:
    item = {
        "instrument": "BTC-USD",
        "file": str(SCENARIOS / "recordings" / "busy_btcusd.jsonl.gz"),
        "order_latency_ms": 5,
    }
    scenario = load_scenario(write(tmp_path, [item]))
    assert scenario.latency_ns == (5_000_000,) * 3 and scenario.order_latency_range() is None
    with pytest.raises(ScenarioError, match=r"\$\.recorded\[0\]\.order_latency_ms: the order latency is already set"):
        load_scenario(write(tmp_path, [item], settings={"latency": {"entry_ms": 1}}))
    with pytest.raises(ScenarioError, match=r"order_latency_ms\.max: must be at least min"):
        load_scenario(write(tmp_path, [{**item, "order_latency_ms": {"min": 5, "max": 1}}]))


def test_a_latency_distribution_draws_per_command_the_same_every_run(tmp_path: Path) -> None:
    from cefisim.api.runtime.simulation import Simulation
    from cefisim.engine.commands import PlaceOrder

    item = {
        "instrument": "BTC-USD",
        "file": str(SCENARIOS / "recordings" / "busy_btcusd.jsonl.gz"),
        "order_latency_ms": {"min": "1", "max": "20"},
    }
    scenario = load_scenario(write(tmp_path, [item]))
    assert scenario.order_latency_range() == (1_000_000, 20_000_000)
    runs = []
    for k in range(2):
        journal = tmp_path / f"j{k}.jsonl"
        sim = Simulation(scenario, clock="virtual", journal_path=journal)
        for i in range(5):
            sim.advance(scenario.start_ns + (i + 1) * 10**9)
            sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.01", "29000.00"))
        sim.close()
        runs.append(journal.read_bytes().split(b"\n", 1)[1])
    assert runs[0] == runs[1]
    latencies = [line for line in runs[0].split(b"\n") if b'"latency"' in line]
    assert len(latencies) == 5 and len(set(latencies)) > 1
