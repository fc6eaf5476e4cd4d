"""The Auth interface (``/v1/auth/``) in the OpenAPI document: operations, schemas, security.

Described in the CeFi document (tag ``auth``) because a client of the venue needs both: the key
exchange and OAuth give the bearer tokens of the gateway routes. :data:`AUTH_OPERATIONS` describes
each route of ``api.auth.routes.auth_routes`` (the tests fail on a route it lacks); the rules are
those of ``api/auth/`` and docs/auth.md: problems carry a stable ``error`` member, every 401 problem a
``WWW-Authenticate`` challenge, token responses ``Cache-Control: no-store``; the OAuth token endpoint
answers RFC 6749 bodies instead of problems.
"""

from __future__ import annotations

from typing import Any

from cefisim.api.auth.bearer import ON_BEHALF_OF
from cefisim.api.auth.oauth import AUTHORIZE_PARAMS
from cefisim.api.auth.routes import CLIENT_CHALLENGE
from cefisim.api.edge.openapi_blocks import record, ref
from cefisim.api.edge.problems import PROBLEM_CONTENT_TYPE

AUTH = "/v1/auth"
HTML = "text/html"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
CHALLENGE_PATTERN = r'^Bearer realm="cefisim"(, error="[a-z_]+")?$'
# base64url of 32 bytes (PKCE S256 challenge) and RFC 7636 verifiers, as api/auth/oauth.py checks them
CODE_CHALLENGE_PATTERN = "^[A-Za-z0-9_-]{43}$"
CODE_VERIFIER_PATTERN = "^[A-Za-z0-9._~-]{43,128}$"

_NO_STORE = {
    "Cache-Control": {
        "description": "token and auth responses are never cached",
        "required": True,
        "schema": {"type": "string", "const": "no-store"},
    },
    "Pragma": {"required": True, "schema": {"type": "string", "const": "no-cache"}},
}
REQUEST_ID = {"X-Request-Id": {"$ref": "#/components/headers/X-Request-Id"}}
AUTHENTICATE = {
    "WWW-Authenticate": {
        "description": "RFC 6750 challenge",
        "required": True,
        "schema": {"type": "string", "pattern": CHALLENGE_PATTERN},
    }
}

_CLIENT_CHALLENGE = {
    "WWW-Authenticate": {
        "description": "the client authentication scheme (RFC 6749 sections 2.3.1 and 5.2)",
        "required": True,
        "schema": {"type": "string", "const": CLIENT_CHALLENGE["WWW-Authenticate"]},
    }
}


def _authorize_params() -> list[dict[str, Any]]:
    """The OAuth authorize parameters (RFC 6749 4.1.1, PKCE, RFC 8707 resource); unknown ones are ignored.
    None is required by the schema: a missing client_id or redirect_uri is answered 400 directly, any
    other missing one by a redirect to the client with ``error``."""
    rules: dict[str, dict[str, Any]] = {
        "response_type": {"type": "string", "const": "code"},
        "code_challenge": {"type": "string", "pattern": CODE_CHALLENGE_PATTERN},
        "code_challenge_method": {"type": "string", "const": "S256"},
        "resource": {"type": "string", "format": "uri", "description": "absolute URI without a fragment"},
        "redirect_uri": {"type": "string", "description": "registered for the client (loopback: any port)"},
    }
    return [
        {"name": name, "in": "query", "required": False, "schema": rules.get(name, {"type": "string"})}
        for name in AUTHORIZE_PARAMS
    ]


