"""Auth records and errors: what the store keeps, what it hands out, and how it refuses.

Contract: the error classes are the store's only exceptions (their HTTP meaning is in ``store.py``);
``Principal``, ``IssuedTokens`` and ``AuthorizeRequest`` are what callers get back; ``ApiKey`` and
``OAuthClient`` come from the scenario (``config.py``); the ``_``-prefixed rows are internal state.
A :class:`TokenTable` keys its rows by the SHA-256 digest of a secret, never the secret, with O(1)
lookups and amortised O(1) purging of expired rows. Times are engine nanoseconds (``NS`` a second).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Generic, TypeVar
from urllib.parse import urlencode

from cryptography.hazmat.primitives.asymmetric import ec

NS = 1_000_000_000
ACCESS_TTL_NS = 3600 * NS
REFRESH_TTL_NS = 30 * 86_400 * NS

URI_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[\x21-\x7e]+")  # absolute, printable ASCII, no spaces


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
        self.location = with_query(redirect_uri, {"error": error, "error_description": description, "state": state})


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
class Grant:  # an OAuth grant: the family of every token descended from one code
    oauth_client_id: str
    user_id: str
    client_id: str
    key_id: str
    resource: str
    scopes: tuple[str, ...]
    authenticated_at_ns: int
    revoked: bool = False


@dataclass(slots=True, eq=False)
class AccessToken:
    kind: str
    key_id: str
    user_id: str | None
    client_id: str | None
    audience: str | None
    scopes: tuple[str, ...]
    authenticated_at_ns: int
    expires_ns: int
    grant: Grant | None


@dataclass(slots=True, eq=False)
class KeyRefresh:
    key_id: str
    authenticated_at_ns: int
    expires_ns: int


@dataclass(slots=True, eq=False)
class OAuthRefresh:
    grant: Grant
    expires_ns: int
    used: bool = False


@dataclass(slots=True, eq=False)
class AuthCode:
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
    grant: Grant | None = None  # set when redeemed; kept until expiry to detect a second redemption


R = TypeVar("R")


class TokenTable(Generic[R]):
    """Rows keyed by the SHA-256 digest of a secret, dropped after expiry.

    ``get`` finds a row by its secret, ``put``/``pop`` by the digest (the journal's records carry
    digests, never secrets). All three are O(1); ``put`` first purges expired rows from the front of an
    expiry queue (amortised O(1)). Rows of one table share a lifetime and the clock never goes back,
    so the queue is in expiry order; a row past expiry but not yet purged is refused by the caller.
    """

    __slots__ = ("_expiry", "rows")

    def __init__(self) -> None:
        self.rows: dict[bytes, R] = {}
        self._expiry: deque[tuple[int, bytes]] = deque()

    def put(self, key: bytes, row: R, expires_ns: int, now: int) -> None:
        """Keep ``row`` under ``key``, the digest of its secret (:func:`digest`), until ``expires_ns``."""
        while self._expiry and self._expiry[0][0] <= now:
            self.rows.pop(self._expiry.popleft()[1], None)
        self.rows[key] = row
        self._expiry.append((expires_ns, key))

    def get(self, secret: str) -> R | None:
        return self.rows.get(digest(secret))

    def pop(self, key: bytes) -> R | None:
        return self.rows.pop(key, None)

    def __len__(self) -> int:
        return len(self.rows)


# ----------------------------------------------------------------------------------- helpers


def iso_utc(ns: int) -> str:
    """Engine nanoseconds as ISO 8601 UTC in whole seconds (rounded down): ``2026-11-02T10:00:00Z``."""
    return datetime.fromtimestamp(ns // NS, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def with_query(uri: str, params: Mapping[str, str | None]) -> str:
    """Append parameters (None values left out) to a URI, keeping a query it already has."""
    query = urlencode([(k, v) for k, v in params.items() if v is not None])
    return f"{uri}{'&' if '?' in uri else '?'}{query}" if query else uri


def digest(secret: str) -> bytes:
    """The SHA-256 digest a table keys a secret's row by (and the journal records it by)."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


def mint(prefix: str = "") -> str:
    """A new token or code: ``prefix`` (``"{venue id}."`` on a venue made by ``POST /_sim/venues``, so
    the server finds the venue it belongs to; empty on the default venue) and 32 random bytes, base64url."""
    return prefix + secrets.token_urlsafe(32)
