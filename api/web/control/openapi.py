"""The control plane (``/_sim/``) as its own OpenAPI document, served at ``GET /_sim/openapi.json``.

A document of its own, not a tag of the venue's: ``/_sim/`` is the emulator's, not the venue's (a
client generated for the venue must not grow a ``reset``), it is guarded differently (loopback or
``--control-token`` bearer; off in ``--environment production``) and its problems are always bare
RFC 7807 documents. :data:`CONTROL_OPERATIONS` describes each route of ``api.web.control.plane.control_routes()``
and ``api.web.control.faults.fault_routes()`` (the tests fail on a route it lacks); bodies come from the same
``api.edge.validate.F`` tables the handlers check where they have one.
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

import cefisim
from cefisim.api.edge.openapi_blocks import (
    DEC,
    ID,
    TS,
    at_least_one,
    described,
    exactly_one,
    nullable,
    object_schema,
    present,
    record,
    ref,
    servers,
    with_rules,
)
from cefisim.api.edge.problems import PROBLEM_CONTENT_TYPE
from cefisim.api.edge.validate import F
from cefisim.api.formats.scenario.model import SECONDS_TEXT_RE
from cefisim.api.side_state.venue_faults import MAX_LAG_MS, MAX_SKEW_S, SETTINGS
from cefisim.api.web.control.faults import HTTP_FAULTS_SPEC, VENUE_CANCEL_SPEC, fault_routes
from cefisim.api.web.control.isolated_venues import VENUE_PREFIX, VENUE_RESOURCE, venue_routes
from cefisim.api.web.control.plane import (
    CONTROL_CHALLENGE,
    MAX_ADVANCE_NS,
    MAX_DURATION_CHARS,
    MAX_LATENCY_MS,
    MAX_SETTLEMENT_DELAY_MS,
    control_routes,
)
from cefisim.api.web.control.stream import stream_routes
from cefisim.api.web.server.request_log import MAX_CAPACITY as MAX_HISTORY
from cefisim.engine.clock import NS_PER_DAY, NS_PER_SECOND
from cefisim.engine.retention import MAX_STATUS_RETENTION_NS, MIN_STATUS_RETENTION_NS
from cefisim.engine.vocabulary import InstrumentStatus, Side

BUY = Side.BUY
SELL = Side.SELL
INSTRUMENT_STATUSES = tuple(InstrumentStatus)

SIM_PREFIX = "/_sim"
CONTROL_OPENAPI_PATH = SIM_PREFIX + "/openapi.json"
JSON = "application/json"
ISO = {"type": "string", "format": "date-time"}
CLOCK = {"now_ns": TS, "now": ISO, "clock": {"type": "string", "enum": ["virtual", "wall"]}}
MS = {"type": "string", "pattern": r"^[0-9]+(\.[0-9]{1,3})?$", "description": "milliseconds"}


def _below(n: int) -> str:
    """A regular expression of the whole numbers 0 to ``n - 1`` written without leading zeros."""
    digits = str(n)
    parts = [f"[0-9]{{1,{len(digits) - 1}}}"] if len(digits) > 1 else []
    for i, d in enumerate(digits):
        low = 1 if i == 0 and len(digits) > 1 else 0
        if int(d) > low:
            rest = len(digits) - i - 1
            parts.append(digits[:i] + f"[{low}-{int(d) - 1}]" + (f"[0-9]{{{rest}}}" if rest else ""))
    return "|".join(parts) or "(?!)"


def duration(most: int, unit: str) -> dict[str, Any]:
    """A duration as api.web.control.plane takes it, 0 to ``most`` ``unit``: a whole number, or a decimal string
    with up to 3 significant decimals (trailing zeros allowed)."""
    pattern = rf"^0*(({_below(most)})(\.[0-9]{{0,2}}[0-9]0*)?|{most}(\.0+)?)$"
    return {
        "type": ["integer", "string"],
        "minimum": 0,
        "maximum": most,
        "pattern": pattern,
        "maxLength": MAX_DURATION_CHARS,
        "description": f"{unit}, 0 to {most}, up to 3 decimals",
    }


LATENCY_MS = duration(MAX_LATENCY_MS, "milliseconds")
SETTLEMENT_MS = duration(MAX_SETTLEMENT_DELAY_MS, "milliseconds")
ADVANCE_SECONDS = duration(MAX_ADVANCE_NS // NS_PER_SECOND, "seconds")


def _whole(low: int, high: int, pattern: str) -> dict[str, Any]:
    """A whole number as the validator's kind ``whole`` takes it: an integer, or its decimal digits, low to high."""
    return {"type": ["integer", "string"], "minimum": low, "maximum": high, "pattern": pattern}