def auth_schemas() -> dict[str, Any]:
    """``components.schemas`` of the Auth interface."""
    authorize = {name: {"type": "string"} for name in AUTHORIZE_PARAMS}
    return {
        "AuthProblem": record(
            {
                "type": {"type": "string", "format": "uri"},
                "title": {"type": "string"},
                "status": {"type": "integer", "minimum": 400, "maximum": 599},
                "detail": {"type": "string", "description": "names the offending field; never a secret"},
                "error": {"type": "string", "pattern": "^[a-z_]+$", "description": "stable machine code"},
            },
            description="RFC 7807 problem with the Auth error code",
        ),
        "OAuthError": record(
            {"error": {"type": "string", "pattern": "^[a-z_]+$"}, "error_description": {"type": "string"}},
            description="RFC 6749 section 5.2",
        ),
        "KeyExchangeRequest": record(
            {
                "key_id": {"type": "string", "minLength": 1},
                "timestamp": {"type": "integer", "description": "Unix seconds, within 30 s of the server's wall clock"},
                "signature": {
                    "type": "string",
                    "minLength": 1,
                    "description": "base64url of the 64-byte r||s ES256 signature of `{key_id}.{timestamp}`",
                },
            }
        ),
        "RefreshRequest": record({"refresh_token": {"type": "string", "minLength": 1}}),
        "KeyTokens": record(
            {
                "access_token": {"type": "string"},
                "refresh_token": {"type": "string"},
                "token_type": {"type": "string", "const": "Bearer"},
                "expires_in": {
                    "type": "string",
                    "format": "date-time",
                    "description": "when the access token expires (engine clock, ISO 8601 UTC)",
                },
            },
            required=["access_token", "token_type", "expires_in"],
        ),
        "OAuthTokens": record(
            {
                "access_token": {"type": "string"},
                "refresh_token": {"type": "string"},
                "token_type": {"type": "string", "const": "Bearer"},
                "expires_in": {"type": "integer", "minimum": 1, "description": "seconds"},
                "scope": {"type": "string"},
            }
        ),
        "ConsentRequest": {
            "type": "object",
            "required": ["decision"],
            "properties": {"decision": {"type": "string", "enum": ["approve", "deny"]}, **authorize},
            "description": "the authorize parameters (as the consent page received them) and the decision",
        },
        "ConsentAnswer": record({"redirect_to": {"type": "string", "description": "where the browser goes next"}}),
        "TokenForm": {
            "type": "object",
            "required": ["grant_type", "client_id"],
            "properties": {
                "grant_type": {"type": "string", "enum": ["authorization_code", "refresh_token"]},
                "client_id": {"type": "string"},
                "code": {"type": "string"},
                "redirect_uri": {"type": "string"},
                "code_verifier": {"type": "string", "pattern": CODE_VERIFIER_PATTERN},
                "refresh_token": {"type": "string"},
                "scope": {"type": "string"},
                "resource": {"type": "string"},
            },
            "description": "authorization_code needs code, redirect_uri and code_verifier; refresh_token needs "
            "refresh_token",
        },
    }


def answer(description: str, media: str, schema: dict[str, Any], **headers: Any) -> dict[str, Any]:
    return {"description": description, "headers": {**REQUEST_ID, **headers}, "content": {media: {"schema": schema}}}


def _problems(*codes: int) -> dict[str, Any]:
    texts = {
        400: "malformed or invalid request (`error` names the rule)",
        401: "missing, invalid, expired or revoked credential",
        403: "authenticated, but not allowed",
    }
    out = {}
    for code in codes:
        extra = AUTHENTICATE if code == 401 else {}
        out[str(code)] = answer(texts[code], PROBLEM_CONTENT_TYPE, ref("AuthProblem"), **_NO_STORE, **extra)
    return out


def plain(*codes: int) -> dict[str, Any]:
    """Answers of the app's middleware (not of the Auth handlers): bare problems."""
    return {str(code): {"$ref": f"#/components/responses/Plain{code}"} for code in codes}


def plain_responses() -> dict[str, Any]:
    """``components.responses`` for the middleware's answers on non-CeFi routes (bare problems)."""
    texts = {
        408: "the body did not arrive within the server's read timeout (--read-timeout)",
        413: "body larger than the server accepts",
        500: "internal error (the detail carries the request id)",
    }
    return {f"Plain{code}": answer(text, PROBLEM_CONTENT_TYPE, ref("Problem")) for code, text in texts.items()}


