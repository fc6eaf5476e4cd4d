"""Auth state: API keys, key-exchange tokens, OAuth clients, authorization codes and grants.

Pure logic, no HTTP: ``api/auth/routes.py`` and ``api/auth/bearer.py`` turn its results and errors
into responses. Contract:

- Time. Token and code lifetimes follow the ENGINE clock (``clock()``, nanoseconds), so a virtual
  clock expires them. The key-exchange timestamp window (±30 s) follows the WALL clock (``wall()``,
  seconds), because clients sign with real time.
- Lifetimes: access token 1 hour, refresh token 30 days (from the moment it is minted; each rotation
  starts a new 30 days), authorization code 10 minutes. A credential is valid while
  ``now < expiry``.
- Secrets. Tokens and codes are ``secrets.token_urlsafe(32)``: random, not engine output, never
  logged, never in an error detail. The store keeps only their SHA-256 digests and finds a secret by
  its digest, so no secret is compared byte by byte and none is kept after it is handed out.
- Atomicity. Every method is synchronous and finishes in one step; under one event loop a code or a
  refresh token is consumed exactly once.
- Key exchange. A user key gets an access and a refresh token, an organization key an access token
  only. Refreshing rotates (the old refresh token stops working) and keeps the time of the original
  key signature as ``authenticated_at``. Revoking a key stops its refresh tokens at once; access
  tokens already minted work until they expire.
- OAuth grants. Redeeming a code starts a grant; every token minted from it belongs to that grant.
  Replaying a consumed refresh token, or redeeming a code a second time, revokes the whole grant
  (access tokens too). Rotation keeps the grant's audience (the ``resource``) and scopes; a refresh
  may ask for fewer scopes for the new access token, never more, and never another audience.
- Errors. :class:`BadRequest` (HTTP 400), :class:`Unauthenticated` (401), :class:`Forbidden` (403;
  :class:`LoginRequired`) carry ``error`` (an RFC 6749/6750 name where one exists) and ``detail``
  (names the field, never holds a secret). :class:`AuthorizeRedirect` is an authorize failure that
  goes back to the client's redirect_uri.
- Memory. Expired tokens and codes are dropped as new ones are minted, amortised O(1) per mint.
  Every lookup is O(1).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar
from urllib.parse import urlencode

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

NS = 1_000_000_000
ACCESS_TTL_NS = 3600 * NS
REFRESH_TTL_NS = 30 * 86_400 * NS
CODE_TTL_NS = 600 * NS
REAUTH_WINDOW_NS = 300 * NS  # approving a sensitive scope needs a key signature this recent
KEY_WINDOW_S = 30  # key-exchange timestamp window, wall clock
SENSITIVE_SCOPES = frozenset({"mcp:trade"})
AUTHORIZE_PARAMS = (
    "client_id", "redirect_uri", "response_type", "code_challenge",
    "code_challenge_method", "resource", "scope", "state",
)  # fmt: skip

_CEFI_ID = re.compile(r"[1-9][0-9]*")
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")  # RFC 6749 section 3.3
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[\x21-\x7e]+")  # absolute, printable ASCII, no spaces
_CHALLENGE = re.compile(r"[A-Za-z0-9_\-]{43}")  # base64url of 32 bytes, no padding
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")  # RFC 7636 section 4.1
_B64URL = re.compile(r"[A-Za-z0-9_\-]*={0,2}")
_LOOPBACK = re.compile(r"(http://(?:127\.0\.0\.1|\[::1\]|localhost))(?::([0-9]{1,5}))?([/?].*)?", re.DOTALL)


# --------------------------------------------------------------------------------------- errors


class AuthError(Exception):
    """A refused auth request. ``error`` is a stable machine name, ``detail`` safe human text."""

    def __init__(self, error: str, detail: str) -> None:
        super().__init__(detail)
        self.error = error
        self.detail = detail


class BadRequest(AuthError):
    """Malformed or invalid request (HTTP 400)."""


class Unauthenticated(AuthError):
    """Missing, invalid, expired or revoked credential; unknown or disabled OAuth client (401)."""


class Forbidden(AuthError):
    """Authenticated, but not allowed (403)."""


class LoginRequired(Forbidden):
    """A sensitive scope needs a more recent key signature (403, ``login_required``)."""


class AuthorizeRedirect(Exception):
    """An authorize failure reported to the client: redirect to ``location`` (error and state added)."""

    def __init__(self, error: str, description: str, redirect_uri: str, state: str | None) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.location = with_query(
            redirect_uri, {"error": error, "error_description": description, "state": state}
        )


# ----------------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a bearer token acts for. ``client_id`` is the CeFi client id of the user acted for;
    ``kind`` is ``user`` or ``organization`` (key-exchange tokens) or ``oauth``. ``audience`` is the
    OAuth resource (None for key-exchange tokens, which are valid on every platform route);
    ``scopes`` are the OAuth scopes (empty for key-exchange tokens)."""

    user_id: str
    client_id: str
    key_id: str
    kind: str
    audience: str | None
    scopes: tuple[str, ...]
    authenticated_at_ns: int
    oauth_client_id: str | None = None


