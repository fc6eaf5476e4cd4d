"""The commands around the snapshot compatibility fixture (``tests/api/runtime/fixtures/snapshot_v2.json``).

Kept apart from the test, on purpose using only what every format version's engine has (the command
classes): ``tests/api/runtime/fixtures/make_snapshot.py`` runs :func:`before` and :func:`after` on the code of
the format version it writes, the test on today's.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from cefisim.engine.commands import (
    CancelOrder,
    ModifyOrder,
    PaperFunds,
    PlaceOrder,
    RequestTransfer,
    SetClientInfo,
    SetLatency,
    SetSettlementDelay,
)
from tests.scenario_docs import assets, btc_usd, client, scenario

try:
    from cefisim.engine.events import row
except ImportError:  # the code before typed events (it wrote snapshot_v2.json): an event was its row

    def row(event: Any) -> tuple[object, ...]:
        return tuple(event)


STEP_NS = 250_000_000

#: a small scenario: one instrument, two clients, no agents (the snapshot stays small)
SCENARIO: dict[str, Any] = scenario(
    seed=7,
    start="2026-11-02T09:00:00Z",
    assets=assets("BTC", "USD"),
    instruments=[btc_usd()],
    clients=[
        client("100", "alice", {"BTC": "10", "USD": "1000000"}, self_trade_prevention="NONE"),
        client("101", "bob", {"BTC": "10", "USD": "1000000"}, self_trade_prevention="CANCEL_AGGRESSIVE"),
    ],
    events=[],
)


def _run(sim: Any, commands: list[Any]) -> list[Any]:
    out = []
    for cmd in commands:
        sim.advance(sim.venue.clock.now + STEP_NS)
        result = sim.submit(cmd)
        out.append(
            [type(cmd).__name__, result.reject.value if result.reject else None, [row(e) for e in result.events]]
        )
    return out


def before(sim: Any) -> list[Any]:
    """Trading, a partial fill, resting orders, pending acknowledgements and a transfer in flight: the
    state the snapshot is taken of has something in every part of the venue."""
    return _run(
        sim,
        [
            PlaceOrder(101, 1, "SELL", "LIMIT", "2", "50000.00", external_id="s1"),
            PlaceOrder(100, 1, "BUY", "LIMIT", "0.5", "50000.00", external_id="b1"),
            PlaceOrder(100, 1, "BUY", "LIMIT", "0.25", "49900.00", external_id="b2"),
            PlaceOrder(100, 1, "BUY", "MARKET", "0.1", None, tif="IOC"),
            SetClientInfo(100, "CANCEL_BOTH"),
            PaperFunds(101, 2, "123.45"),
            SetSettlementDelay(3_000_000_000),
            RequestTransfer(100, 2, "100.00", "WITHDRAW", "FIAT"),
            SetLatency(1_000_000_000, 1_000_000_000, 1_000_000_000),
            ModifyOrder(100, None, "b2", "0.3", "49950.00"),
            CancelOrder(101, "s1"),
            PlaceOrder(101, 1, "SELL", "LIMIT", "0.2", "49990.00", external_id="s2"),
        ],
    )


def after(sim: Any) -> list[Any]:
    """What follows the snapshot: the pending acknowledgements and the transfer come due, more trading."""
    steps = _run(
        sim,
        [
            PlaceOrder(101, 1, "SELL", "LIMIT", "0.4", "49950.00", external_id="s3"),
            PlaceOrder(100, 1, "BUY", "LIMIT", "0.1", "49800.00"),
            CancelOrder(100, "b1"),
        ],
    )
    steps.append(["advance", None, [row(e) for e in sim.advance(sim.venue.clock.now + 7_200_000_000_000).events]])
    return steps


def digest(steps: list[Any]) -> str:
    """The sha256 of what the steps did (their rejects and events, as JSON)."""
    return hashlib.sha256(orjson.dumps(steps)).hexdigest()
