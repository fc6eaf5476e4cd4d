"""A naive reference venue for ``test_engine_stateful.py``, written from docs/matching.md, not from the engine.

All resting orders sit in one dict, and a side's priority is recomputed on demand by sorting on (price,
join sequence); an order gets a new join sequence whenever it (re)joins the back of a level. Money is
exact: every amount is computed from the decimal reference data of ``builders.py`` with ``Fraction``,
and the hold of an order is recomputed from scratch from its sums whenever it is read.

It models price-time priority, STP, IOC/MARKET/AON/ALO, the price band and the protection price (with
the ``USE_AGGRESSIVE_PRICING`` rule of docs/matching.md: the more aggressive of the unflagged protection price
and the band's far edge around the reference price), modify priority, GTC expiry, the instrument
statuses (OPENING uncrosses best bid against best ask, the later-joined one taking), cancel reasons,
modify and cancel by external id, and the
ledger: holds (BUY: ``ceil(notional)`` at the limit plus the fee at the hold rate, both on top of the
order's sums so far; SELL: the base), INSUFFICIENT_BALANCE at entry and on modify, fees rounded up once
per order over its cumulative quote, the seller paid what the buyer paid minus its fee, the hourly sweep
of unsettled fees, deposits and withdrawals; entry and cancel latency: an order entered under an entry
latency is NEW_PENDING (holding, not in the book) until its acknowledgement, which re-checks the
instrument status, a MARKET order's protection price (a BUY never above the price it held for) and an
ALO cross; a cancel under a cancel latency leaves the order CANCEL_PENDING in the book, where it still
trades, until the acknowledgement ends it. Pending orders refuse modify and cancel (ORDER_PENDING).
Acknowledgements, GTC expiries and the hourly sweep happen in time order, in that order at one instant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from math import ceil, floor

from cefisim.engine.commands import PlaceOrder
from cefisim.engine.vocabulary import OrderStatus, Side
from tests.engine.builders import ALICE, BOB, BTC, BTC_USD, CAROL, DAY, ETH, ETH_USD, HOUR, START, USD

BUY = Side.BUY
CANCELED = OrderStatus.CANCELED
FILLED = OrderStatus.FILLED
REJECTED = OrderStatus.REJECTED
SELL = Side.SELL

CLIENTS = (ALICE, BOB, CAROL)
GTC_LIFE = 30 * DAY
HOLDING = ("ACTIVE", "NEW_PENDING", "CANCEL_PENDING")  # statuses in which an order holds its balance
WORKING = ("ACTIVE", "CANCEL_PENDING")  # statuses of an order in the book
DECIMALS = {BTC: 8, USD: 2, ETH: 8}


@dataclass(frozen=True)
class Spec:
    """An instrument as builders.py's docstring states it (decimal strings, read here as fractions)."""

    base: int
    quote: int
    tick: Fraction
    lot: Fraction
    maker: Fraction
    taker: Fraction

    @property
    def k(self) -> Fraction:
        """Quote units (cents) per lot × tick."""
        return self.lot * self.tick * 10 ** DECIMALS[self.quote]

    @property
    def base_per_lot(self) -> int:
        units = self.lot * 10 ** DECIMALS[self.base]
        assert units.denominator == 1
        return int(units)


SPECS = {
    BTC_USD: Spec(BTC, USD, Fraction("0.01"), Fraction("0.0001"), Fraction("0.001"), Fraction("0.002")),
    ETH_USD: Spec(ETH, USD, Fraction("0.05"), Fraction("0.001"), Fraction(0), Fraction("0.0005")),
}


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
    reason: str | None = None  # cancel reason once CANCELED
    aon: bool = False
    aggressive: bool = False
    cum_lt: int = 0  # Σ lots × ticks of its fills
    paid: int = 0  # quote units paid (BUY) or received before fees (SELL)
    cum_fee: Fraction = field(default_factory=Fraction)  # Σ quote × rate
    fees_paid: int = 0

    @property
    def open(self) -> int:
        return self.qty - self.executed


