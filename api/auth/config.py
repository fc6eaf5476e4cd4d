"""The scenario's ``api_keys`` and ``oauth_clients`` entries as the store's records.

Contract: ``parse_api_keys`` / ``parse_oauth_clients`` return records keyed by key id / client id,
or raise ``ValueError("api_keys[2].public_key: <reason>")`` naming the JSON path of the first bad
entry. A public key must be a PEM of an EC P-256 key; an ``expires_at`` an ISO 8601 time with a
zone; a user is the same CeFi client under every key. The scenario loader checks the same entries
for shape first (``api/formats/scenario/auth_entries.py``), with every problem at once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from cefisim.api.auth.auth_records import NS, URI_RE, ApiKey, OAuthClient

_CEFI_ID = re.compile(r"[1-9][0-9]*")
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")  # RFC 6749 section 3.3


def parse_api_keys(entries: object) -> dict[str, ApiKey]:
    if not isinstance(entries, list):
        raise ValueError("api_keys: must be a list")
    keys: dict[str, ApiKey] = {}
    user_clients: dict[str, str] = {}  # a user is the same CeFi client everywhere

    def user(path: str, user_id: object, client_id: object) -> tuple[str, str]:
        if not isinstance(user_id, str) or not user_id:
            raise ValueError(f"{path}.user_id: must be a non-empty string")
        if not isinstance(client_id, str) or not _CEFI_ID.fullmatch(client_id):
            raise ValueError(f'{path}.client_id: must be a string of decimal digits like "100"')
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
        key_id = _new_id(p, e, "key_id", keys, "key id")
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
            key_id, kind, own_user, own_client, load_p256(f"{p}.public_key", e.get("public_key")), users,
            _parse_time(f"{p}.expires_at", e["expires_at"]) if "expires_at" in e else None,
            e.get("revoked", False),
        )  # fmt: skip
    return keys


def parse_oauth_clients(entries: object) -> dict[str, OAuthClient]:
    if not isinstance(entries, list):
        raise ValueError("oauth_clients: must be a list")
    clients: dict[str, OAuthClient] = {}
    for i, e in enumerate(entries):
        p = f"oauth_clients[{i}]"
        _check_object(p, e, {"client_id", "redirect_uris", "scopes", "disabled", "name"})
        _optional(p, e, "name", str, "a string")
        client_id = _new_id(p, e, "client_id", clients, "client id")
        uris = _string_list(f"{p}.redirect_uris", e.get("redirect_uris"))
        for j, uri in enumerate(uris):
            if not URI_RE.fullmatch(uri) or "#" in uri:
                raise ValueError(f"{p}.redirect_uris[{j}]: must be an absolute URI without a fragment")
        scopes = _string_list(f"{p}.scopes", e.get("scopes"))
        for j, scope in enumerate(scopes):
            if not _SCOPE_TOKEN.fullmatch(scope):
                raise ValueError(f"{p}.scopes[{j}]: not a valid scope token (RFC 6749 section 3.3)")
        _optional(p, e, "disabled", bool, "true or false")
        clients[client_id] = OAuthClient(client_id, tuple(uris), tuple(scopes), e.get("disabled", False), e.get("name"))
    return clients


def _new_id(path: str, entry: dict[str, Any], name: str, seen: Mapping[str, object], what: str) -> str:
    """The entry's identifier ``name``: a non-empty string not among the ids ``seen`` so far."""
    value = entry.get(name)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{path}.{name}: must be a non-empty string")
    if value in seen:
        raise ValueError(f"{path}.{name}: duplicate {what} {value}")
    return value


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


def load_p256(path: str, pem: object) -> ec.EllipticCurvePublicKey:
    if not isinstance(pem, str):
        raise ValueError(f"{path}: must be a PEM string")
    try:
        key = serialization.load_pem_public_key(pem.encode())
    except (ValueError, TypeError, UnicodeError):
        raise ValueError(f"{path}: not a PEM public key") from None
    except UnsupportedAlgorithm:  # a well-formed key of a curve or algorithm cryptography does not know
        raise ValueError(f"{path}: must be an EC P-256 (secp256r1) public key") from None
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
