"""Example strategies shipped with cefisim, for ``cefisim backtest`` and ``cefisim sweep``.

``--strategy NAME`` takes a shipped strategy by its name from any folder (``--strategy simple_mm``),
the same as ``--strategy cefisim.strategies.simple_mm:SimpleMarketMaker``. Each is a plain class
that uses only the strategy API of ``docs/backtest.md``: copy one to start your own.
"""

from __future__ import annotations

__all__ = ["SHIPPED"]

# the name --strategy takes -> the module:Class it stands for
SHIPPED: dict[str, str] = {
    "simple_mm": "cefisim.strategies.simple_mm:SimpleMarketMaker",
}
