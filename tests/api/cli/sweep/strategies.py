"""Strategies for the sweep tests, loaded by file path (so a Dask worker gets them with the task)."""

from __future__ import annotations

import os
import time
from typing import Any


class Quoter:
    """Buys ``qty`` at market on the first two-sided book; with ``boom=yes`` raises there instead."""

    def __init__(self, qty: str = "0.001", boom: str = "no", sleep: str = "0", log: str = "") -> None:
        self.qty = qty
        self.boom = boom == "yes"
        self.sleep = float(sleep)
        self.log = log
        self.done = False

    def on_start(self, ctx: Any) -> None:
        if self.log:  # only the Ctrl-C test: tells it that runs have started
            with open(self.log, "a") as f:
                f.write("started\n")
        if self.sleep:
            time.sleep(self.sleep)  # only the Ctrl-C test: a run that takes wall time

    def on_book(self, ctx: Any, instrument_id: str, book: dict[str, Any]) -> None:
        if self.done or book["mid"] is None:
            return
        self.done = True
        if self.boom:
            raise ZeroDivisionError("boom on the first book")
        ctx.place_order(instrument_id, "BUY", "MARKET", self.qty)


class Dies:
    """With ``die=yes``, ends its worker process on start, as a crash or the OOM killer would."""

    def __init__(self, die: str = "no") -> None:
        self.die = die == "yes"

    def on_start(self, ctx: Any) -> None:
        if self.die:
            os._exit(3)
