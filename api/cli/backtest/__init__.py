"""``cefisim backtest``: a strategy in-process against a scenario, at full speed, in engine time.

    cefisim backtest SCENARIO --strategy module:Class|path/to/file.py:Class [--param KEY=VALUE ...]
        [--until ISO|+seconds] [--latency-ms N] [--client ID|MNEMONIC] [--quote ASSET]
        [--sample-every SECONDS] [--report FILE.json] [--quiet]

The scenario's events and agents drive the market; the strategy trades as one of the scenario's
clients (default: the first client no agent uses). ``docs/backtest.md`` is the strategy API and the
report's definition. The harness loop is ``engine/simulation/backtest.py`` (pure); here:

- ``context.py``: the strategy's ``ctx`` (the HTTP client's order operations) and the JSON shapes of
  books and fills;
- ``report.py``: the report from the harness's exact figures, as JSON and as a table;
- ``backtest_command.py``: loading the strategy class, ``run_backtest`` and the command ``backtest_main``.
"""

from cefisim.api.cli.backtest.backtest_command import (
    Backtest,
    BacktestError,
    StrategyFailed,
    backtest_main,
    load_strategy_class,
    run_backtest,
)
from cefisim.api.cli.backtest.context import CALLBACKS, Context
from cefisim.api.cli.backtest.report import WALL_FIELDS
from cefisim.api.client import ProblemError

__all__ = [
    "CALLBACKS",
    "WALL_FIELDS",
    "Backtest",
    "BacktestError",
    "Context",
    "ProblemError",
    "StrategyFailed",
    "backtest_main",
    "load_strategy_class",
    "run_backtest",
]
