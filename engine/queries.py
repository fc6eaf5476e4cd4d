"""Every read the API layer makes of the venue: reference data, a client's state, the listings.

The API layer never reaches into ``Venue`` attributes or an ``Account``'s containers: it asks here.
Lookups by id answer None for an unknown id (the caller turns that into its 404 or 400).

Listings: newest first, "created strictly before" a timestamp cursor, windows.

Every listing is newest first. ``before`` keeps records whose timestamp is strictly smaller; ``since``
(when given) drops records older than it (the "last 24 hours" windows, ``window_start``: applied at
read time, whenever the housekeeping last ran). A page is ``skip`` records in,
``size`` long, and its cursor is the timestamp of the oldest record on it when older records remain
(else None) — timestamps are unique, so sending the cursor back as ``before`` continues exactly.

Reads never change state. Complexity: trade pages bisect the client's fills (O(log n + page));
order pages walk the client's orders from the newest (O(records newer than the cursor + page));
lookups by id O(1); ``recent_trades`` merges the clients' fill lists from their newest end and stops
after ``limit`` trades of the instrument (O(clients + fills walked x log clients)).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, TypeVar

from cefisim.engine.entry import find_order
from cefisim.engine.records import Fill, Order, Transfer
from cefisim.engine.vocabulary import FINAL, WORKING, OrderStatus, Side, TransferStatus, TransferType

BUY = Side.BUY.value
DEPOSIT = TransferType.DEPOSIT.value
NEW_PENDING = OrderStatus.NEW_PENDING.value
REJECTED = OrderStatus.REJECTED.value
T_COMPLETED = TransferStatus.COMPLETED.value
T_INITIALIZED = TransferStatus.INITIALIZED.value

if TYPE_CHECKING:
    from cefisim.engine.book import Book
    from cefisim.engine.core import Feed
    from cefisim.engine.records import Balance
    from cefisim.engine.reference import Asset, Client, Instrument
    from cefisim.engine.venue import Venue, VenueConfig

T = TypeVar("T")

# activity kinds
A_CONFIRM = "CONFIRM"
A_REJECT = "REJECT"
A_TRADE = "TRADE"
A_CANCEL = "CANCEL"
A_MODIFY = "MODIFY"
A_FILLED = OrderStatus.FILLED.value


# --- the venue as a whole ----------------------------------------------------------------------


def now(v: Venue) -> int:
    """The engine time (ns) of the last command or clock move."""
    return v.clock.now


def next_stamp(v: Venue) -> int:
    """The timestamp the venue's next record will get: a listing cursor just past every record."""
    return v.clock.peek()


@dataclass(frozen=True)
class Counters:
    """How much the venue has done and holds: ids handed out, records retained."""

    orders: int  # order ids handed out
    matches: int  # match ids handed out
    retained_orders: int  # orders every client still has (open and ended)
    fills: int  # fills every client still has


def counters(v: Venue) -> Counters:
    """The venue's counters; O(clients)."""
    accounts = v.accounts.values()
    return Counters(
        v.next_order_id - 1,
        v.next_match_id - 1,
        sum(len(a.orders) for a in accounts),
        sum(len(a.fills) for a in accounts),
    )


def latency(v: Venue) -> tuple[int, int, int]:
    """The acknowledgement delays (entry, modify, cancel) in ns."""
    return v.latency_entry_ns, v.latency_modify_ns, v.latency_cancel_ns


def config(v: Venue) -> VenueConfig:
    """The venue's settings (retention, caps, windows); read it, never change it (a command does)."""
    return v.config


def check_invariants(v: Venue) -> None:
    """Assert every structural and ledger invariant of the venue (AssertionError names the first
    broken one)."""
    v.check_invariants()


def asset_totals(v: Venue) -> dict[int, int]:
    """Per asset id: every client's total plus unsettled fees plus the fee account (conserved)."""
    return v.asset_totals()


# --- reference data -----------------------------------------------------------------------------


def assets(v: Venue) -> Iterable[Asset]:
    """Every asset, in the order the scenario lists them."""
    return v.assets.values()


def asset(v: Venue, asset_id: int) -> Asset | None:
    return v.assets.get(asset_id)


def asset_named(v: Venue, name: str) -> Asset | None:
    """The first asset (in listing order) with this name; O(assets)."""
    return next((a for a in v.assets.values() if a.name == name), None)


def instruments(v: Venue) -> Iterable[Instrument]:
    """Every instrument, in the order the scenario lists them."""
    return v.instruments.values()


def instrument(v: Venue, instrument_id: int) -> Instrument | None:
    return v.instruments.get(instrument_id)


def listed_instrument(v: Venue, instrument_id: int) -> Instrument:
    """The instrument ``instrument_id`` names, which must exist (a stream or a recording watches it)."""
    return v.instruments[instrument_id]


