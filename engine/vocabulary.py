"""The venue's vocabulary: every status, side, order type, time in force, instruction and setting word,
defined once as a ``str`` enum (``enum.StrEnum``).

A member *is* its wire string: it compares and hashes equal to it (``Side.BUY == "BUY"``), formats as
it (``f"{Side.BUY}"`` is ``BUY``), and orjson and json serialise it as it, so the wire, the journal
and the pinned digests see the same strings they always did. Strings arriving from outside (a
request, a scenario, a journal) stay plain ``str`` and compare equal to the members.

One word can mean different things: ``ACTIVE`` is an order status (:class:`OrderStatus`), an
instrument status (:class:`InstrumentStatus`) and the status of a client or an asset; ``INITIALIZED``
and ``REJECTED`` are order and transfer statuses. Each meaning is its own enum.

The engine's hot loops bind the words they use to module-level names, as the plain strings
(``BUY = Side.BUY.value``): a module global is one lookup where an enum class attribute is two, and a
set or dict lookup of an exact ``str`` takes CPython's fast path where a ``str`` subclass does not
(about 10 ns more per status test, measured). What the engine stores is then mostly plain strings,
which is all the same to every reader.
"""

from __future__ import annotations

from enum import StrEnum


class Word(StrEnum):
    """A word of the vocabulary. Its ``repr`` is its string's (``'BUY'``), as ``str`` and ``format``
    already are: a message that shows a value with ``!r`` reads the same whether the value came from
    the engine (a member) or from outside (a plain ``str``)."""

    __repr__ = str.__repr__


class OrderStatus(Word):
    """An order's status (the description's states and transitions)."""

    INITIALIZED = "INITIALIZED"
    NEW_PENDING = "NEW_PENDING"
    REJECTED = "REJECTED"
    ACTIVE = "ACTIVE"
    FILLED = "FILLED"
    CANCEL_PENDING = "CANCEL_PENDING"
    CANCELED = "CANCELED"
    MODIFY_PENDING = "MODIFY_PENDING"


class InstrumentStatus(Word):
    """An instrument's status: DISABLED cancels every resting order, OPENING accepts orders without
    matching, ACTIVE trades, HALTED refuses new orders."""

    DISABLED = "DISABLED"
    OPENING = "OPENING"
    ACTIVE = "ACTIVE"
    HALTED = "HALTED"


class ClientStatus(Word):
    """A client's status (the description shows ``ACTIVE``); a client in any other cannot place orders."""

    ACTIVE = "ACTIVE"


class AssetStatus(Word):
    """An asset's status (the description shows ``ACTIVE`` on assets)."""

    ACTIVE = "ACTIVE"


class TransferStatus(Word):
    """A transfer's status: INITIALIZED until the settlement delay has passed, then COMPLETED or REJECTED."""

    INITIALIZED = "INITIALIZED"
    COMPLETED = "COMPLETED"
    REJECTED = "REJECTED"


class Side(Word):
    BUY = "BUY"
    SELL = "SELL"


class OrderType(Word):
    LIMIT = "LIMIT"
    MARKET = "MARKET"


class TimeInForce(Word):
    GTC = "GTC"
    IOC = "IOC"


class ExecInst(Word):
    """Execution instructions: ALO (add liquidity only, LIMIT only), AON (all or none, MARKET only)."""

    ALO = "ALO"
    AON = "AON"


class OrderFlag(Word):
    """Order flags: USE_AGGRESSIVE_PRICING (MARKET only) widens the protection price."""

    USE_AGGRESSIVE_PRICING = "USE_AGGRESSIVE_PRICING"


class SelfTradePrevention(Word):
    """Self-trade prevention: NONE trades with itself, CANCEL_AGGRESSIVE cancels the incoming order's
    remainder at the first own resting order met, CANCEL_BOTH cancels that resting order too; INVALID
    is a value the description lists, and an order under it is refused."""

    INVALID = "INVALID"
    NONE = "NONE"
    CANCEL_AGGRESSIVE = "CANCEL_AGGRESSIVE"
    CANCEL_BOTH = "CANCEL_BOTH"


class LiquidityFlag(Word):
    """Which side of a match a fill was: the resting order (MAKER) or the incoming one (TAKER)."""

    MAKER = "MAKER"
    TAKER = "TAKER"


class TransferType(Word):
    DEPOSIT = "DEPOSIT"
    WITHDRAW = "WITHDRAW"


class Platform(Word):
    FIAT = "FIAT"
    CRYPTO = "CRYPTO"


# (sets of the plain strings: the hot path tests an order's status against them, see above)
#: statuses in which an order sits in the book and can trade
WORKING: frozenset[str] = frozenset(
    s.value for s in (OrderStatus.ACTIVE, OrderStatus.MODIFY_PENDING, OrderStatus.CANCEL_PENDING)
)
#: statuses from which nothing changes any more
FINAL: frozenset[str] = frozenset(s.value for s in (OrderStatus.REJECTED, OrderStatus.FILLED, OrderStatus.CANCELED))
