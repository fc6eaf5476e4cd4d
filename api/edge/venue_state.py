"""Which venue a request is for: the one request key every interface reads its venue's state from.

It lies at the edge, below the interfaces, because each of them (auth, cefi, control) reads its own
state (simulation, auth store, faults, streams) through it; the middleware (``api/web/server/middleware.py``)
is the one writer.
"""

from __future__ import annotations

from aiohttp import web

#: the state of the venue a request is for (its ``SIM``, ``AUTH_STORE``, ``HTTP_FAULTS``, ...): the server's app
#: for the default venue, a created venue's own (api/web/control/isolated_venues.py). The middleware resolves it
#: once, before any handler runs; ``request.app`` stays the server's app (its options, request log, venues).
VENUE = web.RequestKey("venue", web.Application)


def venue_of(request: web.Request) -> web.Application:
    """The state of the venue ``request`` is for: every handler reads its simulation, auth store,
    faults and streams here, never from ``request.app``."""
    return request[VENUE]


__all__ = ["VENUE", "venue_of"]
