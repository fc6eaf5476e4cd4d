"""Every shipped scenario loads, replays deterministically and shows what it claims to show."""

from __future__ import annotations

import pytest

from cefisim.engine.commands import CancelOrder, ModifyOrder, PlaceOrder
from cefisim.engine.events import TradeEvent
from cefisim.engine.rejects import Reject
from tests.api.formats.scenario.replay_support import SHIPPED, replay

# sha256 over every event of a replay to the scenario's end (engine.journal.event_digest). A change
# here means the engine or a scenario now produces different events: check why, then re-pin.
GOLDEN = {
    "busy_market.json": "f65a9c5d11bc3887e7d8c8343ad7bd2cc1398765ecf89a55a93f9afab470b8ee",
    "cancel_race_latency.json": "8d8bc55a7ebd59d2821cd0fa388ca82b7ada27654d02d51b2308065f7ccf1536",
    "demo.json": "2c400dd35dde0d9c10f5c792a5802a818650f023b49e5b51dcf634a47a3ee0a4",
    "flash_crash.json": "a20414f8173d4cddb8f2df5005bf15f4bf329ee3a2967cfeee81056acf8f732b",
    "halt_resume.json": "0aabe37828aa3c0430809551eef360bbaeb1fea385313599111588f9b93d1498",
    "population.json": "7ec1ae24a2aaa2236be0c842c446b3303560ec78630ff496da1e9d5d009e82ae",
    "recorded_busy.json": "5bfcda9b77c02391b1f1d7a87c9d9d93cd07842c69077d3f03bdf25fe8540ae7",
    "self_trade.json": "cebcb06b5fc9db2a3b473bebe36ae681a3515be137b43504ee3cb9559d19c12f",
    "thin_book_sweep.json": "ee71d93b6f353bd3e10b470458b8632a445efbb64a94d6a7ad9fba65659a9744",
}


def test_every_shipped_scenario_is_pinned() -> None:
    assert sorted(GOLDEN) == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_replays_are_identical_and_pinned(name: str) -> None:
    first = replay(name, check_every=50)
    second = replay(name, check_every=10**9)
    assert first.journal == second.journal
    assert first.digest == second.digest
    assert first.steps, "the scenario does nothing"
    assert first.digest == GOLDEN[name], f"{name}: digest is now {first.digest}"


def test_demo_has_a_book_from_the_first_instant() -> None:
    r = replay("demo.json", until=0)  # until before start: only what is due at start runs
    start = r.scenario.start_ns
    assert r.venue.clock.now == start
    for inst_id, book in r.venue.books.items():
        assert book.best_bid() is not None and book.best_ask() is not None, inst_id
    assert all(at == start for at, _, _ in r.steps)


def test_demo_reference_data() -> None:
    s = replay("demo.json", until=0).scenario
    assert {c.mnemonic: c.id for c in s.clients.values()}.items() >= {"alice": 100, "bob": 101}.items()
    assert sorted(i.symbol for i in s.instruments.values()) == ["BTC-USD", "ETH-BTC", "ETH-USD"]
    assert {cid for cid, _ in s.hmac_keys.values()} == {100, 101}
    (key,) = s.api_keys
    assert key["kind"] == "user" and key["client_id"] == "100"
    assert key["public_key"].startswith("-----BEGIN PUBLIC KEY-----\n")


@pytest.mark.parametrize("name", SHIPPED)
def test_auth_store_accepts_the_keys(name: str) -> None:
    from cefisim.api.auth.store import AuthStore

    s = replay(name, until=0).scenario
    store = AuthStore.from_scenario(s.api_keys, s.oauth_clients, clock=lambda: s.start_ns)
    assert store.key_ids() == [k["key_id"] for k in s.api_keys]


def test_demo_key_pair_matches() -> None:
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from tests.api.formats.scenario.replay_support import SCENARIOS

    s = replay("demo.json", until=0).scenario
    private = serialization.load_pem_private_key((SCENARIOS / "keys" / "alice-es256.pem").read_bytes(), None)
    public = serialization.load_pem_public_key(s.api_keys[0]["public_key"].encode())
    assert isinstance(private, ec.EllipticCurvePrivateKey) and private.curve.name == "secp256r1"
    signature = private.sign(b"k-alice.1793610000", ec.ECDSA(hashes.SHA256()))
    public.verify(signature, b"k-alice.1793610000", ec.ECDSA(hashes.SHA256()))  # type: ignore[union-attr]


def test_demo_trades_on_the_traded_instruments() -> None:
    r = replay("demo.json", check_every=500)
    traded = {e.instrument_id for e in r.events if isinstance(e, TradeEvent)}
    assert traded == {1, 2}  # the noise takers trade BTC-USD and ETH-USD
    assert r.order("bob", "bob-bid-1").status == "ACTIVE"


