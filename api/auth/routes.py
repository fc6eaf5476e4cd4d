"""HTTP handlers of the Auth interface under ``/v1/auth/``, each on the Auth store of its request's venue.

The store is looked up per request by the function the app hands :func:`auth_routes` (the app's reads
the request's venue state, ``api/web/server/venue_state.py``, which lies above this interface).

Each handler parses, calls one :class:`~api.auth.store.AuthStore` method and serialises; errors of
the store map to HTTP in :func:`_error_response` (problem+json with an ``error`` member) and
:func:`_oauth_error` (RFC 6749 body on the token endpoint). Bodies are answered with
``Cache-Control: no-store``. Status codes and choices: ``docs/auth.md``.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote, urlencode

import orjson
from aiohttp import web
from multidict import MultiMapping

from cefisim.api.auth.bearer import ON_BEHALF_OF, as_problem, authenticate, presents_bearer
from cefisim.api.auth.store import (
    SENSITIVE_SCOPES,
    AuthError,
    AuthorizeRedirect,
    AuthorizeRequest,
    AuthStore,
    BadRequest,
    IssuedTokens,
    Unauthenticated,
    iso_utc,
)
from cefisim.api.edge.problems import PROBLEM_CONTENT_TYPE, Problem

_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
CLIENT_CHALLENGE = {"WWW-Authenticate": 'Basic realm="cefisim"'}  # the token endpoint's invalid_client


#: the Auth store a request is for (its venue's)
StoreOf = Callable[[web.Request], AuthStore]


def auth_routes(store_of: StoreOf) -> list[web.RouteDef]:
    """The ``/v1/auth/`` routes, each handler given ``store_of`` (bound once, here) to find its store."""
    return [
        web.post("/v1/auth/api-key/token", functools.partial(api_key_token, store_of)),
        web.post("/v1/auth/token/refresh", functools.partial(token_refresh, store_of)),
        web.get("/v1/auth/oauth/authorize", functools.partial(oauth_authorize, store_of)),
        web.get("/v1/auth/oauth/consent", functools.partial(oauth_consent_page, store_of)),
        web.post("/v1/auth/oauth/consent", functools.partial(oauth_consent, store_of)),
        web.post("/v1/auth/oauth/token", functools.partial(oauth_token, store_of)),
    ]


# ------------------------------------------------------------------------------- key exchange


async def api_key_token(store_of: StoreOf, request: web.Request) -> web.Response:
    """POST /v1/auth/api-key/token ``{key_id, timestamp, signature}`` -> token response."""
    try:
        body = await _fields(request, {"key_id": str, "timestamp": int, "signature": str})
        issued = store_of(request).exchange_key(body["key_id"], body["timestamp"], body["signature"])
    except AuthError as exc:
        return _error_response(exc)
    return _json(_token_body(issued))


async def token_refresh(store_of: StoreOf, request: web.Request) -> web.Response:
    """POST /v1/auth/token/refresh ``{refresh_token}`` -> a new access and refresh pair."""
    try:
        body = await _fields(request, {"refresh_token": str})
        issued = store_of(request).refresh(body["refresh_token"])
    except AuthError as exc:
        return _error_response(exc)
    return _json(_token_body(issued))


def _token_body(issued: IssuedTokens) -> dict[str, str]:
    body = {"access_token": issued.access_token}
    if issued.refresh_token is not None:
        body["refresh_token"] = issued.refresh_token
    body["token_type"] = "Bearer"
    body["expires_in"] = iso_utc(issued.expires_at_ns)
    return body


# -------------------------------------------------------------------------------------- OAuth


async def oauth_authorize(store_of: StoreOf, request: web.Request) -> web.Response:
    """GET /v1/auth/oauth/authorize: 302 to the consent screen, 302 back to the client with
    ``error``, or a direct 400/401 for a client or redirect_uri that cannot be trusted."""
    try:
        req = store_of(request).authorize(_multi(request.query))
    except AuthorizeRedirect as exc:
        return _redirect(exc.location)
    except AuthError as exc:
        return _error_response(exc)
    return _redirect(f"{request.path.rsplit('/', 1)[0]}/consent?{urlencode(req.params, quote_via=quote)}")


async def oauth_consent_page(store_of: StoreOf, request: web.Request) -> web.Response:
    """GET /v1/auth/oauth/consent?<authorize parameters>: the HTML consent screen."""
    try:
        req = store_of(request).authorize(_multi(request.query))
    except AuthorizeRedirect as exc:
        return _redirect(exc.location)
    except AuthError as exc:
        page = _ERROR_PAGE.format(detail=html.escape(exc.detail))
        if isinstance(exc, Unauthenticated):  # a 401 carries its challenge (no credential was sent)
            return _html(page, 401, as_problem(exc, bearer=False).headers)
        return _html(page, 400)
    return _html(render_consent(req), 200)


async def oauth_consent(store_of: StoreOf, request: web.Request) -> web.Response:
    """POST /v1/auth/oauth/consent (bearer): the authorize parameters plus ``decision`` ->
    ``{"redirect_to": ...}``."""
    store = store_of(request)
    try:
        principal = authenticate(store, request)
        body = await _json_object(request)
        if "decision" not in body:
            raise BadRequest("invalid_request", "decision: required")
        params = {k: v for k, v in body.items() if k != "decision"}
        redirect_to = store.consent(principal, params, body["decision"])
    except AuthError as exc:
        return _error_response(exc, bearer=presents_bearer(request))
    return _json({"redirect_to": redirect_to})


async def oauth_token(store_of: StoreOf, request: web.Request) -> web.Response:
    """POST /v1/auth/oauth/token (form encoded): grant types authorization_code and refresh_token."""
    if request.content_type != "application/x-www-form-urlencoded":
        return _oauth_error(BadRequest("invalid_request", "body: must be application/x-www-form-urlencoded"))
    try:
        form = await request.post()
    except LookupError:  # the charset of the Content-Type is no encoding Python knows
        return _oauth_error(BadRequest("invalid_request", f"Content-Type: unknown charset {request.charset!r}"))
    except ValueError:  # bytes that are not of that charset (UnicodeDecodeError) or not a form
        return _oauth_error(BadRequest("invalid_request", "body: not a valid form"))
    try:
        body = store_of(request).token(_multi(form))
    except AuthError as exc:
        return _oauth_error(exc)
    return _json(body)


# ------------------------------------------------------------------------------------ helpers


def _json(
    body: Any, status: int = 200, content_type: str = "application/json", headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.Response(
        body=orjson.dumps(body), status=status, content_type=content_type, headers={**_NO_STORE, **(headers or {})}
    )


def _error_response(exc: AuthError, bearer: bool = False) -> web.Response:
    """RFC 7807 problem (as the app's middleware renders it) plus the store's ``error`` code.

    ``bearer``: the request presented a bearer credential the failure may concern (consent). The key
    exchange, refresh and authorize take none, so their 401 challenge names no error code.
    """
    if isinstance(exc, BadRequest):
        problem = Problem(400, exc.error.replace("_", "-"), exc.detail)
    else:
        problem = as_problem(exc, bearer)
    return _json({**problem.body(), "error": exc.error}, problem.status, PROBLEM_CONTENT_TYPE, problem.headers)


def _oauth_error(exc: AuthError) -> web.Response:
    """RFC 6749 section 5.2: 400, or 401 for invalid_client with a challenge of the client
    authentication scheme (HTTP Basic, section 2.3.1), as RFC 9110 asks of every 401."""
    if isinstance(exc, Unauthenticated):
        return _json({"error": exc.error, "error_description": exc.detail}, 401, headers=CLIENT_CHALLENGE)
    return _json({"error": exc.error, "error_description": exc.detail}, 400)


def _redirect(location: str) -> web.Response:
    return web.Response(status=302, headers={"Location": location, **_NO_STORE})


def _multi(pairs: MultiMapping[Any]) -> dict[str, object]:
    """Query or form parameters as a dict; a repeated parameter becomes a list."""
    out: dict[str, object] = {}
    for name in dict.fromkeys(pairs.keys()):
        values = pairs.getall(name)
        out[name] = values[0] if len(values) == 1 else list(values)
    return out


async def _json_object(request: web.Request) -> dict[str, Any]:
    raw = await request.read()
    if not raw.strip():
        raise BadRequest("invalid_request", "body: a JSON object is required")
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise BadRequest("invalid_request", "body: not valid JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("invalid_request", "body: must be a JSON object")
    return body


async def _fields(request: web.Request, spec: Mapping[str, type]) -> dict[str, Any]:
    """A JSON object with exactly these fields: strings non-empty, integers not booleans."""
    body = await _json_object(request)
    for name in body:
        if name not in spec:
            raise BadRequest("invalid_request", f"{name}: unknown field")
    for name, kind in spec.items():
        value = body.get(name)
        if value is None:
            raise BadRequest("invalid_request", f"{name}: required")
        if kind is int and type(value) is not int:
            raise BadRequest("invalid_request", f"{name}: must be an integer")
        if kind is str and (not isinstance(value, str) or not value):
            raise BadRequest("invalid_request", f"{name}: must be a non-empty string")
    return body


# ------------------------------------------------------------------------------- consent page

_STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1c1e21; }
main { max-width: 34rem; margin: 3rem auto; background: #fff; padding: 2rem; border-radius: 8px;
       box-shadow: 0 1px 4px rgba(0,0,0,.15); }
h1 { font-size: 1.3rem; margin-top: 0; }
code { background: #eef0f3; padding: 0 .25em; border-radius: 3px; word-break: break-all; }
label { display: block; margin-top: 1rem; font-weight: 600; }
input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; }
.actions { margin-top: 1.5rem; display: flex; gap: .75rem; }
button { font: inherit; padding: .5rem 1.5rem; border-radius: 6px; border: 1px solid #888; cursor: pointer; }
#approve { background: #1a7f37; color: #fff; border-color: #1a7f37; }
.sensitive { color: #b35900; font-weight: 600; }
#status { min-height: 1.5em; color: #b00020; }
"""

_SCRIPT = """
(function () {
  "use strict";
  var params = JSON.parse(document.getElementById("authorize-params").textContent);
  var tokenField = document.getElementById("token");
  var actingField = document.getElementById("on-behalf-of");
  var statusLine = document.getElementById("status");
  var buttons = Array.prototype.slice.call(document.querySelectorAll("button[data-decision]"));
  var fragment = new URLSearchParams(window.location.hash.slice(1));
  if (fragment.get("token")) {
    tokenField.value = fragment.get("token");
    history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  function busy(on) { buttons.forEach(function (b) { b.disabled = on; }); }
  function decide(decision) {
    var token = tokenField.value.trim();
    if (!token) {
      statusLine.textContent = "Paste an access token from POST /v1/auth/api-key/token first.";
      tokenField.focus();
      return;
    }
    var body = Object.assign({}, params, {decision: decision});
    var headers = {"Content-Type": "application/json", "Authorization": "Bearer " + token};
    var acting = actingField.value.trim();
    if (acting) { headers["SVC-On-Behalf-Of"] = acting; }
    busy(true);
    statusLine.textContent = "";
    fetch(window.location.pathname, {method: "POST", headers: headers, body: JSON.stringify(body),
                                     credentials: "omit", cache: "no-store", redirect: "error"})
      .then(function (response) {
        return response.json().catch(function () { return {}; }).then(function (data) {
          if (response.ok && typeof data.redirect_to === "string") {
            window.location.assign(data.redirect_to);
            return;
          }
          busy(false);
          var prefix = data.error === "login_required" ? "Sign in again: " : "Refused: ";
          statusLine.textContent = prefix + (data.detail || data.error || ("HTTP " + response.status));
        });
      }, function () {
        busy(false);
        statusLine.textContent = "The emulator could not be reached.";
      });
  }
  buttons.forEach(function (b) {
    b.addEventListener("click", function () { decide(b.getAttribute("data-decision")); });
  });
})();
"""


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


_PAGE_HEADERS = {
    "Content-Security-Policy": (
        f"default-src 'none'; script-src {_csp_hash(_SCRIPT)}; style-src {_csp_hash(_STYLE)}; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    **_NO_STORE,
}

_CONSENT_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize {name} - cefisim</title>
<style>{style}</style>
</head>
<body>
<main>
<h1>Authorize <span id="client-name">{name}</span></h1>
<p>The application <code id="client-id">{client_id}</code> asks to act for you on
<code id="resource">{resource}</code> with these permissions:</p>
<ul id="scopes">{scopes}</ul>
<p>Afterwards your browser returns to <code id="redirect-uri">{redirect_uri}</code>.</p>
<label for="token">Your access token (from the API-key exchange)</label>
<input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required>
<label for="on-behalf-of">Acting for user (organization tokens only)</label>
<input id="on-behalf-of" name="on-behalf-of" type="text" autocomplete="off" spellcheck="false">
<div class="actions">
<button id="approve" type="button" data-decision="approve">Approve</button>
<button id="deny" type="button" data-decision="deny">Deny</button>
</div>
<p id="status" role="status" aria-live="polite"></p>
</main>
<script id="authorize-params" type="application/json">{params}</script>
<script>{script}</script>
</body>
</html>
"""

_ERROR_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorization request refused - cefisim</title></head>
<body><h1>Authorization request refused</h1><p id="error">{detail}</p></body></html>
"""


def render_consent(req: AuthorizeRequest) -> str:
    """The consent page for a validated request; every value is escaped for its context."""
    esc = html.escape
    sensitive = " <span class=sensitive>(places and cancels orders)</span>"
    scopes = "".join(f"<li><code>{esc(s)}</code>{sensitive if s in SENSITIVE_SCOPES else ''}</li>" for s in req.scopes)
    # JSON inside <script>: escape the characters that could end the element or start a comment.
    params = json.dumps(dict(req.params)).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return _CONSENT_PAGE.format(
        client_id=esc(req.client.client_id),
        name=esc(req.client.name or req.client.client_id),
        resource=esc(req.resource),
        redirect_uri=esc(req.redirect_uri),
        scopes=scopes,
        params=params,
        style=_STYLE,
        script=_SCRIPT,
    )


def _html(text: str, status: int, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.Response(
        text=text,
        status=status,
        content_type="text/html",
        charset="utf-8",
        headers={**_PAGE_HEADERS, **(headers or {})},
    )


__all__ = ["CLIENT_CHALLENGE", "ON_BEHALF_OF", "auth_routes", "render_consent"]
