"""The Auth interface: API-key exchange, token refresh, OAuth 2.0 authorization code with PKCE.

- ``store.py``  pure state and rules (:class:`AuthStore`: key exchange, refresh, bearer), no HTTP;
  with ``oauth.py`` (authorize, consent, token, grants), ``auth_records.py`` (errors, records, tables)
  and ``config.py`` (the scenario's ``api_keys`` and ``oauth_clients``); ``auth_log.py`` the run-time
  state and the records that change it, journaled and snapshotted with the venue.
- ``routes.py`` the ``/v1/auth/`` handlers (:func:`auth_routes`) and the consent page.
- ``bearer.py`` :func:`require_bearer` for gateway routes.

Each venue of a server has its own store (its venue state's ``auth_store``,
``api/web/server/venue_state.py``); the routes find it with the lookup the app gives
:func:`auth_routes`. Choices and status codes: ``docs/auth.md``.
"""

from __future__ import annotations

from cefisim.api.auth.store import AuthStore, Principal

__all__ = ["AuthStore", "Principal"]