def test_halt_resume() -> None:
    r = replay("halt_resume.json")
    s = r.scenario
    halted_at, resumed_at = s.start_ns + 10 * 10**9, s.start_ns + 20 * 10**9
    # nothing trades while halted, and the market maker does not requote
    assert not [e for e in r.events if isinstance(e, TradeEvent) and halted_at <= e.ts < resumed_at]
    assert not [
        at for at, c, _ in r.steps if isinstance(c, PlaceOrder) and halted_at < at < resumed_at and c.client_id == 900
    ]
    rejected = r.order("bob", "halted-buy")
    assert rejected.status == "REJECTED" and rejected.extra.reject_reason == "INSTRUMENT_HALTED"
    (modify,) = r.results(ModifyOrder, external_id="alice-ask")
    assert modify.reject is Reject.INSTRUMENT_HALTED
    (cancel,) = r.results(CancelOrder, ref="alice-ask")
    assert cancel.ok and r.order("alice", "alice-ask").status == "CANCELED"
    resumed = r.order("bob", "resumed-buy")
    assert resumed.status == "FILLED" and r.statuses(resumed) == ["ACTIVE", "TRADE", "FILLED"]
    # ETH-USD: OPENING rests crossing orders, refuses MARKET, and uncrosses when ACTIVE
    eth_trades = [e for e in r.events if isinstance(e, TradeEvent) and e.instrument_id == 2]
    (uncross,) = eth_trades
    assert uncross.ts >= s.start_ns + 30 * 10**9
    bid, ask = r.order("alice", "open-bid"), r.order("bob", "open-ask")
    # at the first order's price
    assert (uncross.price, uncross.maker_order_id, uncross.taker_order_id) == (201000, bid.id, ask.id)
    assert bid.status == "FILLED" and ask.status == "ACTIVE"
    opening_market = [o for o in r.venue.accounts[101].orders.values() if o.instrument.id == 2 and o.type == "MARKET"]
    assert [o.extra.reject_reason for o in opening_market] == ["INSTRUMENT_OPENING"]
    # the market maker pulled its quotes at its end
    assert not [o for o in r.venue.accounts[900].orders.values() if o.status == "ACTIVE"]


def test_thin_book_sweep() -> None:
    r = replay("thin_book_sweep.json")
    sweep = r.order("bob", "sweep")
    trades = [e for e in r.history(sweep) if isinstance(e, TradeEvent)]
    assert [e.price for e in trades] == [3000000, 3010000, 3030000, 3060000, 3140000]  # five levels, in order
    assert sweep.price == 3150000  # protection price: best ask 30000.00 + 5%
    assert sweep.status == "CANCELED" and sweep.extra.cancel_reason == "MARKET_REMAINDER"
    assert (sweep.executed, sweep.qty) == (9000, 12000)
    aon = r.order("bob", "aon")
    assert r.statuses(aon) == ["ACTIVE", "CANCELED"] and aon.extra.cancel_reason == "AON_NOT_FILLABLE"
    ioc = r.order("bob", "ioc")
    assert r.statuses(ioc) == ["ACTIVE", "TRADE", "FILLED"]
    assert r.venue.books[1].best_ask() is None


def test_flash_crash() -> None:
    r = replay("flash_crash.json", check_every=20)
    start = 3000000
    trades = [e for e in r.events if isinstance(e, TradeEvent)]
    low = min(e.price for e in trades)
    assert low <= start * 90 // 100, "the price did not crash"
    assert trades[-1].price >= start * 99 // 100, "the price did not recover"
    stop = r.order("fund", "stop-loss")
    assert stop.status == "CANCELED" and stop.extra.cancel_reason == "MARKET_REMAINDER"
    assert 0 < stop.executed < stop.qty
    # the stop-loss emptied the bid side down to its protection price
    (result,) = r.results(PlaceOrder, external_id="stop-loss")
    prices = [e.price for e in result.events if isinstance(e, TradeEvent)]
    assert prices == sorted(prices, reverse=True) and len(set(prices)) >= 5
    assert min(prices) >= stop.price


def test_self_trade() -> None:
    r = replay("self_trade.json")
    ask1 = r.order("alice", "a-ask-1")
    b1, b2, b3, b4, b5 = (r.order("alice", f"a-bid-{i}") for i in range(1, 6))
    assert r.statuses(b1) == ["ACTIVE", "CANCELED"] and b1.extra.cancel_reason == "SELF_TRADE_PREVENTION"
    assert r.statuses(b2) == ["ACTIVE", "TRADE", "FILLED"]
    (self_trade,) = [e for e in r.history(b2) if isinstance(e, TradeEvent)]
    assert self_trade.maker_order_id == ask1.id  # alice against alice
    assert r.statuses(b3) == ["ACTIVE", "CANCELED"] and b3.extra.cancel_reason == "SELF_TRADE_PREVENTION"
    assert ask1.status == "CANCELED" and ask1.extra.cancel_reason == "SELF_TRADE_PREVENTION"
    assert ask1.executed == 1000
    assert b4.status == "REJECTED" and b4.extra.reject_reason == "STP_INVALID"
    # client default CANCEL_AGGRESSIVE: trades with bob, stops at her own ask
    assert r.venue.clients[100].self_trade_prevention == "CANCEL_AGGRESSIVE"
    assert r.statuses(b5) == ["ACTIVE", "TRADE", "CANCELED"] and b5.executed == 3000
    assert r.order("bob", "b-ask-1").status == "FILLED"
    assert r.order("alice", "a-ask-2").status == "ACTIVE"


def test_cancel_race_latency() -> None:
    r = replay("cancel_race_latency.json")
    race = r.order("alice", "race-bid")
    assert r.statuses(race) == ["ACTIVE", "CANCEL_PENDING", "TRADE", "CANCELED"]
    history = r.history(race)
    assert history[1].ts < history[2].ts < history[3].ts
    assert history[3].ts - history[1].ts >= 50 * 10**6  # acknowledged 50 ms after the request
    assert race.executed == 4000 and race.cancel_reason == "REQUESTED"
    race2 = r.order("alice", "race-bid-2")
    assert r.statuses(race2) == ["ACTIVE", "CANCEL_PENDING", "TRADE", "FILLED"]
    assert r.venue.accounts[100].balances[1].total == 7000 * 10**4  # 0.7 BTC bought
