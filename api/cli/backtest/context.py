"""The strategy's side of ``cefisim backtest``: its context, and engine objects in the CeFi JSON shapes.

- :class:`Context` is the ``ctx`` every callback gets: the order operations of
  :class:`api.client.CefiClient` with the same parameters (both implement
  :class:`api.client.Trading`), synchronous, applied by the harness at the current engine instant. The
  arguments become the body the HTTP client would send (``api/client/client_params.py``), the body the
  command the server would make (the order intake, ``api/edge/intake.py``), and the venue's answer the
  same JSON record or :class:`~api.client.ProblemError` (``api/web/cefi/orders.py``'s ``entered``,
  ``modified``, ``canceled``).
- :class:`Driver` is the driver ``engine/simulation/backtest.py`` calls: it turns fills and book changes into
  ``fill_view`` and ``book_view`` dicts and calls the strategy's optional callbacks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any, TypeVar

from cefisim.api.client import ProblemError, Trading
from cefisim.api.client.client_params import modify_body, order_body
from cefisim.api.edge.intake import cancel_order, modify_order, order_ref, place_order
from cefisim.api.edge.problems import PROBLEM_BASE, Problem, bad_request
from cefisim.api.edge.serialize import balance_record, instrument_record, ns, order_record, trade_record
from cefisim.api.edge.validate import FieldProblem
from cefisim.api.formats.scenario import Scenario, format_time
from cefisim.api.web.cefi.orders import canceled, entered, modified
from cefisim.engine import queries
from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.queries import order_status
from cefisim.engine.quotes import format_vwap
from cefisim.engine.records import Fill
from cefisim.engine.reference import ID_RE, Instrument
from cefisim.engine.simulation.backtest import Harness
from cefisim.engine.vocabulary import Side

BUY = Side.BUY
SELL = Side.SELL
T = TypeVar("T")

__all__ = ["CALLBACKS", "Context", "Driver", "book_view", "fill_view", "seconds_ns"]

#: the strategy's callbacks and the arguments the harness passes each (docs/backtest.md's table)
CALLBACKS: dict[str, tuple[str, ...]] = {
    "on_start": ("ctx",),
    "on_book": ("ctx", "instrument_id", "book"),
    "on_fill": ("ctx", "fill"),
    "on_timer": ("ctx", "name"),
    "on_end": ("ctx",),
}


def _problem(p: Problem) -> ProblemError:
    """The exception the HTTP client raises for the same refusal."""
    return ProblemError(p.status, PROBLEM_BASE + p.slug, p.title, p.detail, p.body())


def _command(taken: T | FieldProblem) -> T:
    """What an intake made of the arguments, or the 400 the HTTP client would raise for them."""
    if isinstance(taken, FieldProblem):
        raise _problem(taken.http())
    return taken


def _answered(answer: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """The venue's answer (``api/web/cefi/orders.py``), a refusal raised as the HTTP client raises it."""
    try:
        return answer(*args)
    except Problem as p:
        raise _problem(p) from None


def seconds_ns(value: Any, name: str = "seconds") -> int:
    """Seconds (int, decimal string, Decimal or float) as whole nanoseconds, rounded half-even."""
    try:
        d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, TypeError, ValueError):
        raise ValueError(f"{name}: {value!r} is not a number of seconds") from None
    if not d.is_finite() or d < 0:
        raise ValueError(f"{name}: {value!r} must be zero or more seconds")
    return int((d * NS_PER_SECOND).to_integral_value(ROUND_HALF_EVEN))


