"""``cefisim backtest --plot``: the picture is written (PNG, HTML), a bad target or a missing
matplotlib is one line and exit 2 before the run."""

from __future__ import annotations

import re
import struct
import sys
from pathlib import Path

import pytest

from cefisim.api.cli.backtest import backtest_main
from cefisim.api.cli.backtest.backtest_plot import figure, save_figure

ROOT = Path(__file__).resolve().parents[4]
DEMO = str(ROOT / "scenarios" / "demo.json")
EXAMPLE = "simple_mm"
RUN = (DEMO, "--strategy", EXAMPLE, "--until", "+120", "--param", "qty=0.05", "--quiet")


def test_a_backtest_draws_price_fills_inventory_pnl_and_fees(tmp_path: Path) -> None:
    png, page = tmp_path / "run.png", tmp_path / "run.html"
    assert backtest_main([*RUN, "--plot", str(png)]) == 0
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", head[16:24])
    assert width >= 1000 and height >= 800  # three panels: price with fills, inventory, PnL and fees
    assert backtest_main([*RUN, "--plot", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>") and "<svg" in text
    labels = ("BTC-USD price", "buy fills", "sell fills", "inventory", "PnL (USD)", "fees paid (USD)")
    # why a fill happened: the top of the book and the strategy's own quotes, drawn as the run went
    labels += ("best bid", "best ask", "own bids (", "own asks (")
    for label in labels:
        assert f"<!-- {label}" in text, label  # matplotlib keeps each text, drawn as glyphs, in a comment
    # the price axis reads in prices (the demo trades around 30000), not as an offset and small numbers
    ticks = [float(t) for t in re.findall(r"<!-- (\d{5}(?:\.\d+)?) -->", text)]
    assert len(ticks) >= 3 and all(29_900 < t < 30_100 for t in ticks)
    assert "e4" not in " ".join(re.findall(r"<!-- (.*?) -->", text))


def test_a_target_it_cannot_write_is_refused_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert backtest_main([*RUN, "--plot", str(tmp_path / "run.gif")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cefisim backtest: --plot: ") and ".png, .svg, .pdf, .html" in err


def test_without_matplotlib_it_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    assert backtest_main([*RUN, "--plot", str(tmp_path / "run.png")]) == 2
    assert capsys.readouterr().err.strip() == (
        "cefisim backtest: --plot: a plot needs matplotlib: pip install 'cefisim[plot]'"
    )


def test_the_figure_helpers_save_any_figure(tmp_path: Path) -> None:
    fig, axes = figure(2, "a sweep")
    axes[0].plot([0, 1], [1, 2])
    axes[1].bar([0, 1], [3, 4])
    assert save_figure(fig, tmp_path / "sweep.svg").read_text().lstrip().startswith("<?xml")


def test_the_legends_sit_outside_the_axes_and_pnl_shows_before_and_after_fees() -> None:
    """The legend covered the first minute of prices; a maker's PnL after fees alone hid that it made
    nothing on the spread: the line before fees shows it, and equals the PnL plus the fees paid."""
    from cefisim.api.cli.backtest import run_backtest
    from cefisim.api.cli.backtest.backtest_plot import BookTape, backtest_figure
    from cefisim.api.formats.scenario import load_scenario, parse_time
    from cefisim.strategies.simple_mm import SimpleMarketMaker

    scenario = load_scenario(DEMO)
    tape = BookTape()
    until = parse_time("+120", scenario.start_ns)
    bt = run_backtest(scenario, SimpleMarketMaker(qty="0.05"), until_ns=until, tape=tape)
    fig = backtest_figure(bt, tape)
    for ax in fig.axes:
        legend = ax.get_legend()
        assert legend is not None
        # anchored right of the axes (x > 1 in axes coordinates), so no line is under it
        anchor = legend.get_bbox_to_anchor().transformed(ax.transAxes.inverted())
        assert anchor.x0 > 1.0, ax.get_ylabel()
    money = fig.axes[-1]
    lines = {line.get_label(): line for line in money.get_lines()}
    net, gross = lines["PnL (USD)"], lines["PnL before fees (USD)"]
    fees = next(line for line in money.get_lines() if line.get_label() == "fees paid (USD)")
    assert list(net.get_xdata()) == list(gross.get_xdata())
    # at every sample: before fees = after fees + the fees paid by then (the fees line's steps at its
    # fills; its last point only holds the total to the end of the run)
    steps = list(zip(fees.get_xdata(), fees.get_ydata(), strict=True))[:-1]
    for t, after, before in zip(net.get_xdata(), net.get_ydata(), gross.get_ydata(), strict=True):
        paid = [y for x, y in steps if x <= t][-1]
        assert abs(before - (after + paid)) < 0.005, t
    assert fees.get_ydata()[-1] > 0 and gross.get_ydata()[-1] > net.get_ydata()[-1]
