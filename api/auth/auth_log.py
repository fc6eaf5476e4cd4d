"""The Auth log: the Auth state that changes at run time and the records that change it, journaled.

Each record is journaled before it applies, and a restart replays them; the state is snapshotted.

Contract:

- :class:`AuthLog` holds what the store changes after the scenario is loaded: revoked keys, access
  tokens, key-exchange refresh tokens, OAuth refresh tokens, authorization codes and their grants.
  The store changes it only through :meth:`AuthLog.change`, which hands the record to ``journal``
  first (the runtime writes it to the command journal; a write that fails raises there and nothing
  changes) and then applies it with :meth:`AuthLog.apply`, the same function a restart replays
  the journal with. The live server and its replay run one code path, so they cannot drift apart.
- A record is a kind and a list of JSON values (``docs/journal.md`` lists them). A token or code is
  written as the hex SHA-256 digest the tables key it by, never as the secret: what verification
  needs, nothing that could be presented. Expiries are absolute engine nanoseconds, so a restored
  token keeps its lifetime exactly and one that expired while the server was down is refused.
- :meth:`AuthLog.apply` raises ``ValueError`` naming the value for a record it cannot apply (a
  foreign or damaged journal); it checks every value before it changes anything.
- :meth:`AuthLog.state` is the snapshot form (lists of rows, tokens as digests, grants by index;
  ``docs/snapshot.md``), None when nothing changed since the scenario was loaded; :func:`restored`
  reads it back, checking every value (``ValueError`` naming its path).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from cefisim.api.auth.auth_records import (
    ACCESS_TTL_NS,
    AccessToken,
    ApiKey,
    AuthCode,
    Grant,
    KeyRefresh,
    OAuthClient,
    OAuthRefresh,
    TokenTable,
)

NAMESPACE = "auth"  # the side-state these records change (api/side_state/side_states.py)
# the record kinds; their values, in order, are in docs/journal.md
REVOKE_KEY = "auth.revoke_key"  # a key revoked (control plane)
KEY_TOKENS = "auth.key_tokens"  # a key exchange, or a rotation of its refresh token
CODE = "auth.code"  # a consent approved: an authorization code
OAUTH_TOKENS = "auth.oauth_tokens"  # a code redeemed (a grant starts), or an OAuth refresh token rotated
GRANT_REVOKED = "auth.grant_revoked"  # a code or OAuth refresh token reused: its grant revoked
FROM = ("code", "refresh")  # what an OAuth record's source digest names

#: the runtime's journal writer: (engine nanoseconds, kind, values)
Journal = Callable[[int, str, list[Any]], None]


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r}: must be a string")
    return value


def _ns(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{value!r}: must be engine nanoseconds")
    return value


def _hex(value: object) -> bytes:
    """A token's digest as the journal writes it: 64 lowercase hex digits."""
    text = _text(value)
    if len(text) != 64 or text.strip("0123456789abcdef"):
        raise ValueError(f"{text!r}: must be a SHA-256 digest in hex")
    return bytes.fromhex(text)