class Context(Trading[dict[str, Any], list[dict[str, Any]]]):
    """What a strategy may see and do: the HTTP client's order operations, in engine time.

    Order operations take the parameters of :class:`api.client.CefiClient` (decimal strings; int and
    Decimal are accepted, float is refused) and return the same JSON shapes. A new order rejected
    by the venue comes back as a REJECTED record; a refused modify or cancel, or a malformed request,
    raises :class:`api.client.ProblemError` with the HTTP status and problem type the server answers.
    List reads answer the records as a list (the client answers the server's page).
    """

    def __init__(self, harness: Harness, scenario: Scenario) -> None:
        self._h = harness
        self._scenario = scenario
        self._venue = harness.venue
        self._client_id = harness.account.id

    # --- time and reference data ---

    @property
    def now(self) -> int:
        """Engine time in nanoseconds since the epoch."""
        return self._h.now

    @property
    def time(self) -> str:
        """Engine time as ISO 8601 UTC."""
        return format_time(self._h.now)

    @property
    def client_id(self) -> str:
        return str(self._client_id)

    def instruments(self, id: Any = None, symbol: str | None = None) -> list[dict[str, Any]]:
        """Every instrument, or the one ``id`` or ``symbol`` names, shaped like GET /instruments items
        (``stats`` left empty)."""
        return [
            instrument_record(i, {})
            for i in queries.instruments(self._venue)
            if (id is None or str(i.id) == str(id)) and (symbol is None or i.symbol == symbol)
        ]

    def instrument(self, ref: Any) -> dict[str, Any] | None:
        """One instrument by id or symbol, or None."""
        inst_id = self._scenario.instrument_id(str(ref))
        inst = None if inst_id is None else queries.instrument(self._venue, inst_id)
        return None if inst is None else instrument_record(inst, {})

    # --- orders: the arguments as the HTTP client sends them, through the same intake ---

    def place_order(
        self,
        instrument_id: Any,
        side: str,
        type: str,
        qty: Any,
        price: Any = None,
        tif: str | None = None,
        flags: Sequence[str] | None = None,
        exec_inst_flags: Sequence[str] | None = None,
        stp: str | None = None,
        hold_fee_rate: Any = None,
        external_id: str | None = None,
        msg_id: str | None = None,
        parent_id: Any = None,
    ) -> dict[str, Any]:
        """POST /orders: the order record (REJECTED with ``reject_reason`` when the venue refuses it)."""
        body = order_body(self.client_id, locals())  # the arguments, as Trading names them
        cmd = _command(place_order(self._client_id, body))
        return _answered(entered, self._h, cmd, body["info"]["instrument_id"])

    def modify_order(
        self,
        new_qty: Any,
        new_price: Any = None,
        id: Any = None,
        external_id: str | None = None,
        new_type: str | None = None,
        msg_id: str | None = None,
        parent_id: Any = None,
        prev_modify: str | None = None,
    ) -> dict[str, Any]:
        """PATCH /orders: ``new_qty`` is the new total quantity; name the order by ``id`` or ``external_id``."""
        body = modify_body(self.client_id, locals())
        return _answered(modified, self._h, _command(modify_order(self._client_id, body)))

    def cancel_order(self, ref_id: Any) -> dict[str, Any]:
        """DELETE /orders/{ref_id} (exchange id or external id): CANCELED, or CANCEL_PENDING under latency."""
        return _answered(canceled, self._h, _command(cancel_order(self._client_id, str(ref_id))))

    def order_status(self, ref_id: Any) -> dict[str, Any]:
        """GET /orders/status/{ref_id}: the order record (404 problem when unknown)."""
        order = order_status(self._venue, self._client_id, _command(order_ref(str(ref_id))))
        if order is None:
            raise _problem(Problem(404, "unknown-order", "ref_id: no such order for this client"))
        return order_record(order)

    def open_orders(self) -> list[dict[str, Any]]:
        """The client's working and pending orders, newest first (GET /orders/active without paging).

        O(orders the venue still keeps for the client): a strategy that trades a lot should keep its
        own list of ids instead of calling this on every callback.
        """
        venue = self._venue
        found, _ = queries.orders(venue, self._client_id, queries.next_stamp(venue) + 1, 0, None, active_only=True)
        return [order_record(o) for o in found]

    # --- balances, books, timers ---

    def balances(self, asset_id: Any = None, asset_name: str | None = None) -> list[dict[str, Any]]:
        """GET /balances: one record per asset (TOTAL, AVAILABLE, HOLD), or the one ``asset_id`` or
        ``asset_name`` names."""
        venue = self._venue
        return [
            balance_record(a, queries.balance(venue, self._client_id, a.id))
            for a in queries.assets(venue)
            if (asset_id is None or str(a.id) == str(asset_id)) and (asset_name is None or a.name == asset_name)
        ]

    def book(self, instrument_id: Any, depth: int | None = None) -> dict[str, Any]:
        """The instrument's book now: best bid/ask, mid and the top ``depth`` levels as decimal strings."""
        inst = self._instrument(instrument_id, "instrument_id")
        return book_view(self._h, inst, depth)

    def set_timer(self, name: str, after_seconds: Any) -> None:
        """Call ``on_timer(ctx, name)`` after ``after_seconds`` of engine time; a name set again is moved."""
        self._h.set_timer(str(name), self._h.now + seconds_ns(after_seconds, "after_seconds"))

    def cancel_timer(self, name: str) -> bool:
        return self._h.cancel_timer(str(name))

    def _instrument(self, ref: Any, field: str) -> Instrument:
        text = str(ref)
        inst = queries.instrument(self._venue, int(text)) if ID_RE.match(text) and len(text) <= 19 else None
        if inst is None:
            raise _problem(bad_request(field, f"unknown instrument {text}"))
        return inst


