"""CeFi direct request signing: base64 HMAC-SHA256 over the request, checked in a fixed order.

Payload layouts (``--signature-layout``): ``concat`` = timestamp + METHOD + path + body;
``newline`` = METHOD, path, timestamp, body joined by ``\\n``; ``either`` accepts both. The path is the
one actually requested, without the query string (so pagination parameters never change the
signature); the body is the exact raw body, empty when none. Timestamps are Unix seconds, at most 15 s
old and at most 1 s ahead of the wall clock. Every failure says which check failed and never what the
expected signature was; comparisons are constant time. A mismatch says, the way AWS answers
``SignatureDoesNotMatch``, what the server signed: the layout and the exact string-to-sign it built
from the request as received (never the secret or the signature it expected), and notices a
signature sent as hex where base64 is expected.

``CefiHttpxAuth`` and ``CefiRequestsAuth``, the same signing for httpx and requests, are in
``api/client/signing_clients.py``.
"""

from __future__ import annotations

import binascii
import hmac
import json
import re
from dataclasses import dataclass
from typing import Any

LAYOUTS = ("concat", "newline", "either")
H_TOKEN = "x-svc-auth-token"
H_SIGNATURE = "x-svc-auth-signature"
H_TIMESTAMP = "x-svc-auth-timestamp"
H_USERID = "x-svc-auth-userid"
HEADERS = (H_TOKEN, H_SIGNATURE, H_TIMESTAMP, H_USERID)
#: the ``WWW-Authenticate`` challenge of every CeFi 401 (RFC 9110 section 15.5.2): the routes take the
#: x-svc-auth HMAC signature, never a bearer token, so the challenge names that scheme and its headers,
#: whatever the request sent (nothing, a bearer token, a signature that does not hold)
CHALLENGE = f'X-Svc-Auth realm="cefi", headers="{H_TOKEN} {H_USERID} {H_TIMESTAMP} {H_SIGNATURE}"'
MAX_AGE_S = 15
MAX_AHEAD_S = 1


#: how each layout builds the string to sign, in the order it is signed
LAYOUT_ORDER = {"concat": "timestamp + METHOD + path + body", "newline": "METHOD \\n path \\n timestamp \\n body"}
_HEX_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


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
    owner = keys.get(token)  # type: ignore[arg-type]  # the check above returned on a None
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
    # aiohttp hands a header's bytes to the app as UTF-8 text, a byte that is not UTF-8 as a lone
    # surrogate (surrogateescape): encoded back the same way, these are the bytes the client sent,
    # and anything but base64 of the right digest is a mismatch like any other
    given = signature.encode("utf-8", "surrogateescape")
    ok = False
    candidates = ("concat", "newline") if layout == "either" else (layout,)
    for candidate in candidates:
        ok |= hmac.compare_digest(_mac(secret, payload(candidate, timestamp, method, path, body)), given)
    if not ok:
        return SigningFailure("mismatch", mismatch_detail(secret, signature, candidates, timestamp, method, path, body))
    return client_id


def mismatch_detail(
    secret: str, signature: str, layouts: tuple[str, ...], timestamp: str, method: str, path: str, body: bytes
) -> str:
    """Why a signature does not match: the layout(s) and the exact string(s) the server signed.

    The string-to-sign holds only what the request carried (timestamp, method, path without query,
    body as received); the secret and the expected signature never appear. A 64-hex-digit signature
    is named as hex: one that is the right HMAC in hex says exactly that.
    """
    hint = ""
    if _HEX_SHA256.match(signature):
        right = any(
            hmac.compare_digest(
                hmac.new(secret.encode(), payload(lay, timestamp, method, path, body), "sha256").hexdigest(),
                signature.lower(),
            )
            for lay in layouts
        )
        hint = (
            " It is the right HMAC-SHA256 but hex-encoded: send it base64-encoded (44 characters)."
            if right
            else " It looks hex-encoded (64 hex digits): the signature is base64 of the HMAC-SHA256 "
            "digest (44 characters)."
        )
    signed = " or ".join(
        f"layout {lay} ({LAYOUT_ORDER[lay]}): "
        + json.dumps(payload(lay, timestamp, method, path, body).decode("utf-8", "backslashreplace"))
        for lay in layouts
    )
    return (
        f"{H_SIGNATURE}: does not match the request.{hint} The server computed base64(HMAC-SHA256(secret, "
        f"string-to-sign)) with the string-to-sign {signed}; check the secret, the layout, and that the "
        "body is sent byte for byte as signed"
    )
