"""The JSON Schemas of the OpenAPI document: request bodies and the records responses carry.

Request bodies come from the intakes' own validation tables (``api.edge.validate.F`` specs such as
``ORDER_INFO`` or ``TRANSFER_REQUEST``, ``api/edge/intake.py``), so the document cannot drift from the
validator; the rules across fields are written here as ``if``/``then``, and
``tests/api/edge/test_intake.py`` holds them to the intake's rules. Records are
the exact shapes ``api/edge/serialize.py`` produces, with enumerations from the engine's own constants; a
list read is ``oneOf`` the v2026_01_23 page envelope and the v2024_01_01 raw array (:func:`list_of`).
The operations that use them are in ``api/web/cefi/openapi_operations.py``; ``api/web/app/openapi_documents.py``
assembles the
document.
"""

from __future__ import annotations

from typing import Any

from cefisim.api.edge import intake, versions
from cefisim.api.edge.openapi_blocks import (
    DEC,
    EXTERNAL_ID_PATTERN,
    ID,
    ID_PATTERN,
    TIMESTAMP_PATTERN,
    TS,
    at_least_one,
    field_schema,
    nullable,
    object_schema,
    present,
    record,
    ref,
    string,
    with_rules,
)
from cefisim.api.web.cefi import account, public
from cefisim.engine.queries import A_CANCEL, A_CONFIRM, A_FILLED, A_MODIFY, A_REJECT, A_TRADE
from cefisim.engine.reference import SYMBOL_MAX
from cefisim.engine.rejects import CancelReason, Reject
from cefisim.engine.vocabulary import (
    InstrumentStatus,
    LiquidityFlag,
    OrderStatus,
    Platform,
    SelfTradePrevention,
    Side,
    TransferStatus,
    TransferType,
)

BUY = Side.BUY
ORDER_STATUSES = tuple(OrderStatus)
SELL = Side.SELL
CRYPTO = Platform.CRYPTO
DEPOSIT = TransferType.DEPOSIT
FIAT = Platform.FIAT
MAKER = LiquidityFlag.MAKER
T_COMPLETED = TransferStatus.COMPLETED
T_INITIALIZED = TransferStatus.INITIALIZED
T_REJECTED = TransferStatus.REJECTED
TAKER = LiquidityFlag.TAKER
WITHDRAW = TransferType.WITHDRAW
INSTRUMENT_STATUSES = tuple(InstrumentStatus)
STP_VALUES = tuple(SelfTradePrevention)

SIGNED_DECIMAL_PATTERN = r"^-?[0-9]+(\.[0-9]+)?$"
REF_ID_PATTERN = f"({ID_PATTERN})|{EXTERNAL_ID_PATTERN}"
#: an HTTP-date (RFC 9110 IMF-fixdate), as ``Sunset`` and ``deprecation_date`` carry it
HTTP_DATE_PATTERN = (
    r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
    r"[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$"
)
SIDES = [BUY, SELL]
#: ``cancel_reason``: why the engine ended an order CANCELED, or, for an order acknowledged late
#: (entry latency) that could no longer enter the book, the reject it met then (ALO_WOULD_TRADE,
#: NO_LIQUIDITY, INSTRUMENT_HALTED, INSTRUMENT_DISABLED, ...): both engine enumerations
CANCEL_REASONS = [
    *(r.value for r in CancelReason),
    *(r.value for r in Reject if r.value not in CancelReason.__members__),
]
#: marks a ``oneOf`` of the v2026_01_23 shape and the v2024_01_01 one (:func:`versioned`)
LEGACY_MARK = "x-legacy-v2024"


# --- request schemas from the validation tables -----------------------------------------------