@dataclass(frozen=True, slots=True)
class ApiKey:
    key_id: str
    kind: str  # "user" | "organization"
    user_id: str | None
    client_id: str | None
    public_key: ec.EllipticCurvePublicKey
    users: Mapping[str, str]  # user_id -> client_id the key acts for (organization keys)
    expires_at_ns: int | None
    revoked: bool = False  # revoked from the start (scenario ``revoked: true``)


@dataclass(frozen=True, slots=True)
class OAuthClient:
    client_id: str
    redirect_uris: tuple[str, ...]
    scopes: tuple[str, ...]
    disabled: bool
    name: str | None = None  # shown on the consent page


@dataclass(frozen=True, slots=True)
class IssuedTokens:
    """A key-exchange result; ``refresh_token`` is None for an organization key."""

    access_token: str
    expires_at_ns: int
    refresh_token: str | None


@dataclass(frozen=True, slots=True)
class AuthorizeRequest:
    """Validated authorize parameters. ``params`` are the recognised ones as given, in a fixed order."""

    client: OAuthClient
    redirect_uri: str
    code_challenge: str
    resource: str
    scopes: tuple[str, ...]
    state: str | None
    params: tuple[tuple[str, str], ...]


@dataclass(slots=True, eq=False)
class _Grant:  # an OAuth grant: the family of every token descended from one code
    oauth_client_id: str
    user_id: str
    client_id: str
    key_id: str
    resource: str
    scopes: tuple[str, ...]
    authenticated_at_ns: int
    revoked: bool = False


@dataclass(slots=True, eq=False)
class _Access:
    kind: str
    key_id: str
    user_id: str | None
    client_id: str | None
    audience: str | None
    scopes: tuple[str, ...]
    authenticated_at_ns: int
    expires_ns: int
    grant: _Grant | None


@dataclass(slots=True, eq=False)
class _KeyRefresh:
    key_id: str
    authenticated_at_ns: int
    expires_ns: int


@dataclass(slots=True, eq=False)
class _OAuthRefresh:
    grant: _Grant
    expires_ns: int
    used: bool = False


@dataclass(slots=True, eq=False)
class _Code:
    oauth_client_id: str
    redirect_uri: str
    challenge: str
    resource: str
    scopes: tuple[str, ...]
    user_id: str
    client_id: str
    key_id: str
    authenticated_at_ns: int
    expires_ns: int
    grant: _Grant | None = None  # set when redeemed; kept until expiry to detect a second redemption


R = TypeVar("R")


class _Table(Generic[R]):
    """Rows keyed by the SHA-256 digest of a secret, dropped after expiry.

    ``get``/``put``/``pop`` are O(1); ``put`` first purges expired rows from the front of an
    expiry queue (amortised O(1)). Rows of one table share a lifetime and the clock never goes back,
    so the queue is in expiry order; a row past expiry but not yet purged is refused by the caller.
    """

    __slots__ = ("_expiry", "rows")

    def __init__(self) -> None:
        self.rows: dict[bytes, R] = {}
        self._expiry: deque[tuple[int, bytes]] = deque()

    def put(self, secret: str, row: R, expires_ns: int, now: int) -> None:
        while self._expiry and self._expiry[0][0] <= now:
            self.rows.pop(self._expiry.popleft()[1], None)
        digest = _digest(secret)
        self.rows[digest] = row
        self._expiry.append((expires_ns, digest))

    def get(self, secret: str) -> R | None:
        return self.rows.get(_digest(secret))

    def pop(self, secret: str) -> R | None:
        return self.rows.pop(_digest(secret), None)

    def __len__(self) -> int:
        return len(self.rows)


