"""Bearer authentication for gateway routes (RFC 6750 header form only).

``require_bearer(store, request)`` returns the :class:`~api.auth.store.Principal` the request acts for
in ``store`` (the Auth store of the request's venue), or raises a :class:`~api.edge.problems.Problem`:

- 401 ``missing-token``: no ``Authorization`` header (challenge without an error code);
- 401 ``invalid-token``: unknown, malformed, expired or revoked token, or an OAuth token whose
  audience is not the route's;
- 401 ``on-behalf-of-required``: an organization token without ``SVC-On-Behalf-Of``;
- 403 ``on-behalf-of-forbidden``: ``SVC-On-Behalf-Of`` names a user the token does not act for;
- 403 ``insufficient-scope``: an OAuth token without the scope the route asks for.

Every 401 carries a ``WWW-Authenticate: Bearer`` challenge; it names an ``error`` only when the request
presented a bearer credential (RFC 6750 section 3.1: no header, another scheme such as Basic, or a
failure that is not about a bearer token, such as a disabled OAuth client, gets the realm alone).

Key-exchange tokens are platform tokens and valid on every route. OAuth access tokens are bound to
their ``resource`` (RFC 8707): a route accepts them only when it names that audience.
"""

from __future__ import annotations

import re

from aiohttp import web

from cefisim.api.auth.store import AuthError, AuthStore, Forbidden, Principal, Unauthenticated
from cefisim.api.edge.problems import Problem

ON_BEHALF_OF = "SVC-On-Behalf-Of"
_REALM = 'Bearer realm="cefisim"'
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


def authenticate(
    store: AuthStore, request: web.Request, *, audience: str | None = None, scope: str | None = None
) -> Principal:
    """Like :func:`require_bearer` but raises the store's :class:`~api.auth.store.AuthError`."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.strip().partition(" ")
    if not header:
        raise Unauthenticated("missing_token", "Authorization: a bearer token is required")
    token = token.strip()
    if scheme.lower() != "bearer" or not _TOKEN68.fullmatch(token):
        raise Unauthenticated("invalid_token", "Authorization: must be Bearer followed by a token")
    on_behalf_of = request.headers.get(ON_BEHALF_OF, "").strip() or None
    principal = store.authenticate_bearer(token, on_behalf_of)
    if principal.audience is not None:
        if audience is None or principal.audience != audience:
            raise Unauthenticated("invalid_token", "the access token is not meant for this resource")
        if scope is not None and scope not in principal.scopes:
            raise Forbidden("insufficient_scope", f"the access token lacks the scope {scope}")
    return principal


def require_bearer(
    store: AuthStore, request: web.Request, *, audience: str | None = None, scope: str | None = None
) -> Principal:
    """The principal of the request's bearer token in ``store``, or a 401/403 :class:`Problem`.

    ``audience``: the resource URI whose OAuth tokens this route accepts (None: key-exchange tokens
    only). ``scope``: the scope an OAuth token must carry here (key-exchange tokens have every scope).
    """
    try:
        return authenticate(store, request, audience=audience, scope=scope)
    except AuthError as exc:
        raise as_problem(exc, presents_bearer(request)) from None


def presents_bearer(request: web.Request) -> bool:
    """Whether the request carries a bearer credential: an ``Authorization`` header of the Bearer
    scheme (well formed or not)."""
    scheme = request.headers.get("Authorization", "").strip().partition(" ")[0]
    return scheme.lower() == "bearer"


def as_problem(exc: AuthError, bearer: bool) -> Problem:
    """The problem for an authentication failure, with its RFC 6750 ``WWW-Authenticate`` challenge.

    ``bearer``: the failure concerns a bearer credential the request presented. Only then does a 401
    challenge carry an error code (section 3.1); otherwise it is the realm alone.
    """
    if isinstance(exc, Unauthenticated):
        status = 401
        if not bearer:
            challenge = _REALM
        elif exc.error == "on_behalf_of_required":
            challenge = f'{_REALM}, error="invalid_request"'
        else:
            challenge = f'{_REALM}, error="invalid_token"'
    else:
        status = 403
        challenge = f'{_REALM}, error="insufficient_scope"' if exc.error == "insufficient_scope" else ""
    headers = {"WWW-Authenticate": challenge} if challenge else {}
    return Problem(status, exc.error.replace("_", "-"), exc.detail, headers=headers)