class Model:
    def __init__(self, bands: dict[int, Fraction], balances: dict[int, dict[int, int]]) -> None:
        self.band = bands
        self.orders: dict[int, MOrder] = {}
        self.resting: dict[int, MOrder] = {}
        self.last: dict[int, int | None] = dict.fromkeys(bands)
        self.status = dict.fromkeys(bands, "ACTIVE")
        self.opening = dict.fromkeys(bands, False)
        self.client_stp = dict.fromkeys(CLIENTS, "NONE")
        self.live_ext: dict[int, dict[str, int]] = {c: {} for c in CLIENTS}
        self.by_ext: dict[int, dict[str, int]] = {c: {} for c in CLIENTS}
        self.seq = 0
        self.trades: list[tuple[int, ...]] = []
        self.total = {(c, a): balances.get(c, {}).get(a, 0) for c in CLIENTS for a in DECIMALS}
        self.unsettled = {(c, a): 0 for c in CLIENTS for a in DECIMALS}
        self.fee_account = dict.fromkeys(DECIMALS, 0)
        self.stopped_by_stp = False  # the last command's matching met the self-trade rule
        self.latency_entry = self.latency_cancel = 0
        self.timers: list[tuple[int, int, str, int]] = []  # (due, sequence, action, order id)
        self.timer_seq = 0
        self.next_sweep = (START // HOUR + 1) * HOUR

    # --- money ------------------------------------------------------------------------------------

    def hold_of(self, o: MOrder, lots: int | None = None, price: int | None = None) -> tuple[int, int, int]:
        """(asset, units held, of which fees) for ``o`` holding ``lots`` open at ``price`` (its own by default)."""
        spec = SPECS[o.inst]
        lots = o.open if lots is None else lots
        price = o.price if price is None else price
        if o.side == SELL:
            return spec.base, lots * spec.base_per_lot, 0
        if lots <= 0:
            return spec.quote, 0, 0
        rate = spec.maker if o.alo else spec.taker  # the highest fee rate the order can pay
        cost = ceil((o.cum_lt + lots * price) * spec.k) - o.paid
        fee = ceil(o.cum_fee + cost * rate) - o.fees_paid
        return spec.quote, cost + fee, fee

    def held(self, client: int, asset: int) -> tuple[int, int]:
        """(hold, fees hold) of a client in an asset: the sum over its working orders."""
        hold = fees = 0
        for o in self.orders.values():
            if o.client == client and o.status in HOLDING:
                a, units, fee = self.hold_of(o)
                if a == asset:
                    hold, fees = hold + units, fees + fee
        return hold, fees

    def available(self, client: int, asset: int) -> int:
        return self.total[(client, asset)] - self.held(client, asset)[0]

    def cannot_afford(self, o: MOrder, lots: int, price: int, already: int = 0) -> bool:
        asset, units, _ = self.hold_of(o, lots, price)
        return units - already > self.available(o.client, asset)

    def fill(self, maker: MOrder, taker: MOrder, lots: int) -> None:
        spec = SPECS[maker.inst]
        price = maker.price
        buyer, seller = (maker, taker) if maker.side == BUY else (taker, maker)
        buyer.cum_lt += lots * price
        paid = ceil(buyer.cum_lt * spec.k)
        quote, buyer.paid = paid - buyer.paid, paid
        seller.paid += quote
        fees = {}
        for o in (buyer, seller):
            o.cum_fee += quote * (spec.maker if o is maker else spec.taker)
            fees[o.id] = ceil(o.cum_fee) - o.fees_paid
            o.fees_paid += fees[o.id]
        self.total[(buyer.client, spec.quote)] -= quote + fees[buyer.id]
        self.unsettled[(buyer.client, spec.quote)] += fees[buyer.id]
        self.total[(buyer.client, spec.base)] += lots * spec.base_per_lot
        self.total[(seller.client, spec.base)] -= lots * spec.base_per_lot
        self.total[(seller.client, spec.quote)] += quote - fees[seller.id]
        self.unsettled[(seller.client, spec.quote)] += fees[seller.id]
        maker.executed += lots
        taker.executed += lots
        self.trades.append((price, lots, maker.id, taker.id, quote, fees[maker.id], fees[taker.id]))
        self.last[maker.inst] = price

    def transfer(self, client: int, asset: int, units: int, deposit: bool) -> bool:
        """A transfer settled at once; False (REJECTED) for a withdrawal beyond the available balance."""
        if not deposit and units > self.available(client, asset):
            return False
        self.total[(client, asset)] += units if deposit else -units
        return True

    # --- the book ---------------------------------------------------------------------------------

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
        """Best opposite price moved by the band (BUY floored, SELL ceiled); flagged: the more aggressive
        of that and the band's far edge around the reference price."""
        best = self.best(inst, SELL if side == BUY else BUY)
        if best is None:
            return None
        band = self.band[inst]
        ref = self.reference(inst) if aggressive else None
        if side == BUY:
            price = floor(best * (1 + band))
            return price if ref is None else max(price, floor(ref * (1 + band)))
        price = max(1, ceil(best * (1 - band)))
        return price if ref is None else min(price, max(1, ceil(ref * (1 - band))))

    def would_trade(self, inst: int, side: str, price: int) -> bool:
        best = self.best(inst, SELL if side == BUY else BUY)
        return best is not None and (best <= price if side == BUY else best >= price)

    def stp_of(self, o: MOrder) -> str:
        return o.stp if o.stp is not None else self.client_stp[o.client]

    def rest(self, o: MOrder) -> None:
        self.seq += 1
        o.seq = self.seq
        self.resting[o.id] = o

    def end(self, o: MOrder, status: str, reason: str | None = None) -> None:
        o.status = status
        o.reason = reason
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
                    self.end(m, CANCELED, "SELF_TRADE_PREVENTION")
                self.stopped_by_stp = True
                return True
            self.fill(m, t, min(t.open, m.open))
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
        elif stopped:
            self.end(o, CANCELED, "SELF_TRADE_PREVENTION")
        elif o.type == "MARKET":
            self.end(o, CANCELED, "MARKET_REMAINDER")
        elif o.tif == "IOC":
            self.end(o, CANCELED, "IOC_REMAINDER")
        else:
            self.rest(o)

    # --- commands ---------------------------------------------------------------------------------

    def place(self, oid: int, cmd: PlaceOrder, now: int, created: int, price: int, lots: int) -> str | None:
        market = cmd.type == "MARKET"
        o = MOrder(
            oid,
            cmd.client_id,
            cmd.instrument_id,
            cmd.side,
            cmd.type,
            cmd.tif,
            0 if market else price,
            lots,
            "ALO" in cmd.exec_inst,
            cmd.stp,
            cmd.external_id,
            created,
            status="INITIALIZED",
            aon="AON" in cmd.exec_inst,
            aggressive="USE_AGGRESSIVE_PRICING" in cmd.flags,
        )
        self.orders[oid] = o
        reason = self._entry_reject(o, cmd)  # the order holds nothing while it is checked
        if reason is not None:
            o.status = REJECTED
            if o.ext is not None and o.ext not in self.live_ext[o.client]:
                self.by_ext[o.client][o.ext] = oid
            return reason
        if o.ext is not None:
            self.live_ext[o.client][o.ext] = self.by_ext[o.client][o.ext] = oid
        if self.latency_entry:
            o.status = "NEW_PENDING"
            self.schedule(now + self.latency_entry, "ack_entry", oid)
        else:
            self.activate(o)
        return None

    def activate(self, o: MOrder) -> None:
        o.status = "ACTIVE"
        if o.aon and not self.aon_fillable(o):
            self.end(o, CANCELED, "AON_NOT_FILLABLE")
        else:
            self.trade_or_rest(o)

    def schedule(self, due: int, action: str, oid: int) -> None:
        self.timer_seq += 1
        self.timers.append((due, self.timer_seq, action, oid))

    def ack_entry(self, o: MOrder) -> None:
        if o.status != "NEW_PENDING":
            return
        status = self.status[o.inst]
        if status in ("DISABLED", "HALTED"):
            self.end(o, CANCELED, "INSTRUMENT_" + status)
            return
        if o.type == "MARKET":
            prot = self.protection(o.inst, o.side, o.aggressive)
            if prot is None:
                self.end(o, CANCELED, "NO_LIQUIDITY")
                return
            o.price = min(prot, o.price) if o.side == BUY else prot  # a BUY spends no more than it held
        elif o.alo and self.would_trade(o.inst, o.side, o.price):
            self.end(o, CANCELED, "ALO_WOULD_TRADE")
            return
        self.activate(o)

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
        elif not self.in_band(o.inst, o.price):
            return "PRICE_OUTSIDE_BAND"
        if o.alo and self.would_trade(o.inst, o.side, o.price):
            return "ALO_WOULD_TRADE"
        if self.cannot_afford(o, o.qty, o.price):
            return "INSUFFICIENT_BALANCE"
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
            return "ORDER_PENDING" if o.status in HOLDING else "ORDER_NOT_ACTIVE"
        status = self.status[o.inst]
        if status in ("DISABLED", "HALTED"):
            return "INSTRUMENT_" + status
        if new_qty < 0:
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
            if self.cannot_afford(o, new_qty - o.executed, new_price, self.hold_of(o)[1]):
                return "INSUFFICIENT_BALANCE"
        if new_qty <= o.executed:
            self.end(o, CANCELED, "MODIFIED_TO_EXECUTED")
        elif new_price == o.price and new_qty <= o.qty and not to_market:
            o.qty = new_qty  # keeps its place
        else:
            del self.resting[o.id]
            o.qty, o.price = new_qty, new_price
            if to_market:
                o.type = "MARKET"
            self.trade_or_rest(o)
        return None

    def cancel(self, o: MOrder | None, now: int) -> str | None:
        if o is None:
            return "UNKNOWN_ORDER"
        if o.status != "ACTIVE":
            return "ORDER_PENDING" if o.status in HOLDING else "ORDER_NOT_ACTIVE"
        if self.latency_cancel:
            o.status = "CANCEL_PENDING"  # stays in the book and may still trade
            self.schedule(now + self.latency_cancel, "ack_cancel", o.id)
        else:
            self.end(o, CANCELED, "REQUESTED")
        return None

    def advance(self, to: int) -> None:
        """Let engine time pass to ``to``: acknowledgements, expiries and fee sweeps in time order (at
        one instant: acknowledgements, then expiries, then the sweep)."""
        while True:
            due: list[tuple[int, int, int, str, int]] = []
            if self.timers:
                t, seq, action, oid = min(self.timers)
                due.append((t, 0, seq, action, oid))
            if self.resting:  # GTC orders in the book expire 30 days after entry, oldest first
                o = min(self.resting.values(), key=lambda o: o.created)
                due.append((o.created + GTC_LIFE, 1, 0, "expire", o.id))
            due.append((self.next_sweep, 2, 0, "sweep", 0))
            t, _, seq, action, oid = min(due)
            if t > to:
                return
            if action == "sweep":
                for (c, a), units in self.unsettled.items():  # fees go to the venue's account every hour
                    self.fee_account[a] += units
                    self.unsettled[(c, a)] = 0
                self.next_sweep += HOUR
            elif action == "expire":
                self.end(self.orders[oid], CANCELED, "EXPIRED")
            else:
                self.timers.remove(min(self.timers))
                o = self.orders[oid]
                if action == "ack_entry":
                    self.ack_entry(o)
                elif o.status == "CANCEL_PENDING":
                    self.end(o, CANCELED, "REQUESTED")

    def set_status(self, inst: int, status: str) -> None:
        self.status[inst] = status
        if status == "DISABLED":
            for o in [o for o in self.resting.values() if o.inst == inst]:
                self.end(o, CANCELED, "INSTRUMENT_DISABLED")
            self.opening[inst] = False
        elif status == "OPENING":
            self.opening[inst] = True
        elif status == "ACTIVE" and self.opening[inst]:
            self.opening[inst] = False
            self.uncross(inst)

    def uncross(self, inst: int) -> None:
        """The best bid meets the best ask until the book no longer crosses: the one that joined later
        takes from the other, at the other's price (self-trade prevention as the taker's)."""
        while True:
            bids, asks = self.rows(inst, BUY), self.rows(inst, SELL)
            if not bids or not asks or bids[0].price < asks[0].price:
                return
            taker, maker = (bids[0], asks[0]) if bids[0].seq > asks[0].seq else (asks[0], bids[0])
            if taker.client == maker.client and self.stp_of(taker) != "NONE":
                if self.stp_of(taker) == "CANCEL_BOTH":
                    self.end(maker, CANCELED, "SELF_TRADE_PREVENTION")
                self.end(taker, CANCELED, "SELF_TRADE_PREVENTION")
                continue
            self.fill(maker, taker, min(taker.open, maker.open))
            for o in (maker, taker):
                if not o.open:
                    self.end(o, FILLED)
