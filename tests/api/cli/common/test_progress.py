"""Progress bars of ``cefisim replay`` and ``cefisim backtest``: drawn on a terminal, nothing elsewhere."""

from __future__ import annotations

import io

import pytest

from cefisim.api.cli.backtest import run_backtest
from cefisim.api.cli.backtest.backtest_command import load_strategy_class
from cefisim.api.cli.common.progress import EVERY, Progress
from cefisim.api.cli.replay import run
from cefisim.api.formats.scenario import load_scenario
from tests.api.formats.scenario.replay_support import SCENARIOS


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_on_a_terminal_and_nothing_on_a_pipe() -> None:
    tty, pipe = Terminal(), io.StringIO()
    for stream in (tty, pipe):
        bar = Progress(0, 10 * 10**9, stream, "replay ", delay_s=0)
        for i in range(EVERY * 5):
            bar.at(i * 10**9 // EVERY)
        bar.close()
    assert "replay " in tty.getvalue() and "engine s" in tty.getvalue()
    assert pipe.getvalue() == ""


def test_a_short_run_stays_silent_even_on_a_terminal() -> None:
    tty = Terminal()
    bar = Progress(0, 10 * 10**9, tty)  # the default delay: a couple of seconds of wall time
    for i in range(EVERY * 2):
        bar.at(i)
    bar.close()
    assert "engine s" not in tty.getvalue()


def test_replay_and_backtest_report_progress_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import cefisim.api.cli.common.progress as progress

    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    monkeypatch.setattr(progress, "EVERY", 1)
    scenario = load_scenario(SCENARIOS / "demo.json")
    tty = Terminal()
    run(scenario, scenario.start_ns + 60 * 10**9, None, tty)
    assert "replay " in tty.getvalue() and "engine s" in tty.getvalue()
    strategy = load_strategy_class("simple_mm")()
    tty = Terminal()
    run_backtest(scenario, strategy, until_ns=scenario.start_ns + 60 * 10**9, progress=tty)
    assert "backtest " in tty.getvalue()
    piped = io.StringIO()
    run_backtest(
        scenario,
        load_strategy_class("simple_mm")(),
        until_ns=scenario.start_ns + 60 * 10**9,
        progress=piped,
    )
    assert piped.getvalue() == ""
