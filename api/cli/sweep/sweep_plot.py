"""``cefisim sweep --plot FILE``: the PnL distribution of each parameter set, best first.

Contract: ``check_target(path)`` (the backtest plot's) raises :class:`PlotUnavailable` (with the
install hint) when matplotlib is missing or the suffix is not one it writes, so the command can
refuse ``--plot`` before the sweep starts.
``plot_sets(sets, path, quote)`` draws (``sets_figure``) one horizontal box plot per parameter set (the
runs with a PnL; whiskers at 1.5 IQR; the median an orange line) with every run as a dot on it and the
bootstrap 95% interval of the mean as a red bar, ranked as on the terminal, with a legend naming each
mark outside the axes, and saves it with the backtest plot's ``save_figure`` in the
format the suffix names (``.png``, ``.svg``, ``.pdf``, ``.html``). matplotlib is the ``[plot]`` extra; the Agg
backend draws without a display.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from cefisim.api.cli.backtest.backtest_plot import PlotUnavailable, check_target, require_matplotlib, save_figure
from cefisim.api.cli.sweep.output import label
from cefisim.api.cli.sweep.stats import SetStats, ranked

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["PlotUnavailable", "check_target", "plot_sets", "sets_figure"]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".")[:2] if p.isdigit())


def plot_sets(sets: list[SetStats], path: str | Path, quote: str) -> None:
    check_target(path)
    save_figure(sets_figure(sets, quote), path)


def sets_figure(sets: list[SetStats], quote: str) -> Figure:
    """The PnL of each parameter set's runs: a box (quartiles, the median as its labelled line, whiskers),
    the runs as dots and the bootstrap 95% CI of the mean in red; a legend names each."""
    matplotlib = require_matplotlib()

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # (the same optional dependency)

    order = [s for s in ranked(sets) if s.pnl][::-1]  # matplotlib draws the first box at the bottom
    fig = Figure(figsize=(11, max(2.5, 0.45 * len(order) + 1.2)))
    ax = fig.add_subplot()
    data = [[float(Decimal(v)) for v in s.pnl] for s in order]
    ys = list(range(1, len(order) + 1))
    # matplotlib 3.10 has orientation=; 3.11 deprecates vert=, which 3.8 and 3.9 need
    sideways = {"orientation": "horizontal"} if _version(matplotlib.__version__) >= (3, 10) else {"vert": False}
    boxes = ax.boxplot(
        data, positions=ys, widths=0.6, showfliers=False, medianprops={"color": "tab:orange"}, **sideways
    )
    boxes["medians"][0].set_label("median")  # one legend entry for the orange line of every box
    boxes["boxes"][0].set_label("quartiles (box), 1.5 IQR (whiskers)")
    for k, (y, values) in enumerate(zip(ys, data, strict=True)):
        runs = "runs" if k == 0 else None
        ax.plot(values, [y] * len(values), "o", markersize=3, alpha=0.5, color="tab:blue", label=runs)
    shown = False
    for y, s in zip(ys, order, strict=True):
        if s.ci_low is not None and s.ci_high is not None:
            lo, hi = float(Decimal(s.ci_low)), float(Decimal(s.ci_high))
            ci = "mean's 95% CI (bootstrap)" if not shown else None
            ax.plot([lo, hi], [y + 0.38, y + 0.38], color="tab:red", linewidth=2, label=ci)
            shown = True
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_yticks(ys, [f"{label(s)} (n={len(s.pnl)})" for s in order], fontsize=8)
    ax.set_xlabel(f"PnL ({quote})")
    ax.set_title("PnL per parameter set, best mean at the top")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small")
    fig.tight_layout()
    return fig
