"""The backtest harness: one strategy trading as one client inside a scenario, at full speed.

Contract:
- Inputs: a venue built from a scenario, the scenario's :class:`~engine.simulation.scenario.ScenarioRunner`, the
  id of the client the strategy trades as, and a *driver*: the strategy behind an adapter with the
  methods ``on_start()``, ``on_fill(fill)``, ``on_book(instrument_id)``, ``on_timer(name)`` and
  ``on_end()`` (``api/cli/backtest/`` turns engine objects into the CeFi JSON shapes). The driver acts
  only through :meth:`Harness.submit`, :meth:`Harness.set_timer` and :meth:`Harness.cancel_timer`.
- ``submit`` (default ``venue.submit``): how the harness applies the strategy's commands, their
  ``SetLatency`` and the venue timers' ``AdvanceClock``; the scenario's commands are applied by the
  runner's ``steps``. Both get the runtime's journaling submit in ``api/cli/backtest/``.
- Pure: no I/O, no wall clock, no randomness. The same scenario and the same strategy give the same
  submissions, callbacks and records on every run.
- Four sources are merged in engine-time order. At one instant they go in this order: the scenario
  (``runner.steps(t)``: every event and agent action due at ``t``); the venue's own timers
  (``Venue.next_due``: latency acknowledgements, GTC expiry, transfer settlement, housekeeping — an
  ``AdvanceClock(t)`` is submitted so that what they do is heard when it happens, not at the next
  command); the strategy's timers (by due time, then in the order they were set); the inventory
  samples, which therefore record the state after everything at their instant.
- After each source the harness *publishes*: each new fill of the client, oldest first, to
  ``on_fill``; then each watched instrument whose book changed (its status or the top ``depth``
  levels of either side) to ``on_book``, in instrument order. What the scenario does within one
  instant is published once, after the instant (a market maker's cancel-and-replace is never seen
  half done). Commands the strategy sends from a callback are applied at once, at the current
  instant; their fills and book changes are published in the next round of the same instant. More
  than ``MAX_ROUNDS`` rounds at one instant raise :class:`StrategyLoop`.
- Latency: with ``latency_ns`` None the strategy's commands are treated like every client's (the
  scenario's latency setting applies). With a number, the strategy's commands — and only those — are
  acknowledged that much engine time later: the harness submits ``SetLatency(n, n, n)`` before each
  and restores the venue's previous setting after it (both journaled). Meanwhile the order is
  NEW_PENDING / MODIFY_PENDING / CANCEL_PENDING with its hold taken, and the book keeps trading
  against the old terms: the venue's own latency model (``docs/matching.md``). ``latency_draw``, when
  given, gives each command its own latency the same way (a seeded distribution).
- Feed latency (``feed_latency_ns``, a recorded market's ``feed_latency_ms``): a book change the
  harness would publish at ``t`` reaches ``on_book`` at ``t + feed_latency_ns``, and ``view()`` (the
  book the strategy reads) shows the snapshot last delivered; fills are not delayed.
- Records for the report, in exact integers: every fill of the client with twice the mid (ticks) of
  its instrument just before it (None when a side was empty): for a fill the scenario made, the mid
  before that instant — what the strategy last saw, not the transient book of a market maker halfway
  through its cancel-and-replace; for a fill of the strategy's own command, the mid just before that
  command. Also the strategy's orders, cancels and modifies, sent and refused; the engine commands
  and events of the run; samples of the client's balances and of the marks (twice the mid, else the
  last mid, else twice the last trade price) at the start, every ``sample_every_ns`` and at the end
  (after ``on_end``). :func:`engine.simulation.figures.figures` folds them into the report's numbers (exact);
  ``api/cli/backtest/report.py`` formats them.

Complexity: per submission O(events) to see which books and fills it touched; per instant
O(depth) per touched, watched instrument to decide whether its book changed.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from cefisim.engine.commands import AdvanceClock, CancelOrder, Command, ModifyOrder, PlaceOrder, SetLatency
from cefisim.engine.events import DepthEvent, InstrumentEvent, OrderEvent, TradeEvent
from cefisim.engine.vocabulary import Side

BUY = Side.BUY.value
SELL = Side.SELL.value

if TYPE_CHECKING:
    from cefisim.engine.records import Fill
    from cefisim.engine.reference import Instrument
    from cefisim.engine.simulation.scenario import ScenarioRunner
    from cefisim.engine.venue import Result, Venue

MAX_ROUNDS = 1000  # publish rounds at one instant before the strategy is declared looping
DEFAULT_DEPTH = 5


class Driver(Protocol):
    def on_start(self) -> None: ...
    def on_fill(self, fill: Fill) -> None: ...
    def on_book(self, instrument_id: int) -> None: ...
    def on_timer(self, name: str) -> None: ...
    def on_end(self) -> None: ...


class StrategyLoop(RuntimeError):
    """The strategy kept reacting to its own commands at one instant."""


@dataclass
class Counts:
    """The strategy's own commands (the scenario's commands for the same client are not counted)."""

    orders: int = 0
    rejected: int = 0
    cancels: int = 0
    cancels_refused: int = 0
    modifies: int = 0
    modifies_refused: int = 0


@dataclass
class Sample:
    at: int
    totals: tuple[int, ...]  # the client's total per asset of ``Harness.assets``
    marks2: tuple[int | None, ...]  # twice the mark in ticks per instrument of ``Harness.instruments``


DepthLevel = tuple[int, int, int]  # (ticks, lots, orders)
Snapshot = tuple[str, tuple[DepthLevel, ...], tuple[DepthLevel, ...]]  # (status, bids, asks)


class Harness:
    def __init__(
        self,
        venue: Venue,
        runner: ScenarioRunner,
        client_id: int,
        driver: Driver | None = None,
        *,
        latency_ns: int | None = None,
        watch: Sequence[int] | None = None,
        depth: int = DEFAULT_DEPTH,
        sample_every_ns: int | None = None,
        feed_latency_ns: int = 0,
        latency_draw: Callable[[], int] | None = None,
        submit: Callable[[Command, int], Result] | None = None,
    ) -> None:
        self.venue = venue
        # how the strategy's commands and the venue timers' clock moves are applied: ``venue.submit``,
        # or the runtime's, which journals each first (api/cli/backtest/ runs the harness through it)
        self._submit = venue.submit if submit is None else submit
        self.runner = runner
        self.account = venue.accounts[client_id]
        self.driver = driver
        self.latency_ns = latency_ns
        self.latency_draw = latency_draw  # a latency per command (a seeded distribution), else latency_ns
        self.depth = depth
        self.instruments: list[Instrument] = list(venue.instruments.values())
        wanted = set(venue.instruments if watch is None else watch)
        self.watch = [i.id for i in self.instruments if i.id in wanted]
        self._watched = frozenset(self.watch)
        # assets sampled: the client's at the start, then those of the instruments, in venue order
        held = {a for a, b in self.account.balances.items() if b.total}
        used = held | {a.id for i in self.instruments for a in (i.base, i.quote)}
        self.assets = [a for a in venue.assets if a in used]
        self.start_ns = venue.clock.now
        self.start_totals = self._totals()
        self.sample_every_ns = sample_every_ns
        self.now = self.start_ns
        # records
        self.fills: list[tuple[Fill, int | None]] = []
        self.samples: list[Sample] = []
        self.counts = Counts()
        self.commands = 0
        self.events = 0
        # state
        self._mid2: dict[int, int | None] = {i.id: None for i in self.instruments}
        self._mark2: dict[int, int | None] = {i.id: None for i in self.instruments}
        for inst in self.instruments:
            self._update_marks(inst.id)
        self._last_fill_ts = self.account.fills[-1].timestamp if self.account.fills else -1
        self._unheard: list[Fill] = []
        self._dirty: set[int] = set()
        self._published: dict[int, Snapshot] = {i: self.snapshot(i) for i in self.watch}
        self._timers: list[tuple[int, int, str]] = []
        self._timer_seq: dict[str, int] = {}
        self._seq = 0
        self._deliver = True
        self._next_sample: int | None = self.start_ns
        # feed latency: a book change reaches on_book (and view()) this much engine time later
        self.feed_latency_ns = feed_latency_ns
        self._feed: list[tuple[int, int, int, Snapshot]] = []  # (due, seq, instrument id, snapshot)
        self._views: dict[int, Snapshot] = dict(self._published)

    # --- what the driver may do ------------------------------------------------------------

    def submit(self, cmd: Command) -> Result:
        """Apply one of the strategy's commands at the current instant (with its latency)."""
        assert getattr(cmd, "client_id", self.account.id) == self.account.id, "the strategy acts for its own client"
        venue = self.venue
        lat = self.latency_ns if self.latency_draw is None else self.latency_draw()
        prev = (venue.latency_entry_ns, venue.latency_modify_ns, venue.latency_cancel_ns)
        toggle = lat is not None and prev != (lat, lat, lat)
        if toggle and lat is not None:  # (toggle implies it; said again for the type checker)
            self._apply(SetLatency(lat, lat, lat))
        result = self._apply(cmd)
        if toggle:
            self._apply(SetLatency(*prev))
        counts = self.counts
        if isinstance(cmd, PlaceOrder):
            counts.orders += 1
            counts.rejected += result.reject is not None
        elif isinstance(cmd, CancelOrder):
            counts.cancels += 1
            counts.cancels_refused += result.reject is not None
        elif isinstance(cmd, ModifyOrder):
            counts.modifies += 1
            counts.modifies_refused += result.reject is not None
        return result

    def set_timer(self, name: str, due_ns: int) -> None:
        """Call ``on_timer(name)`` at ``due_ns`` (not before now); setting a name again replaces it."""
        self._seq += 1
        self._timer_seq[name] = self._seq
        heapq.heappush(self._timers, (max(due_ns, self.now), self._seq, name))

    def cancel_timer(self, name: str) -> bool:
        return self._timer_seq.pop(name, None) is not None

    def snapshot(self, instrument_id: int, depth: int | None = None) -> Snapshot:
        """(status, bids, asks): up to ``depth`` levels a side as (ticks, lots, orders), best first."""
        book = self.venue.books[instrument_id]
        n = self.depth if depth is None else depth
        return (
            self.venue.instruments[instrument_id].status,
            tuple(book.depth(BUY, n)),
            tuple(book.depth(SELL, n)),
        )

    def view(self, instrument_id: int, depth: int | None = None) -> Snapshot:
        """The book as the strategy sees it: ``snapshot`` now, or with a feed latency the snapshot
        (``depth`` levels) that was last delivered to ``on_book``."""
        if self.feed_latency_ns and instrument_id in self._views:
            return self._views[instrument_id]
        return self.snapshot(instrument_id, depth)

    def mark2(self, instrument_id: int) -> int | None:
        """Twice the instrument's mark in ticks: the mid, else the last mid seen, else the last trade."""
        return self._mark2[instrument_id]

    # --- the loop ----------------------------------------------------------------------------

    def run(self, until_ns: int) -> None:
        """Run to ``until_ns``: on_start, every source in time order, then on_end and a last sample."""
        venue = self.venue
        runner = self.runner
        timers = self._timers
        driver = self.driver
        self._sample()
        if driver is not None:
            driver.on_start()
        self._publish()
        while True:
            t = runner.next_time()
            source = 0
            due = venue.next_due()
            if due > venue.clock.now and (t is None or due < t):
                t, source = due, 1
            while timers and self._timer_seq.get(timers[0][2]) != timers[0][1]:
                heapq.heappop(timers)  # replaced or cancelled
            if timers and (t is None or timers[0][0] < t):
                t, source = timers[0][0], 2
            if self._next_sample is not None and (t is None or self._next_sample < t):
                t, source = self._next_sample, 3
            if self._feed and (t is None or self._feed[0][0] < t):
                t, source = self._feed[0][0], 4
            if t is None or t > until_ns:
                break
            self.now = t
            if source == 0:
                before = dict(self._mid2)  # the mids the strategy last saw: a fill made by the scenario
                for _, _, result in runner.steps(t):  # is measured against them, not a transient state
                    self._observe(result, before)
            elif source == 1:
                self._observe(self._submit(AdvanceClock(t), t))
            elif source == 2:
                _, _, name = heapq.heappop(timers)
                del self._timer_seq[name]
                if driver is not None:
                    driver.on_timer(name)
            elif source == 4:
                _, _, inst_id, snap = heapq.heappop(self._feed)
                self._views[inst_id] = snap
                if driver is not None and self._deliver:
                    driver.on_book(inst_id)
            else:
                self._sample()
                continue
            self._publish()
        self.now = max(until_ns, venue.clock.now)
        for _, _, result in runner.steps(self.now):
            self._observe(result)
        self._publish()
        if driver is not None:
            driver.on_end()
        self._deliver = False
        self._publish()
        if self.samples and self.samples[-1].at == self.now:
            self.samples.pop()  # taken before on_end: the last sample holds what on_end did
        self._next_sample = self.now
        self._sample()

    # --- inside ------------------------------------------------------------------------------

    def _apply(self, cmd: Command) -> Result:
        result = self._submit(cmd, self.now)
        self._observe(result)
        return result

    def _observe(self, result: Result, mids: dict[int, int | None] | None = None) -> None:
        """Count the submission; record new fills of the client with ``mids`` (default: the mids just
        before this submission); note the books it touched."""
        self.commands += 1
        events = result.events
        if not events:
            return
        self.events += len(events)
        fills = self.account.fills
        last = self._last_fill_ts
        if fills and fills[-1].timestamp > last:
            i = len(fills) - 1
            while i > 0 and fills[i - 1].timestamp > last:
                i -= 1
            if mids is None:
                mids = self._mid2
            for fill in fills[i:]:
                self.fills.append((fill, mids[fill.order.instrument.id]))
                self._unheard.append(fill)
            self._last_fill_ts = fills[-1].timestamp
        touched: list[int] = []
        order = result.order
        accounts = self.venue.accounts
        for ev in events:
            if isinstance(ev, OrderEvent):
                if order is not None and order.id == ev.order_id:
                    inst_id = order.instrument.id
                else:
                    account = accounts.get(ev.client_id)
                    other = account.orders.get(ev.order_id) if account is not None else None
                    if other is None:
                        continue
                    inst_id = other.instrument.id
            elif isinstance(ev, (TradeEvent, InstrumentEvent, DepthEvent)):
                inst_id = ev.instrument_id
            else:
                continue
            if inst_id not in touched:
                touched.append(inst_id)
        watched = self._watched
        for inst_id in touched:
            self._update_marks(inst_id)
            if inst_id in watched:
                self._dirty.add(inst_id)

    def _update_marks(self, inst_id: int) -> None:
        book = self.venue.books[inst_id]
        bid, ask = book.best_bid(), book.best_ask()
        mid2 = bid + ask if bid is not None and ask is not None else None
        self._mid2[inst_id] = mid2
        if mid2 is not None:
            self._mark2[inst_id] = mid2
        elif self._mark2[inst_id] is None and book.last_price is not None:
            self._mark2[inst_id] = 2 * book.last_price

    def _publish(self) -> None:
        rounds = 0
        driver = self.driver
        while self._unheard or self._dirty:
            rounds += 1
            if rounds > MAX_ROUNDS:
                raise StrategyLoop(
                    f"the strategy reacted to its own commands {MAX_ROUNDS} times at engine time {self.now}"
                )
            unheard, self._unheard = self._unheard, []
            dirty, self._dirty = self._dirty, set()
            if not self._deliver or driver is None:
                continue
            for fill in unheard:
                driver.on_fill(fill)
            for inst_id in self.watch:
                if inst_id in dirty:
                    snap = self.snapshot(inst_id)
                    if snap != self._published[inst_id]:
                        self._published[inst_id] = snap
                        if self.feed_latency_ns:
                            self._seq += 1
                            heapq.heappush(self._feed, (self.now + self.feed_latency_ns, self._seq, inst_id, snap))
                        else:
                            driver.on_book(inst_id)

    def _totals(self) -> tuple[int, ...]:
        balances = self.account.balances
        return tuple(balances[a].total if a in balances else 0 for a in self.assets)

    def _sample(self) -> None:
        self.samples.append(Sample(self.now, self._totals(), tuple(self._mark2[i.id] for i in self.instruments)))
        if self.sample_every_ns is not None and self._next_sample is not None:
            self._next_sample += self.sample_every_ns
        else:
            self._next_sample = None


__all__ = ["MAX_ROUNDS", "Counts", "Driver", "Harness", "Sample", "StrategyLoop"]
