"""``python -m api.backtest``: the same as ``cefisim backtest``."""

import sys

from cefisim.api.backtest.backtest_command import backtest_main

sys.exit(backtest_main(sys.argv[1:]))