def _json_body(name: str) -> dict[str, Any]:
    return {"required": True, "content": {JSON: {"schema": ref(name)}}}


def _redirect(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "headers": {**REQUEST_ID, **_NO_STORE, "Location": {"required": True, "schema": {"type": "string"}}},
    }


def _op(op_id: str, summary: str, responses: dict[str, Any], **rest: Any) -> dict[str, Any]:
    return {"operationId": op_id, "summary": summary, "tags": ["auth"], "security": [], **rest, "responses": responses}


#: (METHOD, path) -> the operation; every route of api.auth.routes.auth_routes must have one
AUTH_OPERATIONS: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", AUTH + "/api-key/token"): _op(
        "api_key_token",
        "Exchange an ES256-signed key proof for an access and refresh token",
        {"200": answer("tokens", JSON, ref("KeyTokens"), **_NO_STORE), **_problems(400, 401), **plain(408, 413, 500)},
        requestBody=_json_body("KeyExchangeRequest"),
    ),
    ("POST", AUTH + "/token/refresh"): _op(
        "token_refresh",
        "Rotate a refresh token (each is single use)",
        {"200": answer("tokens", JSON, ref("KeyTokens"), **_NO_STORE), **_problems(400, 401), **plain(408, 413, 500)},
        requestBody=_json_body("RefreshRequest"),
    ),
    ("GET", AUTH + "/oauth/authorize"): _op(
        "oauth_authorize",
        "Start an OAuth authorization-code grant (PKCE S256)",
        {
            "302": _redirect("to the consent screen, or back to the client with `error` and `state`"),
            **_problems(400, 401),
            **plain(500),
        },
        parameters=_authorize_params(),
        description="a missing, unknown or disabled client or an unregistered redirect_uri is answered "
        "directly (400/401); every other refusal redirects to the client with `error`",
    ),
    ("GET", AUTH + "/oauth/consent"): _op(
        "oauth_consent_page",
        "The HTML consent screen",
        {
            "200": answer("the consent page", HTML, {"type": "string"}),
            "302": _redirect("back to the client with `error` and `state`"),
            "400": answer("the request cannot be trusted", HTML, {"type": "string"}),
            "401": answer("the client is disabled", HTML, {"type": "string"}, **AUTHENTICATE),
            **plain(500),
        },
        parameters=_authorize_params(),
    ),
    ("POST", AUTH + "/oauth/consent"): _op(
        "oauth_consent",
        "Approve or deny a grant, as the user of a key-exchange token",
        {
            "200": answer("where the browser goes next", JSON, ref("ConsentAnswer"), **_NO_STORE),
            **_problems(400, 401, 403),
            **plain(408, 413, 500),
        },
        requestBody=_json_body("ConsentRequest"),
        security=[{"bearer": []}],
        parameters=[
            {
                "name": ON_BEHALF_OF,
                "in": "header",
                "required": False,
                "schema": {"type": "string"},
                "description": "organization tokens: the user the token acts for",
            }
        ],
    ),
    ("POST", AUTH + "/oauth/token"): _op(
        "oauth_token",
        "Redeem an authorization code or rotate an OAuth refresh token",
        {
            "200": answer("tokens", JSON, ref("OAuthTokens"), **_NO_STORE),
            "400": answer("RFC 6749 error", JSON, ref("OAuthError"), **_NO_STORE),
            "401": answer("invalid_client", JSON, ref("OAuthError"), **_NO_STORE, **_CLIENT_CHALLENGE),
            **plain(408, 413, 500),
        },
        requestBody={"required": True, "content": {FORM: {"schema": ref("TokenForm")}}},
    ),
}


def auth_security_schemes() -> dict[str, Any]:
    return {
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "an access token from POST /v1/auth/api-key/token",
        }
    }
