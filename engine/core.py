"""The venue's state, and the small interface the operation modules call on it.

:class:`VenueCore` holds what the venue is made of (reference data, books, counters, latencies, the
timer heap and the GTC expiry queue) and owns its private bookkeeping: an operation module
(``entry``, ``lifecycle``, ``matching``, ``modify``, ``pricing``, ``transfers``, ``retention``,
``timers``) reads the public attributes and calls the methods below, never an underscore attribute.
:class:`~engine.venue.Venue` adds the one entry point (``submit``) and the command dispatch on top.

This module imports no operation module, so they can all name ``VenueCore`` without an import cycle.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from cefisim.engine.book import Book
from cefisim.engine.clock import NS_PER_DAY, NS_PER_SECOND, Clock
from cefisim.engine.events import Event
from cefisim.engine.ledger import balance
from cefisim.engine.records import Account, Order, Transfer
from cefisim.engine.reference import Asset, Client, Instrument
from cefisim.engine.rejects import Reject
from cefisim.engine.state import saves_fields
from cefisim.engine.vocabulary import FINAL, InstrumentStatus

#: ``deque.append`` called as a function: compiled, a direct call of the C method, where ``queue.append(x)``
#: on a deque looks the method up by name first (levels.py's ``_dict_set`` does the same for a dict)
_queue_append = deque.append
CHECK_EVERY = 1000  # orders between two checks of the ended-order caps (``engine/retention.py``)
#: the edition of the venue's rules a new venue follows. Edition 1 is what ``cefisim-journal/1``
#: journals were recorded under: the opening fed back in arrival order, a modify to zero refused
#: (QTY_NOT_POSITIVE), a WITHDRAW beyond the available balance REJECTED at once (``docs/journal.md``)
RULES = 2


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


saves_fields(VenueConfig)  # a call: a C type in the compiled build (core.pxd) takes no other decorator


class Feed(Protocol):
    """A source of book changes due at their own engine times: a recorded market (``engine/recorded/market.py``)."""

    @property
    def next_ts(self) -> int | None:
        """The engine time of its next change, None when it has none left; only ``apply_until`` moves it
        (``timers.advance`` reads it again only after a feed applied)."""

    @property
    def held_until(self) -> int | None:
        """The ``to_ns`` of a pass its budget stopped (``timers.advance`` goes on with it), else None."""

    def apply_until(self, to_ns: int, events: list[Event], budget: int = 0) -> int:
        """Apply every change due at or before ``to_ns``, moving the venue's clock to the time of each;
        returns how many it applied. ``budget`` > 0: it may stop at an instant boundary after that many,
        ``held_until`` then set: the next call (with ``held_until``) goes on, the calls together doing
        what one call does. What it changes never makes anything else fall due sooner: it schedules no
        timer and queues no expiry (``timers.advance`` relies on it)."""

    def check_invariants(self) -> None:
        """Assert its own invariants (``Venue.check_invariants``)."""


class Result:
    __slots__ = ("events", "order", "reject", "snapshot_status", "transfer")

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


class VenueCore:
    # the venue's state, one slot per attribute a snapshot saves: the compiled build makes the class a C
    # type (engine/core.pxd), whose attributes the operations read as struct fields. A subclass (Venue)
    # keeps a __dict__ for what is not state (its command table, ``feeds``, ``rules``)
    __slots__ = (
        "_cap_check_at",
        "_next_housekeeping",
        "_timer_seq",
        "_timers",
        "_wake",
        "accounts",
        "assets",
        "books",
        "clients",
        "clock",
        "config",
        "fee_account",
        "gtc_queue",
        "instruments",
        "latency_cancel_ns",
        "latency_entry_ns",
        "latency_modify_ns",
        "next_match_id",
        "next_order_id",
        "next_transfer_id",
        "settlement_delay_ns",
    )

    #: what a snapshot saves (``api/runtime/snapshot.py``); recorded markets are not among it: a venue
    #: with one is not snapshotted (its place in the recording lives in the file)
    SNAPSHOT: ClassVar[tuple[str, ...]] = (
        "config",
        "clock",
        "assets",
        "instruments",
        "books",
        "clients",
        "accounts",
        "fee_account",
        "next_order_id",
        "next_match_id",
        "next_transfer_id",
        "latency_entry_ns",
        "latency_modify_ns",
        "latency_cancel_ns",
        "settlement_delay_ns",
        "_timers",
        "_timer_seq",
        "gtc_queue",
        "_next_housekeeping",
        "_wake",
        "_cap_check_at",
    )
    # recorded markets (engine/recorded/market.py): sources of book changes due at their own times. A class
    # default, so that a venue without one carries no such attribute (its snapshot is unchanged)
    feeds: tuple[Feed, ...] = ()
    # the edition of the rules (``RULES``), chosen once before the first command (``use_rules``) and
    # read only where the editions differ, off the order-entry path. Not state: a snapshot starts a
    # journal of the current format, whose venue follows the current rules
    rules: int = RULES

    def __init__(self, start_ns: int, config: VenueConfig | None = None) -> None:
        self.config = config or VenueConfig()
        self.clock = Clock(start_ns)
        self.assets: dict[int, Asset] = {}
        self.instruments: dict[int, Instrument] = {}
        self.books: dict[int, Book] = {}
        self.clients: dict[int, Client] = {}
        self.accounts: dict[int, Account] = {}  # client id -> the venue's state for that client
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
        # a lower bound of next_due(), lowered by schedule(), queue_expiry() and add_feed(), and set
        # again by timers.advance() (rewake(): exact, or earlier when a feed ended an expiring order)
        self._wake = self._next_housekeeping
        self._cap_check_at = CHECK_EVERY  # the order id at which the ended-order caps are next checked

    def __del__(self) -> None:
        """The venue is going: its accounts release their orders and fills (``Account.release``), whose
        cycles the collector does not see in the compiled build."""
        for account in (getattr(self, "accounts", None) or {}).values():
            account.release()

    # --- reference data (set up before the first command; not journaled) -------------------

    def add_asset(self, asset: Asset) -> None:
        self.assets[asset.id] = asset
        self.fee_account.setdefault(asset.id, 0)

    def add_instrument(self, inst: Instrument) -> None:
        self.instruments[inst.id] = inst
        self.books[inst.id] = book = Book(inst.id)
        if inst.status == InstrumentStatus.OPENING:
            book.opening = {}

    def add_client(self, client: Client) -> None:
        """A client and its empty account."""
        self.clients[client.id] = client
        self.accounts[client.id] = Account(client)

    def drop_feeds(self) -> None:
        """Forget the recorded markets: for a venue ended for good. Each names its venue (a reference
        cycle), so that the venue then goes with its last reference, without a cycle collection."""
        self.feeds = ()  # type: ignore[misc]  # as add_feed

    def add_feed(self, feed: Feed) -> None:
        """A recorded market (``engine/recorded/market.py``): its events are applied as the clock passes them;
        those due by now at once (the book the venue starts with: set-up, like reference data)."""
        self.feeds = (*self.feeds, feed)  # type: ignore[misc]  # not state: the subclass Venue's __dict__ holds it
        feed.apply_until(self.clock.now, [])
        due = feed.next_ts
        if due is not None and due < self._wake:
            self._wake = due

    def use_rules(self, edition: int) -> None:
        """Follow the rules of ``edition`` (1 up to ``RULES``): a venue that replays, and goes on from, a
        journal of an older format keeps the rules it was recorded under (set when it is loaded)."""
        if not 1 <= edition <= RULES:
            raise ValueError(f"no edition {edition} of the venue's rules (1 to {RULES})")
        self.rules = edition  # type: ignore[misc]  # not state: the subclass Venue's __dict__ holds it

    def credit(self, client_id: int, asset_id: int, units: int) -> None:
        """Opening balance of a client (scenario setup)."""
        balance(self.accounts[client_id], asset_id).total += units

    # --- what falls due: timers, GTC expiry, housekeeping -----------------------------------

    def schedule(self, due: int, action: str, payload: Any) -> None:
        """Fire ``action`` (``engine/timers.py`` names them) with ``payload`` at engine time ``due``."""
        self._timer_seq += 1
        heapq.heappush(self._timers, (due, self._timer_seq, action, payload))
        if due < self._wake:
            self._wake = due

    def queue_expiry(self, order: Order) -> None:
        """Queue a resting GTC order for expiry ``config.gtc_life_ns`` after its creation.

        The queue stays in creation order, so that every order expires on time: an order acknowledged
        after a younger one (the entry latency changed) is put in its place.
        """
        queue = self.gtc_queue
        last = queue[-1] if queue else None  # (typed compiled: its time read as a struct field)
        if last is not None and last.created <= order.created:
            # expires no sooner than the last order queued, hence not before the wake bound
            _queue_append(queue, order)
            return
        expiry = order.created + self.config.gtc_life_ns
        if expiry < self._wake:
            self._wake = expiry  # it may expire before anything else falls due
        i = len(queue)
        while i and queue[i - 1].created > order.created:
            i -= 1
        queue.insert(i, order)

    def quiet_until(self) -> int:
        """Nothing falls due before this engine time (a lower bound of :meth:`next_due`, read without
        touching any state: ``next_due`` drops ended orders from the expiry queue as it looks)."""
        return self._wake

    def next_due(self) -> int:
        """The engine time at which something next happens on its own (the hourly housekeeping at the
        latest)."""
        due = self.next_due_other()[0]
        for feed in self.feeds:
            ts = feed.next_ts
            if ts is not None and ts < due:
                due = ts
        return due

    def next_due_other(self) -> tuple[int, str]:
        """What next happens on its own apart from the feeds, and when: ``(engine time, kind)``, kind
        ``"timer"``, ``"expiry"`` or ``"housekeeping"``; at one time, a timer goes first, then an expiry
        (``timers.advance`` asks this once per thing it fires: one call, not one per kind)."""
        due = self._next_housekeeping
        kind = "housekeeping"
        expiry = self.next_expiry()  # (one place drops ended orders from the expiry queue)
        if expiry is not None and expiry <= due:
            due = expiry
            kind = "expiry"
        timers = self._timers
        if timers:
            timer = timers[0][0]
            if timer <= due:
                return timer, "timer"
        return due, kind

    def next_expiry(self) -> int | None:
        """When the oldest working GTC order expires (ended orders are dropped from the queue)."""
        queue = self.gtc_queue
        life = self.config.gtc_life_ns
        while queue and queue[0].status in FINAL:
            queue.popleft()
        return queue[0].created + life if queue else None

    def next_timer(self) -> int | None:
        """When the earliest scheduled timer falls due, if any."""
        return self._timers[0][0] if self._timers else None

    def pop_timer(self) -> tuple[int, int, str, Any]:
        """Take the earliest timer off the heap: its ``(due, sequence, action, payload)`` as scheduled
        (the heap's own entry, handed over as it is: no tuple built per timer fired)."""
        return heapq.heappop(self._timers)

    def housekeeping_done(self, following: int) -> None:
        """Housekeeping ran: it runs again at ``following``."""
        self._next_housekeeping = following

    def rewake(self, due: int | None = None) -> None:
        """Set the wake bound again (after the clock moved through everything due); ``due``: what
        :meth:`next_due` gives now, or no later, when the caller has just worked it out."""
        self._wake = self.next_due() if due is None else due

    def cap_check_due(self) -> bool:
        """Whether the ended-order caps are due for a check (every ``CHECK_EVERY`` orders)."""
        return self.next_order_id >= self._cap_check_at

    def cap_checked(self) -> None:
        """The caps were checked: the next check is ``CHECK_EVERY`` orders on."""
        self._cap_check_at = self.next_order_id + CHECK_EVERY

    def wake_invariant(self) -> None:
        """Assert that nothing due lies before the wake bound (``Venue.check_invariants``)."""
        dues = [self._next_housekeeping] + [due for due, _, _, _ in self._timers[:1]]
        dues += [feed.next_ts for feed in self.feeds if feed.next_ts is not None]
        life = self.config.gtc_life_ns
        dues += [o.created + life for o in self.gtc_queue if o.status not in FINAL]
        assert self._wake <= min(dues), f"_wake {self._wake} is after something due at {min(dues)}"