def _scopes(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{value!r}: must be a list of scopes")
    return tuple(_text(v) for v in value)


def _from(value: object) -> str:
    if value not in FROM:
        raise ValueError(f"{value!r}: must be one of {FROM}")
    return str(value)


def _lifetime(authenticated_at_ns: int, access_expires_ns: int) -> None:
    """An access token is minted at or after the key signature it descends from, and lives an hour."""
    if authenticated_at_ns > access_expires_ns - ACCESS_TTL_NS:
        raise ValueError(f"{access_expires_ns}: an access token expires an hour after it is minted, not before")


def _optional(check: Callable[[object], Any]) -> Callable[[object], Any]:
    return lambda value: None if value is None else check(value)


_SHAPES: dict[str, tuple[Callable[[object], Any], ...]] = {
    REVOKE_KEY: (_text,),
    KEY_TOKENS: (_text, _ns, _hex, _ns, _optional(_hex), _optional(_ns), _optional(_hex)),
    CODE: (_hex, _text, _text, _text, _text, _scopes, _text, _text, _text, _ns, _ns),
    OAUTH_TOKENS: (_from, _hex, _scopes, _hex, _ns, _hex, _ns),
    GRANT_REVOKED: (_from, _hex),
}


class AuthLog:
    """The run-time Auth tables of one store (see the module docstring for the contract)."""

    def __init__(self, keys: Mapping[str, ApiKey], clients: Mapping[str, OAuthClient]) -> None:
        self.keys = keys
        self.clients = clients
        self.journal: Journal | None = None  # set by the runtime when the server journals
        self.revoked: set[str] = set()
        self.access: TokenTable[AccessToken] = TokenTable()
        self.key_refresh: TokenTable[KeyRefresh] = TokenTable()
        self.oauth_refresh: TokenTable[OAuthRefresh] = TokenTable()
        self.codes: TokenTable[AuthCode] = TokenTable()
        self.clear()

    def clear(self) -> None:
        """Back to the scenario as loaded: only its ``revoked: true`` keys revoked, no token, no code."""
        self.revoked = {k.key_id for k in self.keys.values() if k.revoked}
        self.access, self.key_refresh = TokenTable(), TokenTable()
        self.oauth_refresh, self.codes = TokenTable(), TokenTable()

    def take(self, other: AuthLog) -> None:
        """Replace every table with ``other``'s (a restored snapshot); the journal writer stays."""
        self.revoked, self.access, self.key_refresh = other.revoked, other.access, other.key_refresh
        self.oauth_refresh, self.codes = other.oauth_refresh, other.codes

    def change(self, now: int, kind: str, values: list[Any]) -> None:
        """Journal a change (raises when the journal cannot take it: then nothing changed), then apply it."""
        if self.journal is not None:
            self.journal(now, kind, values)
        self.apply(now, kind, values)

    def apply(self, now: int, kind: str, values: object) -> None:
        """Apply one record at engine time ``now``; ``ValueError`` (nothing changed) when it cannot be."""
        shape = _SHAPES.get(kind)
        if shape is None:
            raise ValueError(f"unknown Auth record kind {kind!r}")
        if not isinstance(values, list) or len(values) != len(shape):
            raise ValueError(f"{kind}: expected {len(shape)} values")
        args = [check(value) for check, value in zip(shape, values, strict=True)]
        if kind == REVOKE_KEY:
            self._key(args[0])
            self.revoked.add(args[0])
        elif kind == KEY_TOKENS:
            self._key_tokens(now, *args)
        elif kind == CODE:
            self._code(now, *args)
        elif kind == OAUTH_TOKENS:
            self._oauth_tokens(now, *args)
        else:
            grant = self._source(*args)[1]
            if grant is None:
                raise ValueError(f"{kind}: the code was never redeemed")
            grant.revoked = True

    # ------------------------------------------------------------------------------ appliers

    def _key(self, key_id: str) -> ApiKey:
        key = self.keys.get(key_id)
        if key is None:
            raise ValueError(f"{key_id!r}: no such API key in the scenario")
        return key

    def _key_tokens(
        self,
        now: int,
        key_id: str,
        authenticated_at_ns: int,
        access: bytes,
        access_expires_ns: int,
        refresh: bytes | None,
        refresh_expires_ns: int | None,
        rotated: bytes | None,
    ) -> None:
        key = self._key(key_id)
        if (refresh is None) != (refresh_expires_ns is None) or (refresh is not None and key.kind != "user"):
            raise ValueError(f"{key_id!r}: a refresh token and its expiry come together, for a user key only")
        _lifetime(authenticated_at_ns, access_expires_ns)
        if rotated is not None:
            self.key_refresh.pop(rotated)
        row = AccessToken(
            key.kind, key_id, key.user_id, key.client_id, None, (), authenticated_at_ns, access_expires_ns, None
        )
        self.access.put(access, row, access_expires_ns, now)
        if refresh is not None and refresh_expires_ns is not None:
            self.key_refresh.put(
                refresh, KeyRefresh(key_id, authenticated_at_ns, refresh_expires_ns), refresh_expires_ns, now
            )

    def _code(self, now: int, code: bytes, *fields: Any) -> None:
        row = AuthCode(*fields)
        client = self.clients.get(row.oauth_client_id)
        if client is None:
            raise ValueError(f"{row.oauth_client_id!r}: no such OAuth client in the scenario")
        if not set(row.scopes) <= set(client.scopes):
            raise ValueError(f"{list(row.scopes)}: not scopes of {row.oauth_client_id!r}")
        self._key(row.key_id)
        self.codes.put(code, row, row.expires_ns, now)

    def _source(self, source: str, digest: bytes) -> tuple[AuthCode | OAuthRefresh, Grant | None]:
        row: AuthCode | OAuthRefresh | None
        row = self.codes.rows.get(digest) if source == "code" else self.oauth_refresh.rows.get(digest)
        if row is None:
            raise ValueError(f"{digest.hex()}: no such {source}")
        return row, row.grant

    def _oauth_tokens(
        self,
        now: int,
        source: str,
        digest: bytes,
        scopes: tuple[str, ...],
        access: bytes,
        access_expires_ns: int,
        refresh: bytes,
        refresh_expires_ns: int,
    ) -> None:
        row, grant = self._source(source, digest)
        granted = row.scopes if isinstance(row, AuthCode) else row.grant.scopes
        if not set(scopes) <= set(granted):
            raise ValueError(f"{list(scopes)}: not scopes of the grant")
        _lifetime(
            row.authenticated_at_ns if isinstance(row, AuthCode) else row.grant.authenticated_at_ns, access_expires_ns
        )
        if isinstance(row, AuthCode):
            if grant is not None:
                raise ValueError(f"{digest.hex()}: the code was redeemed already")
            grant = row.grant = Grant(
                row.oauth_client_id, row.user_id, row.client_id, row.key_id, row.resource, row.scopes,
                row.authenticated_at_ns,
            )  # fmt: skip
        else:
            row.used = True
        assert grant is not None  # a refresh token always has its grant
        token = AccessToken("oauth", grant.key_id, grant.user_id, grant.client_id, grant.resource, scopes,
                            grant.authenticated_at_ns, access_expires_ns, grant)  # fmt: skip
        self.access.put(access, token, access_expires_ns, now)
        self.oauth_refresh.put(refresh, OAuthRefresh(grant, refresh_expires_ns), refresh_expires_ns, now)

    def check_invariants(self) -> None:
        """Assert the cross-references of every table (the store's check; a restored snapshot's too)."""
        for a in self.access.rows.values():
            key = self.keys[a.key_id]
            assert a.kind in ("user", "organization", "oauth")
            assert (a.kind == "oauth") == (a.grant is not None) == (a.audience is not None)
            assert a.kind == "oauth" or a.kind == key.kind
            assert a.kind == "organization" or (a.user_id is not None and a.client_id is not None)
            assert a.authenticated_at_ns <= a.expires_ns - ACCESS_TTL_NS
        for r in self.key_refresh.rows.values():
            assert self.keys[r.key_id].kind == "user"
        for o in self.oauth_refresh.rows.values():
            assert o.grant.oauth_client_id in self.clients and set(o.grant.scopes) <= set(
                self.clients[o.grant.oauth_client_id].scopes
            )
        for c in self.codes.rows.values():
            assert c.grant is None or c.grant.scopes == c.scopes
        assert self.revoked <= set(self.keys)

    # ------------------------------------------------------------------------------- snapshot

    def state(self) -> dict[str, Any] | None:
        """The tables as JSON values, in table order (which is expiry order); None when they are as loaded."""
        initial = {k.key_id for k in self.keys.values() if k.revoked}
        tables = (self.access, self.key_refresh, self.oauth_refresh, self.codes)
        if self.revoked == initial and not any(t.rows for t in tables):
            return None
        grants: dict[Grant, int] = {}

        def ref(grant: Grant | None) -> int | None:
            return None if grant is None else grants.setdefault(grant, len(grants))

        access = [
            [d.hex(), a.kind, a.key_id, a.user_id, a.client_id, a.audience, list(a.scopes), a.authenticated_at_ns,
             a.expires_ns, ref(a.grant)]
            for d, a in self.access.rows.items()
        ]  # fmt: skip
        key_refresh = [
            [d.hex(), r.key_id, r.authenticated_at_ns, r.expires_ns] for d, r in self.key_refresh.rows.items()
        ]
        oauth_refresh = [[d.hex(), ref(o.grant), o.expires_ns, o.used] for d, o in self.oauth_refresh.rows.items()]
        codes = [
            [d.hex(), c.oauth_client_id, c.redirect_uri, c.challenge, c.resource, list(c.scopes), c.user_id,
             c.client_id, c.key_id, c.authenticated_at_ns, c.expires_ns, ref(c.grant)]
            for d, c in self.codes.rows.items()
        ]  # fmt: skip
        grant_rows = [
            [g.oauth_client_id, g.user_id, g.client_id, g.key_id, g.resource, list(g.scopes), g.authenticated_at_ns,
             g.revoked]
            for g in grants
        ]  # fmt: skip
        return {
            "revoked": sorted(self.revoked),
            "grants": grant_rows,
            "access": access,
            "key_refresh": key_refresh,
            "oauth_refresh": oauth_refresh,
            "codes": codes,
        }


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{value!r}: must be true or false")
    return value


def _rows(doc: Mapping[str, Any], name: str, shape: tuple[Callable[[object], Any], ...]) -> list[list[Any]]:
    """The checked rows of one table of a snapshot's Auth state; ``ValueError`` naming the path."""
    rows = doc.get(name, [])
    if not isinstance(rows, list):
        raise ValueError(f"auth.{name}: must be a list")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(shape):
            raise ValueError(f"auth.{name}[{i}]: must be a list of {len(shape)} values")
        try:
            out.append([check(value) for check, value in zip(shape, row, strict=True)])
        except ValueError as exc:
            raise ValueError(f"auth.{name}[{i}]: {exc}") from None
    return out


@contextmanager
def _at(where: str) -> Iterator[None]:
    """One step of a restore: its ``ValueError`` names the row (``auth.codes[2]: ...``)."""
    try:
        yield
    except ValueError as exc:
        raise ValueError(f"auth.{where}: {exc}") from None


def restored(keys: Mapping[str, ApiKey], clients: Mapping[str, OAuthClient], doc: object) -> AuthLog:
    """An Auth log from :meth:`AuthLog.state` (None: as loaded); ``ValueError`` naming what is wrong."""
    auth_log = AuthLog(keys, clients)
    if doc is None:
        return auth_log
    if not isinstance(doc, dict):
        raise ValueError("auth: must be an object")
    opt = _optional(_text)
    grants = []
    for *fields, revoked in _rows(doc, "grants", (_text, _text, _text, _text, _text, _scopes, _ns, _flag)):
        grants.append(Grant(*fields))
        grants[-1].revoked = revoked

    def grant(index: object, where: str) -> Grant | None:
        if index is None:
            return None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(grants):
            raise ValueError(f"auth.{where}: grant {index!r} is not in auth.grants")
        return grants[index]

    for i, key_id in enumerate(_scopes(doc.get("revoked", []))):
        with _at(f"revoked[{i}]"):
            auth_log.revoked.add(auth_log._key(key_id).key_id)
    access_shape = (_hex, _text, _text, opt, opt, opt, _scopes, _ns, _ns, lambda v: v)
    for i, (d, kind, key_id, user_id, client_id, audience, scopes, at, expires, g) in enumerate(
        _rows(doc, "access", access_shape)
    ):
        token = AccessToken(kind, key_id, user_id, client_id, audience, scopes, at, expires, grant(g, f"access[{i}]"))
        auth_log.access.put(d, token, expires, 0)
    for d, key_id, at, expires in _rows(doc, "key_refresh", (_hex, _text, _ns, _ns)):
        auth_log.key_refresh.put(d, KeyRefresh(key_id, at, expires), expires, 0)
    for i, (d, g, expires, used) in enumerate(_rows(doc, "oauth_refresh", (_hex, lambda v: v, _ns, _flag))):
        found = grant(g, f"oauth_refresh[{i}]")
        if found is None:
            raise ValueError(f"auth.oauth_refresh[{i}]: a refresh token belongs to a grant")
        auth_log.oauth_refresh.put(d, OAuthRefresh(found, expires, used), expires, 0)
    code_shape = (_hex, _text, _text, _text, _text, _scopes, _text, _text, _text, _ns, _ns, lambda v: v)
    for i, (d, *fields, g) in enumerate(_rows(doc, "codes", code_shape)):
        with _at(f"codes[{i}]"):
            auth_log._code(0, d, *fields)
        auth_log.codes.rows[d].grant = grant(g, f"codes[{i}]")
    return auth_log


__all__ = [
    "CODE",
    "GRANT_REVOKED",
    "KEY_TOKENS",
    "NAMESPACE",
    "OAUTH_TOKENS",
    "REVOKE_KEY",
    "AuthLog",
    "Journal",
    "restored",
]
