"""A recorded market in the venue: depth orders, aggressive users, queue position, crossing, conservation."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cefisim.engine.commands import PlaceOrder
from cefisim.engine.events import DepthEvent, TradeEvent
from cefisim.engine.recorded.feed import SNAPSHOT, TRADE, UPDATE
from cefisim.engine.recorded.queue_model import LogProb, PowerProb, RiskAverse, queue_model
from cefisim.engine.records import UnheldBalance
from cefisim.engine.vocabulary import OrderStatus, Side
from tests.engine.builders import ALICE, BTC, BTC_USD, CP, SECOND, START, USD, Sim, recorded

BUY = Side.BUY
FILLED = OrderStatus.FILLED
SELL = Side.SELL

P = 3_000_000  # 30000.00 in ticks of 0.01
LOT = 1  # 0.0001 BTC


def at(k: int) -> int:
    return START + k * SECOND


def levels(sim: Sim) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    book = sim.v.books[BTC_USD]
    return ([(p, q) for p, q, _ in book.depth(BUY, 50)], [(p, q) for p, q, _ in book.depth(SELL, 50)])


BOOK = (SNAPSHOT, at(1), at(1), ((P, 5), (P - 100, 7)), ((P + 100, 4), (P + 200, 9)))


def test_the_book_is_the_recorded_depth_applied_as_the_clock_passes_it() -> None:
    sim, mkt = recorded([BOOK, (UPDATE, at(2), at(2), SELL, P + 100, 6), (UPDATE, at(3), at(3), BUY, P, 0)])
    assert levels(sim) == ([], []) and mkt.next_ts == at(1)
    result = sim.advance_to(at(2))
    assert levels(sim) == ([(P, 5), (P - 100, 7)], [(P + 100, 6), (P + 200, 9)])
    assert DepthEvent(result.events[-1].ts, BTC_USD) == result.events[-1]
    sim.advance_to(at(3))
    assert levels(sim) == ([(P - 100, 7)], [(P + 100, 6), (P + 200, 9)])
    assert mkt.applied == 3 and mkt.next_ts is None
    sim.check()


def test_an_aggressive_order_takes_recorded_depth_with_fees_and_it_stays_taken() -> None:
    sim, _ = recorded([BOOK, (UPDATE, at(5), at(5), SELL, P + 200, 9), (UPDATE, at(6), at(6), SELL, P + 100, 4)])
    sim.advance_to(at(1))
    totals = sim.v.asset_totals()
    usd = sim.bal(ALICE, USD).total
    result = sim.buy(ALICE, "0.0006", "30002.00")
    assert [(e.price, e.lots) for e in result.events if isinstance(e, TradeEvent)] == [(P + 100, 4), (P + 200, 2)]
    assert result.order.status == FILLED
    fills = sim.v.accounts[ALICE].fills[-2:]
    assert [(f.liq_flag, f.fee_rate) for f in fills] == [("TAKER", 2_000_000)] * 2  # the taker fee, 0.2%
    assert usd - sim.bal(ALICE, USD).total == sum(f.quote + f.fee for f in fills) > 0
    assert levels(sim)[1] == [(P + 200, 7)]
    sim.advance_to(at(5))  # another level's update does not bring it back
    assert levels(sim)[1] == [(P + 200, 9)]
    sim.advance_to(at(6))
    assert levels(sim)[1] == [(P + 100, 4), (P + 200, 9)]
    assert sim.v.asset_totals() == totals
    sim.check()


def test_without_impact_the_taken_depth_is_back_at_the_next_recorded_event() -> None:
    sim, _ = recorded([BOOK, (TRADE, at(5), at(5), BUY, P + 300, 1)], impact=False)
    sim.advance_to(at(1))
    sim.buy(ALICE, "0.0004", "30001.00")
    assert levels(sim)[1] == [(P + 200, 9)]
    sim.advance_to(at(5))
    assert levels(sim)[1] == [(P + 100, 4), (P + 200, 9)]
    sim.check()


def test_a_resting_order_fills_only_once_the_quantity_ahead_has_traded() -> None:
    sim, mkt = recorded(
        [
            BOOK,
            (TRADE, at(3), at(3), SELL, P, 3),
            (UPDATE, at(3), at(3), BUY, P, 2),
            (UPDATE, at(4), at(4), BUY, P, 6),  # joins behind the user
            (TRADE, at(5), at(5), SELL, P, 3),
            (UPDATE, at(5), at(5), BUY, P, 3),
        ]
    )
    sim.advance_to(at(2))
    order = sim.buy(ALICE, "0.0002", "30000.00").order
    assert mkt.queue_position(order) == 5
    sim.advance_to(at(3))
    assert mkt.queue_position(order) == 2 and order.executed == 0
    sim.advance_to(at(4))
    assert mkt.queue_position(order) == 2
    totals = sim.v.asset_totals()
    result = sim.advance_to(at(5))
    # 3 lots traded: 2 were ahead, 1 fills the user's order at its price, as the maker
    assert order.executed == 1 and mkt.queue_position(order) == 0
    fill = sim.v.accounts[ALICE].fills[-1]
    assert (fill.price, fill.qty, fill.liq_flag) == (P, 1, "MAKER")
    # the counterparty took
    assert next(e for e in result.events if isinstance(e, TradeEvent)).taker_order_id != order.id
    assert sim.v.asset_totals() == totals
    sim.check()


def test_when_the_recorded_level_empties_a_resting_order_has_nothing_ahead() -> None:
    sim, mkt = recorded(
        [
            BOOK,
            (UPDATE, at(3), at(3), BUY, P, 0),  # the recorded bid at P goes: the user is first
            (UPDATE, at(4), at(4), BUY, P, 8),  # and comes back behind the user
            (TRADE, at(5), at(5), SELL, P, 1),
        ]
    )
    sim.advance_to(at(2))
    order = sim.buy(ALICE, "0.0002", "30000.00").order
    assert mkt.queue_position(order) == 5
    sim.advance_to(at(3))
    assert mkt.queue_position(order) == 0 and levels(sim)[0] == [(P, 2), (P - 100, 7)]
    sim.advance_to(at(4))
    assert mkt.queue_position(order) == 0 and levels(sim)[0] == [(P, 10), (P - 100, 7)]
    sim.advance_to(at(5))  # the next trade at P fills the user first
    assert order.executed == 1
    sim.check()


def test_nothing_is_held_against_the_recorded_depth_and_its_totals_move_with_fills() -> None:
    sim, _ = recorded([BOOK, (UPDATE, at(2), at(2), BUY, P, 9), (TRADE, at(3), at(3), SELL, P, 9)])
    sim.advance_to(at(1))
    totals = sim.v.asset_totals()
    btc, usd = sim.bal(CP, BTC), sim.bal(CP, USD)
    assert isinstance(btc, UnheldBalance) and isinstance(usd, UnheldBalance)
    assert (btc.hold, btc.fees_hold, usd.hold, usd.fees_hold) == (0, 0, 0, 0)  # four depth orders rest
    usd.change_hold(5, 2)  # how the venue's ledger code changes a hold: dropped
    assert usd.hold == usd.fees_hold == 0 and usd.available == usd.total
    sim.buy(ALICE, "0.0003", "30001.00")  # takes 3 of the 4 lots recorded at P + 100
    order = sim.sell(ALICE, "0.0002", "30000.00").order  # takes 2 of the recorded bid at P
    assert order.status == FILLED
    # sold 3 lots of 10,000 satoshis at 3,000,100 ticks: ceil(3 x 3,000,100 / 10**4) = 901 cents; bought 2 for 600
    assert (btc.total, usd.total) == (10**18 - 10_000, 10**18 + 901 - 600)
    sim.advance_to(at(2))  # the bid at P is 9 again
    resting = sim.buy(ALICE, "0.0001", "30000.00").order
    sim.advance_to(at(3))  # 9 lots traded at P: the 9 ahead, then nothing left for the user
    assert resting.executed == 0 and btc.hold == usd.hold == 0
    assert sim.v.asset_totals() == totals
    sim.check()


def test_a_trade_through_the_price_fills_with_no_queue_up_to_its_size() -> None:
    sim, _ = recorded([BOOK, (TRADE, at(3), at(3), SELL, P - 100, 3)])
    sim.advance_to(at(2))
    better = sim.buy(ALICE, "0.0002", "30000.50").order  # inside the spread, nothing ahead
    at_best = sim.buy(ALICE, "0.0005", "30000.00").order
    sim.advance_to(at(3))
    assert better.status == FILLED and at_best.executed == 1  # 3 lots in all: 2 + 1
    sim.check()


def test_recorded_depth_crossing_a_resting_order_trades_at_the_users_price() -> None:
    sim, _ = recorded([BOOK, (UPDATE, at(3), at(3), SELL, P + 50, 2)])
    sim.advance_to(at(2))
    order = sim.buy(ALICE, "0.0003", "30000.60").order
    sim.advance_to(at(3))
    assert order.executed == 2
    assert sim.v.accounts[ALICE].fills[-1].price == P + 60
    assert levels(sim)[1] == [(P + 100, 4), (P + 200, 9)] and levels(sim)[0][0] == (P + 60, 1)
    sim.check()


def test_queue_models() -> None:
    assert RiskAverse().depth(5, 10, 8, 0) == 5 and RiskAverse().depth(5, 10, 3, 0) == 3
    power = PowerProb(2)
    # front 2, back 8: p(behind) = 64 / 68; a decrease of 4 moves the front by (4/68) * 4, rounded up
    assert power.depth(2, 10, 6, 0) == 2
    assert power.depth(8, 10, 6, 0) == 5  # mostly ahead: 8 - 64/68 * 4 = 4.23 -> 5
    assert power.depth(5, 10, 8, 2) == 5  # the decrease was the trade already counted
    assert LogProb().depth(5, 10, 10, 0) == 5
    assert 0 <= LogProb().depth(5, 10, 2, 0) <= 2
    assert queue_model("power", 3).name == "power3"


_event = st.one_of(
    st.tuples(st.just(UPDATE), st.sampled_from([BUY]), st.integers(P - 3, P), st.integers(0, 6)),
    st.tuples(st.just(UPDATE), st.sampled_from([SELL]), st.integers(P + 1, P + 4), st.integers(0, 6)),
    st.tuples(st.just(TRADE), st.just(SELL), st.just(P), st.integers(1, 4)),
)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 6), st.lists(_event, max_size=30), st.integers(1, 8))
def test_risk_averse_never_fills_before_the_quantity_ahead_has_traded(first: int, steps: list, qty: int) -> None:
    events: list[tuple] = [(SNAPSHOT, at(1), at(1), ((P, first),) if first else (), ((P + 5, 3),))]
    for i, (kind, side, price, lots) in enumerate(steps):
        events.append((kind, at(3 + i), at(3 + i), side, price, lots))
    sim, _mkt = recorded(events, RiskAverse())
    sim.advance_to(at(2))
    totals = sim.v.asset_totals()
    order = sim.submit(PlaceOrder(ALICE, BTC_USD, BUY, "LIMIT", f"0.{qty:04d}", "30000.00")).order
    ahead, smallest, traded = first, first, 0
    for i, (kind, _side, price, lots) in enumerate(steps):
        sim.advance_to(at(3 + i))
        if kind == TRADE:
            traded += lots
        elif price == P:
            smallest = min(smallest, lots)
        assert order.executed <= max(0, traded - min(ahead, smallest)), (order, traded, ahead, smallest)
        sim.check()
    assert sim.v.asset_totals() == totals


_action = st.one_of(
    st.tuples(st.just("update"), st.sampled_from([BUY, SELL]), st.integers(0, 5), st.integers(0, 8)),
    st.tuples(st.just("trade"), st.sampled_from([BUY, SELL]), st.integers(0, 5), st.integers(1, 8)),
    st.tuples(st.just("limit"), st.sampled_from([BUY, SELL]), st.integers(-3, 8), st.integers(1, 8)),
    st.tuples(st.just("market"), st.sampled_from([BUY, SELL]), st.just(0), st.integers(1, 12)),
    st.tuples(st.just("cancel"), st.just(BUY), st.integers(0, 30), st.just(0)),
    st.tuples(st.just("modify"), st.sampled_from([BUY, SELL]), st.integers(0, 30), st.integers(1, 9)),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_action, max_size=40),
    st.sampled_from(["risk_averse", "power", "log"]),
    st.booleans(),
    st.sampled_from([0, 2_000_000]),
)
def test_random_recorded_markets_and_users_keep_every_invariant(
    actions: list, model: str, impact: bool, latency: int
) -> None:
    """Recorded updates and trades (bids below P + 3, asks from P + 3: never crossed) interleaved with
    two users' limits, markets, cancels and modifies: every invariant holds after every step, every
    asset is conserved."""
    events: list[tuple] = []
    k = 1
    for kind, side, off, lots in actions:
        if kind in ("update", "trade"):
            price = P - off if side == BUY else P + 3 + off
            if kind == "trade":  # the aggressor of a trade at a bid price sells
                side = SELL if side == BUY else BUY
            events.append((UPDATE if kind == "update" else TRADE, at(k), at(k), side, price, lots))
            k += 1
    sim, _mkt = recorded(events, queue_model(model), impact)
    sim.latency(latency, latency, latency)
    totals = sim.v.asset_totals()
    placed: list[int] = []
    k = 1
    for i, (kind, side, off, lots) in enumerate(actions):
        client = ALICE if i % 2 else 200
        if kind in ("update", "trade"):
            sim.advance_to(at(k))
            k += 1
        elif kind == "limit":
            price = P + off * 50
            result = sim.limit(client, side, f"0.{lots:04d}", f"{price // 100}.{price % 100:02d}")
            if result.order is not None:
                placed.append(result.order.id)
        elif kind == "market":
            sim.market(client, side, f"0.{lots:04d}")
        elif placed:
            oid = placed[off % len(placed)]
            owner = next(c for c in (ALICE, 200) if oid in sim.v.accounts[c].orders)
            if kind == "cancel":
                sim.cancel(owner, oid)
            else:  # a smaller quantity keeps the place; more, or another price (side picks), does not
                order = sim.v.accounts[owner].orders[oid]
                price = order.price if side == BUY else order.price + 50
                sim.modify(owner, oid, f"0.{lots:04d}", f"{price // 100}.{price % 100:02d}")
        sim.check()
        assert sim.v.asset_totals() == totals
    sim.advance(10 * SECOND)
    sim.check()
    assert sim.v.asset_totals() == totals


def test_a_smaller_modify_keeps_the_place_a_larger_one_goes_to_the_back() -> None:
    sim, mkt = recorded([BOOK, (UPDATE, at(3), at(3), BUY, P, 8), (UPDATE, at(5), at(5), BUY, P, 9)])
    sim.advance_to(at(2))
    order = sim.buy(ALICE, "0.0004", "30000.00").order
    sim.advance_to(at(3))  # 3 more lots join behind the user
    assert mkt.queue_position(order) == 5
    sim.modify(ALICE, order.id, "0.0002", "30000.00")
    assert mkt.queue_position(order) == 5
    sim.modify(ALICE, order.id, "0.0006", "30000.00")  # more quantity: behind all 8 recorded lots
    assert mkt.queue_position(order) == 8
    sim.advance_to(at(5))
    assert mkt.queue_position(order) == 8
    sim.check()


def test_an_opening_instrument_collects_recorded_depth_and_users_then_uncrosses() -> None:
    sim, _ = recorded([BOOK, (UPDATE, at(3), at(3), SELL, P + 50, 2)])
    sim.status(BTC_USD, "OPENING")
    sim.advance_to(at(2))
    order = sim.buy(ALICE, "0.0003", "30000.60").order
    sim.advance_to(at(3))
    assert order.executed == 0  # nothing matches while OPENING
    sim.check()
    sim.status(BTC_USD, "ACTIVE")
    # the venue's uncross feeds the orders back in arrival order: the bid rests, then the recorded
    # ask that came later trades with it at the bid's price
    assert order.executed == 2 and sim.v.accounts[ALICE].fills[-1].price == P + 60
    sim.check()


UP = P * 107 // 100  # 7% above P: past the 5% band around P
TREND = (SNAPSHOT, at(3), at(3), ((UP, 5),), ((UP + 100, 4),))


def test_recorded_trades_set_the_reference_price_the_band_and_last_price_use() -> None:
    """After an early fill at P and a trend past the band, an order at the recorded touch is within
    the band: the recorded trades, not the user's own old fill, are the last price."""
    sim, _ = recorded([BOOK, TREND, (TRADE, at(3), at(3), SELL, UP, 2), (TRADE, at(4), at(4), BUY, UP + 100, 1)])
    sim.advance_to(at(1))
    assert sim.buy(ALICE, "0.0001", "30001.00").order.status == FILLED
    assert sim.v.books[BTC_USD].last_price == P + 100
    sim.advance_to(at(3))
    bid = sim.buy(ALICE, "0.0001", f"{UP // 100}.00").order  # at the recorded best bid
    assert bid.status == OrderStatus.ACTIVE, bid.extra and bid.extra.reject_reason
    assert sim.v.books[BTC_USD].last_price == UP
    sim.advance_to(at(4))
    assert sim.v.books[BTC_USD].last_price == UP + 100
    sim.check()


