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

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from cefisim.engine import lifecycle, modify, opening, retention, transfers
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
    SetStatusRetention,
    VenueCancel,
)
from cefisim.engine.core import Result, VenueConfig, VenueCore
from cefisim.engine.entry import cancel, place
from cefisim.engine.events import ClientEvent, Event, InstrumentEvent
from cefisim.engine.ledger import open_qty, order_hold
from cefisim.engine.records import NO_FILLS, Execution, UnheldBalance
from cefisim.engine.rejects import Reject
from cefisim.engine.timers import advance
from cefisim.engine.vocabulary import (
    FINAL,
    WORKING,
    InstrumentStatus,
    OrderStatus,
    SelfTradePrevention,
    TransferStatus,
    TransferType,
)

STP_VALUES = tuple(SelfTradePrevention)


class Venue(VenueCore):
    """The venue: its state (:class:`~engine.core.VenueCore`), the one entry point ``submit`` and the
    commands other than order entry, modify, cancel and transfers (which have modules of their own)."""

    def __init__(self, start_ns: int, config: VenueConfig | None = None):
        super().__init__(start_ns, config)
        self.bind_handlers()

    def restored(self) -> None:
        """Rebuild what a snapshot leaves out (``api/runtime/snapshot.py``): the command table."""
        self.bind_handlers()

    def bind_handlers(self) -> None:
        """The command dispatch table (rebuilt after a snapshot is restored: it is wiring, not state)."""
        # functions of (venue, command, result), without a bound method or a partial in between; order
        # entry and cancel are not here: submit_at calls them by name (a direct C call when compiled), and
        # an AdvanceClock's whole work is submit_at's move of the clock
        self._handlers: dict[type, Callable[[Venue, Any, Result], Result]] = {
            ModifyOrder: modify.modify,
            SetClientInfo: Venue._set_client_info,
            RequestTransfer: transfers.request_transfer,
            PaperFunds: transfers.paper_funds,
            SetInstrumentStatus: Venue._set_instrument_status,
            SetLatency: Venue._set_latency,
            SetSettlementDelay: Venue._set_settlement_delay,
            SetStatusRetention: Venue._set_status_retention,
            VenueCancel: Venue._venue_cancel,
        }

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
        return self.submit_at(cmd, self.applies_at(cmd, at))

    def submit_at(self, cmd: Command, at: int) -> Result:
        """:meth:`submit`, given the time :meth:`applies_at` gave already: a journal that records the
        time before the command applies asks for it once, not once more here."""
        result = Result()
        clock = self.clock
        if at > clock.now:
            if at < self._wake:
                clock.now = at  # nothing is due on the way
            else:
                advance(self, at, result.events)
        if isinstance(cmd, PlaceOrder):
            place(self, cmd, result)
        elif isinstance(cmd, CancelOrder):
            cancel(self, cmd, result)
        elif not isinstance(cmd, AdvanceClock):  # (an AdvanceClock is the move above)
            self._handlers[type(cmd)](self, cmd, result)
        if self.next_order_id >= self._cap_check_at:
            self.cap_checked()
            retention.cap_ended_orders(self)
        return result

    def advance_steps(self, at: int, result: Result, budget: int) -> Iterator[None]:
        """``submit_at(AdvanceClock(at), at)`` in steps, its events gathered in ``result``: yields after
        each step of about ``budget`` recorded events and passes (``timers.advance``), stopped where the
        whole command also passes; nothing may be applied to the venue until the steps are done. The
        result then is the one ``submit_at`` returns, events included (a journal holds the one command,
        and its replay may apply it whole)."""
        events = result.events
        if at > self.clock.now and at >= self._wake:  # (submit_at's test: otherwise nothing is due)
            while not advance(self, at, events, budget):
                yield
        events += self.submit_at(AdvanceClock(at), at).events  # (the clock is there: the command's end)

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
        if cmd.status == InstrumentStatus.DISABLED:
            for order in book.resting_orders():
                lifecycle.cancel_now(self, order, "INSTRUMENT_DISABLED", events)
            book.opening = None
        elif cmd.status == InstrumentStatus.OPENING:
            if book.opening is None:
                book.opening = {}
        elif cmd.status == InstrumentStatus.ACTIVE and book.opening is not None:
            # from OPENING, possibly by way of HALTED: the book may be crossed
            if self.rules >= 2:
                opening.uncross(self, book, events)
            else:
                opening.uncross_in_arrival_order(self, book, events)
        return result

    def _venue_cancel(self, cmd: VenueCancel, result: Result) -> Result:
        """Off the hot path: a fault the control plane or a scenario injects (``docs/faults.md``)."""
        if cmd.client_id is not None and cmd.client_id not in self.accounts:
            result.reject = Reject.UNKNOWN_CLIENT
            return result
        if cmd.instrument_id is not None and cmd.instrument_id not in self.books:
            result.reject = Reject.UNKNOWN_INSTRUMENT
            return result
        ids = sorted(self.books) if cmd.instrument_id is None else [cmd.instrument_id]
        for inst_id in ids:
            for order in self.books[inst_id].resting_orders():
                if cmd.client_id is None or order.account.id == cmd.client_id:
                    lifecycle.cancel_now(self, order, cmd.reason, result.events)
        return result

    # --- checks -----------------------------------------------------------------------------

    def asset_totals(self) -> dict[int, int]:
        """Per asset: every account's total plus unsettled fees plus the fee account."""
        totals = dict(self.fee_account)
        for account in self.accounts.values():
            for asset_id, bal in account.balances.items():
                totals[asset_id] = totals.get(asset_id, 0) + bal.total + bal.unsettled_fees
        return totals

    def check_invariants(self) -> None:
        """Assert every structural and ledger invariant (tests call this after every step)."""
        expected_hold: dict[tuple[int, int], list[int]] = {}
        assert list(self.accounts) == list(self.clients), "an account per client, in the clients' order"
        for account in self.accounts.values():
            assert account.client is self.clients[account.id], f"account {account.id} of another client"
            counts: dict[int, int] = {}
            for order in account.orders.values():
                assert order.account is account, f"{order!r} listed in another account"
                asset_id, held, fee_held = order_hold(order)
                if held:
                    slot = expected_hold.setdefault((account.id, asset_id), [0, 0])
                    slot[0] += held
                    slot[1] += fee_held
                if order.status not in FINAL:
                    counts[order.instrument.id] = counts.get(order.instrument.id, 0) + 1
                    assert 0 <= order.executed < order.qty or order.status == OrderStatus.INITIALIZED, order
                assert order.remaining >= 0 and (order.execution is None or order.executed > 0), order
                book = self.books[order.instrument.id]
                assert book.contains(order) == (order.status in WORKING), f"{order!r} vs book"
                assert open_qty(order) >= 0
            for inst_id, n in account.open_orders.items():
                assert n == counts.get(inst_id, 0), f"client {account.id} open orders {n} != {counts}"
            for transfer in account.transfers.values():
                # an INITIALIZED WITHDRAW holds its amount, unless the balance did not cover it (reject_reason)
                held = transfer.type != TransferType.DEPOSIT and transfer.reject_reason is None
                if transfer.status == TransferStatus.INITIALIZED and held:
                    slot = expected_hold.setdefault((account.id, transfer.asset.id), [0, 0])
                    slot[0] += transfer.amount
            for asset_id, bal in account.balances.items():
                assert bal.total >= 0, f"client {account.id} asset {asset_id}: negative total {bal!r}"
                assert 0 <= bal.hold <= bal.total, f"client {account.id} asset {asset_id}: {bal!r}"
                assert 0 <= bal.fees_hold <= bal.hold, f"client {account.id} asset {asset_id}: {bal!r}"
                assert bal.unsettled_fees >= 0
                # an unheld balance (the recorded counterparty's) holds nothing whatever its orders
                want = [0, 0] if isinstance(bal, UnheldBalance) else expected_hold.get((account.id, asset_id), [0, 0])
                assert bal.hold == want[0], f"client {account.id} asset {asset_id}: hold {bal!r} != {want}"
                assert bal.fees_hold == want[1], f"client {account.id} asset {asset_id}: {bal!r} != {want}"
        for book in self.books.values():
            book.check_invariants(allow_crossed=book.opening is not None)
        for feed in self.feeds:
            feed.check_invariants()
        assert not any(getattr(NO_FILLS, k) for k in Execution.SNAPSHOT), "NO_FILLS was written to"
        self.wake_invariant()


__all__ = ["Event", "Result", "Venue", "VenueConfig"]
