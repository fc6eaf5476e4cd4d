"""Builders shared by the engine tests: a small venue, a driver with short helpers, state fingerprints.

Reference data (ids are the engine's integers):
- assets 1 BTC (8 decimals), 2 USD (2 decimals), 3 ETH (8 decimals)
- instrument 1 BTC-USD: price 0.01, qty 0.0001, min qty 0.0001, band 5%, maker 0.1%, taker 0.2%
- instrument 2 ETH-USD: price 0.05, qty 0.001, min qty 0.01, band 10%, maker 0, taker 0.05%
- clients 100 alice, 200 bob, 300 carol (rich), 400 dave (nothing unless a test credits him)
- ``recorded``: that venue with a recorded market on BTC-USD, whose counterparty is client 999
"""

from __future__ import annotations

from typing import Any

from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.commands import (
    AdvanceClock,
    CancelOrder,
    Command,
    ModifyOrder,
    PaperFunds,
    PlaceOrder,
    RequestTransfer,
    SetClientInfo,
    SetInstrumentStatus,
    SetLatency,
    SetSettlementDelay,
)
from cefisim.engine.events import OrderEvent, TradeEvent
from cefisim.engine.recorded.market import RecordedMarket
from cefisim.engine.records import Balance, Order
from cefisim.engine.reference import Asset, Client, Instrument
from cefisim.engine.units import Grid, parse_rate
from cefisim.engine.venue import Result, Venue, VenueConfig
from cefisim.engine.vocabulary import Side

BUY = Side.BUY
SELL = Side.SELL

START = 1_793_610_000 * NS_PER_SECOND  # 2026-11-02T09:00:00Z
SECOND = NS_PER_SECOND
HOUR = 3600 * SECOND
DAY = 24 * HOUR

BTC, USD, ETH = 1, 2, 3
BTC_USD, ETH_USD = 1, 2
ALICE, BOB, CAROL, DAVE = 100, 200, 300, 400

RICH = {BTC: 1_000 * 10**8, USD: 100_000_000 * 10**2, ETH: 100_000 * 10**8}


def build_venue(
    *,
    balances: dict[int, dict[int, int]] | None = None,
    config: VenueConfig | None = None,
    fee_overrides: dict[int, dict[int, tuple[str, str]]] | None = None,
    client_stp: dict[int, str] | None = None,
    status: dict[int, str] | None = None,
    bands: dict[int, str] | None = None,
    start: int = START,
) -> Venue:
    """A venue with the reference data above; ``balances`` maps client id -> asset id -> units,
    ``bands`` replaces an instrument's price band (a fraction such as ``"0.05"``)."""
    v = Venue(start, config=config)
    btc = Asset(BTC, "BTC", 8)
    usd = Asset(USD, "USD", 2)
    eth = Asset(ETH, "ETH", 8)
    for a in (btc, usd, eth):
        v.add_asset(a)
    status = status or {}
    bands = bands or {}
    v.add_instrument(
        Instrument(
            BTC_USD,
            "BTC-USD",
            btc,
            usd,
            Grid("0.01"),
            Grid("0.0001"),
            1,
            rate(bands.get(BTC_USD, "0.05")),
            rate("0.001"),
            rate("0.002"),
            status=status.get(BTC_USD, "ACTIVE"),
        )
    )
    v.add_instrument(
        Instrument(
            ETH_USD,
            "ETH-USD",
            eth,
            usd,
            Grid("0.05"),
            Grid("0.001"),
            10,
            rate(bands.get(ETH_USD, "0.1")),
            rate("0"),
            rate("0.0005"),
            status=status.get(ETH_USD, "ACTIVE"),
        )
    )
    fee_overrides = fee_overrides or {}
    client_stp = client_stp or {}
    for cid, name in ((ALICE, "alice"), (BOB, "bob"), (CAROL, "carol"), (DAVE, "dave")):
        overrides = {i: (rate(m), rate(t)) for i, (m, t) in fee_overrides.get(cid, {}).items()}
        v.add_client(Client(cid, name, client_stp.get(cid, "NONE"), fee_overrides=overrides))
    if balances is None:
        balances = {ALICE: RICH, BOB: RICH, CAROL: RICH}
    for cid, per_asset in balances.items():
        for aid, units in per_asset.items():
            v.credit(cid, aid, units)
    return v


def rate(text: str) -> int:
    r = parse_rate(text)
    assert r is not None
    return r


