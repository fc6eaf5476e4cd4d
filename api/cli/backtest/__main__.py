"""``python -m api.cli.backtest``: the same as ``cefisim backtest``."""

import sys

from cefisim.api.cli.backtest.backtest_command import backtest_main

sys.exit(backtest_main(sys.argv[1:]))
