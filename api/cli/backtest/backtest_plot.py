"""``cefisim backtest --plot FILE``: a picture of the run (needs the ``cefisim[plot]`` extra, matplotlib).

Contract:
- :func:`save_backtest_plot` draws a finished :class:`~.report.Backtest`: per instrument the strategy
  traded (else the first it watched), the market's trade prices with the strategy's fills marked
  (buys ▲, sells ▼), the best bid and ask as the run went (a :class:`BookTape` recorded during the
  run, when given) and the strategy's own orders, each a line at its price from its entry to its end
  (an order modified is drawn at its last price; ended orders past the venue's retention are not
  drawn), so why a fill happened shows; the price axis reads in prices, never as an offset. Then its
  inventory (change from the start) of every asset that moved but the valuation one; its PnL and
  cumulative fees in the valuation asset (fees of instruments quoted in another asset in that asset).
  Time is seconds from the run's start. Prices and amounts come from the engine's integers through the
  grids' decimal text; floats exist only in the drawing.
- :func:`figure` and :func:`save_figure` are the reusable part (sweep plots use them): a matplotlib
  ``Figure`` made without pyplot (no global state, no display needed), saved by the file's suffix:
  ``.png``, ``.svg``, ``.pdf``, or ``.html`` (the SVG inside a small self-contained page).
- Without matplotlib, :class:`PlotUnavailable` says in one line how to get it; so does a suffix it
  cannot write. :func:`check_target` tells both before a long run starts.
"""

from __future__ import annotations

import html
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cefisim.api.cli.backtest.report import Backtest, amount
from cefisim.api.cli.common.extras import missing_extra
from cefisim.engine import queries
from cefisim.engine.vocabulary import FINAL, OrderStatus, OrderType

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SUFFIXES = (".png", ".svg", ".pdf", ".html")
LIMIT = OrderType.LIMIT.value
REJECTED = OrderStatus.REJECTED.value  # never on the book: not drawn


class PlotUnavailable(ValueError):
    """The plot cannot be drawn here: matplotlib missing, or a file type it does not write."""


def check_target(path: str | Path) -> Path:
    """``path`` when a plot can be saved there (suffix known, matplotlib importable)."""
    target = Path(path)
    if target.suffix.lower() not in SUFFIXES:
        raise PlotUnavailable(f"{target}: the plot is written as {', '.join(SUFFIXES)}")
    require_matplotlib()
    return target


def require_matplotlib() -> Any:
    """The matplotlib module; :class:`PlotUnavailable` (with the install hint) when it is missing."""
    try:  # an optional dependency (cefisim[plot]): imported when a plot is asked for
        import matplotlib
    except ModuleNotFoundError as exc:
        raise PlotUnavailable(str(missing_extra(exc, "plot", "a plot"))) from None
    return matplotlib


def figure(rows: int, title: str, height_ratios: list[float] | None = None) -> tuple[Figure, list[Any]]:
    """A figure of ``rows`` stacked axes sharing the x axis (pyplot-free)."""
    require_matplotlib()
    from matplotlib.figure import Figure  # an optional dependency: require_matplotlib() said whether it is there

    fig = Figure(figsize=(11, 2.6 * rows + 0.8), layout="constrained")
    axes = fig.subplots(rows, 1, sharex=True, squeeze=False, height_ratios=height_ratios)[:, 0]
    fig.suptitle(title)
    return fig, list(axes)