def request_schemas() -> dict[str, Any]:
    instructions = {
        "oneOf": [ref("FiatInstructions"), ref("CryptoInstructions")],
        "description": "fiat instructions when platform is FIAT, crypto instructions when CRYPTO",
    }
    order_info = object_schema(intake.ORDER_INFO)
    order_info["description"] = "price is required for LIMIT orders; on MARKET orders it is ignored"
    order_info["if"] = {"properties": {"type": {"const": "LIMIT"}}, "required": ["type"]}
    order_info["then"] = {"required": ["price"], "properties": {"price": {"type": "string"}}}
    modify_info = object_schema(intake.MODIFY_INFO)
    modify_info["description"] = "new_qty is the new total quantity; new_price is required unless new_type is MARKET"
    modify_info["if"] = {"not": {"properties": {"new_type": {"const": "MARKET"}}, "required": ["new_type"]}}
    modify_info["then"] = {"required": ["new_price"], "properties": {"new_price": {"type": "string"}}}
    patch_order = with_rules(
        object_schema(intake.PATCH_ORDER, overrides={"info": ref("ModifyInfo")}),
        at_least_one(present("id"), present("external_id")),
        description="names the order by id or external_id (at least one); given both, the order is found by id and "
        "external_id becomes its new external id",
    )
    return {
        "OrderInfo": order_info,
        "PostOrderRequest": object_schema(intake.POST_ORDER, overrides={"info": ref("OrderInfo")}),
        "ModifyInfo": modify_info,
        "PatchOrderRequest": patch_order,
        "FiatInstructions": object_schema(intake.FIAT_INSTRUCTIONS),
        "CryptoInstructions": object_schema(intake.CRYPTO_INSTRUCTIONS),
        "TransferRequest": object_schema(intake.TRANSFER_REQUEST, overrides={"instructions": instructions}),
        "PostTransferRequest": object_schema(intake.POST_TRANSFER, overrides={"request": ref("TransferRequest")}),
        "PatchClientRequest": object_schema(account.PATCH_CLIENT),
        "MarketQuoteRequest": object_schema(public.MARKET_QUOTE),
        "MarketsQuoteRequest": object_schema(public.MARKETS_QUOTE),
    }


# --- response schemas: the shapes api/edge/serialize.py produces -----------------------------------


def _order_info_record() -> dict[str, Any]:
    """``order_info`` as returned: every key of OrderInfo present, optional ones ``null``."""
    props: dict[str, Any] = {}
    for name, f in intake.ORDER_INFO.items():
        schema = field_schema(f)
        if name in ("qty", "price", "hold_fee_rate"):
            schema = dict(DEC)  # the request's own spelling, already validated
        if name in ("flags", "exec_inst_flags", "tif") or f.required:
            props[name] = schema
        else:
            props[name] = nullable(schema)
    return record(props, description="the order as entered (quantity and price as the request spelled them)")


def _modify_info_record() -> dict[str, Any]:
    """``modify_info`` as returned: the last ModifyInfo as received, only the keys it carried."""
    schema = object_schema(intake.MODIFY_INFO)
    schema["properties"] = {k: field_schema(f) for k, f in intake.MODIFY_INFO.items()}
    return schema


