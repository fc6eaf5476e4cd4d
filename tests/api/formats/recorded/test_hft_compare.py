"""The hftbacktest side of the benchmark's comparison (``benchmarks/hft_compare.py``): it counts fills
from hftbacktest's order copies and says when hftbacktest's ``elapse`` stops early. Needs the
``bench`` extra (hftbacktest 2.4, numba); skipped without it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from cefisim.engine.recorded.feed import SNAPSHOT, TRADE, UPDATE
from cefisim.engine.vocabulary import Side

pytest.importorskip("hftbacktest")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # numba compiles the strategy first
_spec = importlib.util.spec_from_file_location(
    "hft_compare", Path(__file__).resolve().parents[4] / "benchmarks" / "hft_compare.py"
)
assert _spec is not None and _spec.loader is not None
hft_compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hft_compare)

P = 3_000_000
T = 1_793_610_000_000_000_000
MS = 1_000_000
BOOK = (SNAPSHOT, T, T, ((P, 10),), ((P + 100, 10),))  # 10 lots ahead of the strategy's 0.01 BTC bid at P


def run(trades: list[tuple[int, int]]) -> dict:  # type: ignore[type-arg]
    """The strategy (0.01 BTC at the touch, 100 ms steps, 1 ms latency) on BOOK, recorded sells at P
    (time in ms, lots), and asks changing every 100 ms until 3 s."""
    events: list[tuple] = [BOOK]
    events += [(TRADE, T + t * MS, T + t * MS, Side.SELL, P, lots) for t, lots in trades]
    events += [(UPDATE, T + k * 100 * MS, T + k * 100 * MS, Side.SELL, P + 100, 10 + k) for k in range(9, 30)]
    return hft_compare.run(events, None, 100 * MS, MS, 100, 1000, True)


def test_fills_come_from_the_order_copies_and_an_early_stop_is_reported() -> None:
    # 40 lots: 10 ahead, 30 fill; then 30; then the last 40 of the order
    r = run([(300, 40), (500, 30), (700, 200)])
    assert (r["fills"], r["filled_qty"], r["position"], r["fees"]) == (3, 0.01, 0.01, 0.3)  # maker 0.1% of $300
    assert r["own_state"]["filled_qty"] == 0.004  # hftbacktest's own state: the last piece only (#299, #316)
    assert r["complete"] and r["elapse_code"] == 1
    # a partial fill equal to what is left (110 - 10 ahead = 100 lots) stays in hftbacktest's book and
    # the next trade at its price makes elapse fail (#312)
    r = run([(300, 110), (400, 5)])
    assert r["filled_qty"] == 0.01
    assert not r["complete"] and r["elapse_code"] == 14 and r["stopped_at_s"] < 1 < r["span_s"]
