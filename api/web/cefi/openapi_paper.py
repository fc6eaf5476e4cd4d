"""Paper trading (``/v1/paper-trading/``) in the venue's OpenAPI document: its two operations and body.

``POST /v1/paper-trading/funds`` and ``/funds/remove`` (``api/web/cefi/paper.py``) move test funds on the
CeFi client of the user a bearer token (``POST /v1/auth/api-key/token``) acts for, so a client
generated from the venue's document funds its own sandbox account (tag ``paper-trading``). The body is
``PAPER_BODY``, the handler's own table, with the two rules the handler adds before the engine sees it
(a non-empty asset, an amount above zero); answers are bare RFC 7807 problems, as the handler and the
app's middleware write them.
"""

from __future__ import annotations

from typing import Any

from cefisim.api.auth.bearer import ON_BEHALF_OF
from cefisim.api.edge.openapi_blocks import field_schema, object_schema, ref
from cefisim.api.edge.problems import PROBLEM_CONTENT_TYPE
from cefisim.api.edge.validate import MAX_TEXT, F
from cefisim.api.web.cefi.openapi_auth import AUTHENTICATE, JSON, answer, plain
from cefisim.api.web.cefi.paper import PAPER_BODY

PAPER = "/v1/paper-trading"
PAPER_TAG = {
    "name": "paper-trading",
    "description": "test funds on the sandbox (/v1/paper-trading/): bearer tokens; every path answers 404 when "
    "the server runs with --environment production",
}


def paper_schemas() -> dict[str, Any]:
    """``components.schemas`` of paper trading."""
    return {
        "PaperFundsRequest": object_schema(
            PAPER_BODY,
            overrides={
                "asset": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT, "description": "asset id or name"},
                "amount": field_schema(F("positive")),
            },
        )
    }


def _problem(description: str, **headers: Any) -> dict[str, Any]:
    return answer(description, PROBLEM_CONTENT_TYPE, ref("Problem"), **headers)


def _funds(op_id: str, summary: str, rules: str) -> dict[str, Any]:
    return {
        "operationId": op_id,
        "summary": summary,
        "tags": [PAPER_TAG["name"]],
        "security": [{"bearer": []}],
        "parameters": [
            {
                "name": ON_BEHALF_OF,
                "in": "header",
                "required": False,
                "schema": {"type": "string"},
                "description": "organization tokens: the user the token acts for",
            }
        ],
        "requestBody": {"required": True, "content": {JSON: {"schema": ref("PaperFundsRequest")}}},
        "responses": {
            "200": answer("the client's balance of the asset after the change", JSON, ref("BalanceRecord")),
            "400": _problem(f"malformed body (the detail names the field); business rules: {rules}"),
            "401": _problem("missing, invalid, expired or revoked bearer token", **AUTHENTICATE),
            "403": _problem("the token may not act here"),
            "404": _problem(
                "an asset no id or name matches (unknown-asset), a user without a CeFi client (unknown-client), "
                "or any path with --environment production"
            ),
            **plain(408, 413, 500),
        },
    }


_GRID = "an amount finer than the asset's decimals"

#: (METHOD, path) -> the operation; api/web/cefi/paper.py serves both (its other paths answer 404 or 405)
PAPER_OPERATIONS: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", PAPER + "/funds"): _funds("paper_add_funds", "Add test funds to the client's balance", _GRID),
    ("POST", PAPER + "/funds/remove"): _funds(
        "paper_remove_funds",
        "Remove test funds from the client's balance",
        f"{_GRID}; more than the available balance (insufficient-funds)",
    ),
}
