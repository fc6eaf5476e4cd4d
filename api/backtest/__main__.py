"""``python -m api.backtest``: the same as ``cefisim backtest``."""

import sys

from .main import backtest_main

sys.exit(backtest_main(sys.argv[1:]))
