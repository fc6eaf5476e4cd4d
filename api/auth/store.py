"""Auth state: API keys, key-exchange tokens, OAuth clients, authorization codes and grants.

Pure logic, no HTTP: ``api/auth/routes.py`` and ``api/auth/bearer.py`` turn its results and errors
into responses. Contract:

- Time. Token and code lifetimes follow the ENGINE clock (``clock()``, nanoseconds), so a virtual
  clock expires them. The key-exchange timestamp window (±30 s) follows the WALL clock (``wall()``,
  seconds), because clients sign with real time.
- Lifetimes: access token 1 hour, refresh token 30 days (from the moment it is minted; each rotation
  starts a new 30 days), authorization code 10 minutes. A credential is valid while
  ``now < expiry``.
- Secrets. Tokens and codes are ``secrets.token_urlsafe(32)`` (after the venue prefix, ``model.mint``): random,
  not engine output, never
  logged, never in an error detail. The store keeps only their SHA-256 digests and finds a secret by
  its digest, so no secret is compared byte by byte and none is kept after it is handed out.
- Atomicity. Every method is synchronous and finishes in one step; under one event loop a code or a
  refresh token is consumed exactly once.
- Key exchange. A user key gets an access and a refresh token, an organization key an access token
  only. Refreshing rotates (the old refresh token stops working) and keeps the time of the original
  key signature as ``authenticated_at``. Revoking a key stops its refresh tokens at once; access
  tokens already minted work until they expire.
- OAuth (authorize, consent, token, codes and grants): ``oauth.py``, owned by the store.
- Errors. :class:`BadRequest` (HTTP 400), :class:`Unauthenticated` (401), :class:`Forbidden` (403;
  :class:`LoginRequired`) carry ``error`` (an RFC 6749/6750 name where one exists) and ``detail``
  (names the field, never holds a secret). :class:`AuthorizeRedirect` is an authorize failure that
  goes back to the client's redirect_uri.
- Journal. Everything that changes after the scenario is loaded (revocations, tokens, codes, grants)
  is in ``self.auth_log`` (``auth_log.py``) and changes only by a record that is journaled first and
  then applied, the way a restart replays it; a record the journal refuses changes nothing.
- Memory. Expired tokens and codes are dropped as new ones are minted, amortised O(1) per mint.
  Every lookup is O(1).
- Parts: ``auth_records.py`` (errors, records, tables), ``config.py`` (the scenario's entries),
  ``oauth.py``; every name callers use is importable from here.
"""

from __future__ import annotations

import base64
import binascii
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from cefisim.api.auth.auth_log import KEY_TOKENS, REVOKE_KEY, AuthLog, restored
from cefisim.api.auth.auth_records import (
    ACCESS_TTL_NS,
    REFRESH_TTL_NS,
    ApiKey,
    AuthError,
    AuthorizeRedirect,
    AuthorizeRequest,
    BadRequest,
    Forbidden,
    IssuedTokens,
    LoginRequired,
    OAuthClient,
    Principal,
    Unauthenticated,
    digest,
    iso_utc,
    mint,
)
from cefisim.api.auth.config import parse_api_keys, parse_oauth_clients
from cefisim.api.auth.oauth import SENSITIVE_SCOPES, OAuth

KEY_WINDOW_S = 30  # key-exchange timestamp window, wall clock
_B64URL = re.compile(r"[A-Za-z0-9_\-]*={0,2}")


# ------------------------------------------------------------------------------------- store