#: HTTP_FAULTS_SPEC's fields as set_http_faults then checks them
HTTP_FAULT_FIELDS = {
    "count": _whole(1, 1_000_000, "^0*([1-9][0-9]{0,5}|1000000)$"),
    "share": {
        "type": "string",
        "pattern": r"^(0+(\.[0-9]{1,6})?|0*1(\.0{1,6})?)$",
        "maxLength": 40,
        "description": "a fraction from 0 to 1, at most 6 decimals",
    },
    "status": _whole(400, 599, "^0*[45][0-9]{2}$"),
    "delay_ms": _whole(0, 60_000, "^0*([0-9]{1,4}|[1-5][0-9]{4}|60000)$"),
}
VENUE_LAG_MS = _whole(0, MAX_LAG_MS, "^0*([0-9]{1,6}|[1-2][0-9]{6}|3[0-5][0-9]{5}|3600000)$")


def _venue_faults_request() -> dict[str, Any]:
    """The venue faults' settings (api/side_state/venue_faults.py), clock_skew_s signed."""
    skew = {
        "type": ["integer", "string"],
        "minimum": -MAX_SKEW_S,
        "maximum": MAX_SKEW_S,
        "pattern": "^-?[0-9]{1,6}$",
        "description": f"whole seconds, -{MAX_SKEW_S} to {MAX_SKEW_S}",
    }
    overrides = {"read_lag_ms": VENUE_LAG_MS, "fill_delay_ms": VENUE_LAG_MS, "clock_skew_s": skew}
    out = object_schema(SETTINGS, overrides=overrides)
    out["description"] = "read lag, fill delay (ms) and clock skew (s); an absent one is 0: off (docs/faults.md)"
    return out


#: the bodies the handlers check with api.edge.validate (advance_clock, set_latency, ...), as tables
ADVANCE = {"seconds": F("number"), "to": F("str"), "to_ns": F("id")}
LATENCY = {"entry_ms": F("number"), "modify_ms": F("number"), "cancel_ms": F("number")}
SETTLEMENT = {"ms": F("number", required=True)}
STATUS = {"status": F("enum", required=True, values=INSTRUMENT_STATUSES)}

#: the ``WWW-Authenticate`` of a 401 (``--control-token``): an error code when a wrong token was sent
_CHALLENGE = "^" + re.escape(CONTROL_CHALLENGE) + '(, error="invalid_token")?$'
_ERRORS = {
    400: "malformed body or query (the detail names the field)",
    401: "the server runs with --control-token and the request lacks `Authorization: Bearer <token>`",
    403: "without --control-token, only loopback peers are served",
    404: "no such instrument, key, journal or venue (and every path with --environment production)",
    408: "the body did not arrive within the server's read timeout",
    409: "the request needs a virtual clock; DELETE /_sim/venues/default: the default venue cannot be deleted",
    413: "body larger than the server accepts",
    429: "GET /_sim/stream: as many streams are open as the server allows; POST /_sim/venues: as many venues "
    "run as --max-venues allows",
    500: "an engine invariant does not hold (GET /_sim/invariants), or an internal error",
}


COUNT = {"type": "integer", "minimum": 0}
SECONDS = {"type": "string", "pattern": SECONDS_TEXT_RE.pattern, "description": "seconds, up to 9 decimals"}


