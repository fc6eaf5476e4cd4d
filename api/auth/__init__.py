"""The Auth interface: API-key exchange, token refresh, OAuth 2.0 authorization code with PKCE.

- ``store.py``  pure state and rules (:class:`AuthStore`: key exchange, refresh, bearer), no HTTP;
  with ``oauth.py`` (authorize, consent, token, grants), ``auth_records.py`` (errors, records, tables)
  and ``config.py`` (the scenario's ``api_keys`` and ``oauth_clients``); ``auth_log.py`` the run-time
  state and the records that change it, journaled and snapshotted with the venue.
- ``routes.py`` the ``/v1/auth/`` handlers (:func:`auth_routes`) and the consent page.
- ``bearer.py`` :func:`require_bearer` for gateway routes.

The app holds the store under :data:`AUTH_STORE`. Choices and status codes: ``docs/auth.md``.
"""

from __future__ import annotations

from aiohttp import web

from cefisim.api.auth.store import AuthStore, Principal

AUTH_STORE = web.AppKey("auth_store", AuthStore)

__all__ = ["AUTH_STORE", "AuthStore", "Principal"]
