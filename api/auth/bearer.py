"""Bearer authentication for gateway routes (RFC 6750 header form only).

``require_bearer(request)`` returns the :class:`~api.auth.store.Principal` the request acts for, or
raises a :class:`~api.problems.Problem`:

- 401 ``missing-token``: no ``Authorization: Bearer`` header (challenge without an error code);
- 401 ``invalid-token``: unknown, malformed, expired or revoked token, or an OAuth token whose
  audience is not the route's;
- 401 ``on-behalf-of-required``: an organization token without ``SVC-On-Behalf-Of``;
- 403 ``on-behalf-of-forbidden``: ``SVC-On-Behalf-Of`` names a user the token does not act for;
- 403 ``insufficient-scope``: an OAuth token without the scope the route asks for.

Key-exchange tokens are platform tokens and valid on every route. OAuth access tokens are bound to
their ``resource`` (RFC 8707): a route accepts them only when it names that audience.
"""

from __future__ import annotations

import re

from aiohttp import web

from cefisim.api.auth import AUTH_STORE
from cefisim.api.auth.store import AuthError, Forbidden, Principal, Unauthenticated
from cefisim.api.problems import Problem

ON_BEHALF_OF = "SVC-On-Behalf-Of"
_REALM = 'Bearer realm="cefisim"'
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


def authenticate(request: web.Request, *, audience: str | None = None, scope: str | None = None) -> Principal:
    """Like :func:`require_bearer` but raises the store's :class:`~api.auth.store.AuthError`."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.strip().partition(" ")
    if not header:
        raise Unauthenticated("missing_token", "Authorization: a bearer token is required")
    token = token.strip()
    if scheme.lower() != "bearer" or not _TOKEN68.fullmatch(token):
        raise Unauthenticated("invalid_token", "Authorization: must be Bearer followed by a token")
    on_behalf_of = request.headers.get(ON_BEHALF_OF, "").strip() or None
    principal = request.app[AUTH_STORE].authenticate_bearer(token, on_behalf_of)
    if principal.audience is not None:
        if audience is None or principal.audience != audience:
            raise Unauthenticated("invalid_token", "the access token is not meant for this resource")
        if scope is not None and scope not in principal.scopes:
            raise Forbidden("insufficient_scope", f"the access token lacks the scope {scope}")
    return principal


def require_bearer(request: web.Request, *, audience: str | None = None, scope: str | None = None) -> Principal:
    """The principal of the request's bearer token, or a 401/403 :class:`Problem`.

    ``audience``: the resource URI whose OAuth tokens this route accepts (None: key-exchange tokens
    only). ``scope``: the scope an OAuth token must carry here (key-exchange tokens have every scope).
    """
    try:
        return authenticate(request, audience=audience, scope=scope)
    except AuthError as exc:
        raise as_problem(exc) from None


def as_problem(exc: AuthError) -> Problem:
    """The problem for a bearer failure, with its RFC 6750 ``WWW-Authenticate`` challenge."""
    if isinstance(exc, Unauthenticated):
        status = 401
        challenge = {
            "missing_token": _REALM,
            "on_behalf_of_required": f'{_REALM}, error="invalid_request"',
        }.get(exc.error, f'{_REALM}, error="invalid_token"')
    else:
        status = 403
        challenge = f'{_REALM}, error="insufficient_scope"' if exc.error == "insufficient_scope" else ""
    headers = {"WWW-Authenticate": challenge} if challenge else {}
    return Problem(status, exc.error.replace("_", "-"), exc.detail, headers=headers)
