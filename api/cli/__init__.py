"""The ``cefisim`` command (``main``) and its subcommands: ``replay``, ``backtest``, ``sweep``, ``data``,
``journal``; ``common`` holds what every command shares."""
