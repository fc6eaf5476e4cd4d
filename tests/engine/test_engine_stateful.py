"""Random command streams through the real Venue and a naive reference book (style.md practice 8).

The reference model below is written from design.md's matching rules, not from the engine: all resting
orders sit in one dict, and a side's priority is recomputed on demand by sorting on (price, join
sequence); an order gets a new join sequence whenever it (re)joins the back of a level. It models
price-time priority, STP, IOC/MARKET/AON/ALO, the price band, modify priority, GTC expiry and the
instrument statuses (OPENING uncrosses by join sequence). It does not model money: every client is
rich, so INSUFFICIENT_BALANCE never decides anything here (``test_ledger_stateful.py`` covers that).

After every step: the result (reject reason, status, executed, trades as price/qty/maker/taker) and both
books (per side, (price, order id, open lots) in priority order) equal the model's;
``check_invariants()`` holds; every asset total is unchanged; and a twin venue fed the journal entries
of the step produced the same events and the same state hash. At the end a fresh venue replays the
whole journal to the same events and state.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil, floor

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from cefisim.engine.commands import (
    AdvanceClock, CancelOrder, Command, ModifyOrder, PlaceOrder, SetClientInfo, SetInstrumentStatus,
)
from cefisim.engine.order import BUY, CANCELED, FILLED, REJECTED, SELL
from cefisim.engine.units import RATE_ONE
from cefisim.engine.venue import Result

from .builders import ALICE, BOB, BTC_USD, CAROL, DAY, ETH_USD, HOUR, SECOND, book_rows, build_venue, state_hash, trades

CLIENTS = (ALICE, BOB, CAROL)
GTC_LIFE = 30 * DAY
# Narrow price bands, so that the band and a MARKET order's protection price (best opposite price moved
# by the band, floored for a BUY and ceiled for a SELL) cut through the prices the orders use: at 100.00
# the BTC-USD band of 0.03% is 3 ticks, the ETH-USD band of 0.1% is 2 ticks (of 0.05).
BANDS = {BTC_USD: "0.0003", ETH_USD: "0.001"}
# Price ticks: a cluster around 100.00 where orders cross, and a few prices beyond the band, which rest
# only while there is no reference price (no trade yet and a one-sided book).
NEAR = {BTC_USD: list(range(9_998, 10_003)), ETH_USD: list(range(1_998, 2_003))}
FAR = {BTC_USD: [9_990, 9_993, 10_007, 10_010], ETH_USD: [1_990, 1_993, 2_007, 2_010]}
PRICES = {i: NEAR[i] + FAR[i] for i in NEAR}
LOTS = {BTC_USD: (1, 6), ETH_USD: (10, 30)}
STPS = [None] * 12 + ["NONE"] + ["CANCEL_AGGRESSIVE", "CANCEL_BOTH"] * 3 + ["INVALID"]
LIMIT_ARGS = dict(
    client=st.sampled_from(CLIENTS), inst=st.sampled_from([BTC_USD, ETH_USD]), lots=st.integers(0, 100),
    tif=st.sampled_from(["GTC"] * 5 + ["IOC"]),
    exec_inst=st.sampled_from([()] * 16 + [("ALO",)] * 3 + [("AON",)]),
    stp=st.sampled_from(STPS), ext=st.sampled_from([None] * 8 + ["e1", "e2", "e3"]),
)
MARKET_ARGS = dict(
    client=st.sampled_from(CLIENTS), inst=st.sampled_from([BTC_USD, ETH_USD]), lots=st.integers(0, 100),
    flags=st.sampled_from([(), (), ("USE_AGGRESSIVE_PRICING",)]),
    exec_inst=st.sampled_from([(), (), (), ("AON",), ("AON",), ("ALO",)]), stp=st.sampled_from(STPS),
)
ENDED = ("ORDER_NOT_ACTIVE", "UNKNOWN_ORDER")  # an ended order may also have been forgotten (retention)


# --- the reference model ---------------------------------------------------------------------------

@dataclass
class MOrder:
    id: int
    client: int
    inst: int
    side: str
    type: str
    tif: str
    price: int
    qty: int
    alo: bool
    stp: str | None
    ext: str | None
    created: int
    executed: int = 0
    seq: int = 0
    status: str = "ACTIVE"

    @property
    def open(self) -> int:
        return self.qty - self.executed


class Model:
    def __init__(self, bands: dict[int, Fraction]) -> None:
        self.band = bands
        self.orders: dict[int, MOrder] = {}
        self.resting: dict[int, MOrder] = {}
        self.last: dict[int, int | None] = {i: None for i in bands}
        self.status = {i: "ACTIVE" for i in bands}
        self.opening = {i: False for i in bands}
        self.client_stp = {c: "NONE" for c in CLIENTS}
        self.live_ext: dict[int, dict[str, int]] = {c: {} for c in CLIENTS}
        self.by_ext: dict[int, dict[str, int]] = {c: {} for c in CLIENTS}
        self.seq = 0
        self.trades: list[tuple[int, int, int, int]] = []

    def rows(self, inst: int, side: str) -> list[MOrder]:
        rows = [o for o in self.resting.values() if o.inst == inst and o.side == side]
        rows.sort(key=lambda o: (-o.price if side == BUY else o.price, o.seq))
        return rows

    def best(self, inst: int, side: str) -> int | None:
        rows = self.rows(inst, side)
        return rows[0].price if rows else None

    def reference(self, inst: int) -> Fraction | None:
        if self.last[inst] is not None:
            return Fraction(self.last[inst])
        bid, ask = self.best(inst, BUY), self.best(inst, SELL)
        return None if bid is None or ask is None else Fraction(bid + ask, 2)

    def in_band(self, inst: int, price: int) -> bool:
        ref = self.reference(inst)
        return ref is None or ref * (1 - self.band[inst]) <= price <= ref * (1 + self.band[inst])

    def protection(self, inst: int, side: str, aggressive: bool) -> int | None:
        best = self.best(inst, SELL if side == BUY else BUY)
        if best is None:
            return None
        # USE_AGGRESSIVE_PRICING: the further of the two band edges (best price, reference price)
        ref = self.reference(inst) if aggressive else None
        bases = [Fraction(best)] if ref is None else [Fraction(best), ref]
        if side == BUY:
            return max(floor(base * (1 + self.band[inst])) for base in bases)
        return min(max(1, ceil(base * (1 - self.band[inst]))) for base in bases)

    def would_trade(self, inst: int, side: str, price: int) -> bool:
        best = self.best(inst, SELL if side == BUY else BUY)
        return best is not None and (best <= price if side == BUY else best >= price)

    def stp_of(self, o: MOrder) -> str:
        return o.stp if o.stp is not None else self.client_stp[o.client]

    def rest(self, o: MOrder) -> None:
        self.seq += 1
        o.seq = self.seq
        self.resting[o.id] = o

    def end(self, o: MOrder, status: str) -> None:
        o.status = status
        self.resting.pop(o.id, None)
        if o.ext is not None and self.live_ext[o.client].get(o.ext) == o.id:
            del self.live_ext[o.client][o.ext]

    def crosses(self, taker: MOrder, price: int) -> bool:
        return price <= taker.price if taker.side == BUY else price >= taker.price

    def match(self, t: MOrder) -> bool:
        """Trade t against the other side; True when self-trade prevention stopped it."""
        prevent = self.stp_of(t) != "NONE"
        for m in self.rows(t.inst, SELL if t.side == BUY else BUY):
            if not t.open or not self.crosses(t, m.price):
                break
            if prevent and m.client == t.client:
                if self.stp_of(t) == "CANCEL_BOTH":
                    self.end(m, CANCELED)
                return True
            lots = min(t.open, m.open)
            t.executed += lots
            m.executed += lots
            self.trades.append((m.price, lots, m.id, t.id))
            self.last[t.inst] = m.price
            if not m.open:
                self.end(m, FILLED)
        return False

    def aon_fillable(self, t: MOrder) -> bool:
        prevent = self.stp_of(t) != "NONE"
        found = 0
        for m in self.rows(t.inst, SELL if t.side == BUY else BUY):
            if not self.crosses(t, m.price) or (prevent and m.client == t.client):
                break
            found += m.open
        return found >= t.open

    def trade_or_rest(self, o: MOrder) -> None:
        stopped = self.match(o) if self.status[o.inst] == "ACTIVE" else False
        if not o.open:
            self.end(o, FILLED)
        elif stopped or o.type == "MARKET" or o.tif == "IOC":
            self.end(o, CANCELED)
        else:
            self.rest(o)

    def place(self, oid: int, cmd: PlaceOrder, created: int) -> str | None:
        market = cmd.type == "MARKET"
        o = MOrder(oid, cmd.client_id, cmd.instrument_id, cmd.side, cmd.type, cmd.tif,
                   0 if market else PRICES_BY_TEXT[cmd.instrument_id][cmd.price],  # type: ignore[index]
                   LOTS_BY_TEXT[cmd.instrument_id][cmd.qty], "ALO" in cmd.exec_inst, cmd.stp,
                   cmd.external_id, created)
        self.orders[oid] = o
        reason = self._entry_reject(o, cmd)
        if reason is not None:
            o.status = REJECTED
            if o.ext is not None and o.ext not in self.live_ext[o.client]:
                self.by_ext[o.client][o.ext] = oid
            return reason
        if o.ext is not None:
            self.live_ext[o.client][o.ext] = self.by_ext[o.client][o.ext] = oid
        if "AON" in cmd.exec_inst and not self.aon_fillable(o):
            self.end(o, CANCELED)
        else:
            self.trade_or_rest(o)
        return None

    def _entry_reject(self, o: MOrder, cmd: PlaceOrder) -> str | None:
        market = cmd.type == "MARKET"
        if not market and "AON" in cmd.exec_inst:
            return "AON_ONLY_ON_MARKET"
        if market and o.alo:
            return "ALO_NOT_ALLOWED_ON_MARKET"
        if self.stp_of(o) == "INVALID":
            return "STP_INVALID"
        if o.ext is not None and o.ext in self.live_ext[o.client]:
            return "DUPLICATE_EXTERNAL_ID"
        status = self.status[o.inst]
        if status in ("DISABLED", "HALTED"):
            return "INSTRUMENT_" + status
        if status == "OPENING" and (market or o.tif == "IOC"):
            return "INSTRUMENT_OPENING"
        if market:
            prot = self.protection(o.inst, o.side, "USE_AGGRESSIVE_PRICING" in cmd.flags)
            if prot is None:
                return "NO_LIQUIDITY"
            o.price = prot
            return None
        if not self.in_band(o.inst, o.price):
            return "PRICE_OUTSIDE_BAND"
        if o.alo and self.would_trade(o.inst, o.side, o.price):
            return "ALO_WOULD_TRADE"
        return None

    def find(self, client: int, ref: str) -> MOrder | None:
        if ref.isdigit():
            o = self.orders.get(int(ref))
            return o if o is not None and o.client == client else None
        oid = self.live_ext[client].get(ref, self.by_ext[client].get(ref))
        return None if oid is None else self.orders[oid]

    def modify(self, o: MOrder | None, new_qty: int, new_price: int | None, to_market: bool) -> str | None:
        if o is None:
            return "UNKNOWN_ORDER"
        if o.status != "ACTIVE":
            return "ORDER_NOT_ACTIVE"
        status = self.status[o.inst]
        if status in ("DISABLED", "HALTED"):
            return "INSTRUMENT_" + status
        if new_qty <= 0:
            return "QTY_NOT_POSITIVE"
        if to_market:
            if status == "OPENING":
                return "INSTRUMENT_OPENING"
            new_price = self.protection(o.inst, o.side, False)
            if new_price is None:
                return "NO_LIQUIDITY"
        elif new_price is None:
            new_price = o.price
        if new_qty > o.executed:
            if not to_market and new_price != o.price and not self.in_band(o.inst, new_price):
                return "PRICE_OUTSIDE_BAND"
            if o.alo and self.would_trade(o.inst, o.side, new_price):
                return "ALO_WOULD_TRADE"
        if new_qty <= o.executed:
            self.end(o, CANCELED)
        elif new_price == o.price and new_qty <= o.qty and not to_market:
            o.qty = new_qty  # keeps its place
        else:
            del self.resting[o.id]
            o.qty, o.price = new_qty, new_price
            if to_market:
                o.type = "MARKET"
            self.trade_or_rest(o)
        return None

    def cancel(self, o: MOrder | None) -> str | None:
        if o is None:
            return "UNKNOWN_ORDER"
        if o.status != "ACTIVE":
            return "ORDER_NOT_ACTIVE"
        self.end(o, CANCELED)
        return None

    def advance(self, now: int) -> None:
        for o in sorted(self.resting.values(), key=lambda o: o.created):
            if o.created + GTC_LIFE <= now:
                self.end(o, CANCELED)

    def set_status(self, inst: int, status: str) -> None:
        self.status[inst] = status
        if status == "DISABLED":
            for o in [o for o in self.resting.values() if o.inst == inst]:
                self.end(o, CANCELED)
            self.opening[inst] = False
        elif status == "OPENING":
            self.opening[inst] = True
        elif status == "ACTIVE" and self.opening[inst]:
            self.opening[inst] = False
            feed = sorted((o for o in self.resting.values() if o.inst == inst), key=lambda o: o.seq)
            for o in feed:
                del self.resting[o.id]
            for o in feed:
                if o.status == "ACTIVE":  # not ended by CANCEL_BOTH of an earlier one
                    self.trade_or_rest(o)


def _grids() -> tuple[dict[int, dict[str, int]], dict[int, dict[str, int]]]:
    v = build_venue()
    prices, lots = {}, {}
    for i, inst in v.instruments.items():
        prices[i] = {inst.price_grid.format(p): p for p in PRICES[i]}
        lots[i] = {inst.qty_grid.format(n): n for n in range(LOTS[i][1] + 2)}
    return prices, lots


PRICES_BY_TEXT, LOTS_BY_TEXT = _grids()


# --- the state machine ------------------------------------------------------------------------------

class EngineVsModel(RuleBasedStateMachine):
    @initialize()
    def setup(self) -> None:
        self.journal: list[tuple[int, Command]] = []
        self.v = build_venue(journal=lambda at, cmd: self.journal.append((at, cmd)), bands=BANDS)
        self.twin = build_venue(bands=BANDS)
        self.replayed = 0
        self.totals = self.v.asset_totals()
        self.model = Model({i: Fraction(inst.price_band, RATE_ONE) for i, inst in self.v.instruments.items()})
        self.known: list[int] = []  # every order id handed out
        self.events: list[tuple] = []

    # --- helpers ----------------------------------------------------------------------------------

    def submit(self, cmd: Command) -> Result:
        self.model.trades = []
        result = self.v.submit(cmd)
        self.events += result.events
        new = self.journal[self.replayed:]
        assert len(new) == 1 and new[0][1] == cmd
        twin_events = []
        for at, c in new:
            twin_events += self.twin.submit(c, at=at).events
        self.replayed = len(self.journal)
        assert twin_events == result.events
        assert state_hash(self.twin) == state_hash(self.v)
        return result

    def check_result(self, result: Result, reason: str | None, order_id: int | None = None) -> None:
        got = result.reject.value if result.reject is not None else None
        if reason == "ORDER_NOT_ACTIVE":
            assert got in ENDED, (got, reason)
        else:
            assert got == reason, (got, reason)
        assert trades(result) == self.model.trades
        if order_id is not None and result.order is not None:
            mo = self.model.orders[order_id]
            assert result.order.id == order_id
            assert (result.order.status, result.order.executed) == (mo.status, mo.executed), (result.order, mo)

    def fmt_price(self, inst: int, ticks: int) -> str:
        return self.v.instruments[inst].price_grid.format(ticks)

    def fmt_qty(self, inst: int, lots: int) -> str:
        return self.v.instruments[inst].qty_grid.format(lots)

    def pick(self, n: int) -> int | None:
        """Mostly a working order (one that can be modified or canceled), sometimes any order."""
        if not self.known:
            return None
        working = [oid for oid in self.known if self.model.orders[oid].status == "ACTIVE"]
        if working and n % 4 != 3:
            return working[(n // 4) % len(working)]
        return self.known[(n // 4) % len(self.known)]

    # --- rules ------------------------------------------------------------------------------------

    def limit_cmd(self, client: int, inst: int, side: str, price: int, lots: int, tif: str,
                  exec_inst: tuple[str, ...], stp: str | None, ext: str | None) -> PlaceOrder:
        lo, hi = LOTS[inst]
        return PlaceOrder(client, inst, side, "LIMIT", self.fmt_qty(inst, lo + lots % (hi - lo + 1)),
                          self.fmt_price(inst, price), tif=tif, exec_inst=exec_inst, stp=stp, external_id=ext)

    # one rule per side: hypothesis favours the first value of a strategy (here: the most aggressive
    # price of the cluster), while it picks among rules evenly

    @rule(near=st.integers(0, 4), **LIMIT_ARGS)
    def place_bid_near(self, near: int, **kw) -> None:  # type: ignore[no-untyped-def]
        self._place(self.limit_cmd(side=BUY, price=NEAR[kw["inst"]][-1 - near], **kw))

    @rule(near=st.integers(0, 4), **LIMIT_ARGS)
    def place_ask_near(self, near: int, **kw) -> None:  # type: ignore[no-untyped-def]
        self._place(self.limit_cmd(side=SELL, price=NEAR[kw["inst"]][near], **kw))

    @rule(side=st.sampled_from([SELL, BUY]), far=st.integers(0, 3), **LIMIT_ARGS)
    def place_limit_far(self, side: str, far: int, **kw) -> None:  # type: ignore[no-untyped-def]
        self._place(self.limit_cmd(side=side, price=FAR[kw["inst"]][far], **kw))

    @rule(buy=st.booleans(), **MARKET_ARGS)
    def place_market(self, buy: bool, **kw) -> None:  # type: ignore[no-untyped-def]
        self._place(self.market_cmd(side=BUY if buy else SELL, **kw))

    @rule(**MARKET_ARGS)
    def place_market_sell(self, **kw) -> None:  # type: ignore[no-untyped-def]
        self._place(self.market_cmd(side=SELL, **kw))

    def market_cmd(self, client: int, inst: int, side: str, lots: int, flags: tuple[str, ...],
                   exec_inst: tuple[str, ...], stp: str | None) -> PlaceOrder:
        lo, hi = LOTS[inst]
        return PlaceOrder(client, inst, side, "MARKET", self.fmt_qty(inst, lo + lots % (hi - lo + 1)),
                          flags=flags, exec_inst=exec_inst, stp=stp)

    def _place(self, cmd: PlaceOrder) -> None:
        oid = self.v.next_order_id
        result = self.submit(cmd)
        assert result.order is not None and result.order.id == oid
        self.known.append(oid)
        reason = self.model.place(oid, cmd, result.order.created)
        self.check_result(result, reason, oid)

    @precondition(lambda self: self.known)
    @rule(n=st.integers(0, 10**6), other_client=st.integers(0, 19), lots=st.integers(0, 40),
          price=st.one_of(st.none(), st.integers(0, len(PRICES[BTC_USD]) - 1)),
          to_market=st.sampled_from([False] * 7 + [True]))
    def modify_again(self, n: int, other_client: int, lots: int, price: int | None, to_market: bool) -> None:
        self.modify(n, other_client, lots, price, to_market)

    @precondition(lambda self: self.known)
    @rule(n=st.integers(0, 10**6), other_client=st.integers(0, 19), lots=st.integers(0, 40),
          price=st.one_of(st.none(), st.integers(0, len(PRICES[BTC_USD]) - 1)),
          to_market=st.sampled_from([False] * 7 + [True]))
    def modify(self, n: int, other_client: int, lots: int, price: int | None, to_market: bool) -> None:
        oid = self.pick(n)
        assert oid is not None
        mo = self.model.orders[oid]
        client = CLIENTS[other_client % 3] if other_client >= 18 else mo.client
        inst = mo.inst
        new_lots = lots % (LOTS[inst][1] + 2)  # 0 (refused) up to above the largest entry
        new_price = None if price is None or to_market else PRICES[inst][price]
        cmd = ModifyOrder(client, oid, None, self.fmt_qty(inst, new_lots),
                          None if new_price is None else self.fmt_price(inst, new_price),
                          new_type="MARKET" if to_market else None)
        result = self.submit(cmd)
        reason = self.model.modify(mo if client == mo.client else None, new_lots, new_price, to_market)
        self.check_result(result, reason, oid if reason is None else None)

    @precondition(lambda self: self.known)
    @rule(n=st.integers(0, 10**6), other_client=st.integers(0, 19), by_ext=st.booleans())
    def cancel(self, n: int, other_client: int, by_ext: bool) -> None:
        oid = self.pick(n)
        assert oid is not None
        mo = self.model.orders[oid]
        client = CLIENTS[other_client % 3] if other_client >= 18 else mo.client
        ref = mo.ext if by_ext and mo.ext is not None else str(oid)
        result = self.submit(CancelOrder(client, ref))
        target = self.model.find(client, ref)
        reason = self.model.cancel(target)
        self.check_result(result, reason, target.id if reason is None and target is not None else None)

    # the rarer commands share one rule, so that order entry makes most of a stream

    # the rarer commands share one rule, so that order entry makes most of a stream

    @rule(what=st.sampled_from(["advance", "stp", "status"]), client=st.sampled_from(CLIENTS),
          value=st.sampled_from(["CANCEL_BOTH", "CANCEL_AGGRESSIVE", "NONE", "NONE", "NONE", "INVALID"]),
          delta=st.sampled_from([HOUR, 1, SECOND, 5 * HOUR, DAY, 10 * DAY, 29 * DAY + 12 * HOUR, 31 * DAY]),
          inst=st.sampled_from([BTC_USD, ETH_USD]),
          status=st.sampled_from(["HALTED", "ACTIVE", "DISABLED", "OPENING"]))
    def admin(self, what: str, client: int, value: str, delta: int, inst: int, status: str) -> None:
        if what == "stp":
            result = self.submit(SetClientInfo(client, value))
            self.model.client_stp[client] = value
        elif what == "advance":
            to = self.v.clock.now + delta
            result = self.submit(AdvanceClock(to))
            self.model.advance(to)
        else:
            result = self.submit(SetInstrumentStatus(inst, status))
            self.model.set_status(inst, status)
        self.check_result(result, None)

    @rule(inst=st.sampled_from([BTC_USD, ETH_USD]))
    def toggle_opening(self, inst: int) -> None:
        """ACTIVE -> OPENING, anything else -> ACTIVE: books collect crossing orders, then uncross."""
        status = "OPENING" if self.model.status[inst] == "ACTIVE" else "ACTIVE"
        result = self.submit(SetInstrumentStatus(inst, status))
        self.model.set_status(inst, status)
        self.check_result(result, None)

    # --- invariants -------------------------------------------------------------------------------

    @invariant()
    def same_books(self) -> None:
        if not hasattr(self, "v"):
            return
        for inst in (BTC_USD, ETH_USD):
            model = tuple([(o.price, o.id, o.open) for o in self.model.rows(inst, side)] for side in (BUY, SELL))
            assert book_rows(self.v, inst) == model, inst
            assert self.v.books[inst].last_price == self.model.last[inst]

    @invariant()
    def engine_invariants(self) -> None:
        if not hasattr(self, "v"):
            return
        self.v.check_invariants()
        assert self.v.asset_totals() == self.totals
        for inst in (BTC_USD, ETH_USD):  # FIFO: within a level, orders in the order they (re)joined
            for levels in (self.v.books[inst].bids, self.v.books[inst].asks):
                for level in levels.values():
                    seqs = [self.model.orders[oid].seq for oid in level.orders]
                    assert seqs == sorted(seqs)

    def teardown(self) -> None:
        if not hasattr(self, "v"):
            return
        fresh = build_venue(bands=BANDS)
        events = []
        for at, cmd in self.journal:
            events += fresh.submit(cmd, at=at).events
        assert events == self.events
        assert state_hash(fresh) == state_hash(self.v)


EngineVsModel.TestCase.settings = settings(
    max_examples=500, stateful_step_count=40, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestEngineVsModel = EngineVsModel.TestCase


# --- regressions, driven through the machine so that the model checks them too ------------------------

def _steps(*calls: tuple[str, dict]) -> EngineVsModel:
    m = EngineVsModel()
    m.setup()
    for name, kw in calls:
        getattr(m, name)(**kw)
        m.same_books()
        m.engine_invariants()
    m.teardown()
    return m


def _ask(client: int, near: int, lots: int = 0, **kw: object) -> tuple[str, dict]:
    args = dict(client=client, inst=BTC_USD, lots=lots, tif="GTC", exec_inst=(), stp=None, ext=None)
    args.update(kw)
    return "place_ask_near", dict(near=near, **args)


def _bid(client: int, near: int, lots: int = 0, **kw: object) -> tuple[str, dict]:
    return "place_bid_near", _ask(client, near, lots, **kw)[1]


def test_regression_priority_lost_by_modify_while_opening() -> None:
    m = _steps(
        ("toggle_opening", dict(inst=BTC_USD)),
        _ask(ALICE, 2),  # order 1 at 100.00
        _ask(BOB, 2),  # order 2 at 100.00
        ("modify", dict(n=0, other_client=0, lots=5, price=None, to_market=False)),  # 1 to the back
        _bid(CAROL, 2),  # order 3 at 100.00 crosses both (allowed while OPENING)
        ("toggle_opening", dict(inst=BTC_USD)),  # uncross: 3 takes 2, which is first in time
    )
    assert [e[6] for e in m.events if e[0] == "trade"] == [2]


def test_regression_alo_stays_maker_through_the_uncross() -> None:
    m = _steps(
        ("toggle_opening", dict(inst=BTC_USD)),
        _ask(ALICE, 4),  # order 1 at 100.02
        _bid(BOB, 3, exec_inst=("ALO",)),  # order 2 at 99.99 (ALO)
        ("modify", dict(n=0, other_client=0, lots=1, price=1, to_market=False)),  # 1 to 99.99: crosses
        ("toggle_opening", dict(inst=BTC_USD)),
    )
    assert [(e[6], e[7]) for e in m.events if e[0] == "trade"] == [(2, 1)]


def test_regression_opening_then_halted_then_active() -> None:
    m = _steps(
        ("toggle_opening", dict(inst=BTC_USD)),
        _ask(ALICE, 0),
        _bid(BOB, 0),  # crossed while OPENING
        ("admin", dict(what="status", client=ALICE, value="NONE", delta=1, inst=BTC_USD, status="HALTED")),
        ("admin", dict(what="status", client=ALICE, value="NONE", delta=1, inst=BTC_USD, status="ACTIVE")),
    )
    assert len([e for e in m.events if e[0] == "trade"]) == 1