def _schemas() -> dict[str, Any]:
    low, high = MIN_STATUS_RETENTION_NS // NS_PER_SECOND, MAX_STATUS_RETENTION_NS // NS_PER_SECOND
    own_order = record(
        {
            "order_id": ID,
            "client_id": ID,
            "side": {"type": "string", "enum": [BUY, SELL]},
            "price": DEC,
            "leaves_qty": DEC,
            "queue_ahead": nullable(DEC),
        }
    )
    level = record({"price": DEC, "qty": DEC, "orders": {"type": "integer", "minimum": 1}})
    return {
        "Problem": record(
            {
                "type": {"type": "string", "format": "uri"},
                "title": {"type": "string"},
                "status": {"type": "integer", "minimum": 400, "maximum": 599},
                "detail": {"type": "string"},
            },
            description="RFC 7807 problem details",
        ),
        "Health": record(
            {
                "status": {"const": "ok"},
                "scenario": {"type": "string"},
                "clock": CLOCK["clock"],
                "now_ns": TS,
                "orders": COUNT,
                "matches": COUNT,
                "retained_orders": COUNT,
                # which build of the engine runs (docs/build.md)
                "build": {"enum": ["compiled", "pure"]},
            }
        ),
        "Clock": record(dict(CLOCK)),
        "Reset": record({"status": {"const": "reset"}, **CLOCK}),
        "Restored": record({"status": {"const": "restored"}, **CLOCK}),
        "Advanced": record({**CLOCK, "events": {"type": "integer", "minimum": 0}}),
        "AdvanceRequest": with_rules(
            object_schema(ADVANCE, overrides={"seconds": ADVANCE_SECONDS}),
            exactly_one(*(present(name) for name in ADVANCE)),
            description="exactly one of seconds (up to 3 decimals), to (ISO 8601) and to_ns; "
            f"never back, at most {MAX_ADVANCE_NS // NS_PER_DAY} days at once, never past "
            "9999-12-31T23:59:59Z",
        ),
        "Book": record(
            {
                "instrument_id": ID,
                "symbol": {"type": "string"},
                "status": {"type": "string", "enum": list(INSTRUMENT_STATUSES)},
                "bids": {"type": "array", "items": level},
                "asks": {"type": "array", "items": level},
                "last_price": nullable(DEC),
                "timestamp": TS,
            }
        ),
        "Trade": record(
            {
                "match_id": ID,
                "price": DEC,
                "qty": DEC,
                "taker_side": {"type": "string", "enum": [BUY, SELL]},
                "taker_order_id": ID,
                "timestamp": TS,
            }
        ),
        "Latency": record({"entry_ms": MS, "modify_ms": MS, "cancel_ms": MS}),
        "LatencyRequest": {
            **object_schema(LATENCY, overrides=dict.fromkeys(LATENCY, LATENCY_MS)),
            "description": f"milliseconds, 0 to {MAX_LATENCY_MS}, up to 3 decimals; omitted: unchanged",
        },
        "SettlementDelayRequest": object_schema(SETTLEMENT, overrides={"ms": SETTLEMENT_MS}),
        "SettlementDelay": record({"ms": {"type": ["integer", "string"]}}),
        "StatusRequest": object_schema(STATUS),
        "RetentionRequest": {
            **object_schema(
                {"status_retention": F("number", required=True)},
                overrides={
                    "status_retention": {
                        "type": ["integer", "string"],
                        "minimum": low,
                        "maximum": high,
                        "pattern": SECONDS_TEXT_RE.pattern,
                        "maxLength": 24,
                    }
                },
            ),
            "description": f"how long ended orders' status is kept: seconds from {low} to {high} (30 days), "
            "an integer or a decimal string to the nanosecond",
        },
        "Retention": record(
            {
                "status_retention": SECONDS,
                "max_ended_orders_per_client": COUNT,
                "max_ended_orders": COUNT,
                "ended_orders": COUNT,
                "ended_orders_by_client": {
                    "type": "object",
                    "additionalProperties": COUNT,
                    "description": "client id -> ended orders kept",
                },
                "fills": COUNT,
            }
        ),
        "RecordedSources": {
            "type": "array",
            "items": record(
                {
                    "instrument_id": ID,
                    "symbol": {"type": "string"},
                    "files": {"type": "array", "items": {"type": "string"}},
                    "format": {"type": "string"},
                    "speed": {"type": "string"},
                    "offset_ns": {"type": "string"},
                    "queue_model": {"type": "string"},
                    "impact": {"type": "boolean"},
                    "feed_latency_ms": {"type": "string"},
                    "events_applied": COUNT,
                    "done": {"type": "boolean"},
                    "position_ns": nullable(TS),
                    "recording_position_ns": nullable(TS),
                    "next_ns": nullable(TS),
                    "orders": {"type": "array", "items": own_order},
                }
            ),
        },
        "InstrumentStatus": record(
            {"instrument_id": ID, "status": {"type": "string", "enum": list(INSTRUMENT_STATUSES)}}
        ),
        "Invariants": record(
            {
                "ok": {"const": True},
                "asset_totals": {
                    "type": "object",
                    "additionalProperties": DEC,
                    "description": "asset name -> total held by every client",
                },
            }
        ),
        "Snapshot": {
            "type": "object",
            "required": ["scenario_sha256"],
            "properties": {"scenario_sha256": {"type": "string", "description": "the scenario it was taken of"}},
            # the rest is the state as GET /_sim/snapshot wrote it: pass it back as it came
            "additionalProperties": True,
            "description": "the whole state (api/runtime/snapshot.py); restore only into the same scenario",
        },
        "Revoked": record({"key_id": {"type": "string"}, "revoked": {"const": True}}),
        "Requests": record(
            {
                "requests": {
                    "type": "array",
                    "items": record(
                        {
                            "time": ISO,
                            "method": {"type": "string"},
                            "path": {"type": "string"},
                            "status": {"type": "integer", "minimum": 100, "maximum": 599},
                            "ms": {"type": "number", "minimum": 0},
                            "client_id": nullable(ID),
                            "request_id": {"type": "string"},
                            "problem": ref("Problem"),
                        },
                        required=["time", "method", "path", "status", "ms", "client_id", "request_id"],
                        description="one request served; problem: what a failed one answered",
                    ),
                },
                "recorded": {"type": "integer", "minimum": 0, "description": "requests recorded since the start"},
                "capacity": {"type": "integer", "minimum": 1, "description": "requests kept (--request-history)"},
            }
        ),
        "FaultRequest": with_rules(
            object_schema(HTTP_FAULTS_SPEC, overrides=HTTP_FAULT_FIELDS),
            exactly_one(present("count"), present("share")),
            at_least_one(
                present("status"),
                present("delay_ms"),
                {"required": ["drop"], "properties": {"drop": {"const": True}}},
            ),
            description=(
                "exactly one of count (1 to 1000000) and share (0 to 1, 6 decimals); at least one of status (400 to "
                "599), drop and delay_ms (0 to 60000); path_prefix defaults to /v1/. Faulted requests answer the "
                "status as a problem of type injected-fault, which the CeFi document does not list"
            ),
        ),
        "VenueRequest": {
            "type": "object",
            "additionalProperties": False,
            "required": ["scenario"],
            "properties": {
                "scenario": {
                    "oneOf": [
                        {"type": "string", "description": "a shipped scenario's name (`cefisim scenarios`)"},
                        {
                            "type": "object",
                            "additionalProperties": True,
                            "description": "a scenario document (docs/scenarios.md)",
                        },
                    ]
                },
                "seed": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 2**63 - 1,
                    "description": "replaces the scenario's seed",
                },
                "credentials": {
                    "type": "string",
                    "enum": ["minted", "document"],
                    "default": "minted",
                    "description": "minted at random (answered once, by the create) or the document's own",
                },
            },
        },
        "Venue": record(
            {
                "id": {"type": "string"},
                "state": {"const": "live"},
                "scenario": {"type": "string"},
                "seed": {"type": "integer"},
                **CLOCK,
                "control": {"type": "string", "description": "the venue's control plane prefix"},
                "clients": {
                    "type": "array",
                    "items": record(
                        {
                            "client_id": ID,
                            "mnemonic": {"type": "string"},
                            "key": {"type": "string", "format": "uuid"},
                            "secret": {"type": "string", "description": "on create only"},
                        },
                        required=["client_id", "mnemonic", "key"],
                    ),
                },
                "api_keys": {
                    "type": "array",
                    "items": record(
                        {
                            "key_id": {"type": "string"},
                            "kind": {"type": "string", "enum": ["user", "organization"]},
                            "user_id": {"type": "string"},
                            "client_id": {"type": "string"},
                            "users": {
                                "type": "array",
                                "items": record({"user_id": {"type": "string"}, "client_id": {"type": "string"}}),
                                "description": "an organization key: the users it acts for",
                            },
                            "private_key": {"type": "string", "description": "PEM, on create only"},
                        },
                        required=["key_id", "kind"],
                    ),
                },
                "oauth_clients": {
                    "type": "array",
                    "items": record(
                        {
                            "client_id": {"type": "string"},
                            "redirect_uris": {"type": "array", "items": {"type": "string"}},
                            "scopes": {"type": "array", "items": {"type": "string"}},
                        },
                        required=["client_id"],
                    ),
                },
            },
            required=["id", "state", "scenario", "seed", "now_ns", "now", "clock", "control"],
            description="a venue; clients, api_keys and oauth_clients (its credentials, docs/venues.md) on create "
            "and GET one, their secrets and private keys on create only",
        ),
        "SetAsideVenue": record(
            {"id": {"type": "string"}, "state": {"const": "set-aside"}, "reason": {"type": "string"}},
            description="a venue the server could not rebuild on start; its journal is kept (docs/venues.md)",
        ),
        "AnyVenue": {"oneOf": [ref("Venue"), ref("SetAsideVenue")]},
        "Venues": {"type": "array", "items": ref("AnyVenue")},
        "VenueDeleted": record({"id": {"type": "string"}, "deleted": {"const": True}}),
        "VenueCancelRequest": {
            **object_schema(VENUE_CANCEL_SPEC),
            "description": "every resting order, or only a client's, or only on an instrument, or both",
        },
        "VenueCancel": record(
            {
                "reason": {"type": "string", "enum": list(VENUE_CANCEL_SPEC["reason"].values)},
                "canceled": {"type": "array", "items": ID, "description": "per instrument, oldest first"},
            }
        ),
        "VenueFaultsRequest": _venue_faults_request(),
        "VenueFaults": record(
            {
                "read_lag_ms": {"type": "integer", "minimum": 0},
                "fill_delay_ms": {"type": "integer", "minimum": 0},
                "clock_skew_s": {"type": "integer"},
            }
        ),
        "Fault": nullable(
            record(
                {
                    "count": nullable({"type": "integer"}),
                    "share": nullable({"type": "string"}),
                    "status": nullable({"type": "integer"}),
                    "delay_ms": {"type": "integer"},
                    "drop": {"type": "boolean"},
                    "after": {"type": "boolean"},
                    "path_prefix": {"type": "string"},
                    "hits": {"type": "integer", "minimum": 0},
                    "seen": {"type": "integer", "minimum": 0},
                }
            )
        ),
    }