# ------------------------------------------------------------------------------------- store


class AuthStore:
    """All auth state of one emulator instance. See the module docstring for the contract."""

    def __init__(
        self,
        keys: Mapping[str, ApiKey],
        clients: Mapping[str, OAuthClient],
        clock: Callable[[], int],
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._keys = dict(keys)
        self._clients = dict(clients)
        self._clock = clock
        self._wall = wall
        self._revoked: set[str] = {k.key_id for k in self._keys.values() if k.revoked}
        self._access: _Table[_Access] = _Table()
        self._key_refresh: _Table[_KeyRefresh] = _Table()
        self._oauth_refresh: _Table[_OAuthRefresh] = _Table()
        self._codes: _Table[_Code] = _Table()

    def reset(self) -> None:
        """Forget every token, code and revocation made since the scenario was loaded."""
        self._revoked = {k.key_id for k in self._keys.values() if k.revoked}
        self._access = _Table()
        self._key_refresh = _Table()
        self._oauth_refresh = _Table()
        self._codes = _Table()

    @classmethod
    def from_scenario(
        cls,
        api_keys: list[dict[str, Any]] | None,
        oauth_clients: list[dict[str, Any]] | None,
        clock: Callable[[], int],
        wall: Callable[[], float] = time.time,
    ) -> AuthStore:
        """Build from the scenario's ``api_keys`` and ``oauth_clients``; a bad entry raises
        ``ValueError("api_keys[2].public_key: <reason>")`` naming its JSON path."""
        keys = _parse_api_keys([] if api_keys is None else api_keys)
        return cls(keys, _parse_oauth_clients([] if oauth_clients is None else oauth_clients), clock, wall)

    # ---------------------------------------------------------------------- key exchange

    def exchange_key(self, key_id: str, timestamp: int, signature_b64url: str) -> IssuedTokens:
        """Check an ES256 signature (raw r||s, base64url) over ``{key_id}.{timestamp}`` and mint tokens."""
        now = self._clock()
        key = self._keys.get(key_id)
        if key is None:
            raise Unauthenticated("invalid_key", "key_id: unknown key")
        self._check_key_active(key, now)
        if abs(timestamp) > 2**53 or abs(self._wall() - timestamp) > KEY_WINDOW_S:
            raise Unauthenticated(
                "timestamp_out_of_range", f"timestamp: more than {KEY_WINDOW_S} s away from server time"
            )
        raw = _b64url_decode(signature_b64url)
        if raw is None or len(raw) != 64:
            raise Unauthenticated(
                "invalid_signature", "signature: must be base64url of the 64-byte r||s form of an ES256 signature"
            )
        r, s = int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")
        try:
            key.public_key.verify(
                encode_dss_signature(r, s), f"{key_id}.{timestamp}".encode(), ec.ECDSA(hashes.SHA256())
            )
        except InvalidSignature:
            raise Unauthenticated("invalid_signature", "signature: does not verify") from None
        return self._mint_key_tokens(key, now, authenticated_at_ns=now)

    def refresh(self, refresh_token: str) -> IssuedTokens:
        """Rotate a key-exchange refresh token: a new pair; the presented token stops working."""
        now = self._clock()
        row = self._key_refresh.get(refresh_token)
        if row is None or now >= row.expires_ns:
            raise Unauthenticated("invalid_token", "refresh_token: invalid, expired or already used")
        key = self._keys[row.key_id]
        self._check_key_active(key, now)
        self._key_refresh.pop(refresh_token)
        return self._mint_key_tokens(key, now, authenticated_at_ns=row.authenticated_at_ns)

    def revoke_key(self, key_id: str) -> bool:
        """Revoke an API key (idempotent): no new tokens, its refresh tokens stop at once, access
        tokens already minted keep working until they expire. False for an unknown key."""
        if key_id not in self._keys:
            return False
        self._revoked.add(key_id)
        return True

    def key_ids(self) -> list[str]:
        return list(self._keys)

    def is_revoked(self, key_id: str) -> bool:
        return key_id in self._revoked

    def _check_key_active(self, key: ApiKey, now: int) -> None:
        if key.key_id in self._revoked:
            raise Unauthenticated("invalid_key", "key_id: the key was revoked")
        if key.expires_at_ns is not None and now >= key.expires_at_ns:
            raise Unauthenticated("invalid_key", "key_id: the key has expired")

    def _mint_key_tokens(self, key: ApiKey, now: int, authenticated_at_ns: int) -> IssuedTokens:
        access = secrets.token_urlsafe(32)
        expires = now + ACCESS_TTL_NS
        self._access.put(
            access,
            _Access(key.kind, key.key_id, key.user_id, key.client_id, None, (), authenticated_at_ns, expires, None),
            expires,
            now,
        )
        refresh = None
        if key.kind == "user":
            refresh = secrets.token_urlsafe(32)
            row = _KeyRefresh(key.key_id, authenticated_at_ns, now + REFRESH_TTL_NS)
            self._key_refresh.put(refresh, row, row.expires_ns, now)
        return IssuedTokens(access, expires, refresh)

    # ---------------------------------------------------------------------------- bearer

    def authenticate_bearer(self, token: str, on_behalf_of: str | None) -> Principal:
        """The principal of an access token. An organization token must name, in ``on_behalf_of``,
        a user it acts for; a user or OAuth token may name only its own user."""
        row = self._access.get(token)
        if row is None or self._clock() >= row.expires_ns or (row.grant is not None and row.grant.revoked):
            raise Unauthenticated("invalid_token", "the access token is invalid or expired")
        if row.kind == "organization":
            if not on_behalf_of:
                raise Unauthenticated(
                    "on_behalf_of_required", "SVC-On-Behalf-Of: required with an organization token"
                )
            client_id = self._keys[row.key_id].users.get(on_behalf_of)
            if client_id is None:
                raise Forbidden("on_behalf_of_forbidden", "SVC-On-Behalf-Of: the organization does not act for this user")
            user_id = on_behalf_of
        else:
            assert row.user_id is not None and row.client_id is not None
            if on_behalf_of and on_behalf_of != row.user_id:
                raise Forbidden("on_behalf_of_forbidden", "SVC-On-Behalf-Of: this token acts only for its own user")
            user_id, client_id = row.user_id, row.client_id
        grant = row.grant
        return Principal(
            user_id, client_id, row.key_id, row.kind, row.audience, row.scopes, row.authenticated_at_ns,
            grant.oauth_client_id if grant is not None else None,
        )  # fmt: skip

    # --------------------------------------------------------------------- OAuth authorize

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
        if not _URI.fullmatch(resource) or "#" in resource:
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
        code = secrets.token_urlsafe(32)
        row = _Code(
            req.client.client_id, req.redirect_uri, req.code_challenge, req.resource, req.scopes,
            principal.user_id, principal.client_id, principal.key_id, principal.authenticated_at_ns,
            now + CODE_TTL_NS,
        )  # fmt: skip
        self._codes.put(code, row, row.expires_ns, now)
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
        row = self._codes.get(code)
        refused = BadRequest("invalid_grant", "code: invalid, expired or already redeemed")
        if row is None or now >= row.expires_ns:
            raise refused
        if row.grant is not None:  # a second redemption: the code leaked; revoke what it gave
            row.grant.revoked = True
            raise refused
        if row.oauth_client_id != client.client_id or row.redirect_uri != redirect_uri:
            raise refused
        if not hmac.compare_digest(_s256(verifier), row.challenge):
            raise refused
        if resource is not None and resource != row.resource:
            raise BadRequest("invalid_target", "resource: differs from the resource that was authorized")
        row.grant = _Grant(
            client.client_id, row.user_id, row.client_id, row.key_id, row.resource, row.scopes,
            row.authenticated_at_ns,
        )  # fmt: skip
        return self._mint_oauth(row.grant, row.scopes, now)

    def _rotate_oauth(self, form: Mapping[str, object], client: OAuthClient, now: int) -> dict[str, Any]:
        token = _required(form, "refresh_token")
        scope = _param(form, "scope")
        resource = _param(form, "resource")
        row = self._oauth_refresh.get(token)
        refused = BadRequest("invalid_grant", "refresh_token: invalid, expired, revoked or already used")
        if row is None or now >= row.expires_ns or row.grant.revoked or row.grant.oauth_client_id != client.client_id:
            raise refused
        if row.used:  # replay: every token of the grant goes
            row.grant.revoked = True
            raise refused
        grant = row.grant
        scopes = grant.scopes
        if scope is not None:
            scopes = tuple(dict.fromkeys(scope.split()))
            if not scopes or any(s not in grant.scopes for s in scopes):
                raise BadRequest("invalid_scope", "scope: must be a subset of the scopes granted")
        if resource is not None and resource != grant.resource:
            raise BadRequest("invalid_target", "resource: a refresh cannot change the audience")
        row.used = True
        return self._mint_oauth(grant, scopes, now)

    def _mint_oauth(self, grant: _Grant, scopes: tuple[str, ...], now: int) -> dict[str, Any]:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        expires = now + ACCESS_TTL_NS
        row = _Access("oauth", grant.key_id, grant.user_id, grant.client_id, grant.resource, scopes,
                      grant.authenticated_at_ns, expires, grant)  # fmt: skip
        self._access.put(access, row, expires, now)
        self._oauth_refresh.put(refresh, _OAuthRefresh(grant, now + REFRESH_TTL_NS), now + REFRESH_TTL_NS, now)
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ACCESS_TTL_NS // NS,
            "refresh_token": refresh,
            "scope": " ".join(scopes),
        }

    # ------------------------------------------------------------------------ invariants

    def check_invariants(self) -> None:
        """Assert the cross-references of every table (tests call it after each step)."""
        for a in self._access.rows.values():
            key = self._keys[a.key_id]
            assert a.kind in ("user", "organization", "oauth")
            assert (a.kind == "oauth") == (a.grant is not None) == (a.audience is not None)
            assert a.kind == "oauth" or a.kind == key.kind
            assert a.kind == "organization" or (a.user_id is not None and a.client_id is not None)
            assert a.authenticated_at_ns <= a.expires_ns - ACCESS_TTL_NS
        for r in self._key_refresh.rows.values():
            assert self._keys[r.key_id].kind == "user"
        for o in self._oauth_refresh.rows.values():
            assert o.grant.oauth_client_id in self._clients and set(o.grant.scopes) <= set(
                self._clients[o.grant.oauth_client_id].scopes
            )
        for c in self._codes.rows.values():
            assert c.grant is None or c.grant.scopes == c.scopes
        assert self._revoked <= set(self._keys)


