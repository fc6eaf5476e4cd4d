"""``Venue.advance_steps``: a clock advance in steps gives the uninterrupted command's result and state."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from cefisim.engine.commands import AdvanceClock
from cefisim.engine.core import Result
from cefisim.engine.recorded.feed import SNAPSHOT, TRADE, UPDATE
from cefisim.engine.recorded.market import RecordedMarket
from cefisim.engine.reference import Client
from cefisim.engine.venue import VenueConfig
from cefisim.engine.vocabulary import Side
from tests.engine.builders import (
    ALICE,
    BOB,
    BTC,
    BTC_USD,
    ETH,
    ETH_USD,
    RICH,
    SECOND,
    START,
    USD,
    Sim,
    build_venue,
    fingerprint,
    state_hash,
)

CP = 999
PRICES = {BTC_USD: 3_000_000, ETH_USD: 200_000}  # ticks of the recorded mid
HUMAN = {BTC_USD: "30000.00", ETH_USD: "2000.00"}


@st.composite
def recordings(draw: st.DrawFn, inst: int) -> list[tuple[Any, ...]]:
    """A snapshot, then updates and trades at non-decreasing seconds with ties (never crossed: bids
    below the mid, asks above it)."""
    px = PRICES[inst]
    events: list[tuple[Any, ...]] = [(SNAPSHOT, START, START, ((px - 100, 50),), ((px + 100, 50),))]
    t = START
    for _ in range(draw(st.integers(0, 40))):
        t += draw(st.sampled_from([0, 0, 1, 2, 7])) * SECOND + draw(st.sampled_from([0, 0, 1]))
        side = draw(st.sampled_from([Side.BUY, Side.SELL]))
        k = draw(st.integers(1, 3))
        price = px - 100 * k if side == Side.BUY else px + 100 * k
        if draw(st.booleans()):
            events.append((UPDATE, t, t, side, price, draw(st.integers(0, 60))))
        else:  # a trade's aggressor takes the other side
            taker = Side.SELL if side == Side.BUY else Side.BUY
            events.append((TRADE, t, t, taker, price, draw(st.integers(1, 30))))
    return events


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    feeds = draw(st.sampled_from([(BTC_USD,), (BTC_USD, ETH_USD), (ETH_USD, BTC_USD)]))
    return {
        "feeds": [(inst, draw(recordings(inst)), draw(st.booleans())) for inst in feeds],
        # users' orders (client, instrument, side, ticks away from the mid), some resting at recorded levels
        "orders": draw(
            st.lists(
                st.tuples(
                    st.sampled_from([ALICE, BOB]),
                    st.sampled_from(feeds),
                    st.sampled_from(["BUY", "SELL"]),
                    st.integers(-3, 3),
                ),
                max_size=6,
            )
        ),
        "latency": draw(st.sampled_from([0, SECOND, 5 * SECOND])),  # acknowledgements: timers on the way
        "gtc_life": draw(st.sampled_from([30 * 24 * 3600 * SECOND, 20 * SECOND])),  # expiries on the way
        "to": START + draw(st.integers(1, 3 * 3600)) * SECOND,  # housekeeping hours on the way too
        "budget": draw(st.integers(1, 12)),
    }


def build(case: dict[str, Any]) -> tuple[Sim, list[RecordedMarket]]:
    config = VenueConfig(gtc_life_ns=case["gtc_life"])
    v = build_venue(balances={ALICE: dict(RICH), BOB: dict(RICH)}, config=config)
    v.add_client(Client(CP, "recorded"))
    for asset in (BTC, USD, ETH):
        v.credit(CP, asset, 10**18)
    markets = []
    for inst, events, impact in case["feeds"]:
        market = RecordedMarket(v, inst, CP, iter(list(events)), None, impact)
        v.add_feed(market)
        markets.append(market)
    sim = Sim(v)
    sim.latency(case["latency"], case["latency"], case["latency"])
    for client, inst, side, away in case["orders"]:
        ticks = PRICES[inst] + 100 * away
        price = f"{ticks // 100}.{ticks % 100:02d}"
        sim.limit(client, side, "0.0010", price, inst=inst)
    return sim, markets


def picture(sim: Sim, markets: list[RecordedMarket]) -> tuple[Any, ...]:
    v = sim.v
    return (
        fingerprint(v),
        state_hash(v),
        v.clock.now,
        v.clock.peek(),
        v.quiet_until(),
        v.next_due(),
        [(m.applied, m.last_ts, m.next_ts, m.held_until) for m in markets],
    )


@given(cases())
def test_an_advance_in_steps_is_the_advance_in_one_piece(case: dict[str, Any]) -> None:
    whole, whole_markets = build(case)
    stepped, stepped_markets = build(case)
    to = case["to"]
    expected = whole.v.submit_at(AdvanceClock(to), whole.v.applies_at(AdvanceClock(to), to))
    result = Result()
    for _ in stepped.v.advance_steps(stepped.v.applies_at(AdvanceClock(to), to), result, case["budget"]):
        stepped.v.check_invariants()  # every stop is a state the whole command passes through
    assert result.events == expected.events
    assert (result.order, result.reject, result.transfer) == (expected.order, expected.reject, expected.transfer)
    assert picture(stepped, stepped_markets) == picture(whole, whole_markets)
    stepped.v.check_invariants()
    # and the two go on alike
    assert stepped.advance(3600 * SECOND).events == whole.advance(3600 * SECOND).events
    assert picture(stepped, stepped_markets) == picture(whole, whole_markets)


def test_a_long_recording_takes_many_steps() -> None:
    """A budget of 10 recorded events over 200 single-event instants: about 20 steps, each stopped at an
    instant boundary (the venue's clock at the last instant applied)."""
    px = PRICES[BTC_USD]
    events: list[tuple[Any, ...]] = [(SNAPSHOT, START, START, ((px - 100, 50),), ((px + 100, 50),))]
    events += [(UPDATE, START + k * SECOND, START + k * SECOND, Side.BUY, px - 100, 10 + k % 7) for k in range(1, 201)]
    case = {"feeds": [(BTC_USD, events, True)], "orders": [], "latency": 0, "gtc_life": 30 * 24 * 3600 * SECOND}
    sim, (market,) = build(case)
    result = Result()
    seen = [(market.applied, sim.v.clock.now) for _ in sim.v.advance_steps(START + 300 * SECOND, result, 10)]
    assert 18 <= len(seen) <= 21
    assert all(now == START + (applied - 1) * SECOND for applied, now in seen)  # (the snapshot: applied at once)
    assert market.applied == 201 and sim.v.clock.now == START + 300 * SECOND