def response_schemas(served: tuple[str, ...]) -> dict[str, Any]:
    """The records responses carry, in a document of the schema versions ``served``."""
    order_statuses = list(ORDER_STATUSES)
    return {
        "Problem": {
            **record(
                {
                    "type": string(
                        format="uri",
                        pattern="^https://cefisim\\.dev/problems/[a-z0-9-]+$",
                        description="absolute URI ending in a stable slug, e.g. "
                        "https://cefisim.dev/problems/invalid-request",
                    ),
                    "title": string(),
                    "status": {"type": "integer", "minimum": 400, "maximum": 599},
                    "detail": string(description="names the offending field; never contains a secret"),
                },
                description="RFC 7807 problem details; a problem type may add extension members (RFC 7807 "
                "section 3.2), e.g. what the server signed on a signature mismatch",
            ),
            "additionalProperties": {"type": ["string", "integer", "boolean", "null"]},
            "propertyNames": {"pattern": "^[a-z][a-z0-9_]*$"},
        },
        "NestedProblem": record(
            {"error": ref("Problem")}, description="schema v2026_01_23: the problem nested in `error`"
        ),
        "ProblemResponse": versioned(ref("NestedProblem"), {**ref("Problem"), "description": "v2024_01_01: bare"}),
        "Pagination": record(
            {
                "size": {"type": "integer", "minimum": 0, "description": "page size (records asked for)"},
                "next_cursor": nullable(
                    string(
                        pattern=TIMESTAMP_PATTERN,
                        description=(
                            "timestamp of the oldest record on the page; send it back as `timestamp` for the next "
                            "page; null at the end of results"
                        ),
                    )
                ),
            }
        ),
        "Health": record(
            {
                "status": string(enum=["ok"]),
                "timestamp": string(
                    pattern="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
                    description="engine time, ISO 8601 UTC",
                ),
                "service": string(),
            }
        ),
        "VersionItem": record(
            {
                "version": string(enum=list(served)),
                "deprecated": {"type": "boolean"},
                "deprecation_date": string(
                    pattern=HTTP_DATE_PATTERN, description="HTTP-date; present only when deprecated"
                ),
            },
            required=["version", "deprecated"],
        ),
        "Versions": record(
            {
                "supported_versions": {
                    "type": "array",
                    "items": ref("VersionItem"),
                    "minItems": len(served),
                    "maxItems": len(served),
                },
                "default_version": string(enum=[versions.V2024 if versions.V2024 in served else versions.V2026]),
                "version_header": string(enum=[versions.HEADER]),
            }
        ),
        "Asset": record(
            {
                "id": ID,
                "status": string(examples=["ACTIVE"]),
                "fields": record({"name": string(), "decimals": {"type": "integer", "minimum": 0}}),
            }
        ),
        "InstrumentStats": record(
            {
                "last_price": nullable(DEC),
                "best_bid": nullable(DEC),
                "best_bid_qty": nullable(DEC),
                "best_ask": nullable(DEC),
                "best_ask_qty": nullable(DEC),
            }
        ),
        "Instrument": record(
            {
                "id": ID,
                "status": string(enum=list(INSTRUMENT_STATUSES)),
                "info": record(
                    {
                        "symbol": string(maxLength=SYMBOL_MAX),
                        "base_asset_id": ID,
                        "quote_asset_id": ID,
                        "price_increment": DEC,
                        "qty_increment": DEC,
                        "min_qty": DEC,
                        "price_band": DEC,
                        "maker_fee": DEC,
                        "taker_fee": DEC,
                    }
                ),
                "stats": ref("InstrumentStats"),
            }
        ),
        "MarketDataEntry": record(
            {
                "id": ID,
                "symbol": string(maxLength=SYMBOL_MAX),
                "info": record(
                    {
                        "last_price": nullable(DEC),
                        "best_bid": nullable(DEC),
                        "best_bid_qty": nullable(DEC),
                        "best_ask": nullable(DEC),
                        "best_ask_qty": nullable(DEC),
                        "timestamp": TS,
                    }
                ),
            },
            description="exchange best bid and offer",
        ),
        "VwapQuote": record(
            {"quote": DEC, "buy_amount": DEC}, description="VWAP of spending `qty` of the quote asset on the asks"
        ),
        "MarketsQuote": record(
            {"qty": DEC, "price": DEC, "notional": DEC, "notional_residual": DEC}, description="schema v2026_01_23"
        ),
        "MarketsQuoteV2024": record({"qty": DEC, "price": DEC}, description="schema v2024_01_01: qty and price only"),
        "Client": record(
            {
                "id": ID,
                "status": string(examples=["ACTIVE"]),
                "info": record(
                    {
                        "self_trade_prevention": string(enum=list(STP_VALUES)),
                        "mnemonic": string(),
                    }
                ),
            }
        ),
        "OrderInfoRecord": _order_info_record(),
        "ModifyInfoRecord": _modify_info_record(),
        "OrderRecord": record(
            {
                "id": ID,
                "status": string(enum=order_statuses),
                "order_info": ref("OrderInfoRecord"),
                "modify_info": {"oneOf": [ref("ModifyInfoRecord"), {"type": "null"}]},
                "external_id": nullable(string(pattern=EXTERNAL_ID_PATTERN)),
                "ref_external_id": nullable(string()),
                "pending_qty": DEC,
                "leaves_qty": DEC,
                "exeuted_qty": {**DEC, "description": "executed quantity (the venue spells the field this way)"},
                "executed_vwap": DEC,
                "reject_reason": nullable(string(enum=[r.value for r in Reject])),
                "cancel_reason": nullable(string(enum=CANCEL_REASONS)),
                "timestamp": TS,
                "updated_timestamp": TS,
            }
        ),
        "TradeRecord": record(
            {
                "client_id": ID,
                "instrument_id": ID,
                "order_id": ID,
                "trade_price": DEC,
                "trade_qty": DEC,
                "trade_fee_rate": DEC,
                "liq_flag": string(enum=[TAKER, MAKER]),
                "match_id": ID,
                "timestamp": TS,
            }
        ),
        "OrderActivity": record(
            {
                "type": string(enum=[A_CONFIRM, A_REJECT, A_TRADE, A_CANCEL, A_MODIFY, A_FILLED]),
                "timestamp": TS,
                "order_id": ID,
                "external_id": nullable(string()),
                "client_id": ID,
                "instrument_id": ID,
                "side": string(enum=SIDES),
                "status": string(enum=order_statuses, description="the order's current status"),
                "detail": nullable(
                    string(description="reject or cancel reason, modification, or the liquidity flag of a trade")
                ),
                "trade": ref("TradeRecord"),
            },
            required=[
                "type",
                "timestamp",
                "order_id",
                "external_id",
                "client_id",
                "instrument_id",
                "side",
                "status",
                "detail",
            ],
            description="`trade` is present on TRADE items only",
        ),
        "BalanceEntry": record({"type": string(enum=["TOTAL", "AVAILABLE", "HOLD"]), "amount": DEC}),
        "BalanceRecord": record(
            {
                "id": {**ID, "description": "asset id"},
                "status": string(enum=["ACTIVE"]),
                "unsettled_fees": DEC,
                "fees_hold": DEC,
                "balances": {"type": "array", "items": ref("BalanceEntry")},
            }
        ),
        "BalanceChange": record({"asset_id": ID, "amount": string(pattern=SIGNED_DECIMAL_PATTERN)}),
        "BalanceActivity": record(
            {
                "type": string(enum=[A_TRADE, DEPOSIT, WITHDRAW, "PAPER_FUNDS"]),
                "timestamp": TS,
                "changes": {"type": "array", "items": ref("BalanceChange")},
                "order_id": ID,
                "match_id": ID,
                "transfer_id": ID,
            },
            required=["type", "timestamp", "changes"],
            description="order_id and match_id on TRADE, transfer_id on DEPOSIT and WITHDRAW",
        ),
        "TransferRequestRecord": record(
            {
                "amount": DEC,
                "asset_id": ID,
                "client_id": ID,
                "type": string(enum=[DEPOSIT, WITHDRAW]),
                "platform": string(enum=[FIAT, CRYPTO]),
                "instructions": {"oneOf": [ref("FiatInstructions"), ref("CryptoInstructions")]},
            }
        ),
        "Transfer": record(
            {
                "id": ID,
                "status": string(enum=[T_INITIALIZED, T_COMPLETED, T_REJECTED]),
                "request": ref("TransferRequestRecord"),
                "reject_reason": string(
                    enum=[r.value for r in Reject], description="present only on REJECTED transfers"
                ),
            },
            required=["id", "status", "request"],
            description="response of POST /transfers",
        ),
        "TransferListing": record(
            {
                "id": ID,
                "status": string(enum=[T_INITIALIZED, T_COMPLETED, T_REJECTED]),
                "request": ref("TransferRequestRecord"),
                "reject_reason": string(
                    enum=[r.value for r in Reject], description="present only on REJECTED transfers"
                ),
                "timestamp": TS,
                "updated_timestamp": TS,
            },
            required=["id", "status", "request", "timestamp", "updated_timestamp"],
            description="a transfer in a listing",
        ),
    }


