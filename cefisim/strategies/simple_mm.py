"""A simple market maker for ``cefisim backtest``: one bid and one ask around the mid, with inventory limits.

    cefisim backtest demo --strategy simple_mm \\
        --param instrument=BTC-USD --param qty=0.05 --until +300 --report mm.json

Parameters (``--param KEY=VALUE``; every value is a string):

- ``instrument``: id or symbol of the instrument to quote (default: the scenario's first).
- ``qty``: quantity of each quote (default: ten times the instrument's ``min_qty``).
- ``half_spread``: distance of each quote from the mid, in ticks (default 2).
- ``max_inventory``: the position (base quantity bought minus sold since the start) at which the
  maker stops buying (or, negative, selling); default five times ``qty``.
- ``skew``: ticks both quotes move against the position when it reaches ``max_inventory``
  (default: ``half_spread``); in between, in proportion.
- ``requote``: seconds between two requotes on the timer (default 1).

Behaviour: on start, every ``requote`` seconds, after each of its fills and whenever the mid of the
others' quotes moves (levels that hold only its own quote are skipped, so its quotes never chase
themselves), it computes bid = floor(mid - half_spread - skew * position / max_inventory) and the ask likewise
(ceiled), in whole ticks. A quote whose price and open quantity are already right keeps its place in
the queue; any other is cancelled and replaced. Quotes are post-only (ALO) GTC limits, so the maker
never takes; a quote that would cross is simply rejected and tried again at the next requote. At the
end it cancels what is left.

It uses only the strategy API of ``docs/backtest.md``: the same calls as ``api.client.CefiClient``
(synchronous here), decimal strings in and out, ``Decimal`` for its own arithmetic.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any

from cefisim.api.client import ProblemError

WORKING = ("ACTIVE", "NEW_PENDING", "MODIFY_PENDING", "CANCEL_PENDING")


def _number(name: str, text: str) -> Decimal:
    """A parameter as a finite Decimal; a ValueError naming it otherwise."""
    try:
        value = Decimal(text)
    except (InvalidOperation, TypeError):
        raise ValueError(f"{name}={text!r} is not a decimal number") from None
    if not value.is_finite():
        raise ValueError(f"{name}={text!r} is not a finite number")
    return value


def _positive(name: str, text: str) -> Decimal:
    value = _number(name, text)
    if value <= 0:
        raise ValueError(f"{name}={text!r} must be above 0")
    return value


class SimpleMarketMaker:
    def __init__(
        self,
        instrument: str | None = None,
        qty: str | None = None,
        half_spread: str = "2",
        max_inventory: str | None = None,
        skew: str | None = None,
        requote: str = "1",
    ) -> None:
        self.ref = instrument
        if instrument is not None:
            self.instruments = [instrument]  # only this book's changes reach on_book
        # every parameter is checked here, so a bad --param is refused before the run starts
        self.qty_param = None if qty is None else _positive("qty", qty)
        self.half_spread = _number("half_spread", half_spread)
        self.max_param = None if max_inventory is None else _positive("max_inventory", max_inventory)
        self.skew = _number("skew", skew) if skew is not None else self.half_spread
        self.every = _positive("requote", requote)
        self.position = Decimal(0)
        self.quotes: dict[str, str | None] = {"BUY": None, "SELL": None}  # side -> id of the current quote
        self.live: dict[str, tuple[str, Decimal]] = {}  # id -> (side, price) of every order it may have working
        self.last_mid: Decimal | None = None
        self.fills = 0

    # --- callbacks ---

    def on_start(self, ctx: Any) -> None:
        inst = ctx.instrument(self.ref) if self.ref is not None else ctx.instruments()[0]
        if inst is None:
            raise ValueError(f"no instrument {self.ref!r} in this scenario")
        info = inst["info"]
        self.inst_id = inst["id"]
        self.tick = Decimal(info["price_increment"])
        self.lot = Decimal(info["qty_increment"])
        self.qty = self.qty_param if self.qty_param is not None else Decimal(info["min_qty"]) * 10
        self.max_inventory = self.max_param if self.max_param is not None else self.qty * 5
        ctx.set_timer("requote", 0)

    def on_timer(self, ctx: Any, name: str) -> None:
        self.requote(ctx)
        ctx.set_timer("requote", self.every)

    def on_book(self, ctx: Any, instrument_id: str, book: dict[str, Any]) -> None:
        if instrument_id == self.inst_id and self.fair_mid(book) != self.last_mid:
            self.requote(ctx, book)

    def on_fill(self, ctx: Any, fill: dict[str, Any]) -> None:
        if fill["instrument_id"] != self.inst_id:
            return
        qty = Decimal(fill["trade_qty"])
        self.position += qty if fill["side"] == "BUY" else -qty
        self.fills += 1
        self.requote(ctx)

    def on_end(self, ctx: Any) -> None:
        self.quotes = {"BUY": None, "SELL": None}
        self._cancel_stale(ctx)

    # --- quoting ---

    def fair_mid(self, book: dict[str, Any]) -> Decimal | None:
        """The mid of the others' best bid and ask: its own quotes do not move what it quotes around.

        A level is skipped when its quantity is no more than what its own orders there (the quote
        and replaced ones still waiting for their cancel) were placed with.
        """
        own: dict[tuple[str, Decimal], Decimal] = {}
        for side, price in self.live.values():
            own[side, price] = own.get((side, price), Decimal(0)) + self.qty
        best = []
        for side, levels in (("BUY", book["bids"]), ("SELL", book["asks"])):
            for price, qty in levels:
                p = Decimal(price)
                if Decimal(qty) > own.get((side, p), Decimal(0)):
                    best.append(p)
                    break
            else:
                return None
        return (best[0] + best[1]) / 2

    def requote(self, ctx: Any, book: dict[str, Any] | None = None) -> None:
        book = book or ctx.book(self.inst_id)
        mid = self.fair_mid(book)
        self.last_mid = mid
        if mid is None or book["status"] != "ACTIVE":
            return
        mid_ticks = mid / self.tick
        lean = self.skew * max(Decimal(-1), min(Decimal(1), self.position / self.max_inventory))
        bid = (mid_ticks - self.half_spread - lean).to_integral_value(ROUND_FLOOR)
        ask = (mid_ticks + self.half_spread - lean).to_integral_value(ROUND_CEILING)
        self._quote(ctx, "BUY", bid if self.position < self.max_inventory else None)
        self._quote(ctx, "SELL", ask if self.position > -self.max_inventory else None)

    def _quote(self, ctx: Any, side: str, ticks: Decimal | None) -> None:
        price = None if ticks is None or ticks <= 0 else ticks * self.tick
        current = self._status(ctx, self.quotes[side])
        if (
            current is not None
            and price is not None
            and Decimal(current["order_info"]["price"]) == price
            and Decimal(current["leaves_qty"]) + Decimal(current["pending_qty"]) == self.qty
        ):
            return  # already right: keep the queue position
        self.quotes[side] = None
        self._cancel_stale(ctx)
        if price is None:
            return
        record = ctx.place_order(
            self.inst_id, side, "LIMIT", format(self.qty, "f"), price=format(price, "f"), exec_inst_flags=["ALO"]
        )
        if record["status"] in WORKING:
            self.quotes[side] = record["id"]
            self.live[record["id"]] = (side, price)

    def _status(self, ctx: Any, order_id: str | None) -> dict[str, Any] | None:
        """The order's record while it works, else None (and it is forgotten)."""
        if order_id is None:
            return None
        try:
            record = ctx.order_status(order_id)
        except ProblemError:
            record = None
        if record is None or record["status"] not in WORKING:
            self.live.pop(order_id, None)
            return None
        return record

    def _cancel_stale(self, ctx: Any) -> None:
        """Cancel every working order that is not a current quote (a pending one when it is acknowledged)."""
        current = set(self.quotes.values())
        for order_id in list(self.live):
            if order_id in current:
                continue
            record = self._status(ctx, order_id)
            if record is not None and record["status"] == "ACTIVE":
                try:
                    ctx.cancel_order(order_id)  # CANCELED, or CANCEL_PENDING under latency
                except ProblemError:
                    self.live.pop(order_id, None)  # ended in the meantime
                # forget it now if it ended: fair_mid must not count a cancelled quote as its own,
                # or a level it shares with another order flips in and out of the mid it quotes around
                self._status(ctx, order_id)
