"""The venue's vocabulary (engine/vocabulary.py): every word is its wire string, wherever it goes."""

from __future__ import annotations

import json

import orjson

from cefisim.engine.vocabulary import (
    FINAL,
    WORKING,
    ExecInst,
    InstrumentStatus,
    LiquidityFlag,
    OrderFlag,
    OrderStatus,
    OrderType,
    Platform,
    SelfTradePrevention,
    Side,
    TimeInForce,
    TransferStatus,
    TransferType,
    Word,
)

#: the description's words, spelled out by hand (not read back from the enums)
WIRE = {
    OrderStatus: [
        "INITIALIZED",
        "NEW_PENDING",
        "REJECTED",
        "ACTIVE",
        "FILLED",
        "CANCEL_PENDING",
        "CANCELED",
        "MODIFY_PENDING",
    ],
    InstrumentStatus: ["DISABLED", "OPENING", "ACTIVE", "HALTED"],
    TransferStatus: ["INITIALIZED", "COMPLETED", "REJECTED"],
    Side: ["BUY", "SELL"],
    OrderType: ["LIMIT", "MARKET"],
    TimeInForce: ["GTC", "IOC"],
    ExecInst: ["ALO", "AON"],
    OrderFlag: ["USE_AGGRESSIVE_PRICING"],
    SelfTradePrevention: ["INVALID", "NONE", "CANCEL_AGGRESSIVE", "CANCEL_BOTH"],
    LiquidityFlag: ["MAKER", "TAKER"],
    TransferType: ["DEPOSIT", "WITHDRAW"],
    Platform: ["FIAT", "CRYPTO"],
}


def test_every_word_is_its_wire_string() -> None:
    for kind, words in WIRE.items():
        assert [m.value for m in kind] == words
        for member, word in zip(kind, words, strict=True):
            assert member == word and hash(member) == hash(word) and isinstance(member, str)
            assert str(member) == f"{member}" == word
            assert repr(member) == repr(word)  # a message with !r reads the same for a plain string
            assert orjson.dumps(member) == json.dumps(member).encode() == f'"{word}"'.encode()
            assert kind(word) is member


def test_each_meaning_of_a_word_is_its_own_enum() -> None:
    """ACTIVE is an order and an instrument status, INITIALIZED and REJECTED order and transfer
    statuses: equal strings, distinct members, so a module can no longer take one for the other."""
    assert OrderStatus.ACTIVE == InstrumentStatus.ACTIVE and OrderStatus.ACTIVE is not InstrumentStatus.ACTIVE
    assert OrderStatus.REJECTED is not TransferStatus.REJECTED
    assert all(issubclass(kind, Word) for kind in WIRE)
    assert set(Word.__subclasses__()) >= set(WIRE)


def test_working_and_final_partition_the_ended_and_the_book() -> None:
    assert {"ACTIVE", "MODIFY_PENDING", "CANCEL_PENDING"} == WORKING
    assert {"REJECTED", "FILLED", "CANCELED"} == FINAL
    assert not WORKING & FINAL
    assert "ACTIVE" in WORKING and OrderStatus.ACTIVE in WORKING  # plain strings from outside too