def _op(
    op_id: str,
    summary: str,
    response: str | None,
    *,
    body: str | None = None,
    errors: tuple[int, ...] = (),
    params: tuple[dict[str, Any], ...] = (),
    media: str = JSON,
) -> dict[str, Any]:
    ok: dict[str, Any] = {
        "description": "OK",
        "headers": {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}},
    }
    if response is not None:
        ok["content"] = {media: {"schema": ref(response) if media == JSON else {"type": "string"}}}
    # 400: any control route answers one for a ``venue`` query parameter it does not take (only the
    # stream and the page take one; api/web/control/isolated_venues.py)
    codes = sorted({400, 401, 403, 404, 500, *errors, *((408, 413) if body else ())})
    op: dict[str, Any] = {
        "operationId": op_id,
        "summary": summary,
        "tags": ["control"],
        "responses": {"200": ok, **{str(c): {"$ref": f"#/components/responses/Problem{c}"} for c in codes}},
    }
    if params:
        op["parameters"] = list(params)
    if body is not None:
        op["requestBody"] = {"required": True, "content": {JSON: {"schema": ref(body)}}}
    return op


def _path(name: str, pattern: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string", "pattern": pattern}}


def _count(name: str, default: int) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": {"type": "integer", "minimum": 1, "maximum": 1000, "default": default},
    }


