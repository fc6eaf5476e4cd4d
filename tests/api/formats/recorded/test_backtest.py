"""``cefisim backtest`` on a recorded market: own orders marked in on_book, feed latency, determinism."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from cefisim.api.cli.backtest.backtest_command import run_backtest
from cefisim.api.cli.backtest.report import WALL_FIELDS
from cefisim.api.formats.scenario import load_scenario
from cefisim.strategies.simple_mm import SimpleMarketMaker

ROOT = Path(__file__).resolve().parents[4]
SCENARIO = ROOT / "scenarios" / "recorded_busy.json"


class Watcher:
    """Quotes one bid once (unless ``passive``), then only watches."""

    def __init__(self, passive: bool = False) -> None:
        self.books: list[tuple[int, dict[str, Any]]] = []
        self.passive = passive

    def on_start(self, ctx: Any) -> None:
        self.ctx = ctx

    def on_book(self, ctx: Any, instrument_id: str, book: dict[str, Any]) -> None:
        if not self.books and not self.passive:
            ctx.place_order(instrument_id, "BUY", "LIMIT", "0.0100", book["bids"][0][0])
        self.books.append((ctx.now, book))


def short(tmp_path: Path, **item: Any) -> Path:
    doc = json.loads(SCENARIO.read_text())
    doc["recorded"][0].update(item)
    doc["recorded"][0]["file"] = str(ROOT / "scenarios" / "recordings" / "busy_btcusd.jsonl.gz")
    doc["events"] = []
    doc["end"] = "+5"
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    return path


def test_on_book_marks_the_strategys_own_orders(tmp_path: Path) -> None:
    watcher = Watcher()
    run_backtest(load_scenario(short(tmp_path)), watcher, client="alice")
    marked = [b for _, b in watcher.books if b["own_bids"]]
    assert marked and all(b["own_bids"] == [[b["bids"][0][0], "0.0100"]] for b in marked[:1])
    assert all(b["own_asks"] == [] for _, b in watcher.books)


def test_a_feed_latency_delivers_each_book_that_much_later(tmp_path: Path) -> None:
    plain, late = Watcher(passive=True), Watcher(passive=True)
    run_backtest(load_scenario(short(tmp_path)), plain, client="alice")
    run_backtest(load_scenario(short(tmp_path, feed_latency_ms=50)), late, client="alice")
    # the first book is delivered at once (the start); every later one 50 ms after it happened
    assert [t + 50_000_000 for t, _ in plain.books[1:20]] == [t for t, _ in late.books[1:20]]
    strip = [(b["bids"], b["asks"]) for _, b in plain.books[1:20]]
    assert strip == [(b["bids"], b["asks"]) for _, b in late.books[1:20]]


def test_the_same_backtest_twice_gives_the_same_report() -> None:
    reports = []
    for _ in range(2):
        scenario = load_scenario(SCENARIO)
        bt = run_backtest(
            scenario,
            SimpleMarketMaker(instrument="BTC-USD", qty="0.05"),
            client="alice",
            until_ns=scenario.start_ns + 30 * 10**9,
        )
        report = copy.deepcopy(bt.report)
        for key in WALL_FIELDS:
            report["run"].pop(key, None)
        reports.append(json.dumps(report, sort_keys=True))
        assert bt.harness.venue.asset_totals() == scenario.build_venue().asset_totals()
    assert reports[0] == reports[1]
    assert json.loads(reports[0])["fills"]["count"] > 0


def test_a_drawn_order_latency_gives_each_command_its_own_and_the_same_report(tmp_path: Path) -> None:
    reports = []
    for _ in range(2):
        scenario = load_scenario(short(tmp_path, order_latency_ms={"min": "1", "max": "50"}))
        bt = run_backtest(scenario, SimpleMarketMaker(instrument="BTC-USD", qty="0.05"), client="alice")
        journaled = list(bt.harness.venue.accounts[100].orders.values())
        assert journaled and bt.harness.latency_draw is not None
        report = copy.deepcopy(bt.report)
        for key in WALL_FIELDS:
            report["run"].pop(key, None)
        reports.append(json.dumps(report, sort_keys=True))
    assert reports[0] == reports[1]
    acked = {
        o.extra.acked - o.created
        for o in bt.harness.venue.accounts[100].orders.values()
        if o.extra is not None and o.extra.acked is not None
    }
    assert len(acked) > 1 and all(1_000_000 <= d <= 50_000_002 for d in acked)