def feeds(v: Venue) -> tuple[Feed, ...]:
    """The venue's recorded markets (``engine/recorded/market.py``), in the order they were added."""
    return v.feeds


def book(v: Venue, instrument_id: int) -> Book:
    """The instrument's book (``instrument_id`` must name an instrument); read it, never change it."""
    return v.books[instrument_id]


def last_price(v: Venue, instrument_id: int) -> int | None:
    """Ticks of the instrument's last trade (None before the first)."""
    return v.books[instrument_id].last_price


def recent_trades(v: Venue, instrument_id: int, limit: int | None) -> list[Fill]:
    """The taker side's fill of the instrument's last ``limit`` retained trades (None: all), newest first.

    Each client's fills are oldest first, so the clients' lists are merged from their newest end and
    the walk stops once ``limit`` trades are found: a busy instrument costs O(clients + limit x log
    clients), not a pass over every fill the venue keeps."""
    streams = [reversed(a.fills) for a in v.accounts.values() if a.fills]
    newest = heapq.merge(*streams, key=_fill_ts, reverse=True)
    return list(islice((f for f in newest if f.liq_flag == "TAKER" and f.order.instrument.id == instrument_id), limit))


# --- one client ---------------------------------------------------------------------------------


def own_lots_at(v: Venue, instrument_id: int, side: str, price: int, client_id: int) -> int:
    """Open lots of the client's orders resting at ``price`` on ``side`` of the book (0: none there).
    O(orders at the level)."""
    book = v.books[instrument_id]
    level = book.side(side).get(-price if side == BUY else price)
    if level is None:
        return 0
    return sum(o.remaining for o in level.orders.values() if o.account.id == client_id)


def client(v: Venue, client_id: int) -> Client | None:
    """The client's reference record (id, mnemonic, self-trade prevention); None if unknown."""
    return v.clients.get(client_id)


def has_client(v: Venue, client_id: int) -> bool:
    return client_id in v.clients


def balance(v: Venue, client_id: int, asset_id: int) -> Balance | None:
    """The client's balance of the asset (None: it never held any). ``client_id`` must exist."""
    return v.accounts[client_id].balances.get(asset_id)


def client_order(v: Venue, client_id: int, order_id: int) -> Order | None:
    """The client's order by exchange id while the venue retains it (open or ended)."""
    return v.accounts[client_id].orders.get(order_id)


def open_orders_on(v: Venue, client_id: int, instrument_id: int) -> list[Order]:
    """The client's orders on the instrument that are working or awaiting their acknowledgement,
    oldest first. O(orders the client's account retains)."""
    return [
        o
        for o in v.accounts[client_id].orders.values()
        if o.instrument.id == instrument_id and (o.status in WORKING or o.status == NEW_PENDING)
    ]


def client_transfer(v: Venue, client_id: int, transfer_id: int) -> Transfer | None:
    """The client's transfer by id while the venue retains it."""
    return v.accounts[client_id].transfers.get(transfer_id)


@dataclass(frozen=True)
class BalanceChange:
    """One entry of a client's balance activity: what moved which balances, and why.

    ``kind`` is TRADE, DEPOSIT, WITHDRAW or PAPER_FUNDS; ``changes`` are (asset id, signed units);
    a trade names its order and match, a transfer its id."""

    timestamp: int
    kind: str
    changes: tuple[tuple[int, int], ...]
    order_id: int | None = None
    match_id: int | None = None
    transfer_id: int | None = None


def balance_changes(v: Venue, client_id: int) -> list[BalanceChange]:
    """Every retained change to the client's balances, newest first: each fill (base, quote, fee),
    each completed transfer, each paper funds entry. Timestamps are unique per client. O(records)."""
    c = v.accounts[client_id]
    out: list[BalanceChange] = []
    for fill in c.fills:
        order = fill.order
        inst = order.instrument
        base_units = fill.qty * inst.base_per_lot
        buy = order.side == BUY
        moved = [
            (inst.base.id, base_units if buy else -base_units),
            (inst.quote.id, -fill.quote if buy else fill.quote),
        ]
        if fill.fee:
            moved.append((inst.quote.id, -fill.fee))
        out.append(BalanceChange(fill.timestamp, "TRADE", tuple(moved), order_id=order.id, match_id=fill.match_id))
    for t in c.transfers.values():
        if t.status == T_COMPLETED:
            signed = t.amount if t.type == DEPOSIT else -t.amount
            out.append(BalanceChange(t.updated, t.type, ((t.asset.id, signed),), transfer_id=t.id))
    for ts, asset_id, units in c.funds_log:
        out.append(BalanceChange(ts, "PAPER_FUNDS", ((asset_id, units),)))
    out.sort(key=lambda e: e.timestamp, reverse=True)
    return out


# --- listings -----------------------------------------------------------------------------------