def save_figure(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` as its suffix says; ``.html`` is the SVG in a page of its own."""
    target = check_target(path)
    if target.suffix.lower() == ".html":
        svg = io.StringIO()
        fig.savefig(svg, format="svg")
        title = html.escape(fig.get_suptitle() or target.stem)
        target.write_text(
            f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n'
            f"<body>\n{svg.getvalue()}\n</body></html>\n",
            encoding="utf-8",
        )
    else:
        fig.savefig(target, dpi=110)
    return target


class BookTape:
    """The best bid and ask of every instrument as a run goes: :meth:`record` after each step (the
    backtest calls it only when it draws a plot); a point is kept only when the top changed."""

    def __init__(self) -> None:
        self.tops: dict[int, list[tuple[int, int | None, int | None]]] = {}  # instrument id -> (ns, bid, ask)

    def record(self, venue: Any) -> None:
        now = queries.now(venue)
        for inst in queries.instruments(venue):
            book = queries.book(venue, inst.id)
            bid, ask = book.best_bid(), book.best_ask()
            series = self.tops.setdefault(inst.id, [])
            if not series or series[-1][1] != bid or series[-1][2] != ask:
                series.append((now, bid, ask))


#: where every panel's legend goes: outside the axes, right of them, so it never covers the first prices
LEGEND = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "borderaxespad": 0.0, "fontsize": "small"}


def save_backtest_plot(bt: Backtest, path: str | Path, tape: BookTape | None = None) -> Path:
    """Draw ``bt`` (:func:`backtest_figure`) into ``path``."""
    return save_figure(backtest_figure(bt, tape), path)


def backtest_figure(bt: Backtest, tape: BookTape | None = None) -> Figure:
    """``bt`` drawn: per traded instrument, its price, top of book, own orders and fills; the inventory;
    the PnL after fees and before them (the fees in the valuation asset added back), and the fees paid,
    over time. ``tape``: the best bid and ask recorded during the run. Legends sit right of the axes."""
    h, report = bt.harness, bt.report
    start = h.start_ns
    traded = [i for i in h.instruments if any(f.order.instrument is i for f, _ in h.fills)]
    traded = traded or [i for i in h.instruments if i.id in h.watch][:1] or h.instruments[:1]
    fig, axes = figure(
        len(traded) + 2,
        f"{report.get('strategy', 'strategy')} as {report['client']['mnemonic']}"
        f" on {Path(str(report['scenario'])).name}",
    )

    def secs(ns: int) -> float:
        return (ns - start) / 1e9

    for ax, inst in zip(axes, traded, strict=False):  # the last two axes are inventory and PnL
        market = [
            (f.timestamp, f.price)
            for f in reversed(queries.recent_trades(h.venue, inst.id, None))
            if f.timestamp >= start
        ]
        price = inst.price_grid.format
        ax.step(
            [secs(t) for t, _ in market],
            [float(price(p)) for _, p in market],
            where="post",
            color="0.55",
            linewidth=0.9,
            label="market trades",
        )
        tops = tape.tops.get(inst.id, []) if tape is not None else []
        if tops:
            tops = [*tops, (h.now, *tops[-1][1:])]  # the last top holds to the end of the run
            for k, label, color in ((1, "best bid", "tab:blue"), (2, "best ask", "tab:orange")):
                sides = [top[k] for top in tops]
                ax.step(
                    [secs(top[0]) for top in tops],
                    [float("nan") if p is None else float(price(p)) for p in sides],  # NaN: a gap in the line
                    where="post",
                    color=color,
                    linewidth=0.7,
                    alpha=0.8,
                    label=label,
                )
        for side, color in (("BUY", "tab:green"), ("SELL", "tab:red")):
            own = [
                o
                for o in h.account.orders.values()
                if o.instrument is inst and o.side == side and o.type == LIMIT and o.status != REJECTED
            ]
            if own:
                ax.hlines(
                    [float(price(o.price)) for o in own],
                    [secs(o.created) for o in own],
                    [secs(o.updated if o.status in FINAL else h.now) for o in own],
                    colors=color,
                    linewidth=2.2,
                    alpha=0.45,
                    label=f"own {'bids' if side == 'BUY' else 'asks'} ({len(own)})",
                )
        for side, marker, color in (("BUY", "^", "tab:green"), ("SELL", "v", "tab:red")):
            mine = [f for f, _ in h.fills if f.order.instrument is inst and f.order.side == side]
            ax.scatter(
                [secs(f.timestamp) for f in mine],
                [float(price(f.price)) for f in mine],
                marker=marker,
                color=color,
                s=28,
                zorder=3,
                label=f"{side.lower()} fills ({len(mine)})",
            )
        ax.set_ylabel(f"{inst.symbol} price")
        ax.ticklabel_format(axis="y", style="plain", useOffset=False)  # 30001.5, not +3e4 and 1.5
        ax.legend(**LEGEND)

    samples = bt.figures.series  # (engine time, the client's totals in h.assets order, PnL or None)
    times = [secs(t) for t, _, _ in samples]
    inv = axes[len(traded)]
    valuation = bt.figures.valuation_id
    for k, asset_id in enumerate(h.assets):
        held = [totals[k] - h.start_totals[k] for _, totals, _ in samples]
        if asset_id != valuation and any(held):
            inv.step(times, [_num(h, asset_id, units) for units in held], where="post", label=_asset_name(h, asset_id))
    inv.axhline(0, color="0.8", linewidth=0.8)
    inv.set_ylabel("inventory\n(change from start)")
    if inv.get_legend_handles_labels()[0]:  # nothing moved (a strategy that never traded): no legend
        inv.legend(**LEGEND)

    money = axes[-1]
    quote = report["quote_asset"]
    valued = [(t, pnl) for t, _, pnl in samples if pnl is not None]
    money.plot([secs(t) for t, _ in valued], [_num(h, valuation, pnl) for _, pnl in valued], label=f"PnL ({quote})")
    # before fees: the fees paid in the valuation asset up to each sample added back (a maker that ends
    # at minus its fees made nothing on the spread, which the two lines side by side show at a glance)
    own_fees = sorted((f.timestamp, f.fee) for f, _ in h.fills if f.order.instrument.quote.id == valuation)
    if own_fees:
        gross, paid, k = [], 0, 0
        for t, pnl in valued:
            while k < len(own_fees) and own_fees[k][0] <= t:
                paid += own_fees[k][1]
                k += 1
            gross.append(_num(h, valuation, pnl + paid))
        money.plot(
            [secs(t) for t, _ in valued], gross, color="tab:purple", linewidth=1.0, label=f"PnL before fees ({quote})"
        )
    for asset_id in sorted({f.order.instrument.quote.id for f, _ in h.fills}):
        fills = sorted((f.timestamp, f.fee) for f, _ in h.fills if f.order.instrument.quote.id == asset_id)
        total, xs, ys = 0, [0.0], [0.0]
        for t, fee in fills:
            total += fee
            xs.append(secs(t))
            ys.append(_num(h, asset_id, total))
        xs.append(secs(h.now))
        ys.append(ys[-1])
        money.step(xs, ys, where="post", linestyle="--", label=f"fees paid ({_asset_name(h, asset_id)})")
    money.axhline(0, color="0.8", linewidth=0.8)
    money.set_ylabel(f"PnL, fees ({quote})")
    money.set_xlabel(f"seconds from {report['start']}")
    money.legend(**LEGEND)
    return fig


def _asset_name(h: Any, asset_id: int) -> str:
    found = queries.asset(h.venue, asset_id)
    assert found is not None  # the harness reports the venue's assets
    return found.name


def _num(h: Any, asset_id: int, units: Any) -> float:
    """An amount of an asset for the drawing: the report's exact decimal text, then a float."""
    return float(amount(h, asset_id, units) or 0)
