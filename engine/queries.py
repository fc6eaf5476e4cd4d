"""Reads the listings need: newest first, "created strictly before" a timestamp cursor, windows.

Every listing is newest first. ``before`` keeps records whose timestamp is strictly smaller; ``since``
(when given) drops records older than it (the "last 24 hours" windows). A page is ``skip`` records in,
``size`` long, and its cursor is the timestamp of the oldest record on it when older records remain
(else None) — timestamps are unique, so sending the cursor back as ``before`` continues exactly.

Reads never change state. Complexity: trade pages bisect the client's fills (O(log n + page));
order pages walk the client's orders from the newest (O(records newer than the cursor + page)).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

from .entry import find_order
from .order import FINAL, NEW_PENDING, REJECTED, WORKING, Order
from .records import T_INITIALIZED, Fill, Transfer

if TYPE_CHECKING:
    from .venue import Venue

T = TypeVar("T")

# activity kinds
A_CONFIRM = "CONFIRM"
A_REJECT = "REJECT"
A_TRADE = "TRADE"
A_CANCEL = "CANCEL"
A_MODIFY = "MODIFY"
A_FILLED = "FILLED"


def page(
    newest_first: Iterable[T], stamp: Callable[[T], int], before: int, since: int | None, skip: int,
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


def trades(
    v: "Venue", client_id: int, before: int, skip: int, size: int | None, window: bool
) -> tuple[list[Fill], int | None]:
    """The client's fills (trade records), newest first; ``window`` limits to the listing window."""
    client = v.clients[client_id]
    since = v.clock.now - v.config.listing_window_ns if window else None
    return page(_fills_newest_first(client.fills, before), _fill_ts, before, since, skip, size)


def _fill_ts(f: Fill) -> int:
    return f.timestamp


def _order_ts(o: Order) -> int:
    return o.created


def orders(
    v: "Venue", client_id: int, before: int, skip: int, size: int | None, active_only: bool = False,
    window: bool = True,
) -> tuple[list[Order], int | None]:
    """The client's orders, newest first (all within the window, or only those still open)."""
    client = v.clients[client_id]
    stream: Iterable[Order] = reversed(client.orders.values())
    if active_only:
        stream = (o for o in stream if o.status in WORKING or o.status == NEW_PENDING)
    since = v.clock.now - v.config.listing_window_ns if window and not active_only else None
    return page(stream, _order_ts, before, since, skip, size)


def order_status(v: "Venue", client_id: int, ref: str) -> Order | None:
    """The order named by exchange or external id, while its status is retained."""
    order = find_order(v, client_id, ref)
    if order is None:
        return None
    if order.status in FINAL and order.updated < v.clock.now - v.config.status_retention_ns:
        return None
    return order


def transfers(
    v: "Venue", client_id: int, before: int, skip: int, size: int | None, active_only: bool = False
) -> tuple[list[Transfer], int | None]:
    client = v.clients[client_id]
    stream: Iterable[Transfer] = reversed(client.transfers.values())
    if active_only:
        stream = (t for t in stream if t.status == T_INITIALIZED)
        since = None
    else:
        since = v.clock.now - v.config.listing_window_ns
    return page(stream, lambda t: t.created, before, since, skip, size)


def activity(
    v: "Venue", client_id: int, before: int, skip: int, size: int | None
) -> tuple[list[tuple[str, int, Order, Fill | None, str | None]], int | None]:
    """Trades, confirms, rejects, cancels and modifications of the client's orders, newest first.

    Items are (kind, timestamp, order, fill or None, detail). Derived from the records the venue keeps
    anyway, so the hot path stores nothing extra for this feed.
    """
    client = v.clients[client_id]
    since = v.clock.now - v.config.listing_window_ns
    items: list[tuple[str, int, Order, Fill | None, str | None]] = []
    for order in client.orders.values():
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
            kind = A_CANCEL if order.status != "FILLED" else A_FILLED
            items.append((kind, order.updated, order, None, order.cancel_reason))
    for fill in client.fills:
        items.append((A_TRADE, fill.timestamp, fill.order, fill, fill.liq_flag))
    items.sort(key=lambda item: item[1], reverse=True)
    return page(items, lambda item: item[1], before, since, skip, size)
