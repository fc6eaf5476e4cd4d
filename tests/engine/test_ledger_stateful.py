"""Random streams with small balances: the ledger invariants hold whatever happens.

No reference model here; the machine drives everything that moves money — orders of every kind with
and without ``hold_fee_rate``, modify, cancel, latency (NEW_PENDING, MODIFY_PENDING, CANCEL_PENDING),
instrument status changes, transfers with a settlement delay, paper funds, fee overrides where the
maker rate exceeds the taker rate, the hourly fee sweep — on clients that can barely afford their
orders, so INSUFFICIENT_BALANCE decides often. After every step:

- ``check_invariants()``: holds equal what open orders and pending withdrawals need, nothing negative;
- every asset total changed by exactly the paper funds and completed transfers of the step;
- a client's AVAILABLE never drops because of what someone else did (fills only release);
- a twin venue fed the step's journal entries gave the same events and state.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from cefisim.engine.commands import (
    AdvanceClock,
    CancelOrder,
    Command,
    ModifyOrder,
    PaperFunds,
    PlaceOrder,
    RequestTransfer,
    SetInstrumentStatus,
    SetLatency,
    SetSettlementDelay,
)
from cefisim.engine.events import FundsEvent, TransferEvent
from cefisim.engine.records import Transfer
from cefisim.engine.venue import Result, Venue
from cefisim.engine.vocabulary import OrderStatus, Side, TransferStatus, TransferType
from tests.engine.builders import (
    ALICE,
    BOB,
    BTC,
    BTC_USD,
    CAROL,
    DAVE,
    ETH,
    ETH_USD,
    HOUR,
    SECOND,
    USD,
    build_venue,
    state_hash,
)

ACTIVE = OrderStatus.ACTIVE
BUY = Side.BUY
SELL = Side.SELL
DEPOSIT = TransferType.DEPOSIT
T_COMPLETED = TransferStatus.COMPLETED

CLIENTS = (ALICE, BOB, CAROL, DAVE)
SMALL = {USD: 1_000, BTC: 300_000, ETH: 3 * 10**6}  # 10.00 USD, 30 lots of BTC-USD, 30 lots of ETH-USD
OVERRIDES = {CAROL: {BTC_USD: ("0.003", "0.001")}, BOB: {ETH_USD: ("0.002", "0")}}
MS = SECOND // 1000
PLACE_ARGS = dict(
    client=st.sampled_from(CLIENTS),
    inst=st.sampled_from([BTC_USD, ETH_USD]),
    buy=st.booleans(),
    lots=st.integers(1, 50),
    ticks=st.integers(-5, 20),
    market=st.sampled_from([False] * 4 + [True]),
    tif=st.sampled_from(["GTC"] * 4 + ["IOC"]),
    exec_inst=st.sampled_from([()] * 6 + [("ALO",), ("AON",)]),
    hold=st.sampled_from([None] * 5 + ["0.002", "0.003", "0.01", "0.0005"]),
    stp=st.sampled_from([None] * 5 + ["CANCEL_BOTH", "CANCEL_AGGRESSIVE"]),
)


def new_venue() -> Venue:
    return build_venue(balances={ALICE: SMALL, BOB: SMALL, CAROL: SMALL}, fee_overrides=OVERRIDES)


class Ledger(RuleBasedStateMachine):
    @initialize(latency=st.sampled_from([(5 * MS, 5 * MS, 5 * MS), (0, 0, 0), (0, 5 * MS, 0)]))
    def setup(self, latency: tuple[int, int, int]) -> None:
        self.journal: list[tuple[int, Command]] = []
        self.v = new_venue()
        self.twin = new_venue()
        self.replayed = 0
        self.totals = self.v.asset_totals()
        self.transfers: dict[int, Transfer] = {}
        self.submit(SetLatency(*latency), None)

    def available(self) -> dict[tuple[int, int], int]:
        return {(c.id, a): b.available for c in self.v.accounts.values() for a, b in c.balances.items()}

    def submit(self, cmd: Command, actor: int | None) -> Result:
        before = self.available()
        at = self.v.applies_at(cmd)  # journaled first, as the runtime does
        self.journal.append((at, cmd))
        result = self.v.submit(cmd, at)
        if result.transfer is not None:
            self.transfers[result.transfer.id] = result.transfer
        new = self.journal[self.replayed :]
        twin_events = []
        for at, c in new:
            twin_events += self.twin.submit(c, at=at).events
        self.replayed = len(self.journal)
        assert twin_events == result.events
        assert state_hash(self.twin) == state_hash(self.v)
        # money that came in or went out this step
        for e in result.events:
            if isinstance(e, FundsEvent):
                self.totals[e.asset_id] = self.totals.get(e.asset_id, 0) + e.units
            elif isinstance(e, TransferEvent) and e.status == T_COMPLETED:
                t = self.transfers[e.transfer_id]  # the venue may have forgotten it by now (retention)
                self.totals[t.asset.id] += t.amount if t.type == DEPOSIT else -t.amount
        if not isinstance(cmd, AdvanceClock):
            after = self.available()
            for (cid, aid), units in before.items():
                if cid != actor:
                    assert after.get((cid, aid), 0) >= units, (cid, aid, units, after.get((cid, aid)))
        return result

    def owner(self, n: int) -> tuple[int, int] | None:
        """(client, order id): mostly an ACTIVE order (one that can be modified), sometimes any order."""
        orders = [o for c in self.v.accounts.values() for o in c.orders.values()]
        live = [o for o in orders if o.status == ACTIVE]
        pool = live if live and n % 5 != 4 else orders
        if not pool:
            return None
        o = pool[n % len(pool)]
        return o.account.id, o.id

    def place(
        self,
        client: int,
        inst: int,
        buy: bool,
        lots: int,
        ticks: int,
        market: bool,
        tif: str,
        exec_inst: tuple[str, ...],
        hold: str | None,
        stp: str | None,
    ) -> None:
        i = self.v.instruments[inst]
        lots = lots if inst == BTC_USD else 10 + lots
        # buys mostly above 100.00 and sells below, so that they cross
        price = (
            None if market else i.price_grid.format((10_000 if inst == BTC_USD else 2_000) + (ticks if buy else -ticks))
        )
        if (market and "ALO" in exec_inst) or (not market and "AON" in exec_inst):
            exec_inst = ()
        cmd = PlaceOrder(
            client,
            inst,
            BUY if buy else SELL,
            "MARKET" if market else "LIMIT",
            i.qty_grid.format(lots),
            price,
            tif=tif,
            exec_inst=exec_inst,
            stp=stp,
            hold_fee_rate=hold,
        )
        self.submit(cmd, client)

    @rule(**PLACE_ARGS)
    def place_order(self, **kw) -> None:  # type: ignore[no-untyped-def]
        self.place(**kw)

    @rule(**PLACE_ARGS)
    def place_another(self, **kw) -> None:  # type: ignore[no-untyped-def]
        self.place(**kw)

    @rule(**PLACE_ARGS)
    def place_third(self, **kw) -> None:  # type: ignore[no-untyped-def]
        self.place(**kw)

    @rule(
        n=st.integers(0, 1000),
        lots=st.integers(0, 60),
        ticks=st.one_of(st.none(), st.integers(-20, 20)),
        to_market=st.sampled_from([False] * 6 + [True]),
    )
    def modify_again(self, n: int, lots: int, ticks: int | None, to_market: bool) -> None:
        self.modify(n, lots, ticks, to_market)

    @rule(
        n=st.integers(0, 1000),
        lots=st.integers(0, 60),
        ticks=st.one_of(st.none(), st.integers(-20, 20)),
        to_market=st.sampled_from([False] * 6 + [True]),
    )
    def modify(self, n: int, lots: int, ticks: int | None, to_market: bool) -> None:
        found = self.owner(n)
        if found is None:
            return
        client, oid = found
        o = self.v.accounts[client].orders[oid]
        i = o.instrument
        base = 10_000 if i.id == BTC_USD else 2_000
        price = None if ticks is None or to_market else i.price_grid.format(base + ticks)
        self.submit(
            ModifyOrder(client, oid, None, i.qty_grid.format(lots), price, new_type="MARKET" if to_market else None),
            client,
        )

    @rule(n=st.integers(0, 1000))
    def cancel(self, n: int) -> None:
        found = self.owner(n)
        if found is not None:
            self.submit(CancelOrder(found[0], str(found[1])), found[0])

    # the commands that set the scene share one rule, so that orders make most of a stream

    @rule(
        what=st.sampled_from(["advance", "latency", "advance", "status"]),
        delta=st.sampled_from([5 * MS, MS, 3 * MS, SECOND, HOUR, 31 * 24 * HOUR]),
        entry=st.sampled_from([5 * MS, 0]),
        modify=st.sampled_from([5 * MS, 0]),
        cancel=st.sampled_from([5 * MS, 0]),
        inst=st.sampled_from([BTC_USD, ETH_USD]),
        status=st.sampled_from(["OPENING", "ACTIVE", "HALTED", "ACTIVE"]),
    )
    def scene(self, what: str, delta: int, entry: int, modify: int, cancel: int, inst: int, status: str) -> None:
        if what == "advance":
            self.submit(AdvanceClock(self.v.clock.now + delta), None)
        elif what == "latency":
            self.submit(SetLatency(entry, modify, cancel), None)
        else:
            self.submit(SetInstrumentStatus(inst, status), None)

    @rule(
        client=st.sampled_from(CLIENTS),
        asset=st.sampled_from([USD, BTC, ETH]),
        units=st.integers(1, 2_000),
        what=st.sampled_from(["deposit", "withdraw", "add", "remove"]),
        delay=st.sampled_from([None, 0, 2 * MS]),
    )
    def money(self, client: int, asset: int, units: int, what: str, delay: int | None) -> None:
        if delay is not None:
            self.submit(SetSettlementDelay(delay), None)
        amount = self.v.assets[asset].grid.format(units)
        if what in ("deposit", "withdraw"):
            cmd: Command = RequestTransfer(client, asset, amount, what.upper(), "FIAT")
        else:
            cmd = PaperFunds(client, asset, amount, remove=what == "remove")
        self.submit(cmd, client)

    @invariant()
    def ledger(self) -> None:
        if not hasattr(self, "v"):
            return
        self.v.check_invariants()
        assert self.v.asset_totals() == self.totals

    def teardown(self) -> None:
        if not hasattr(self, "v"):
            return
        fresh = new_venue()
        for at, cmd in self.journal:
            fresh.submit(cmd, at=at)
        assert state_hash(fresh) == state_hash(self.v)


Ledger.TestCase.settings = settings(
    max_examples=120,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestLedger = Ledger.TestCase