def _ui_file_op() -> dict[str, Any]:
    """The page's script (text/javascript) or style sheet (text/css)."""
    op = _op(
        "sim_ui_file",
        "The live page's script and style sheet",
        "Page",
        media="text/javascript",
        params=(_path("name", "^(app\\.js|style\\.css)$"), VENUE),
    )
    op["responses"]["200"]["content"]["text/css"] = {"schema": {"type": "string"}}
    return op


def _query(name: str, pattern: str | None, required: bool = False) -> dict[str, Any]:
    schema = {"type": "string"} if pattern is None else {"type": "string", "pattern": pattern}
    return {"name": name, "in": "query", "required": required, "schema": schema}


def _created(op: dict[str, Any]) -> dict[str, Any]:
    """``op`` answering 201 Created instead of 200."""
    responses = op["responses"]
    op["responses"] = {"201": {**responses.pop("200"), "description": "Created"}, **responses}
    return op


INSTRUMENT = _path("instrument_id", "^[0-9]+$")
#: the venue of the stream and the page: ``default`` (or empty), or a created venue's id; another is a 404.
#: No other control route takes it (a 400 there): a venue's routes are under /_sim/venues/{venue_id}/
VENUE = {
    "name": "venue",
    "in": "query",
    "required": False,
    "description": "the venue: `default` or a created venue's id (an unknown one: 404). Only the stream and "
    "the page take it; on any other control route it is a 400 (a venue's routes are /_sim/venues/{venue_id}/...)",
    "schema": {"type": "string", "pattern": "^(default|v[1-9][0-9]*)?$", "default": "default"},
}
VENUE_ID = _path("venue_id", "^(default|v[1-9][0-9]*)$")
#: (METHOD, path) -> the operation; every /_sim/ route of the app must have one
CONTROL_OPERATIONS: dict[tuple[str, str], dict[str, Any]] = {
    ("GET", "/_sim/health"): _op("sim_health", "Scenario, clock mode, engine time, counters", "Health"),
    ("POST", "/_sim/reset"): _op("sim_reset", "Back to the loaded scenario (the journal starts anew)", "Reset"),
    ("GET", "/_sim/clock"): _op("sim_clock", "Engine time", "Clock"),
    ("POST", "/_sim/clock/advance"): _op(
        "sim_advance", "Advance a virtual clock", "Advanced", body="AdvanceRequest", errors=(409,)
    ),
    ("GET", "/_sim/book/{instrument_id}"): _op(
        "sim_book", "Depth and last trade price", "Book", errors=(400,), params=(INSTRUMENT, _count("depth", 10))
    ),
    ("GET", "/_sim/trades/{instrument_id}"): _op(
        "sim_trades", "Recent trades, newest first", "Trades", errors=(400,), params=(INSTRUMENT, _count("limit", 50))
    ),
    ("GET", "/_sim/instruments"): _op("sim_instruments", "The venue's instruments", "Instruments"),
    ("GET", "/_sim/latency"): _op("sim_latency", "Acknowledgement delays", "Latency"),
    ("POST", "/_sim/latency"): _op("sim_set_latency", "Set acknowledgement delays", "Latency", body="LatencyRequest"),
    ("POST", "/_sim/settlement-delay"): _op(
        "sim_settlement_delay", "Set the transfer settlement delay", "SettlementDelay", body="SettlementDelayRequest"
    ),
    ("POST", "/_sim/instruments/{instrument_id}/status"): _op(
        "sim_instrument_status",
        "Halt, disable or reopen an instrument",
        "InstrumentStatus",
        body="StatusRequest",
        params=(INSTRUMENT,),
    ),
    ("GET", "/_sim/invariants"): _op("sim_invariants", "Run every engine invariant check", "Invariants"),
    ("GET", "/_sim/journal"): _op(
        "sim_journal", "The journal file (with --journal)", "Journal", media="application/x-ndjson"
    ),
    ("GET", "/_sim/snapshot"): _op("sim_snapshot", "The whole state as JSON", "Snapshot"),
    ("POST", "/_sim/snapshot"): _op(
        "sim_restore", "Restore a snapshot of the same scenario", "Restored", body="Snapshot"
    ),
    ("POST", "/_sim/api-keys/{key_id}/revoke"): _op(
        "sim_revoke_key", "Revoke an API key", "Revoked", params=(_path("key_id", "^[^/]+$"),)
    ),
    ("GET", "/_sim/requests"): _op(
        "sim_requests",
        "The last requests served outside /_sim/, newest first",
        "Requests",
        errors=(400,),
        params=(
            {
                "name": "limit",
                "in": "query",
                "required": False,
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY},
                "description": "how many (default: every request kept; at most --request-history)",
            },
        ),
    ),
    ("GET", "/_sim/faults"): _op("sim_faults", "The injected fault plan (null: none)", "Fault"),
    ("POST", "/_sim/faults"): _op(
        "sim_set_faults", "Inject faults into the next /v1/ requests", "Fault", body="FaultRequest"
    ),
    ("DELETE", "/_sim/faults"): _op("sim_clear_faults", "Remove the fault plan", "Fault"),
    ("POST", "/_sim/faults/venue-cancel"): _op(
        "sim_venue_cancel", "The venue cancels resting orders (journaled)", "VenueCancel", body="VenueCancelRequest"
    ),
    ("GET", "/_sim/faults/venue"): _op("sim_venue_faults", "Read lag, fill delay, clock skew", "VenueFaults"),
    ("POST", "/_sim/faults/venue"): _op(
        "sim_set_venue_faults", "Set read lag, fill delay and clock skew", "VenueFaults", body="VenueFaultsRequest"
    ),
    ("DELETE", "/_sim/faults/venue"): _op(
        "sim_clear_venue_faults", "End read lag, fill delay, clock skew", "VenueFaults"
    ),
    ("GET", "/_sim/retention"): _op(
        "sim_retention", "Status retention, the caps on ended orders, the counts kept", "Retention"
    ),
    ("POST", "/_sim/retention"): _op(
        "sim_set_retention", "Set how long ended orders' status is kept", "Retention", body="RetentionRequest"
    ),
    ("GET", "/_sim/recorded"): _op(
        "sim_recorded",
        "Recorded markets: the recording, the position in it, each own resting order's queue position",
        "RecordedSources",
    ),
    # the live stream and page (api/web/control/stream.py, docs/stream.md)
    ("GET", "/_sim/stream"): _op(
        "sim_stream",
        "Server-sent events of an instrument's depth and trades, and a client's orders (docs/stream.md)",
        "EventStream",
        media="text/event-stream",
        errors=(400, 429),
        params=(
            _query("instrument", "^[0-9]+$", required=True),
            _query("client", "^[0-9]*$"),
            _query("once", "^(0|1|true|false)?$"),
            VENUE,
            {
                "name": "Last-Event-ID",
                "in": "header",
                "required": False,
                "schema": {"type": "string"},
                "description": "resume after this event (n-k or n); too old or unknown: a fresh snapshot",
            },
        ),
    ),
    ("GET", "/_sim/ui"): _op(
        "sim_ui_redirect", "Redirects to /_sim/ui/ (keeping the query)", "Page", media="text/html"
    ),
    ("GET", "/_sim/ui/"): _op(
        "sim_ui",
        "The live page (docs/stream.md)",
        "Page",
        media="text/html",
        # the page's script reads them (a wrong one: the stream refuses it)
        params=(_query("instrument", None), _query("client", None), _query("once", None), VENUE),
    ),
    ("GET", "/_sim/ui/{name}"): _ui_file_op(),
    # isolated venues (api/web/control/isolated_venues.py, docs/venues.md)
    ("POST", "/_sim/venues"): _created(
        _op(
            "sim_create_venue",
            "Create a venue: its own engine, clock, keys and journal",
            "Venue",
            body="VenueRequest",
            errors=(409, 413, 429),
        )
    ),
    ("GET", "/_sim/venues"): _op("sim_venues", "Every venue, the default one first (no credentials)", "Venues"),
    ("GET", VENUE_RESOURCE): _op(
        "sim_venue", "One venue with its credentials", "AnyVenue", params=(_path("id", VENUE_ID["schema"]["pattern"]),)
    ),
    ("DELETE", VENUE_RESOURCE): _op(
        "sim_delete_venue",
        "End a venue: its memory and journal go",
        "VenueDeleted",
        errors=(409,),
        params=(_path("id", VENUE_ID["schema"]["pattern"]),),
    ),
}


