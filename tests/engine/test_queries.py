"""The reads of ``engine/queries.py`` that the API layer uses instead of the venue's internals."""

from __future__ import annotations

from cefisim.engine import queries
from cefisim.engine.records import Order
from cefisim.engine.venue import Result
from cefisim.engine.vocabulary import Side
from tests.engine.builders import ALICE, BOB, BTC, BTC_USD, CAROL, DAVE, ETH_USD, USD, Sim

BUY = Side.BUY
SELL = Side.SELL


def _placed(result: Result) -> Order:
    assert result.order is not None and result.reject is None
    return result.order


def _trade(sim: Sim, maker: int, taker: int, price: str, inst: int = BTC_USD, qty: str = "0.01") -> None:
    sim.limit(maker, SELL, qty, price, inst=inst)
    sim.limit(taker, BUY, qty, price, inst=inst)


def test_recent_trades_are_the_taker_fills_of_one_instrument_newest_first() -> None:
    sim = Sim()
    _trade(sim, ALICE, BOB, "300.00")
    _trade(sim, CAROL, ALICE, "300.01")
    _trade(sim, ALICE, CAROL, "3000.00", inst=ETH_USD)
    _trade(sim, BOB, CAROL, "300.02")
    fills = queries.recent_trades(sim.v, BTC_USD, 10)
    assert [(f.price, f.order.account.id) for f in fills] == [(30_002, CAROL), (30_001, ALICE), (30_000, BOB)]
    assert all(f.liq_flag == "TAKER" for f in fills)
    assert [f.match_id for f in queries.recent_trades(sim.v, BTC_USD, 2)] == [f.match_id for f in fills[:2]]
    assert len(queries.recent_trades(sim.v, ETH_USD, None)) == 1
    # the same as collecting every client's fills and sorting them
    everything = sorted(
        (
            f
            for c in sim.v.accounts.values()
            for f in c.fills
            if f.order.instrument.id == BTC_USD and f.liq_flag == "TAKER"
        ),
        key=lambda f: f.timestamp,
        reverse=True,
    )
    assert fills == everything


def test_balance_changes_are_every_fill_transfer_and_funds_entry_newest_first() -> None:
    sim = Sim()
    sim.funds(DAVE, USD, "1000.00")
    sim.limit(ALICE, SELL, "0.01", "300.00")
    sim.limit(DAVE, BUY, "0.01", "300.00")
    sim.transfer(DAVE, USD, "5.00", "WITHDRAW")
    changes = queries.balance_changes(sim.v, DAVE)
    assert [c.kind for c in changes] == ["WITHDRAW", "TRADE", "PAPER_FUNDS"]
    assert [c.timestamp for c in changes] == sorted((c.timestamp for c in changes), reverse=True)
    withdraw, trade, funds = changes
    assert withdraw.changes == ((USD, -500),) and withdraw.transfer_id is not None
    fill = sim.v.accounts[DAVE].fills[0]
    assert trade.order_id == fill.order.id and trade.match_id == fill.match_id
    assert trade.changes == ((BTC, 100 * 10**4), (USD, -fill.quote), (USD, -fill.fee))
    assert funds.changes == ((USD, 100_000),)


def test_own_lots_at_a_level_count_only_that_clients_open_orders() -> None:
    sim = Sim()
    sim.limit(ALICE, BUY, "0.01", "299.00")
    sim.limit(BOB, BUY, "0.02", "299.00")
    sim.limit(ALICE, BUY, "0.03", "299.00")
    assert queries.own_lots_at(sim.v, BTC_USD, BUY, 29_900, ALICE) == 400
    assert queries.own_lots_at(sim.v, BTC_USD, BUY, 29_900, CAROL) == 0
    assert queries.own_lots_at(sim.v, BTC_USD, BUY, 29_800, ALICE) == 0  # no such level
    assert queries.own_lots_at(sim.v, BTC_USD, SELL, 29_900, ALICE) == 0


def test_counters_and_lookups() -> None:
    sim = Sim()
    _trade(sim, ALICE, BOB, "300.00")
    counts = queries.counters(sim.v)
    assert (counts.orders, counts.matches, counts.retained_orders, counts.fills) == (2, 1, 2, 2)
    assert queries.asset_named(sim.v, "USD") is queries.asset(sim.v, USD)
    assert queries.asset_named(sim.v, "NOPE") is None and queries.instrument(sim.v, 99) is None
    assert queries.has_client(sim.v, ALICE) and not queries.has_client(sim.v, 1)
    assert queries.last_price(sim.v, BTC_USD) == 30_000 and queries.last_price(sim.v, ETH_USD) is None


def test_open_orders_on_an_instrument_are_the_working_ones_of_that_client_oldest_first() -> None:
    sim = Sim()
    a = _placed(sim.limit(ALICE, BUY, "0.01", "299.00"))
    sim.limit(ALICE, BUY, "0.01", "2999.00", inst=ETH_USD)  # another instrument
    b = _placed(sim.limit(ALICE, SELL, "0.01", "301.00"))
    gone = _placed(sim.limit(ALICE, BUY, "0.01", "298.00"))
    sim.cancel(ALICE, gone.id)
    sim.limit(BOB, BUY, "0.01", "297.00")  # another client
    assert [o.id for o in queries.open_orders_on(sim.v, ALICE, BTC_USD)] == [a.id, b.id]
    assert queries.open_orders_on(sim.v, CAROL, BTC_USD) == []
