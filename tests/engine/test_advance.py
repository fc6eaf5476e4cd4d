"""engine/timers.py ``advance``: what falls due on the way, in time order, recorded markets included."""

from __future__ import annotations

import pytest

from cefisim.engine.events import DepthEvent
from cefisim.engine.recorded.feed import SNAPSHOT, UPDATE
from cefisim.engine.recorded.market import RecordedMarket
from cefisim.engine.reference import Client
from cefisim.engine.vocabulary import Side
from tests.engine.builders import BTC, BTC_USD, ETH, ETH_USD, SECOND, START, USD, Sim, build_venue

CP = 999


def at(k: int) -> int:
    return START + k * SECOND


def book(inst: int, px: int, updates: tuple[int, ...]) -> list[tuple]:
    """A recorded market: its snapshot at at(1), then a size change at each of ``updates`` seconds."""
    return [(SNAPSHOT, at(1), at(1), ((px, 5),), ((px + 100, 4),))] + [
        (UPDATE, at(k), at(k), Side.SELL, px + 100, 4 + k) for k in updates
    ]


@pytest.mark.timeout(20)  # (two feeds due at one time used to make advance loop for ever)
def test_recorded_markets_apply_in_time_order_and_at_one_time_in_the_order_they_were_added() -> None:
    v = build_venue()
    v.add_client(Client(CP, "recorded"))
    for asset in (BTC, USD, ETH):
        v.credit(CP, asset, 10**18)
    eth = RecordedMarket(v, ETH_USD, CP, iter(book(ETH_USD, 200_000, (2, 4, 5))), None, True)
    btc = RecordedMarket(v, BTC_USD, CP, iter(book(BTC_USD, 3_000_000, (3, 4, 6))), None, True)
    v.add_feed(eth)
    v.add_feed(btc)
    result = Sim(v).advance_to(at(7))
    assert eth.applied == btc.applied == 4 and eth.next_ts is btc.next_ts is None
    depth = [(e.ts // SECOND - START // SECOND, e.instrument_id) for e in result.events if isinstance(e, DepthEvent)]
    assert depth == [
        (1, ETH_USD),
        (1, BTC_USD),
        (2, ETH_USD),
        (3, BTC_USD),
        (4, ETH_USD),
        (4, BTC_USD),
        (5, ETH_USD),
        (6, BTC_USD),
    ]
    assert v.quiet_until() == v.next_due()
    v.check_invariants()