def _scoped(op: dict[str, Any]) -> dict[str, Any]:
    """A control operation under /_sim/venues/{venue_id}: the same, for the named venue."""
    out = copy.deepcopy(op)
    out["operationId"] = "venue_" + op["operationId"]
    out["parameters"] = [VENUE_ID, *op.get("parameters", ())]
    out["responses"].setdefault("404", {"$ref": "#/components/responses/Problem404"})
    return out


# every venue-scoped control route is described by its default-venue operation
for _route in venue_routes(control_routes() + fault_routes()):
    if _route.path.startswith(VENUE_PREFIX + "/"):
        _plain = (_route.method, "/_sim" + _route.path.removeprefix(VENUE_PREFIX))
        CONTROL_OPERATIONS[(_route.method, _route.path)] = _scoped(CONTROL_OPERATIONS[_plain])


def control_document(server_url: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of the control plane, naming ``server_url`` (a fresh copy)."""
    return {**copy.deepcopy(control_template()), "servers": servers(server_url)}


@functools.cache
def control_template() -> dict[str, Any]:
    """The control plane's document with no server named (shared: do not modify)."""
    paths: dict[str, dict[str, Any]] = {}
    for route in [
        *control_routes(),
        *fault_routes(),
        *stream_routes(),
        *venue_routes(control_routes() + fault_routes()),
    ]:
        paths.setdefault(route.path, {})[route.method.lower()] = described(CONTROL_OPERATIONS, route.method, route.path)
    paths[CONTROL_OPENAPI_PATH] = {"get": _op("sim_openapi", "This document", "OpenApiDocument")}
    schemas = _schemas()
    schemas["Trades"] = {"type": "array", "items": ref("Trade")}
    schemas["Instruments"] = {
        "type": "array",
        "items": {
            "type": "object",
            "required": ["instrument_id", "symbol"],
            "additionalProperties": False,
            "properties": {"instrument_id": {"type": "string", "pattern": "^[0-9]+$"}, "symbol": {"type": "string"}},
        },
    }
    schemas["Journal"] = {"type": "string"}
    schemas["OpenApiDocument"] = {
        "type": "object",
        "required": ["openapi", "paths"],
        "properties": {"openapi": {"type": "string"}, "paths": {"type": "object", "additionalProperties": True}},
        "additionalProperties": True,
    }
    schemas["EventStream"] = {
        "type": "string",
        "description": "text/event-stream: snapshot, depth, trade and order events (docs/stream.md)",
    }
    schemas["Page"] = {"type": "string"}
    request_id = {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}}
    problem = {"content": {PROBLEM_CONTENT_TYPE: {"schema": ref("Problem")}}, "headers": request_id}
    challenge = {
        "description": "RFC 6750 challenge",
        "required": True,
        "schema": {"type": "string", "pattern": _CHALLENGE},
    }
    challenged = {"headers": {**request_id, "WWW-Authenticate": challenge}}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "cefisim control plane",
            "version": cefisim.__version__,
            "description": "The emulator's own controls under /_sim/ (not part of the venue): clock, "
            "latency, instrument status, snapshots, injected faults. Loopback peers only, "
            "or `Authorization: Bearer <token>` when the server runs with --control-token; "
            "absent with --environment production. A created venue's controls are under "
            "/_sim/venues/{venue_id}/; the others address the default venue, and `venue` in the query "
            "is a parameter of the stream and the page only (400 on any other route).",
            "license": {"name": "MIT", "identifier": "MIT"},
        },
        "servers": servers("http://127.0.0.1:8080"),
        "tags": [{"name": "control", "description": "the emulator's control plane"}],
        "security": [{}, {"controlToken": []}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "responses": {
                f"Problem{code}": {"description": text, **problem, **(challenged if code == 401 else {})}
                for code, text in _ERRORS.items()
            },
            "headers": {"X-Request-Id": {"description": "the request's id", "schema": {"type": "string"}}},
            "securitySchemes": {
                "controlToken": {"type": "http", "scheme": "bearer", "description": "the server's --control-token"}
            },
        },
    }
