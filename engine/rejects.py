"""Typed reasons for everything the venue refuses, grouped by the stage that refuses it.

A reason is a value, never an exception. Business rejections of orders are carried on the REJECTED
order record (``reject_reason``) and its event; refusals of other commands (unknown order, transfer
that cannot be funded, ...) come back in the command's result. ``api/`` maps each reason to an HTTP
status and an RFC 7807 problem in one table; the engine knows nothing of HTTP.
"""

from __future__ import annotations

from enum import StrEnum


class Stage(StrEnum):
    VALIDATION = "validation"  # the request is well formed but breaks an instrument or order rule
    LOOKUP = "lookup"  # it names something that does not exist (for this client)
    STATE = "state"  # the thing exists but is not in a state that allows the command
    RISK = "risk"  # ledger or price-band limits
    MATCHING = "matching"  # decided while matching (ALO cross, AON, no liquidity)


class Reject(StrEnum):
    """Why a command was refused. The value is the wire form (``reject_reason`` of an order)."""

    stage: Stage  # each member's, set by __new__ (an annotation alone makes no member)

    def __new__(cls, value: str, stage: Stage) -> Reject:
        obj = str.__new__(cls, value)
        obj._value_ = value
        obj.stage = stage
        return obj

    # validation: instrument and order rules
    PRICE_OFF_GRID = ("PRICE_OFF_GRID", Stage.VALIDATION)
    QTY_OFF_GRID = ("QTY_OFF_GRID", Stage.VALIDATION)
    QTY_BELOW_MINIMUM = ("QTY_BELOW_MINIMUM", Stage.VALIDATION)
    QTY_NOT_POSITIVE = ("QTY_NOT_POSITIVE", Stage.VALIDATION)
    PRICE_NOT_POSITIVE = ("PRICE_NOT_POSITIVE", Stage.VALIDATION)
    PRICE_REQUIRED = ("PRICE_REQUIRED", Stage.VALIDATION)
    ALO_NOT_ALLOWED_ON_MARKET = ("ALO_NOT_ALLOWED_ON_MARKET", Stage.VALIDATION)
    AON_ONLY_ON_MARKET = ("AON_ONLY_ON_MARKET", Stage.VALIDATION)
    AGGRESSIVE_PRICING_ONLY_ON_MARKET = ("AGGRESSIVE_PRICING_ONLY_ON_MARKET", Stage.VALIDATION)
    STP_INVALID = ("STP_INVALID", Stage.VALIDATION)
    HOLD_FEE_RATE_TOO_LOW = ("HOLD_FEE_RATE_TOO_LOW", Stage.VALIDATION)
    DUPLICATE_EXTERNAL_ID = ("DUPLICATE_EXTERNAL_ID", Stage.VALIDATION)
    # lookup
    UNKNOWN_INSTRUMENT = ("UNKNOWN_INSTRUMENT", Stage.LOOKUP)
    UNKNOWN_CLIENT = ("UNKNOWN_CLIENT", Stage.LOOKUP)
    UNKNOWN_ORDER = ("UNKNOWN_ORDER", Stage.LOOKUP)
    UNKNOWN_ASSET = ("UNKNOWN_ASSET", Stage.LOOKUP)
    UNKNOWN_TRANSFER = ("UNKNOWN_TRANSFER", Stage.LOOKUP)
    # state
    INSTRUMENT_HALTED = ("INSTRUMENT_HALTED", Stage.STATE)
    INSTRUMENT_DISABLED = ("INSTRUMENT_DISABLED", Stage.STATE)
    INSTRUMENT_OPENING = ("INSTRUMENT_OPENING", Stage.STATE)
    CLIENT_NOT_ACTIVE = ("CLIENT_NOT_ACTIVE", Stage.STATE)
    ORDER_NOT_ACTIVE = ("ORDER_NOT_ACTIVE", Stage.STATE)
    ORDER_PENDING = ("ORDER_PENDING", Stage.STATE)
    TOO_MANY_OPEN_ORDERS = ("TOO_MANY_OPEN_ORDERS", Stage.STATE)
    # risk
    INSUFFICIENT_BALANCE = ("INSUFFICIENT_BALANCE", Stage.RISK)
    PRICE_OUTSIDE_BAND = ("PRICE_OUTSIDE_BAND", Stage.RISK)
    # matching
    ALO_WOULD_TRADE = ("ALO_WOULD_TRADE", Stage.MATCHING)
    NO_LIQUIDITY = ("NO_LIQUIDITY", Stage.MATCHING)
    NOT_ENOUGH_LIQUIDITY = ("NOT_ENOUGH_LIQUIDITY", Stage.MATCHING)
    QUOTE_DEPTH_LIMIT = ("QUOTE_DEPTH_LIMIT", Stage.MATCHING)

    @property
    def stage_name(self) -> str:
        return self.stage.value


class CancelReason(StrEnum):
    """Why an order ended CANCELED (``cancel_reason`` on the record, ``reason`` on the event)."""

    REQUESTED = "REQUESTED"
    IOC_REMAINDER = "IOC_REMAINDER"
    MARKET_REMAINDER = "MARKET_REMAINDER"
    AON_NOT_FILLABLE = "AON_NOT_FILLABLE"
    SELF_TRADE_PREVENTION = "SELF_TRADE_PREVENTION"
    EXPIRED = "EXPIRED"
    MODIFIED_TO_EXECUTED = "MODIFIED_TO_EXECUTED"
    # the venue's own cancels (a ``venue_cancel`` command: a fault the control plane or a scenario injects)
    RISK_EVENT = "RISK_EVENT"
    INSTRUMENT_HALT = "INSTRUMENT_HALT"


#: the reasons a ``venue_cancel`` may give (the spec's "canceled by ... market conditions")
VENUE_CANCEL_REASONS = (CancelReason.RISK_EVENT.value, CancelReason.INSTRUMENT_HALT.value)