LIST_ITEMS: list[str] = []  # record types some list read returns (each gets a v2026_01_23 page schema)


def page_name(item: str) -> str:
    return item + "Page"


def page_schema(item: str) -> dict[str, Any]:
    return record(
        {"data": {"type": "array", "items": ref(item)}, "pagination": ref("Pagination")},
        description=f"schema v2026_01_23 envelope of {item} records",
    )


def list_of(item: str) -> dict[str, Any]:
    """The response schema of a list read of ``item`` records (registers its page schema)."""
    if item not in LIST_ITEMS:
        LIST_ITEMS.append(item)
    return versioned(
        ref(page_name(item)), {"type": "array", "items": ref(item), "description": "schema v2024_01_01: the raw array"}
    )


def versioned(current: dict[str, Any], legacy: dict[str, Any]) -> dict[str, Any]:
    """A response shape that differs by schema version: ``oneOf`` both while v2024_01_01 is served,
    ``current`` alone once it is not (:func:`for_versions` decides)."""
    return {"oneOf": [current, legacy], LEGACY_MARK: True}


def for_versions(node: Any, served: tuple[str, ...]) -> Any:
    """``node`` (a document or part of one) with every :func:`versioned` shape resolved for ``served``."""
    if isinstance(node, dict):
        if node.get(LEGACY_MARK):
            if versions.V2024 not in served:
                rest = {k: v for k, v in node.items() if k not in ("oneOf", LEGACY_MARK)}
                return {**for_versions(node["oneOf"][0], served), **rest}
            node = {k: v for k, v in node.items() if k != LEGACY_MARK}
        return {k: for_versions(v, served) for k, v in node.items()}
    if isinstance(node, list):
        return [for_versions(v, served) for v in node]
    return node