class Sim:
    """A venue plus short helpers. Every helper submits one command and returns its Result."""

    def __init__(self, venue: Venue | None = None, journal: list[tuple[int, Command]] | None = None, **kw: Any) -> None:
        """``journal``: every command is appended to it, at the time it applies, before it is submitted
        (as the runtime journals)."""
        self.v = venue if venue is not None else build_venue(**kw)
        self.journal = journal

    # --- commands ---------------------------------------------------------------------------

    def submit(self, cmd: Command, at: int | None = None) -> Result:
        if self.journal is not None:
            at = self.v.applies_at(cmd, at)
            self.journal.append((at, cmd))
        return self.v.submit(cmd, at=at)

    def limit(
        self, client: int, side: str, qty: str, price: str, inst: int = BTC_USD, at: int | None = None, **kw: Any
    ) -> Result:
        return self.submit(PlaceOrder(client, inst, side, "LIMIT", qty, price, **kw), at)

    def buy(self, client: int, qty: str, price: str, **kw: Any) -> Result:
        return self.limit(client, BUY, qty, price, **kw)

    def sell(self, client: int, qty: str, price: str, **kw: Any) -> Result:
        return self.limit(client, SELL, qty, price, **kw)

    def market(self, client: int, side: str, qty: str, inst: int = BTC_USD, at: int | None = None, **kw: Any) -> Result:
        return self.submit(PlaceOrder(client, inst, side, "MARKET", qty, **kw), at)

    def modify(
        self,
        client: int,
        order_id: int | None,
        new_qty: str,
        new_price: str | None = None,
        external_id: str | None = None,
        at: int | None = None,
        **kw: Any,
    ) -> Result:
        return self.submit(ModifyOrder(client, order_id, external_id, new_qty, new_price, **kw), at)

    def cancel(self, client: int, ref: int | str, at: int | None = None) -> Result:
        return self.submit(CancelOrder(client, str(ref)), at)

    def advance(self, delta_ns: int) -> Result:
        return self.submit(AdvanceClock(self.v.clock.now + delta_ns))

    def advance_to(self, to_ns: int) -> Result:
        return self.submit(AdvanceClock(to_ns))

    def status(self, inst: int, status: str) -> Result:
        return self.submit(SetInstrumentStatus(inst, status))

    def latency(self, entry: int = 0, modify: int = 0, cancel: int = 0) -> Result:
        return self.submit(SetLatency(entry, modify, cancel))

    def stp(self, client: int, value: str) -> Result:
        return self.submit(SetClientInfo(client, value))

    def transfer(self, client: int, asset: int, amount: str, type: str, platform: str = "FIAT") -> Result:
        return self.submit(RequestTransfer(client, asset, amount, type, platform))

    def settlement_delay(self, delay_ns: int) -> Result:
        return self.submit(SetSettlementDelay(delay_ns))

    def funds(self, client: int, asset: int, amount: str, remove: bool = False) -> Result:
        return self.submit(PaperFunds(client, asset, amount, remove))

    # --- reads ------------------------------------------------------------------------------

    def bal(self, client: int, asset: int) -> Balance:
        return self.v.accounts[client].balances.get(asset) or Balance()

    def order(self, client: int, order_id: int) -> Order:
        return self.v.accounts[client].orders[order_id]

    def book(self, inst: int = BTC_USD) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        """(bids, asks), each a list of (price ticks, order id, open lots) in priority order."""
        return book_rows(self.v, inst)

    def check(self) -> None:
        self.v.check_invariants()


#: the recorded market's counterparty in ``recorded``
CP = 999


def recorded(events: list[tuple], model=None, impact: bool = True) -> tuple[Sim, RecordedMarket]:  # type: ignore[no-untyped-def]
    """A venue of ``build_venue`` with a recorded market of ``events`` on BTC-USD, whose counterparty
    (client ``CP``) has 10**18 units of BTC and USD."""
    v = build_venue()
    cp = Client(CP, "recorded")
    v.add_client(cp)
    v.credit(CP, BTC, 10**18)
    v.credit(CP, USD, 10**18)
    mkt = RecordedMarket(v, BTC_USD, CP, iter(events), model, impact)
    v.add_feed(mkt)
    return Sim(v), mkt


def book_rows(v: Venue, inst: int) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    book = v.books[inst]
    bids, asks = (
        [(level.price, o.id, o.qty - o.executed) for level in levels.values() for o in level.orders.values()]
        for levels in (book.bids, book.asks)
    )
    return bids, asks


def trades(result_or_events: Result | list[tuple]) -> list[tuple]:
    """Trade events as (price, lots, maker order id, taker order id)."""
    events = result_or_events.events if isinstance(result_or_events, Result) else result_or_events
    return [(e.price, e.lots, e.maker_order_id, e.taker_order_id) for e in events if isinstance(e, TradeEvent)]