# ----------------------------------------------------------------------------------- helpers


def iso_utc(ns: int) -> str:
    """Engine nanoseconds as ISO 8601 UTC in whole seconds (rounded down): ``2026-11-02T10:00:00Z``."""
    return datetime.fromtimestamp(ns // NS, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def with_query(uri: str, params: Mapping[str, str | None]) -> str:
    """Append parameters (None values left out) to a URI, keeping a query it already has."""
    query = urlencode([(k, v) for k, v in params.items() if v is not None])
    return f"{uri}{'&' if '?' in uri else '?'}{query}" if query else uri


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


def _b64url_decode(text: str) -> bytes | None:
    """base64url with optional (but then complete) padding; None when malformed."""
    if not _B64URL.fullmatch(text) or ("=" in text and len(text) % 4):
        return None
    body = text.rstrip("=")
    try:
        return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return None


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


# ------------------------------------------------------------------------------ scenario


def _parse_api_keys(entries: object) -> dict[str, ApiKey]:
    if not isinstance(entries, list):
        raise ValueError("api_keys: must be a list")
    keys: dict[str, ApiKey] = {}
    user_clients: dict[str, str] = {}  # a user is the same CeFi client everywhere

    def user(path: str, user_id: object, client_id: object) -> tuple[str, str]:
        if not isinstance(user_id, str) or not user_id:
            raise ValueError(f"{path}.user_id: must be a non-empty string")
        if not isinstance(client_id, str) or not _CEFI_ID.fullmatch(client_id):
            raise ValueError(f"{path}.client_id: must be a string of decimal digits like \"100\"")
        if user_clients.setdefault(user_id, client_id) != client_id:
            raise ValueError(f"{path}.client_id: user {user_id} is client {user_clients[user_id]} elsewhere")
        return user_id, client_id

    for i, e in enumerate(entries):
        p = f"api_keys[{i}]"
        _check_object(
            p, e, {"key_id", "kind", "user_id", "client_id", "public_key", "users", "expires_at", "name", "revoked"}
        )
        _optional(p, e, "name", str, "a string")
        _optional(p, e, "revoked", bool, "true or false")
        key_id = e.get("key_id")
        if not isinstance(key_id, str) or not key_id:
            raise ValueError(f"{p}.key_id: must be a non-empty string")
        if key_id in keys:
            raise ValueError(f"{p}.key_id: duplicate key id {key_id}")
        kind = e.get("kind")
        if kind not in ("user", "organization"):
            raise ValueError(f'{p}.kind: must be "user" or "organization"')
        own_user = own_client = None
        if kind == "user" or "user_id" in e or "client_id" in e:
            own_user, own_client = user(p, e.get("user_id"), e.get("client_id"))
        users: dict[str, str] = {}
        if "users" in e:
            if kind != "organization":
                raise ValueError(f"{p}.users: only an organization key acts for other users")
            if not isinstance(e["users"], list):
                raise ValueError(f"{p}.users: must be a list")
            for j, u in enumerate(e["users"]):
                _check_object(f"{p}.users[{j}]", u, {"user_id", "client_id"})
                uid, cid = user(f"{p}.users[{j}]", u.get("user_id"), u.get("client_id"))
                if uid in users:
                    raise ValueError(f"{p}.users[{j}].user_id: duplicate user {uid}")
                users[uid] = cid
        if own_user is not None and own_client is not None and kind == "organization":
            users.setdefault(own_user, own_client)
        keys[key_id] = ApiKey(
            key_id, kind, own_user, own_client, _load_p256(f"{p}.public_key", e.get("public_key")), users,
            _parse_time(f"{p}.expires_at", e["expires_at"]) if "expires_at" in e else None,
            e.get("revoked", False),
        )  # fmt: skip
    return keys


def _parse_oauth_clients(entries: object) -> dict[str, OAuthClient]:
    if not isinstance(entries, list):
        raise ValueError("oauth_clients: must be a list")
    clients: dict[str, OAuthClient] = {}
    for i, e in enumerate(entries):
        p = f"oauth_clients[{i}]"
        _check_object(p, e, {"client_id", "redirect_uris", "scopes", "disabled", "name"})
        _optional(p, e, "name", str, "a string")
        client_id = e.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise ValueError(f"{p}.client_id: must be a non-empty string")
        if client_id in clients:
            raise ValueError(f"{p}.client_id: duplicate client id {client_id}")
        uris = _string_list(f"{p}.redirect_uris", e.get("redirect_uris"))
        for j, uri in enumerate(uris):
            if not _URI.fullmatch(uri) or "#" in uri:
                raise ValueError(f"{p}.redirect_uris[{j}]: must be an absolute URI without a fragment")
        scopes = _string_list(f"{p}.scopes", e.get("scopes"))
        for j, scope in enumerate(scopes):
            if not _SCOPE_TOKEN.fullmatch(scope):
                raise ValueError(f"{p}.scopes[{j}]: not a valid scope token (RFC 6749 section 3.3)")
        _optional(p, e, "disabled", bool, "true or false")
        clients[client_id] = OAuthClient(client_id, tuple(uris), tuple(scopes), e.get("disabled", False), e.get("name"))
    return clients


def _check_object(path: str, entry: object, allowed: set[str]) -> None:
    if not isinstance(entry, dict):
        raise ValueError(f"{path}: must be an object")
    for name in entry:
        if name not in allowed:
            raise ValueError(f"{path}.{name}: unknown key")


def _optional(path: str, entry: dict[str, Any], name: str, kind: type, what: str) -> None:
    if name in entry and not isinstance(entry[name], kind):
        raise ValueError(f"{path}.{name}: must be {what}")


def _string_list(path: str, value: object) -> list[str]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{path}: must be a non-empty list of strings")
    for j, item in enumerate(value):
        if not isinstance(item, str):
            raise ValueError(f"{path}[{j}]: must be a string")
    if len(set(value)) != len(value):
        raise ValueError(f"{path}: has duplicates")
    return value


def _load_p256(path: str, pem: object) -> ec.EllipticCurvePublicKey:
    if not isinstance(pem, str):
        raise ValueError(f"{path}: must be a PEM string")
    try:
        key = serialization.load_pem_public_key(pem.encode())
    except (ValueError, TypeError, UnicodeError):
        raise ValueError(f"{path}: not a PEM public key") from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ValueError(f"{path}: must be an EC P-256 (secp256r1) public key")
    return key


def _parse_time(path: str, value: object) -> int:
    if isinstance(value, str):
        try:
            t = datetime.fromisoformat(value)
        except ValueError:
            t = None
        if t is not None and t.utcoffset() is not None:
            return int(t.timestamp()) * NS + t.microsecond * 1000
    raise ValueError(f"{path}: must be an ISO 8601 time with a zone, like 2026-11-02T10:00:00Z")
