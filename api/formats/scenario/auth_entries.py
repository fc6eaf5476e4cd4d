"""The ``api_keys`` and ``oauth_clients`` sections, checked for shape only.

Contract: the entries are kept as written and handed to the Auth store, which builds its own
records. Here: keys and types, enums, ISO 8601 times with a zone, redirect URIs and scope tokens,
client ids of clients in the scenario, that one user trades as one client across every key, and
that a public key is the PEM of an EC P-256 key (the store's own loader, so that ``replay``,
``backtest`` and ``data record`` refuse the file ``serve`` refuses).
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import partial

from cefisim.api.auth.config import load_p256
from cefisim.api.formats.scenario.document import join_path
from cefisim.api.formats.scenario.format_keys import API_KEY_KEYS, API_KEY_KINDS, API_KEY_USER_KEYS, OAUTH_CLIENT_KEYS
from cefisim.api.formats.scenario.parser import Parser

URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[\x21-\x22\x24-\x7e]+$")  # absolute, printable, no fragment
SCOPE_RE = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")  # RFC 6749 section 3.3


def public_key(parser: Parser, value: object, path: str) -> str | None:
    """A PEM string of an EC P-256 public key, or None after reporting why not."""
    text = parser.string(value, path)
    if text is None:
        return None
    try:
        load_p256(path, text)
    except ValueError as exc:  # "<path>: <reason>"
        parser.err(path, str(exc).removeprefix(f"{path}: "))
        return None
    return text


def api_key(parser: Parser, value: object, path: str) -> dict:
    """An Auth key, checked for shape (the Auth store checks the PEM itself)."""
    d = parser.obj(value, path, API_KEY_KEYS)
    if d is None:
        return {}
    parser.get(d, "key_id", path, parser.string)
    kind = parser.get(d, "kind", path, lambda v, p: parser.enum(v, p, API_KEY_KINDS))
    parser.get(d, "public_key", path, partial(public_key, parser))
    parser.get(d, "name", path, parser.string)
    parser.get(d, "revoked", path, parser.boolean)
    parser.get(d, "expires_at", path, partial(zoned_time, parser))
    if kind == "user" or "user_id" in d or "client_id" in d:
        for key in ("user_id", "client_id"):
            if key not in d:
                parser.err(
                    join_path(path, key), "a user key (or an organization key's own user) needs user_id and client_id"
                )
        key_user(parser, d, path)
    if "users" in d:
        up = join_path(path, "users")
        if kind == "user":
            parser.err(up, "only an organization key lists users")
        seen: set[str] = set()
        for i, item in enumerate(parser.array(d["users"], up)):
            ip = join_path(up, i)
            u = parser.obj(item, ip, API_KEY_USER_KEYS)
            if u is None:
                continue
            uid = key_user(parser, u, ip)
            if uid is not None and uid in seen:
                parser.err(join_path(ip, "user_id"), f"user {uid!r} is listed twice")
            seen.add(uid or "")
    return d


def key_user(parser: Parser, d: dict, path: str) -> str | None:
    """The user_id and client_id of a key or of a key's user: one user trades as one client."""
    uid = parser.get(d, "user_id", path, parser.string)
    cid = parser.get(d, "client_id", path, parser.client_id_ref)
    if uid is not None and cid is not None:
        other = parser.user_clients.setdefault(uid, d["client_id"])
        if other != d["client_id"]:
            parser.err(join_path(path, "client_id"), f"user {uid!r} is client {other} elsewhere")
    return uid


def zoned_time(parser: Parser, value: object, path: str) -> str | None:
    """An ISO 8601 time with a zone (``expires_at`` of a key, read by the Auth store)."""
    try:
        when = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        when = None
    if not isinstance(value, str) or when is None or when.utcoffset() is None:
        parser.err(path, "must be an ISO 8601 time with a zone, like 2026-11-02T10:00:00Z")
        return None
    return value


def oauth_client(parser: Parser, value: object, path: str) -> dict:
    d = parser.obj(value, path, OAUTH_CLIENT_KEYS)
    if d is None:
        return {}
    parser.get(d, "client_id", path, parser.string)
    parser.get(d, "name", path, parser.string)
    parser.get(d, "disabled", path, parser.boolean)
    for key, pattern, what in (
        ("redirect_uris", URI_RE, "not an absolute URI (printable ASCII, no spaces, no fragment)"),
        ("scopes", SCOPE_RE, "not a scope token (RFC 6749 section 3.3: printable ASCII, no spaces)"),
    ):
        if key not in d:
            continue
        kp = join_path(path, key)
        items = parser.unique_strings(d[key], kp)
        if items is not None and not items:
            parser.err(kp, "must list at least one")
        for i, item in enumerate(items or ()):
            if not pattern.match(item):
                parser.err(join_path(kp, i), f"{item!r} is {what}")
    return d