def _price(inst: Instrument, ticks: int | None) -> str | None:
    return None if ticks is None else inst.price_grid.format(ticks)


def book_view(h: Harness, inst: Instrument, depth: int | None = None) -> dict[str, Any]:
    status, bids, asks = h.view(inst.id, depth)
    pg, qg = inst.price_grid, inst.qty_grid
    bid = bids[0] if bids else None
    ask = asks[0] if asks else None
    last = queries.last_price(h.venue, inst.id)
    return {
        "instrument_id": str(inst.id),
        "symbol": inst.symbol,
        "status": status,
        "timestamp": ns(h.now),
        "bid": None if bid is None else pg.format(bid[0]),
        "bid_qty": None if bid is None else qg.format(bid[1]),
        "ask": None if ask is None else pg.format(ask[0]),
        "ask_qty": None if ask is None else qg.format(ask[1]),
        "mid": None if bid is None or ask is None else format_vwap(inst, bid[0] + ask[0], 2),
        "last_price": _price(inst, last),
        "bids": [[pg.format(p), qg.format(q)] for p, q, _ in bids],
        "asks": [[pg.format(p), qg.format(q)] for p, q, _ in asks],
        "own_bids": _own(h, inst, BUY, bids),
        "own_asks": _own(h, inst, SELL, asks),
    }


def _own(h: Harness, inst: Instrument, side: str, shown: tuple) -> list[list[str]]:
    """[price, lots] of the strategy's open orders at each shown level where it has some."""
    out = []
    for price, _, _ in shown:
        # (a delayed view may show a level that is gone by now: nothing of ours rests there)
        mine = queries.own_lots_at(h.venue, inst.id, side, price, h.account.id)
        if mine:
            out.append([inst.price_grid.format(price), inst.qty_grid.format(mine)])
    return out


def fill_view(fill: Fill) -> dict[str, Any]:
    """The CeFi trade record plus the order's ``side`` and ``external_id``."""
    record = trade_record(fill)
    record["side"] = fill.order.side
    record["external_id"] = fill.order.external_id
    return record


class Driver:
    """The engine harness's driver: calls the strategy's callbacks with the context and JSON shapes."""

    def __init__(self, strategy: object, ctx: Context, harness: Harness) -> None:
        self.ctx = ctx
        self.h = harness
        self.current = ""
        self._cb: dict[str, Callable[..., Any] | None] = {
            cb: getattr(strategy, cb, None) if callable(getattr(strategy, cb, None)) else None for cb in CALLBACKS
        }

    def _call(self, cb: str, *args: Any) -> None:
        fn = self._cb[cb]
        if fn is None:
            return
        self.current = cb  # stays set when the callback raises: the failure is the strategy's
        fn(self.ctx, *args)
        self.current = ""

    def on_start(self) -> None:
        self._call("on_start")

    def on_fill(self, fill: Fill) -> None:
        if self._cb["on_fill"] is not None:
            self._call("on_fill", fill_view(fill))

    def on_book(self, instrument_id: int) -> None:
        if self._cb["on_book"] is not None:
            inst = queries.instrument(self.h.venue, instrument_id)
            assert inst is not None  # the harness names the venue's instruments
            self._call("on_book", str(instrument_id), book_view(self.h, inst))

    def on_timer(self, name: str) -> None:
        self._call("on_timer", name)

    def on_end(self) -> None:
        self._call("on_end")