class AuthStore:
    """All auth state of one emulator instance. See the module docstring for the contract."""

    def __init__(
        self,
        keys: Mapping[str, ApiKey],
        clients: Mapping[str, OAuthClient],
        clock: Callable[[], int],
        wall: Callable[[], float] = time.time,
        token_prefix: str = "",
    ) -> None:
        self._keys = dict(keys)
        self._prefix = token_prefix  # every token and code this store mints starts with it (api/auth/model.mint)
        self._clients = dict(clients)
        self._clock = clock
        self._wall = wall
        self.auth_log = AuthLog(self._keys, self._clients)  # what changes at run time, and its journal
        self._oauth = OAuth(self._clients, clock, self.auth_log, token_prefix)

    def reset(self) -> None:
        """Forget every token, code and revocation made since the scenario was loaded."""
        self.auth_log.clear()

    # The store is the simulation's ``auth`` side-state (api/side_state/side_states.py): its changes are journaled,
    # replayed, snapshotted and restored with the venue.

    def apply_record(self, at: int, kind: str, values: Any) -> None:
        """Replay one journaled change (:meth:`AuthLog.apply`)."""
        self.auth_log.apply(at, kind, values)

    def state(self) -> dict[str, Any] | None:
        """The run-time state for a snapshot (:meth:`AuthLog.state`)."""
        return self.auth_log.state()

    def restore(self, state: object) -> Callable[[], None]:
        """Check a snapshot's Auth state (:meth:`AuthLog.state`; None: as loaded) and return what
        installs it; ``ValueError`` naming the value, with nothing changed, when it is not sound."""
        auth_log = restored(self._keys, self._clients, state)
        try:
            auth_log.check_invariants()
        except (AssertionError, KeyError) as exc:
            raise ValueError(f"auth: the state it holds is not sound ({exc!r})") from None
        return lambda: self.auth_log.take(auth_log)

    @classmethod
    def from_scenario(
        cls,
        api_keys: list[dict[str, Any]] | None,
        oauth_clients: list[dict[str, Any]] | None,
        clock: Callable[[], int],
        wall: Callable[[], float] = time.time,
        token_prefix: str = "",
    ) -> AuthStore:
        """Build from the scenario's ``api_keys`` and ``oauth_clients``; a bad entry raises
        ``ValueError("api_keys[2].public_key: <reason>")`` naming its JSON path."""
        keys = parse_api_keys([] if api_keys is None else api_keys)
        return cls(keys, parse_oauth_clients([] if oauth_clients is None else oauth_clients), clock, wall, token_prefix)

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
        row = self.auth_log.key_refresh.get(refresh_token)
        if row is None or now >= row.expires_ns:
            raise Unauthenticated("invalid_token", "refresh_token: invalid, expired or already used")
        key = self._keys[row.key_id]
        self._check_key_active(key, now)
        return self._mint_key_tokens(key, now, row.authenticated_at_ns, rotated=digest(refresh_token))

    def revoke_key(self, key_id: str) -> bool:
        """Revoke an API key (idempotent): no new tokens, its refresh tokens stop at once, access
        tokens already minted keep working until they expire. False for an unknown key."""
        if key_id not in self._keys:
            return False
        if key_id not in self.auth_log.revoked:
            self.auth_log.change(self._clock(), REVOKE_KEY, [key_id])
        return True

    def key_ids(self) -> list[str]:
        return list(self._keys)

    def oauth_client_ids(self) -> list[str]:
        return list(self._clients)

    def is_revoked(self, key_id: str) -> bool:
        return key_id in self.auth_log.revoked

    def _check_key_active(self, key: ApiKey, now: int) -> None:
        if key.key_id in self.auth_log.revoked:
            raise Unauthenticated("invalid_key", "key_id: the key was revoked")
        if key.expires_at_ns is not None and now >= key.expires_at_ns:
            raise Unauthenticated("invalid_key", "key_id: the key has expired")

    def _mint_key_tokens(
        self, key: ApiKey, now: int, authenticated_at_ns: int, rotated: bytes | None = None
    ) -> IssuedTokens:
        """New tokens for ``key`` (journaled as one record; ``rotated``: the refresh token they replace)."""
        access = mint(self._prefix)
        expires = now + ACCESS_TTL_NS
        refresh = mint(self._prefix) if key.kind == "user" else None
        self.auth_log.change(
            now,
            KEY_TOKENS,
            [
                key.key_id, authenticated_at_ns, digest(access).hex(), expires,
                None if refresh is None else digest(refresh).hex(), None if refresh is None else now + REFRESH_TTL_NS,
                None if rotated is None else rotated.hex(),
            ],
        )  # fmt: skip
        return IssuedTokens(access, expires, refresh)

    # ---------------------------------------------------------------------------- bearer

    def authenticate_bearer(self, token: str, on_behalf_of: str | None) -> Principal:
        """The principal of an access token. An organization token must name, in ``on_behalf_of``,
        a user it acts for; a user or OAuth token may name only its own user."""
        row = self.auth_log.access.get(token)
        if row is None or self._clock() >= row.expires_ns or (row.grant is not None and row.grant.revoked):
            raise Unauthenticated("invalid_token", "the access token is invalid or expired")
        if row.kind == "organization":
            if not on_behalf_of:
                raise Unauthenticated("on_behalf_of_required", "SVC-On-Behalf-Of: required with an organization token")
            client_id = self._keys[row.key_id].users.get(on_behalf_of)
            if client_id is None:
                raise Forbidden(
                    "on_behalf_of_forbidden", "SVC-On-Behalf-Of: the organization does not act for this user"
                )
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

    # ----------------------------------------------------------------------------- OAuth

    def authorize(self, params: Mapping[str, object]) -> AuthorizeRequest:
        """Validate authorize parameters: :meth:`OAuth.authorize <api.auth.oauth.OAuth.authorize>`."""
        return self._oauth.authorize(params)

    def consent(self, principal: Principal, params: Mapping[str, object], decision: object) -> str:
        """Record the user's decision: :meth:`OAuth.consent <api.auth.oauth.OAuth.consent>`."""
        return self._oauth.consent(principal, params, decision)

    def token(self, form: Mapping[str, object]) -> dict[str, Any]:
        """The OAuth token endpoint: :meth:`OAuth.token <api.auth.oauth.OAuth.token>`."""
        return self._oauth.token(form)

    # ------------------------------------------------------------------------ invariants

    def check_invariants(self) -> None:
        """Assert the cross-references of every table (tests call it after each step)."""
        self.auth_log.check_invariants()


def _b64url_decode(text: str) -> bytes | None:
    """base64url with optional (but then complete) padding; None when malformed."""
    if not _B64URL.fullmatch(text) or ("=" in text and len(text) % 4):
        return None
    body = text.rstrip("=")
    try:
        return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return None


__all__ = [
    "SENSITIVE_SCOPES",
    "AuthError",
    "AuthStore",
    "AuthorizeRedirect",
    "AuthorizeRequest",
    "BadRequest",
    "Forbidden",
    "IssuedTokens",
    "LoginRequired",
    "Principal",
    "Unauthenticated",
    "iso_utc",
]
