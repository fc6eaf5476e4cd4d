"""The simulation drivers, apart from the venue core: the scenario runner and its agents
(``scenario``, ``agents``), the strategy backtest harness (``backtest``) and its report's numbers
(``figures``). They drive a :class:`~cefisim.engine.venue.Venue` through commands and read its results;
the venue core imports nothing from here."""