def test_a_trade_through_a_users_order_leaves_the_recorded_trade_as_the_last_price() -> None:
    sim, _ = recorded([BOOK, (TRADE, at(3), at(3), SELL, P - 100, 3)])
    sim.advance_to(at(2))
    better = sim.buy(ALICE, "0.0002", "30000.50").order  # the trade went through it
    sim.advance_to(at(3))
    assert better.status == FILLED and sim.v.accounts[ALICE].fills[-1].price == P + 50
    assert sim.v.books[BTC_USD].last_price == P - 100
    sim.check()


def test_a_recording_without_trades_keeps_the_mid_as_its_reference() -> None:
    """With no recorded trade, a user's own early fill does not pin the band: at the next recorded
    instant the reference is the book's mid again."""
    sim, _ = recorded([BOOK, TREND])
    sim.advance_to(at(1))
    assert sim.buy(ALICE, "0.0001", "30001.00").order.status == FILLED
    sim.advance_to(at(3))
    assert sim.v.books[BTC_USD].last_price is None
    ask = sim.sell(ALICE, "0.0001", f"{(UP + 100) // 100}.00").order
    assert ask.status == OrderStatus.ACTIVE, ask.extra and ask.extra.reject_reason
    sim.check()


def test_an_order_a_recorded_trade_fills_leaves_the_next_expiry_on_time() -> None:
    """The passing of time stops after a recorded market's pass once nothing else is due by then, judged
    on what was due before the pass (a feed never makes anything due sooner): a recorded trade that fills
    the order first in the expiry queue makes that answer early, never late. The wake bound stays below
    everything due (``check``) and the next order expires at its time."""
    sim, _ = recorded([BOOK, (TRADE, at(3), at(3), SELL, P, 10)])
    sim.advance_to(at(2))
    first = sim.buy(ALICE, "0.0002", "30000.50").order  # better than the trade: it fills at at(3)
    second = sim.buy(ALICE, "0.0001", "29000.00").order  # below the trade's price: it rests
    sim.advance_to(at(3))
    assert first.status == FILLED and second.status == OrderStatus.ACTIVE
    sim.check()
    expires = second.created + sim.v.config.gtc_life_ns
    sim.advance_to(expires - 1)
    assert second.status == OrderStatus.ACTIVE
    sim.advance_to(expires)
    assert second.status == OrderStatus.CANCELED and second.cancel_reason == "EXPIRED"
    sim.check()
