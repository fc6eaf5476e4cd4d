"""What the venue forgets: ended orders, fills, settled transfers and funds entries past their retention,
and the oldest ended orders past the caps that bound its memory.

Contract: an ended order stays visible (status lookups, listings) for ``status_retention_ns`` (and
the listing window) of engine time, checked hourly by the venue's housekeeping (:func:`forget`), and
only while its client holds at most ``max_ended_orders_per_client`` ended orders and the venue at most
``max_ended_orders`` (:func:`cap_ended_orders`, from ``Venue.submit``): past a cap the oldest go first.
A client's fills are capped like its ended orders. Open orders are never forgotten. Forgetting is a
function of the commands applied, so a journal replays it exactly.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import TYPE_CHECKING

from cefisim.engine.vocabulary import FINAL, TransferStatus

T_INITIALIZED = TransferStatus.INITIALIZED.value


if TYPE_CHECKING:
    from cefisim.engine.core import VenueCore
    from cefisim.engine.records import Account

MIN_STATUS_RETENTION_NS = 1_000_000_000  # status_retention: one second ...
MAX_STATUS_RETENTION_NS = 30 * 86_400 * 1_000_000_000  # ... to thirty days


def _low_water(cap: int) -> int:
    """What a cap forgets down to: a tenth below it, so that the scan from the oldest order (which also
    walks the holes earlier deletions left at the front of the dict) runs once per tenth of the cap
    rather than once per check."""
    return cap - cap // 10


def _oldest_ended(account: Account, most: int) -> list[int]:
    """Ids of at most ``most`` of the account's ended orders, oldest first."""
    found: list[int] = []
    if most <= 0:
        return found
    for oid, order in account.orders.items():
        if order.status in FINAL:
            found.append(oid)
            if len(found) == most:
                break
    return found


def _drop_orders(account: Account, ids: list[int]) -> None:
    """Forget these orders of the account (and the external ids that name them)."""
    orders, by_external = account.orders, account.by_external
    for oid in ids:
        order = orders.pop(oid)
        ext = order.external_id
        if ext is not None and by_external.get(ext) is order:
            del by_external[ext]


def ended_orders(venue: VenueCore) -> dict[int, int]:
    """Client id -> ended orders it retains (status lookups and listings can still see them)."""
    return {cid: len(c.orders) - sum(c.open_orders.values()) for cid, c in venue.accounts.items()}


def cap_ended_orders(venue: VenueCore) -> None:
    """Forget the oldest ended orders (and fills) past ``max_ended_orders_per_client`` for each client
    and past ``max_ended_orders`` for the venue. Checked every ``CHECK_EVERY`` orders (``engine/core.py``; from
    ``submit``), so at most that many more are held between two checks; past a cap the oldest go until
    a tenth below it (``_low_water``)."""
    config = venue.config
    ended = ended_orders(venue)
    for cid, count in ended.items():
        account = venue.accounts[cid]
        if count > config.max_ended_orders_per_client:
            victims = _oldest_ended(account, count - _low_water(config.max_ended_orders_per_client))
            _drop_orders(account, victims)
            ended[cid] -= len(victims)
        excess = len(account.fills) - config.max_ended_orders_per_client  # fills: as many at most
        if excess > 0:
            del account.fills[:excess]
    excess = sum(ended.values()) - config.max_ended_orders
    if excess > 0:
        excess = sum(ended.values()) - _low_water(config.max_ended_orders)
        streams = [[(oid, cid) for oid in _oldest_ended(c, excess)] for cid, c in venue.accounts.items()]
        by_client: dict[int, list[int]] = {}
        for oid, cid in heapq.merge(*streams):
            by_client.setdefault(cid, []).append(oid)
            excess -= 1
            if not excess:
                break
        for cid, victims in by_client.items():
            _drop_orders(venue.accounts[cid], victims)


def forget(venue: VenueCore) -> None:
    """Housekeeping: drop what is past its retention (ended orders: the longer of the status retention
    and the listing window; fills, settled transfers and funds entries: the listing window)."""
    now = venue.clock.now
    order_cutoff = now - max(venue.config.status_retention_ns, venue.config.listing_window_ns)
    fill_cutoff = now - venue.config.listing_window_ns  # fills, settled transfers, paper funds
    for account in venue.accounts.values():
        orders = account.orders
        stale = []
        for oid, order in orders.items():
            if order.created >= order_cutoff:
                break
            if order.status in FINAL and order.updated < order_cutoff:
                stale.append(oid)
        _drop_orders(account, stale)
        fills = account.fills
        keep = 0
        while keep < len(fills) and fills[keep].timestamp < fill_cutoff:
            keep += 1
        if keep:
            del fills[:keep]
        kept = account.transfers
        for tid in [tid for tid, t in kept.items() if t.status != T_INITIALIZED and t.updated < fill_cutoff]:
            del kept[tid]
        funds = account.funds_log
        keep = 0
        while keep < len(funds) and funds[keep][0] < fill_cutoff:
            keep += 1
        if keep:
            del funds[:keep]
    venue.gtc_queue = deque(o for o in venue.gtc_queue if o.status not in FINAL)
