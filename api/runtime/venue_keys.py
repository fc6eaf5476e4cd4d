"""The credentials of a created venue: minted at random when it is made, or the document's own.

Contract (``docs/venues.md``, "Credentials"):

- :func:`mint` gives a scenario document fresh credentials from the ``secrets`` module: each client
  that has an HMAC key gets a random key (a version-4 UUID) and a random secret; each Auth API key a
  fresh EC P-256 key pair (the document keeps the public key; the private key, PEM, is handed back to
  be returned once) and the key id ``"{key_id}-{random}@{venue}"``; each OAuth client the client id
  ``"{client_id}-{random}@{venue}"``. Nothing of it can be computed from the venue's id or scenario.
- The minted document is the venue's scenario: the server keeps it (with the public keys and the HMAC
  secrets it checks signatures with) beside the journal, so a restart restores the same credentials;
  private keys are never kept.
- :func:`taken` lists a document's credentials that must be unique on a server (HMAC keys, Auth key
  ids, OAuth client ids), for a document that keeps its own.
"""

from __future__ import annotations

import copy
import secrets
import uuid
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

#: where a document names a credential that must be unique across a server's venues
UNIQUE_CREDENTIALS = (("clients", "key"), ("api_keys", "key_id"), ("oauth_clients", "client_id"))


def random_key() -> str:
    """An HMAC key: a version-4 UUID from 122 random bits."""
    return str(uuid.UUID(bytes=secrets.token_bytes(16), version=4))


def key_pair() -> tuple[str, str]:
    """A fresh EC P-256 key pair: (public key PEM, private key PEM, PKCS#8 unencrypted)."""
    private = ec.generate_private_key(ec.SECP256R1())
    public_pem = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    private_pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return public_pem.decode(), private_pem.decode()


def mint(doc: dict[str, Any], venue_id: str) -> tuple[dict[str, Any], dict[str, str]]:
    """``doc`` with fresh credentials, and the private key PEM of each Auth key id (to return once)."""
    out = copy.deepcopy(doc)
    private_keys: dict[str, str] = {}
    for client in _items(out, "clients"):
        if "key" in client:
            client["key"] = random_key()
            client["secret"] = secrets.token_urlsafe(32)
    for key in _items(out, "api_keys"):
        if isinstance(key.get("key_id"), str):
            key["key_id"] = f"{key['key_id']}-{secrets.token_hex(8)}@{venue_id}"
            key["public_key"], private_keys[key["key_id"]] = key_pair()
    for oauth_client in _items(out, "oauth_clients"):
        if isinstance(oauth_client.get("client_id"), str):
            oauth_client["client_id"] = f"{oauth_client['client_id']}-{secrets.token_hex(8)}@{venue_id}"
    return out, private_keys


def taken(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """``(json path, credential)`` of each HMAC key, Auth key id and OAuth client id ``doc`` gives."""
    return [
        (f"{section}[{i}].{field}", item[field])
        for section, field in UNIQUE_CREDENTIALS
        for i, item in enumerate(_items(doc, section))
        if isinstance(item.get(field), str)
    ]


def _items(doc: dict[str, Any], section: str) -> list[dict[str, Any]]:
    items = doc.get(section)
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
