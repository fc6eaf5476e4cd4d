"""Commands survive their journal record unchanged, through JSON."""

from __future__ import annotations

import dataclasses
import re

import orjson
import pytest

from cefisim.engine.commands import (
    COMMAND_TYPES,
    AdvanceClock,
    CancelOrder,
    ModifyOrder,
    PaperFunds,
    PlaceOrder,
    RequestTransfer,
    SetClientInfo,
    SetInstrumentStatus,
    SetLatency,
    SetSettlementDelay,
)
from cefisim.engine.journal import from_record, to_record

COMMANDS = [
    PlaceOrder(100, 1, "BUY", "LIMIT", "1", "2.00", flags=(), exec_inst=("ALO",), external_id="e1"),
    PlaceOrder(100, 1, "SELL", "MARKET", "1", flags=("USE_AGGRESSIVE_PRICING",), exec_inst=("AON",)),
    ModifyOrder(100, None, "e1", "2", "3.00"),
    ModifyOrder(100, 7, None, "2", None, new_type="MARKET"),
    CancelOrder(100, "e1"),
    SetClientInfo(100, "CANCEL_BOTH"),
    RequestTransfer(100, 2, "1.00", "DEPOSIT", "FIAT", (("account_id", "x"), ("includes_fee", False))),
    PaperFunds(100, 2, "5", remove=True),
    SetInstrumentStatus(1, "HALTED"),
    SetLatency(1, 2, 3),
    SetSettlementDelay(5),
    AdvanceClock(10),
]


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: c.kind)
def test_round_trip_through_json(cmd) -> None:
    record = orjson.loads(orjson.dumps(to_record(17, "ext", cmd)))
    assert record[:3] == [17, "ext", cmd.kind]
    assert from_record(record) == (17, "ext", cmd)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ([1, "ext", "nope", []], "unknown command kind 'nope'"),
        ([1, "ext", "cancel", [100]], "cancel: expected 2 values"),
        ([1, "ext", "cancel", [100, "x", "extra"]], "cancel: expected 2 values"),
        (["1", "ext", "cancel", [100, "x"]], "a journal record starts with an integer time and a source"),
        (
            [1, "ext", "place", [100, 1, "BUY", "LIMIT", "1", None, "GTC", "ALO", [], None, None, None, None, None]],
            "place: flags must be a list",
        ),
        ({"at": 1}, "a journal record is [at, src, kind, values]"),
        ([1, 2, 3], "a journal record is [at, src, kind, values]"),
    ],
)
def test_what_cannot_be_rebuilt_is_a_value_error(bad, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        from_record(bad)


@pytest.mark.parametrize("cls", [c for c in COMMAND_TYPES.values() if hasattr(c, "values")], ids=lambda c: c.kind)
def test_a_written_out_values_is_the_fields_in_order(cls: type) -> None:
    """A command that spells out its journal values (engine/commands.py says why) gives every field, in
    declaration order: each field is set to a value of its own, so a missing, extra or swapped one fails."""
    names = [f.name for f in dataclasses.fields(cls)]
    cmd = cls(**{name: f"v{i}" for i, name in enumerate(names)})
    assert cmd.values() == tuple(f"v{i}" for i in range(len(names)))
    assert to_record(5, "ext", cmd)[3] == cmd.values()
