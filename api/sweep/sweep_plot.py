"""``cefisim sweep --plot FILE``: the PnL distribution of each parameter set, best first.

Contract: ``check_target(path)`` (the backtest plot's) raises :class:`PlotUnavailable` (with the
install hint) when matplotlib is missing or the suffix is not one it writes, so the command can
refuse ``--plot`` before the sweep starts.
``plot_sets(sets, path, quote)`` draws one horizontal box plot per parameter set (the runs with a
PnL; whiskers at 1.5 IQR) with every run as a dot on it and the bootstrap 95% interval of the mean
as a bar, ranked as on the terminal, and saves it with the backtest plot's ``save_figure`` in the
format the suffix names (``.png``, ``.svg``, ``.pdf``, ``.html``). matplotlib is the ``[plot]`` extra; the Agg
backend draws without a display.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from cefisim.api.backtest.backtest_plot import PlotUnavailable, check_target, save_figure
from cefisim.api.sweep.output import label
from cefisim.api.sweep.stats import SetStats, ranked

__all__ = ["PlotUnavailable", "check_target", "plot_sets"]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".")[:2] if p.isdigit())


def plot_sets(sets: list[SetStats], path: str | Path, quote: str) -> None:
    check_target(path)
    # an optional dependency (cefisim[plot]): imported when a plot is drawn
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # (the same optional dependency)

    order = [s for s in ranked(sets) if s.pnl][::-1]  # matplotlib draws the first box at the bottom
    fig = Figure(figsize=(9, max(2.5, 0.45 * len(order) + 1.2)))
    ax = fig.add_subplot()
    data = [[float(Decimal(v)) for v in s.pnl] for s in order]
    ys = list(range(1, len(order) + 1))
    # matplotlib 3.10 has orientation=; 3.11 deprecates vert=, which 3.8 and 3.9 need
    sideways = {"orientation": "horizontal"} if _version(matplotlib.__version__) >= (3, 10) else {"vert": False}
    ax.boxplot(data, positions=ys, widths=0.6, showfliers=False, **sideways)
    for y, values in zip(ys, data, strict=True):
        ax.plot(values, [y] * len(values), "o", markersize=3, alpha=0.5, color="tab:blue")
    for y, s in zip(ys, order, strict=True):
        if s.ci_low is not None and s.ci_high is not None:
            lo, hi = float(Decimal(s.ci_low)), float(Decimal(s.ci_high))
            ax.plot([lo, hi], [y + 0.38, y + 0.38], color="tab:red", linewidth=2)
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_yticks(ys, [f"{label(s)} (n={len(s.pnl)})" for s in order], fontsize=8)
    ax.set_xlabel(f"PnL ({quote}); red: bootstrap 95% CI of the mean")
    ax.set_title("PnL per parameter set, best mean at the top")
    fig.tight_layout()
    save_figure(fig, path)
