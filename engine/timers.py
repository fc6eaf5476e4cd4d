"""What the passing of engine time does: timers, GTC expiry, recorded markets and the hourly housekeeping.

Contract: ``advance(v, to_ns, events)`` moves the clock to ``to_ns`` through everything that falls due
on the way, in time order (ties: a timer, then an expiry, then housekeeping; a recorded market applies
what it holds before the next other thing due, and recorded markets with changes at one time apply in
the order they were added), each at its own engine time. Timers are scheduled by
the operation modules with ``VenueCore.schedule(due, action, payload)``; the actions are:

- ``ack_entry`` (an Order): the entry latency has passed (``engine/lifecycle.py``);
- ``ack_cancel`` (an Order): the cancel latency has passed;
- ``ack_modify`` ((order, qty, price, to_market)): the modify latency has passed (``engine/modify.py``);
- ``settle_transfer`` (a Transfer): the settlement delay has passed (``engine/transfers.py``).

Housekeeping sweeps unsettled fees to the venue's fee account and forgets what retention allows
(``engine/retention.py``); hours in which nothing happens are skipped (see ``_housekeeping_after``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cefisim.engine import lifecycle, modify, retention, transfers
from cefisim.engine.events import FeesSettledEvent
from cefisim.engine.vocabulary import WORKING

if TYPE_CHECKING:
    from cefisim.engine.core import Feed, VenueCore
    from cefisim.engine.events import Event
    from cefisim.engine.records import Order


def advance(v: VenueCore, to_ns: int, events: list[Event], budget: int = 0) -> bool:
    """Move the clock to ``to_ns``, firing what falls due on the way (events appended to ``events``);
    True when it is there.

    ``budget`` > 0: return False, the clock short of ``to_ns``, once about ``budget`` recorded events
    and passes (a timer, an expiry or a housekeeping each) are done, between two passes or at an
    instant boundary inside a feed's pass (the feed holds it open: ``held_until``). Calling it again
    with the same ``to_ns`` and ``events``, nothing else applied to the venue in between, goes on: the
    calls together append what one call without a budget appends (every pass is worked out from the
    venue's state, and the held pass keeps its bound; the final clock move and wake bound come once)."""
    clock = v.clock
    feeds = v.feeds
    spent = 0
    for feed in feeds:  # a feed's pass a budget stopped: it goes on first, up to the bound it had
        held = feed.held_until
        if held is not None:
            spent = feed.apply_until(held, events, budget)
            if feed.held_until is not None:
                return False
    # the feeds' next change, worked out again only after a feed applied: nothing else moves a feed's
    # next_ts (the Feed contract), so a pass that fires a timer does not look at the feeds
    one = feeds[0] if len(feeds) == 1 else None  # the common case: one recorded market
    feed_ts = None
    for feed in feeds:
        ts = feed.next_ts
        if ts is not None and (feed_ts is None or ts < feed_ts):
            feed_ts = ts
    # one pass per thing fired (with a recorded market, a timer or a run of recorded events every few
    # of its events): what is due is asked once per pass, and the clock moved in place
    while True:
        if budget and spent >= budget:
            return False
        other, kind = v.next_due_other()
        if feed_ts is not None and feed_ts < other and feed_ts <= to_ns:
            # (the feed moves the clock to the time of what it applies)
            until = other - 1 if other <= to_ns else to_ns
            if one is not None:  # _apply_feed's one-feed case written out: a call fewer per feed pass
                spent += one.apply_until(until, events, budget - spent if budget else 0)
                if one.held_until is not None:
                    return False
                feed_ts = one.next_ts
            else:
                feed_ts, count = _apply_feed(feeds, feed_ts, until, events, budget - spent if budget else 0)
                if feed_ts is None and count < 0:
                    return False
                spent += count
            if other > to_ns and (feed_ts is None or feed_ts > to_ns):
                # done: a feed's changes never make anything else due sooner (core.Feed), so nothing
                # else is due by to_ns either (``other``, asked again, could only be later)
                break
        elif other <= to_ns:
            spent += 1
            clock.advance(other)
            if kind == "timer":
                # every timer due now, in the heap's order: at a tie timers go first, so asking what is
                # due in between would only give the next one (a pass fewer per timer after the first)
                while True:
                    _, _, action, payload = v.pop_timer()
                    ACTIONS[action](v, payload, events)
                    if v.next_timer() != other:
                        break
            elif kind == "expiry":
                order = v.gtc_queue.popleft()
                if order.status in WORKING:
                    lifecycle.cancel_now(v, order, "EXPIRED", events)
            else:
                housekeeping_run(v, events)
                v.housekeeping_done(_housekeeping_after(v, other, to_ns))
        else:
            break
    clock.advance(to_ns)
    # the wake bound: the next thing due, feeds included (``other`` may be earlier than what is due when a
    # feed's fills ended the order first in the expiry queue after it was asked: a lower bound, as the
    # wake bound must be, and the next advance asks again)
    v.rewake(other if feed_ts is None or other <= feed_ts else feed_ts)
    return True


def _apply_feed(
    feeds: tuple[Feed, ...], ts: int, until: int, events: list[Event], budget: int
) -> tuple[int | None, int]:
    """The first feed whose next change is at ``ts`` (the earliest) applies what it holds up to ``until``
    (the last engine time before the next other thing due) and up to the other feeds' next changes: at
    one engine time, the feeds apply in the order they were added. Returns the feeds' next change then
    (only the feed that applied has moved) and how many events it applied; ``(None, -1)`` when its
    ``budget`` stopped it (``advance``)."""
    due = None
    rest = None  # the other feeds' next change
    for feed in feeds:
        other = feed.next_ts
        if other is None:
            continue
        if due is None and other == ts:
            due = feed
            continue
        # at ``other``, a feed before it goes first, and it goes before a feed after it
        until = min(until, other - 1 if due is None else other)
        if rest is None or other < rest:
            rest = other
    assert due is not None  # (ts is the earliest next_ts of the feeds)
    count = due.apply_until(until, events, budget)
    if due.held_until is not None:
        return None, -1
    first = due.next_ts
    return (rest if first is None or (rest is not None and rest < first) else first), count


def _housekeeping_after(v: VenueCore, done: int, to_ns: int) -> int:
    """The next housekeeping time after the one at ``done``.

    Hours in which nothing happens (no timer, no expiry, no command: all before ``to_ns``) are
    skipped: housekeeping at the last of them does what every one of them would have, so a jump of
    years costs two housekeepings, not one per hour.
    """
    interval = v.config.fee_settlement_interval_ns
    following = done + interval
    quiet_until = to_ns
    timer = v.next_timer()
    if timer is not None:
        quiet_until = min(quiet_until, timer)
    expiry = v.next_expiry()
    if expiry is not None:
        quiet_until = min(quiet_until, expiry)
    for feed in v.feeds:
        if feed.next_ts is not None:
            quiet_until = min(quiet_until, feed.next_ts)
    return max(following, quiet_until // interval * interval)


def _ack_modify(v: VenueCore, payload: tuple[Order, int, int, bool], events: list[Event]) -> None:
    """The modify latency has passed: apply what ``engine/modify.py`` scheduled."""
    order, qty, price, to_market = payload
    modify.apply_modify(v, order, qty, price, to_market, events)


#: what each timer action does (the module docstring lists them), called with (venue, payload, events):
#: one look-up per timer fired, where comparing the action with each name took up to four
ACTIONS: dict[str, Callable[[VenueCore, Any, list[Event]], None]] = {
    "ack_entry": lifecycle.ack_entry,
    "ack_cancel": lifecycle.ack_cancel,
    "ack_modify": _ack_modify,
    "settle_transfer": transfers.settle_transfer,
}


def housekeeping_run(v: VenueCore, events: list[Event]) -> None:
    """Sweep unsettled fees to the venue's fee account and forget what retention allows."""
    for asset_id in v.assets:
        swept = 0
        for account in v.accounts.values():
            bal = account.balances.get(asset_id)
            if bal is not None and bal.unsettled_fees:
                swept += bal.unsettled_fees
                bal.unsettled_fees = 0
        if swept:
            v.fee_account[asset_id] += swept
            events.append(FeesSettledEvent(v.clock.stamp(), asset_id, swept))
    retention.forget(v)