def page(
    newest_first: Iterable[T],
    stamp: Callable[[T], int],
    before: int,
    since: int | None,
    skip: int,
    size: int | None,
) -> tuple[list[T], int | None]:
    """One page of a newest-first stream: (records, next cursor). ``size`` None: every record."""
    out: list[T] = []
    skipped = 0
    last_ts = None
    for record in newest_first:
        ts = stamp(record)
        if ts >= before:
            continue
        if since is not None and ts < since:
            return out, None
        if skipped < skip:
            skipped += 1
            continue
        if len(out) == size:
            return out, last_ts  # an older record remains
        out.append(record)
        last_ts = ts
    return out, None


def _fills_newest_first(fills: list[Fill], before: int) -> Iterator[Fill]:
    i = bisect_left(fills, before, key=lambda f: f.timestamp)
    for j in range(i - 1, -1, -1):
        yield fills[j]


def window_start(v: Venue) -> int:
    """The oldest timestamp the "last 24 hours" listings show now (``config.listing_window_ns``).

    Applied when a listing is read, so what it shows never depends on when the hourly housekeeping
    (``engine/retention.py``) last dropped old records."""
    return v.clock.now - v.config.listing_window_ns


def trades(v: Venue, client_id: int, before: int, skip: int, size: int | None) -> tuple[list[Fill], int | None]:
    """The client's fills (trade records) within the listing window, newest first."""
    account = v.accounts[client_id]
    return page(_fills_newest_first(account.fills, before), _fill_ts, before, window_start(v), skip, size)


def _fill_ts(f: Fill) -> int:
    return f.timestamp


def _order_ts(o: Order) -> int:
    return o.created


def orders(
    v: Venue,
    client_id: int,
    before: int,
    skip: int,
    size: int | None,
    active_only: bool = False,
    window: bool = True,
) -> tuple[list[Order], int | None]:
    """The client's orders, newest first (all within the window, or only those still open)."""
    account = v.accounts[client_id]
    stream: Iterable[Order] = reversed(account.orders.values())
    if active_only:
        stream = (o for o in stream if o.status in WORKING or o.status == NEW_PENDING)
    since = window_start(v) if window and not active_only else None
    return page(stream, _order_ts, before, since, skip, size)


def order_status(v: Venue, client_id: int, ref: str) -> Order | None:
    """The order named by exchange or external id, while its status is retained."""
    order = find_order(v, client_id, ref)
    if order is None:
        return None
    if order.status in FINAL and order.updated < v.clock.now - v.config.status_retention_ns:
        return None
    return order


def transfers(
    v: Venue, client_id: int, before: int, skip: int, size: int | None, active_only: bool = False
) -> tuple[list[Transfer], int | None]:
    """The client's transfers, newest first (all within the window, or only those still INITIALIZED)."""
    account = v.accounts[client_id]
    stream: Iterable[Transfer] = reversed(account.transfers.values())
    if active_only:
        stream = (t for t in stream if t.status == T_INITIALIZED)
        since = None
    else:
        since = window_start(v)
    return page(stream, lambda t: t.created, before, since, skip, size)


def activity(
    v: Venue, client_id: int, before: int, skip: int, size: int | None, fills_before: int | None = None
) -> tuple[list[tuple[str, int, Order, Fill | None, str | None]], int | None]:
    """Trades, confirms, rejects, cancels and modifications of the client's orders, newest first.

    Items are (kind, timestamp, order, fill or None, detail). Derived from the records the venue keeps
    anyway, so the hot path stores nothing extra for this feed. ``fills_before``: trades from then on
    are left out (fills the runtime reports late).
    """
    account = v.accounts[client_id]
    since = window_start(v)
    items: list[tuple[str, int, Order, Fill | None, str | None]] = []
    for order in account.orders.values():
        extra = order.extra
        if order.status == REJECTED:
            items.append((A_REJECT, order.created, order, None, extra.reject_reason if extra else None))
            continue
        if order.status != NEW_PENDING:
            acked = extra.acked if extra is not None and extra.acked is not None else order.created
            items.append((A_CONFIRM, acked, order, None, None))
        if extra is not None and extra.modifications:
            for ts, what in extra.modifications:
                items.append((A_MODIFY, ts, order, None, what))
        if order.status in FINAL:
            kind = A_CANCEL if order.status != OrderStatus.FILLED else A_FILLED
            items.append((kind, order.updated, order, None, order.cancel_reason))
    fills = account.fills
    if fills_before is not None:
        fills = fills[: bisect_left(fills, fills_before, key=_fill_ts)]
    items.extend((A_TRADE, fill.timestamp, fill.order, fill, fill.liq_flag) for fill in fills)
    items.sort(key=lambda item: item[1], reverse=True)
    return page(items, lambda item: item[1], before, since, skip, size)