def order_events(result_or_events: Result | list[tuple]) -> list[tuple]:
    """Order events as (order id, status, detail)."""
    events = result_or_events.events if isinstance(result_or_events, Result) else result_or_events
    return [(e.order_id, e.status, e.detail) for e in events if isinstance(e, OrderEvent)]


# --- fingerprints ---------------------------------------------------------------------------------


def _order_state(o: Order) -> tuple:
    extra = o.extra
    ex = None
    if extra is not None:
        ex = tuple(
            (k, repr(getattr(extra, k)))
            for k in type(extra).__slots__  # type: ignore[attr-defined]
        )
    return (
        o.id,
        o.account.id,
        o.instrument.id,
        o.side,
        o.type,
        o.tif,
        o.price,
        o.qty,
        o.executed,
        o.status,
        o.created,
        o.updated,
        o.external_id,
        o.cum_lt,
        o.cum_quote,
        o.cum_fee,
        o.fees_paid,
        ex,
    )


def fingerprint(v: Venue, exclude_order: Order | None = None) -> tuple:
    """Everything the venue holds, except ``exclude_order`` (a REJECTED record), the order-id counter
    and the clock's last stamp (both consumed by a rejected order)."""
    clients = []
    for c in v.accounts.values():
        bals = tuple(
            (aid, b.total, b.hold, b.fees_hold, b.unsettled_fees)
            for aid, b in sorted(c.balances.items())
            if (b.total, b.hold, b.fees_hold, b.unsettled_fees) != (0, 0, 0, 0)
        )
        orders = tuple(_order_state(o) for o in c.orders.values() if o is not exclude_order)
        by_ext = tuple((k, o.id) for k, o in c.by_external.items() if o is not exclude_order)
        clients.append(
            (
                c.id,
                c.client.self_trade_prevention,
                c.client.status,
                bals,
                orders,
                tuple((k, o.id) for k, o in c.live_external.items()),
                by_ext,
                tuple(
                    (f.match_id, f.timestamp, f.order.id, f.price, f.qty, f.fee, f.quote, f.liq_flag) for f in c.fills
                ),
                tuple((t.id, t.status, t.amount, t.updated) for t in c.transfers.values()),
                tuple(sorted((k, n) for k, n in c.open_orders.items() if n)),
            )
        )
    books = tuple((i, book_rows(v, i), v.books[i].last_price) for i in sorted(v.books))
    return (
        tuple(clients),
        books,
        tuple(sorted(v.fee_account.items())),
        v.next_match_id,
        v.next_transfer_id,
        v.clock.now,
        (v.latency_entry_ns, v.latency_modify_ns, v.latency_cancel_ns),
        v.settlement_delay_ns,
        tuple((d, s, a) for d, s, a, _ in sorted(v._timers)),
        tuple(o.id for o in v.gtc_queue),
        tuple((i.id, i.status) for i in v.instruments.values()),
    )


def state_hash(v: Venue) -> tuple:
    """Sorted levels and balances (a comparable picture of the state), plus the counters."""
    levels = []
    for i in sorted(v.books):
        book = v.books[i]
        levels.append(
            (
                i,
                tuple(
                    (lv.price, lv.qty, tuple((o.id, o.qty, o.executed) for o in lv.orders.values()))
                    for lv in book.bids.values()
                ),
                tuple(
                    (lv.price, lv.qty, tuple((o.id, o.qty, o.executed) for o in lv.orders.values()))
                    for lv in book.asks.values()
                ),
                book.last_price,
            )
        )
    bals = tuple(
        (c.id, aid, b.total, b.hold, b.fees_hold, b.unsettled_fees)
        for c in sorted(v.accounts.values(), key=lambda c: c.id)
        for aid, b in sorted(c.balances.items())
    )
    return (
        tuple(levels),
        bals,
        tuple(sorted(v.fee_account.items())),
        v.next_order_id,
        v.next_match_id,
        v.next_transfer_id,
        v.clock.now,
        v.clock.last,
    )


__all__ = [
    "ALICE",
    "BOB",
    "BTC",
    "BTC_USD",
    "BUY",
    "CAROL",
    "DAVE",
    "DAY",
    "ETH",
    "ETH_USD",
    "HOUR",
    "RICH",
    "SECOND",
    "SELL",
    "START",
    "USD",
    "Sim",
    "book_rows",
    "build_venue",
    "fingerprint",
    "order_events",
    "rate",
    "state_hash",
    "trades",
]
