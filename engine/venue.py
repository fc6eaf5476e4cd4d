"""The venue: the one writer. Every state change is ``submit(command, at=ns)``.

Contract:
- ``submit`` first moves the engine clock to ``at`` (firing every timer due on the way: latency
  acknowledgements, GTC expiry, transfer settlement, fee settlement, housekeeping), then applies the
  command and returns a :class:`Result`: the order or transfer it touched, the typed reject reason if
  it was refused, and the events it produced, in order. Nothing else comes out: the engine journals
  nothing and calls no one back. Whoever journals (the runtime, ``api/runtime/simulation.py``) writes
  the pair (``applies_at(command, at)``, command) first and then submits (``docs/journal.md``).
- The same sequence of (at, command) pairs on a venue built from the same reference data gives the
  same events, ids and timestamps: ids come from counters, time from the engine clock, and nothing
  iterates a set or reads the wall.
- Reads (``engine/queries.py``, ``engine/quotes.py``) never change state.

Events are the typed records of ``engine/events.py`` (an order's status, a trade, a transfer, an
instrument's status, paper funds, settled fees, a client's STP setting, a recorded market's book change).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from . import entry, modify, retention, transfers
from .book import Book
from .clock import NS_PER_DAY, NS_PER_SECOND, Clock
from .commands import (
    AdvanceClock, CancelOrder, Command, ModifyOrder, PaperFunds, PlaceOrder, RequestTransfer,
    SetClientInfo, SetInstrumentStatus, SetLatency, SetSettlementDelay, SetStatusRetention,
)
from .events import ClientEvent, Event, FeesSettledEvent, InstrumentEvent
from .ledger import Balance, open_qty, order_hold
from .matching import balance
from .order import NO_FILLS, Execution, Order
from .records import Transfer
from .reference import Asset, Client, Instrument
from .rejects import Reject
from .vocabulary import FINAL, WORKING, InstrumentStatus, SelfTradePrevention, TransferStatus, TransferType

DEPOSIT = TransferType.DEPOSIT.value
T_INITIALIZED = TransferStatus.INITIALIZED.value
ACTIVE = InstrumentStatus.ACTIVE.value
DISABLED = InstrumentStatus.DISABLED.value
OPENING = InstrumentStatus.OPENING.value
STP_VALUES = tuple(SelfTradePrevention)



@dataclass
class VenueConfig:
    gtc_life_ns: int = 30 * NS_PER_DAY
    status_retention_ns: int = NS_PER_DAY  # how long an ended order's status can be looked up
    listing_window_ns: int = NS_PER_DAY  # "last 24 hours" of the listings
    fee_settlement_interval_ns: int = 3600 * NS_PER_SECOND
    max_open_orders: int | None = 10_000  # per client and instrument
    max_venue_open_orders: int | None = None  # of every client and instrument together; None: no limit
    # ended orders kept for status lookups and listings, within status_retention_ns: the oldest are
    # forgotten first once a client, or the venue, holds more (docs/limits.md: bounded memory)
    max_ended_orders_per_client: int = 100_000
    max_ended_orders: int = 500_000


class Result:
    __slots__ = ("events", "order", "reject", "transfer", "snapshot_status")

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.order: Order | None = None
        self.reject: Reject | None = None
        self.transfer: Transfer | None = None
        self.snapshot_status: str | None = None  # the status to report when it differs from now

    @property
    def ok(self) -> bool:
        return self.reject is None

    def __repr__(self) -> str:
        return f"Result(reject={self.reject}, order={self.order!r}, events={len(self.events)})"


class Venue:
    _cap_check_at = 0  # (a venue restored from an older snapshot checks its caps at its next command)
    # recorded markets (engine/recorded.py): sources of book changes due at their own times. A class
    # default, so that a venue without one carries no such attribute (its snapshot is unchanged)
    feeds: tuple[Any, ...] = ()

    def __init__(self, start_ns: int, config: VenueConfig | None = None):
        self.config = config or VenueConfig()
        self.clock = Clock(start_ns)
        self.assets: dict[int, Asset] = {}
        self.instruments: dict[int, Instrument] = {}
        self.books: dict[int, Book] = {}
        self.clients: dict[int, Client] = {}
        self.fee_account: dict[int, int] = {}
        self.next_order_id = 1
        self.next_match_id = 1
        self.next_transfer_id = 1
        self.latency_entry_ns = 0
        self.latency_modify_ns = 0
        self.latency_cancel_ns = 0
        self.settlement_delay_ns = 0
        self._timers: list[tuple[int, int, str, Any]] = []
        self._timer_seq = 0
        self.gtc_queue: deque[Order] = deque()
        interval = self.config.fee_settlement_interval_ns
        self._next_housekeeping = (start_ns // interval + 1) * interval
        # nothing falls due before this engine time, so submit() moves the clock without looking:
        # a lower bound of next_due(), lowered by schedule() and by a GTC order that may expire
        # before the orders queued (entry.activate), and exact again after _advance()
        self._wake = self._next_housekeeping
        self._cap_check_at = retention.CHECK_EVERY  # the order id at which the ended-order caps are next checked
        self.bind_handlers()

    def bind_handlers(self) -> None:
        """The command dispatch table (rebuilt after a snapshot is restored: it is wiring, not state)."""
        # functions of (venue, command, result): order entry is called without a bound method or a
        # partial in between
        self._handlers: dict[type, Callable[[Venue, Any, Result], Result]] = {
            PlaceOrder: entry.place,
            ModifyOrder: modify.modify,
            CancelOrder: entry.cancel,
            SetClientInfo: Venue._set_client_info,
            RequestTransfer: transfers.request_transfer,
            PaperFunds: transfers.paper_funds,
            SetInstrumentStatus: Venue._set_instrument_status,
            SetLatency: Venue._set_latency,
            SetSettlementDelay: Venue._set_settlement_delay,
            SetStatusRetention: Venue._set_status_retention,
            AdvanceClock: lambda v, c, r: r,  # the move happens in submit()
        }

    # --- reference data (set up before the first command; not journaled) -------------------

    def add_asset(self, asset: Asset) -> None:
        self.assets[asset.id] = asset
        self.fee_account.setdefault(asset.id, 0)

    def add_instrument(self, inst: Instrument) -> None:
        self.instruments[inst.id] = inst
        self.books[inst.id] = book = Book(inst.id)
        if inst.status == OPENING:
            book.opening = {}

    def add_client(self, client: Client) -> None:
        self.clients[client.id] = client

    def add_feed(self, feed: Any) -> None:
        """A recorded market (``engine/recorded.py``): its events are applied as the clock passes them;
        those due by now at once (the book the venue starts with: set-up, like reference data)."""
        self.feeds = (*self.feeds, feed)
        feed.apply_until(self.clock.now, [])
        due = feed.next_ts
        if due is not None and due < self._wake:
            self._wake = due

    def credit(self, client_id: int, asset_id: int, units: int) -> None:
        """Opening balance of a client (scenario setup)."""
        balance(self.clients[client_id], asset_id).total += units

    # --- the one entry point ----------------------------------------------------------------

    def applies_at(self, cmd: Command, at: int | None = None) -> int:
        """The engine time ``submit(cmd, at)`` applies ``cmd`` at: ``at`` (an ``AdvanceClock``: the later
        of ``at`` and its target), never before the clock; ``now`` when ``at`` is None. A journal records
        this time, before the command is submitted. Reads nothing but the clock."""
        if isinstance(cmd, AdvanceClock) and (at is None or cmd.to_ns > at):
            at = cmd.to_ns
        now = self.clock.now
        return now if at is None or at < now else at

    def submit(self, cmd: Command, at: int | None = None) -> Result:
        """Move the engine clock to ``at`` (firing what falls due on the way), then apply ``cmd``, at the
        time :meth:`applies_at` gives."""
        result = Result()
        kind = type(cmd)
        # applies_at, written out: a call more per command on the order-entry hot path
        if kind is AdvanceClock:
            at = cmd.to_ns if at is None or cmd.to_ns > at else at  # type: ignore[union-attr]
        clock = self.clock
        now = clock.now
        if at is None or at < now:
            at = now
        if at > now:
            if at < self._wake:
                clock.now = at  # nothing is due on the way
            else:
                self._advance(at, result.events)
        self._handlers[kind](self, cmd, result)
        if self.next_order_id >= self._cap_check_at:
            retention.cap_ended_orders(self)
        return result

    # --- timers -----------------------------------------------------------------------------

    def schedule(self, due: int, action: str, payload: Any) -> None:
        self._timer_seq += 1
        heapq.heappush(self._timers, (due, self._timer_seq, action, payload))
        if due < self._wake:
            self._wake = due

    def quiet_until(self) -> int:
        """Nothing falls due before this engine time (a lower bound of :meth:`next_due`, read without
        touching any state: ``next_due`` drops ended orders from the expiry queue as it looks)."""
        return self._wake

    def next_due(self) -> int | None:
        """The engine time at which something will happen on its own, if any."""
        dues = [self._next_housekeeping]
        if self._timers:
            dues.append(self._timers[0][0])
        expiry = self._next_expiry()
        if expiry is not None:
            dues.append(expiry)
        for feed in self.feeds:
            if feed.next_ts is not None:
                dues.append(feed.next_ts)
        return min(dues)

    def _next_expiry(self) -> int | None:
        queue = self.gtc_queue
        life = self.config.gtc_life_ns
        while queue and queue[0].status in FINAL:
            queue.popleft()
        return queue[0].created + life if queue else None

    def _advance(self, to_ns: int, events: list[Event]) -> None:
        clock = self.clock
        while True:
            due = to_ns + 1
            kind = ""
            if self._timers and self._timers[0][0] < due:
                due, kind = self._timers[0][0], "timer"
            expiry = self._next_expiry()
            if expiry is not None and expiry < due:
                due, kind = expiry, "expiry"
            if self._next_housekeeping < due:
                due, kind = self._next_housekeeping, "housekeeping"
            feed_due = None
            bound = due  # a feed applies everything before the next other thing due
            for feed in self.feeds:
                ts = feed.next_ts
                if ts is not None and ts < due:
                    bound = due
                    due, kind, feed_due = ts, "feed", feed
                elif ts is not None and ts < bound:
                    bound = ts
            if not kind:
                break
            clock.advance(due)
            if kind == "timer":
                _, _, action, payload = heapq.heappop(self._timers)
                self._fire(action, payload, events)
            elif feed_due is not None:
                feed_due.apply_until(bound - 1, events)
            elif kind == "expiry":
                order = self.gtc_queue.popleft()
                if order.status in WORKING:
                    entry.cancel_now(self, order, "EXPIRED", events)
            else:
                self._housekeeping(events)
                self._next_housekeeping = self._housekeeping_after(due, to_ns)
        clock.advance(to_ns)
        self._wake = self.next_due()  # type: ignore[assignment]  # never None: housekeeping recurs

    def _housekeeping_after(self, done: int, to_ns: int) -> int:
        """The next housekeeping time after the one at ``done``.

        Hours in which nothing happens (no timer, no expiry, no command: all before ``to_ns``) are
        skipped: housekeeping at the last of them does what every one of them would have, so a jump of
        years costs two housekeepings, not one per hour.
        """
        interval = self.config.fee_settlement_interval_ns
        following = done + interval
        quiet_until = to_ns
        if self._timers:
            quiet_until = min(quiet_until, self._timers[0][0])
        expiry = self._next_expiry()
        if expiry is not None:
            quiet_until = min(quiet_until, expiry)
        for feed in self.feeds:
            if feed.next_ts is not None:
                quiet_until = min(quiet_until, feed.next_ts)
        return max(following, quiet_until // interval * interval)

    def _fire(self, action: str, payload: Any, events: list[Event]) -> None:
        if action == "ack_entry":
            entry.ack_entry(self, payload, events)
        elif action == "ack_cancel":
            entry.ack_cancel(self, payload, events)
        elif action == "ack_modify":
            order, qty, price, to_market = payload
            modify.apply_modify(self, order, qty, price, to_market, events)
        elif action == "settle_transfer":
            transfers.settle_transfer(self, payload, events)
        else:  # pragma: no cover - a bug, not an input
            raise AssertionError(f"unknown timer action {action}")

    def _housekeeping(self, events: list[Event]) -> None:
        """Sweep unsettled fees to the venue's fee account and forget what retention allows."""
        ts = None
        for asset_id in self.assets:
            swept = 0
            for client in self.clients.values():
                bal = client.balances.get(asset_id)
                if bal is not None and bal.unsettled_fees:
                    swept += bal.unsettled_fees
                    bal.unsettled_fees = 0
            if swept:
                self.fee_account[asset_id] += swept
                ts = self.clock.stamp()
                events.append(FeesSettledEvent(ts, asset_id, swept))
        retention.forget(self)

    # --- commands other than order entry ----------------------------------------------------

    def _set_client_info(self, cmd: SetClientInfo, result: Result) -> Result:
        client = self.clients.get(cmd.client_id)
        if client is None:
            result.reject = Reject.UNKNOWN_CLIENT
            return result
        if cmd.self_trade_prevention not in STP_VALUES:
            result.reject = Reject.STP_INVALID
            return result
        client.self_trade_prevention = cmd.self_trade_prevention
        result.events.append(ClientEvent(self.clock.stamp(), client.id, cmd.self_trade_prevention))
        return result

    def _set_latency(self, cmd: SetLatency, result: Result) -> Result:
        self.latency_entry_ns = max(0, cmd.entry_ns)
        self.latency_modify_ns = max(0, cmd.modify_ns)
        self.latency_cancel_ns = max(0, cmd.cancel_ns)
        return result

    def _set_status_retention(self, cmd: SetStatusRetention, result: Result) -> Result:
        # a copy: the configuration object may be shared with the venue a reset builds
        self.config = replace(self.config, status_retention_ns=max(0, cmd.retention_ns))
        return result

    def _set_settlement_delay(self, cmd: SetSettlementDelay, result: Result) -> Result:
        self.settlement_delay_ns = max(0, cmd.delay_ns)
        return result

    def _set_instrument_status(self, cmd: SetInstrumentStatus, result: Result) -> Result:
        inst = self.instruments.get(cmd.instrument_id)
        if inst is None:
            result.reject = Reject.UNKNOWN_INSTRUMENT
            return result
        inst.status = cmd.status
        events = result.events
        events.append(InstrumentEvent(self.clock.stamp(), inst.id, cmd.status))
        book = self.books[inst.id]
        if cmd.status == DISABLED:
            for order in book.resting_orders():
                entry.cancel_now(self, order, "INSTRUMENT_DISABLED", events)
            book.opening = None
        elif cmd.status == OPENING:
            if book.opening is None:
                book.opening = {}
        elif cmd.status == ACTIVE and book.opening is not None:
            # from OPENING, possibly by way of HALTED: the book may be crossed
            entry.uncross(self, book, events)
        return result

    # --- checks -----------------------------------------------------------------------------

    def asset_totals(self) -> dict[int, int]:
        """Per asset: every client's total plus unsettled fees plus the fee account."""
        totals = dict(self.fee_account)
        for client in self.clients.values():
            for asset_id, bal in client.balances.items():
                totals[asset_id] = totals.get(asset_id, 0) + bal.total + bal.unsettled_fees
        return totals

    def check_invariants(self) -> None:
        """Assert every structural and ledger invariant (tests call this after every step)."""
        expected_hold: dict[tuple[int, int], list[int]] = {}
        for client in self.clients.values():
            counts: dict[int, int] = {}
            for order in client.orders.values():
                asset_id, held, fee_held = order_hold(order)
                if held:
                    slot = expected_hold.setdefault((client.id, asset_id), [0, 0])
                    slot[0] += held
                    slot[1] += fee_held
                if order.status not in FINAL:
                    counts[order.instrument.id] = counts.get(order.instrument.id, 0) + 1
                    assert 0 <= order.executed < order.qty or order.status == OrderStatus.INITIALIZED, order
                assert order.remaining >= 0 and (order.execution is None or order.executed > 0), order
                book = self.books[order.instrument.id]
                assert book.contains(order) == (order.status in WORKING), f"{order!r} vs book"
                assert open_qty(order) >= 0
            for inst_id, n in client.open_orders.items():
                assert n == counts.get(inst_id, 0), f"client {client.id} open orders {n} != {counts}"
            for transfer in client.transfers.values():
                if transfer.status == T_INITIALIZED and transfer.type != DEPOSIT:
                    slot = expected_hold.setdefault((client.id, transfer.asset.id), [0, 0])
                    slot[0] += transfer.amount
            for asset_id, bal in client.balances.items():
                assert bal.total >= 0, f"client {client.id} asset {asset_id}: negative total {bal!r}"
                assert 0 <= bal.hold <= bal.total, f"client {client.id} asset {asset_id}: {bal!r}"
                assert 0 <= bal.fees_hold <= bal.hold, f"client {client.id} asset {asset_id}: {bal!r}"
                assert bal.unsettled_fees >= 0
                want = expected_hold.get((client.id, asset_id), [0, 0])
                assert bal.hold == want[0], f"client {client.id} asset {asset_id}: hold {bal!r} != {want}"
                assert bal.fees_hold == want[1], f"client {client.id} asset {asset_id}: {bal!r} != {want}"
        for inst_id, book in self.books.items():
            book.check_invariants(allow_crossed=book.opening is not None)
        for feed in self.feeds:
            feed.check_invariants()
        assert not any(getattr(NO_FILLS, k) for k in Execution.__slots__), "NO_FILLS was written to"
        dues = [self._next_housekeeping] + [due for due, _, _, _ in self._timers[:1]]
        dues += [feed.next_ts for feed in self.feeds if feed.next_ts is not None]
        life = self.config.gtc_life_ns
        dues += [o.created + life for o in self.gtc_queue if o.status not in FINAL]
        assert self._wake <= min(dues), f"_wake {self._wake} is after something due at {min(dues)}"


__all__ = ["Venue", "VenueConfig", "Result", "Balance"]
