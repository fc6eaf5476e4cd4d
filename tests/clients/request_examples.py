"""One valid body of every request a user sends, per document, as the tests of the generated models
build them. Each holds every field its rules allow together (``AdvanceRequest`` names one way to move
the clock), nested objects included; ``test_request_models`` checks each against its schema first."""

from __future__ import annotations

from typing import Any

UUID = "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
AUTHORIZE = {
    "client_id": "cli-demo",
    "redirect_uri": "https://app.example/cb",
    "response_type": "code",
    "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    "code_challenge_method": "S256",
    "resource": "https://mcp.example/",
    "scope": "mcp:read",
    "state": "s-1",
}

#: document ("cefi", "control") -> schema name -> a valid body
EXAMPLES: dict[str, dict[str, dict[str, Any]]] = {
    "cefi": {
        "PostOrderRequest": {
            "external_id": "ext-1",
            "info": {
                "msg_id": "m-1",
                "parent_id": "0",
                "client_id": "100",
                "instrument_id": "1",
                "qty": "0.5",
                "price": "100.00",
                "flags": [],
                "side": "BUY",
                "type": "LIMIT",
                "tif": "GTC",
                "exec_inst_flags": ["ALO"],
                "hold_fee_rate": "0.002",
                "stp": "CANCEL_BOTH",
            },
        },
        "PatchOrderRequest": {
            "id": "5",
            "external_id": "ext-2",
            "info": {
                "msg_id": "m-2",
                "parent_id": "7",
                "client_id": "100",
                "prev_modify": "m-1",
                "new_qty": "1",
                "new_price": "2.5",
                "new_type": "MARKET",
            },
        },
        "PostTransferRequest": {
            "request": {
                "amount": "1.5",
                "asset_id": "2",
                "client_id": "100",
                "type": "WITHDRAW",
                "platform": "CRYPTO",
                "instructions": {"address": "bc1qexample", "network": "bitcoin", "memo": "m"},
            }
        },
        "PatchClientRequest": {
            "id": "100",
            "info": {"self_trade_prevention": "CANCEL_AGGRESSIVE", "mnemonic": "alice"},
        },
        "MarketQuoteRequest": {"qty": "10", "instrument_id": "1"},
        "MarketsQuoteRequest": {"qty": "10.0", "instrument_id": "1", "side": "SELL", "qty_unit": "QUOTE"},
        "KeyExchangeRequest": {"key_id": "k-alice", "timestamp": 1793610000, "signature": "c2lnbmF0dXJl"},
        "RefreshRequest": {"refresh_token": "r-1"},
        "PaperFundsRequest": {"asset": "BTC", "amount": "1.5"},
        "ConsentRequest": {"decision": "approve", **AUTHORIZE},
        "TokenForm": {
            "grant_type": "authorization_code",
            "client_id": "cli-demo",
            "code": "c-1",
            "redirect_uri": "https://app.example/cb",
            "code_verifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
            "refresh_token": "r-1",
            "scope": "mcp:read",
            "resource": "https://mcp.example/",
        },
    },
    "control": {
        "AdvanceRequest": {"seconds": "2.5"},
        "LatencyRequest": {"entry_ms": 5, "modify_ms": "1.5", "cancel_ms": 0},
        "SettlementDelayRequest": {"ms": 60000},
        "StatusRequest": {"status": "HALTED"},
        "RetentionRequest": {"status_retention": "3600.5"},
        "Snapshot": {"scenario_sha256": "0" * 64},
        "FaultRequest": {
            "count": 2,
            "status": 503,
            "delay_ms": 10,
            "drop": False,
            "after": True,
            "path_prefix": "/v1/cefi/orders",
        },
        "VenueRequest": {"scenario": "demo", "seed": 7, "credentials": "minted"},
        "VenueCancelRequest": {"reason": "INSTRUMENT_HALT", "client_id": "100", "instrument_id": "1"},
        "VenueFaultsRequest": {"read_lag_ms": 100, "fill_delay_ms": "5", "clock_skew_s": -3},
    },
}
