"""OAuth 2.0 authorization code with PKCE: authorize, consent, token; codes and grants.

Pure logic over the store's OAuth clients and access-token table; :class:`OAuth` is owned by
:class:`~api.auth.store.AuthStore`, whose ``authorize``, ``consent`` and ``token`` delegate here.
Contract (time, lifetimes, secrets and errors as in ``store.py``):

- Authorize. Only ``response_type=code`` with an S256 ``code_challenge`` and a ``resource``; the
  redirect_uri matches a registered one byte for byte, or on any port for a loopback URI (RFC 8252
  section 7.3). Approving a sensitive scope needs a key signature made within ``REAUTH_WINDOW_NS``.
- Grants. Redeeming a code starts a grant; every token minted from it belongs to that grant.
  Replaying a consumed refresh token, or redeeming a code a second time, revokes the whole grant
  (access tokens too). Rotation keeps the grant's audience (the ``resource``) and scopes; a refresh
  may ask for fewer scopes for the new access token, never more, and never another audience.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Callable, Mapping
from typing import Any

from cefisim.api.auth.auth_log import CODE, GRANT_REVOKED, OAUTH_TOKENS, AuthLog
from cefisim.api.auth.auth_records import (
    ACCESS_TTL_NS,
    NS,
    REFRESH_TTL_NS,
    URI_RE,
    AuthError,
    AuthorizeRedirect,
    AuthorizeRequest,
    BadRequest,
    LoginRequired,
    OAuthClient,
    Principal,
    Unauthenticated,
    digest,
    mint,
    with_query,
)

CODE_TTL_NS = 600 * NS
REAUTH_WINDOW_NS = 300 * NS  # approving a sensitive scope needs a key signature this recent
SENSITIVE_SCOPES = frozenset({"mcp:trade"})
AUTHORIZE_PARAMS = (
    "client_id", "redirect_uri", "response_type", "code_challenge",
    "code_challenge_method", "resource", "scope", "state",
)  # fmt: skip

_CHALLENGE = re.compile(r"[A-Za-z0-9_\-]{43}")  # base64url of 32 bytes, no padding
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")  # RFC 7636 section 4.1
_LOOPBACK = re.compile(r"(http://(?:127\.0\.0\.1|\[::1\]|localhost))(?::([0-9]{1,5}))?([/?].*)?", re.DOTALL)


class OAuth:
    """The OAuth rules of one store. Its codes and OAuth refresh tokens are in the store's Auth log, and
    their access tokens in the Auth log's one access table, so that one bearer lookup serves both kinds."""

    def __init__(
        self,
        clients: Mapping[str, OAuthClient],
        clock: Callable[[], int],
        auth_log: AuthLog,
        token_prefix: str = "",
    ) -> None:
        self._clients = clients
        self._prefix = token_prefix
        self._clock = clock
        self._auth_log = auth_log

    def authorize(self, params: Mapping[str, object]) -> AuthorizeRequest:
        """Validate authorize parameters (a value that is a list means the parameter was repeated).

        Raises :class:`BadRequest` / :class:`Unauthenticated` for what is answered directly (missing,
        unknown or disabled client, missing or unregistered redirect_uri) and
        :class:`AuthorizeRedirect` for everything else. Unrecognised parameters are ignored.
        """
        client_id = _param(params, "client_id")
        if client_id is None:
            raise BadRequest("invalid_request", "client_id: required")
        client = self._clients.get(client_id)
        if client is None:
            raise BadRequest("invalid_client", "client_id: unknown client")
        if client.disabled:
            raise Unauthenticated("invalid_client", "client_id: the client is disabled")
        redirect_uri = _param(params, "redirect_uri")
        if redirect_uri is None:
            raise BadRequest("invalid_request", "redirect_uri: required")
        if not any(_redirect_matches(reg, redirect_uri) for reg in client.redirect_uris):
            raise BadRequest("invalid_request", "redirect_uri: not registered for this client")
        try:
            state = _param(params, "state")
        except BadRequest:
            state = None  # repeated: nothing sensible to echo
        try:
            return self._validate_rest(params, client, redirect_uri, state)
        except BadRequest as exc:
            raise AuthorizeRedirect(exc.error, exc.detail, redirect_uri, state) from None

    def _validate_rest(
        self, params: Mapping[str, object], client: OAuthClient, redirect_uri: str, state: str | None
    ) -> AuthorizeRequest:
        given = {name: _param(params, name) for name in AUTHORIZE_PARAMS}
        response_type = given["response_type"]
        if response_type is None:
            raise BadRequest("invalid_request", "response_type: required")
        if response_type != "code":
            raise BadRequest("unsupported_response_type", "response_type: only code is supported")
        challenge = given["code_challenge"]
        if challenge is None:
            raise BadRequest("invalid_request", "code_challenge: required (PKCE)")
        if not _CHALLENGE.fullmatch(challenge):
            raise BadRequest("invalid_request", "code_challenge: must be base64url (no padding) of a SHA-256 digest")
        method = given["code_challenge_method"]
        if method is None:
            raise BadRequest("invalid_request", "code_challenge_method: required (S256)")
        if method != "S256":
            raise BadRequest("invalid_request", "code_challenge_method: only S256 is supported")
        resource = given["resource"]
        if resource is None:
            raise BadRequest("invalid_request", "resource: required")
        if not URI_RE.fullmatch(resource) or "#" in resource:
            raise BadRequest("invalid_target", "resource: must be an absolute URI without a fragment")
        scope = given["scope"]
        if scope is None:
            scopes = client.scopes
        else:
            scopes = tuple(dict.fromkeys(scope.split()))
            unknown = [s for s in scopes if s not in client.scopes]
            if not scopes or unknown:
                raise BadRequest("invalid_scope", "scope: not registered for this client")
        recognised = tuple((k, v) for k, v in given.items() if v is not None)
        return AuthorizeRequest(client, redirect_uri, challenge, resource, scopes, state, recognised)

    def consent(self, principal: Principal, params: Mapping[str, object], decision: object) -> str:
        """Record the user's decision; return where the browser goes next (the client's redirect_uri
        with ``code`` and ``state``, or with ``error=access_denied``)."""
        if principal.kind == "oauth":
            raise Unauthenticated(
                "invalid_token", "an OAuth access token cannot approve a grant; use a token from the API-key exchange"
            )
        if decision not in ("approve", "deny"):
            raise BadRequest("invalid_request", 'decision: must be "approve" or "deny"')
        try:
            req = self.authorize(params)
        except AuthorizeRedirect as exc:
            raise BadRequest("invalid_request", f"authorize parameters no longer validate: {exc.description}") from None
        except AuthError as exc:
            raise BadRequest("invalid_request", f"authorize parameters no longer validate: {exc.detail}") from None
        if decision == "deny":
            return with_query(
                req.redirect_uri,
                {"error": "access_denied", "error_description": "the user denied the request", "state": req.state},
            )
        now = self._clock()
        sensitive = [s for s in req.scopes if s in SENSITIVE_SCOPES]
        if sensitive and now - principal.authenticated_at_ns > REAUTH_WINDOW_NS:
            raise LoginRequired(
                "login_required",
                f"approving {sensitive[0]} needs a token from an API-key exchange made within the last "
                f"{REAUTH_WINDOW_NS // NS // 60} minutes",
            )
        code = mint(self._prefix)
        values = [
            digest(code).hex(), req.client.client_id, req.redirect_uri, req.code_challenge, req.resource,
            list(req.scopes), principal.user_id, principal.client_id, principal.key_id,
            principal.authenticated_at_ns, now + CODE_TTL_NS,
        ]  # fmt: skip
        self._auth_log.change(now, CODE, values)
        return with_query(req.redirect_uri, {"code": code, "state": req.state})

    # ------------------------------------------------------------------------ OAuth token

    def token(self, form: Mapping[str, object]) -> dict[str, Any]:
        """The OAuth token endpoint (RFC 6749 section 4.1.3 and 6). ``form`` maps names to values (a
        list when repeated); unrecognised parameters are ignored. Returns the response body."""
        grant_type = _param(form, "grant_type")
        if grant_type is None:
            raise BadRequest("invalid_request", "grant_type: required")
        if grant_type not in ("authorization_code", "refresh_token"):
            raise BadRequest("unsupported_grant_type", "grant_type: authorization_code or refresh_token")
        client_id = _param(form, "client_id")
        if client_id is None:
            raise BadRequest("invalid_request", "client_id: required")
        client = self._clients.get(client_id)
        if client is None or client.disabled:
            raise Unauthenticated("invalid_client", "client_id: unknown or disabled client")
        now = self._clock()
        if grant_type == "authorization_code":
            return self._redeem_code(form, client, now)
        return self._rotate_oauth(form, client, now)

    def _redeem_code(self, form: Mapping[str, object], client: OAuthClient, now: int) -> dict[str, Any]:
        code = _required(form, "code")
        redirect_uri = _required(form, "redirect_uri")
        verifier = _required(form, "code_verifier")
        resource = _param(form, "resource")
        if not _VERIFIER.fullmatch(verifier):
            raise BadRequest("invalid_request", "code_verifier: must be 43 to 128 characters of [A-Za-z0-9-._~]")
        row = self._auth_log.codes.get(code)
        refused = BadRequest("invalid_grant", "code: invalid, expired or already redeemed")
        if row is None or now >= row.expires_ns:
            raise refused
        if row.grant is not None:  # a second redemption: the code leaked; revoke what it gave
            if not row.grant.revoked:
                self._auth_log.change(now, GRANT_REVOKED, ["code", digest(code).hex()])
            raise refused
        if row.oauth_client_id != client.client_id or row.redirect_uri != redirect_uri:
            raise refused
        if not hmac.compare_digest(_s256(verifier), row.challenge):
            raise refused
        if resource is not None and resource != row.resource:
            raise BadRequest("invalid_target", "resource: differs from the resource that was authorized")
        return self._mint_oauth("code", code, row.scopes, now)

    def _rotate_oauth(self, form: Mapping[str, object], client: OAuthClient, now: int) -> dict[str, Any]:
        token = _required(form, "refresh_token")
        scope = _param(form, "scope")
        resource = _param(form, "resource")
        row = self._auth_log.oauth_refresh.get(token)
        refused = BadRequest("invalid_grant", "refresh_token: invalid, expired, revoked or already used")
        if row is None or now >= row.expires_ns or row.grant.revoked or row.grant.oauth_client_id != client.client_id:
            raise refused
        if row.used:  # replay: every token of the grant goes
            self._auth_log.change(now, GRANT_REVOKED, ["refresh", digest(token).hex()])
            raise refused
        grant = row.grant
        scopes = grant.scopes
        if scope is not None:
            scopes = tuple(dict.fromkeys(scope.split()))
            if not scopes or any(s not in grant.scopes for s in scopes):
                raise BadRequest("invalid_scope", "scope: must be a subset of the scopes granted")
        if resource is not None and resource != grant.resource:
            raise BadRequest("invalid_target", "resource: a refresh cannot change the audience")
        return self._mint_oauth("refresh", token, scopes, now)

    def _mint_oauth(self, source: str, secret: str, scopes: tuple[str, ...], now: int) -> dict[str, Any]:
        """Tokens of the grant a code starts (``source`` "code") or a refresh token rotates ("refresh"):
        one journaled record, which redeems the code or marks the refresh token used."""
        access, refresh = mint(self._prefix), mint(self._prefix)
        values = [
            source, digest(secret).hex(), list(scopes), digest(access).hex(), now + ACCESS_TTL_NS,
            digest(refresh).hex(), now + REFRESH_TTL_NS,
        ]  # fmt: skip
        self._auth_log.change(now, OAUTH_TOKENS, values)
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ACCESS_TTL_NS // NS,
            "refresh_token": refresh,
            "scope": " ".join(scopes),
        }


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


def _param(params: Mapping[str, object], name: str) -> str | None:
    """One parameter; an empty value counts as absent (RFC 6749 section 3.1)."""
    value = params.get(name)
    if isinstance(value, list):
        raise BadRequest("invalid_request", f"{name}: given more than once")
    if value is not None and not isinstance(value, str):
        raise BadRequest("invalid_request", f"{name}: must be a string")
    return value or None


def _required(params: Mapping[str, object], name: str) -> str:
    value = _param(params, name)
    if value is None:
        raise BadRequest("invalid_request", f"{name}: required")
    return value


def _redirect_matches(registered: str, given: str) -> bool:
    """Byte for byte, except that a loopback URI matches on any port (RFC 8252 section 7.3)."""
    if registered == given:
        return True
    reg, req = _LOOPBACK.fullmatch(registered), _LOOPBACK.fullmatch(given)
    if reg is None or req is None or (req.group(2) is not None and int(req.group(2)) > 65535):
        return False
    return reg.group(1) == req.group(1) and (reg.group(3) or "") == (req.group(3) or "")
