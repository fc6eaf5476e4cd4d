"""CeFi direct request signing: base64 HMAC-SHA256 over the request, checked in a fixed order.

Payload layouts (``--signature-layout``): ``concat`` = timestamp + METHOD + path + body;
``newline`` = METHOD, path, timestamp, body joined by ``\\n``; ``either`` accepts both. The path is the
one actually requested, without the query string (so pagination parameters never change the
signature); the body is the exact raw body, empty when none. Timestamps are Unix seconds, at most 15 s
old and at most 1 s ahead of the wall clock. Every failure says which check failed and never what the
expected signature was; comparisons are constant time.
"""

from __future__ import annotations

import binascii
import hmac
from dataclasses import dataclass
from typing import Any

LAYOUTS = ("concat", "newline", "either")
H_TOKEN = "x-svc-auth-token"
H_SIGNATURE = "x-svc-auth-signature"
H_TIMESTAMP = "x-svc-auth-timestamp"
H_USERID = "x-svc-auth-userid"
HEADERS = (H_TOKEN, H_SIGNATURE, H_TIMESTAMP, H_USERID)
MAX_AGE_S = 15
MAX_AHEAD_S = 1


def payload(layout: str, timestamp: str, method: str, path: str, body: bytes) -> bytes:
    if layout == "newline":
        return f"{method.upper()}\n{path}\n{timestamp}\n".encode() + body
    return f"{timestamp}{method.upper()}{path}".encode() + body


#: an HMAC-SHA256 already keyed with each secret seen: copying one skips hashing the key again on
#: every request (the server meets only its scenario's secrets; emptied past _KEYED_MAX for clients
#: that sign with many)
_KEYED: dict[str, Any] = {}
_KEYED_MAX = 1024


def _mac(secret: str, message: bytes) -> bytes:
    """Base64 of HMAC-SHA256(secret, message)."""
    keyed = _KEYED.get(secret)
    if keyed is None:
        if len(_KEYED) >= _KEYED_MAX:
            _KEYED.clear()
        keyed = _KEYED[secret] = hmac.new(secret.encode(), digestmod="sha256")
    mac = keyed.copy()
    mac.update(message)
    return binascii.b2a_base64(mac.digest(), newline=False)


def sign(secret: str, timestamp: str, method: str, path: str, body: bytes, layout: str = "concat") -> str:
    """The ``x-svc-auth-signature`` value a client sends (used by the client and the examples)."""
    return _mac(secret, payload(layout, timestamp, method, path, body)).decode()


@dataclass(frozen=True)
class SigningFailure:
    check: str  # missing-header | unknown-key | key-not-of-client | bad-timestamp | stale | future | mismatch
    detail: str


def verify(
    token: str | None,
    signature: str | None,
    timestamp: str | None,
    userid: str | None,
    keys: dict[str, tuple[int, str]],
    method: str,
    path: str,
    body: bytes,
    wall_s: float,
    layout: str,
) -> int | SigningFailure:
    """The client id the request acts for, or why it is refused (checks in the order of docs/cefi.md)."""
    if not (token and signature and timestamp and userid):
        for name, value in ((H_TOKEN, token), (H_SIGNATURE, signature), (H_TIMESTAMP, timestamp), (H_USERID, userid)):
            if not value:
                return SigningFailure("missing-header", f"missing header {name}")
    owner = keys.get(token)  # type: ignore[arg-type]
    if owner is None:
        return SigningFailure("unknown-key", f"{H_TOKEN}: unknown API key")
    client_id, secret = owner
    if userid != str(client_id):
        return SigningFailure("key-not-of-client", f"{H_TOKEN}: the key does not belong to client {userid!r}")
    assert timestamp is not None and signature is not None
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        return SigningFailure("bad-timestamp", f"{H_TIMESTAMP}: must be whole seconds since the Unix epoch")
    ts = int(timestamp)
    if ts < wall_s - MAX_AGE_S:
        return SigningFailure("stale", f"{H_TIMESTAMP}: older than {MAX_AGE_S} s")
    if ts > wall_s + MAX_AHEAD_S:
        return SigningFailure("future", f"{H_TIMESTAMP}: more than {MAX_AHEAD_S} s in the future")
    given = signature.encode()
    ok = False
    for candidate in ("concat", "newline") if layout == "either" else (layout,):
        ok |= hmac.compare_digest(_mac(secret, payload(candidate, timestamp, method, path, body)), given)
    if not ok:
        return SigningFailure(
            "mismatch",
            f"{H_SIGNATURE}: does not match the request (layout {layout}: method, path without query, "
            "timestamp and raw body)",
        )
    return client_id
