"""A venue's state on the server: every part a handler of one venue reads, in one typed object.

A server runs one venue or several (``POST /_sim/venues``, ``api/web/control/isolated_venues.py``);
each has a :class:`VenueState`, made by one factory for the default venue and every created one
(``api/web/app/application.py``: ``venue_states``). The middleware (``api/web/server/middleware.py``)
resolves the venue of a request once, by its path or credential, and puts its state on the request
under :data:`VENUE` before any handler runs; a handler reads ``request[VENUE]`` once and its
attributes after, so it never knows there is more than one venue. What every venue shares (the
options, the request log, the venue hub) stays on the server's ``web.Application``; nothing of one
venue is stored there.

The Auth interface lies below this module (its store needs no simulation): the app hands its routes
the lookup of a request's store (``auth_routes(auth_store_of)``), and its bearer check takes the
store it checks against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from aiohttp import web

from cefisim.api.auth.store import AuthStore
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.server.http_faults import HttpFaultPlan
from cefisim.api.web.server.stream_hub import StreamHub


class MovePaperFunds(Protocol):
    """Add (or, ``remove``, take away) paper-trading funds of a client: the balance record as the
    CeFi interface shows it; a :class:`~api.edge.problems.Problem` for a business refusal
    (``api/web/cefi/paper.py``)."""

    def __call__(self, client_id: str, asset: str, amount: str, remove: bool) -> dict[str, Any]: ...


@dataclass(slots=True, eq=False)
class VenueState:
    """One venue's parts. Made once per venue and never copied: identity is the venue's (the routing
    tables of the venue hub map credentials to it). ``http_faults`` is the one part that changes:
    the control plane sets and clears the plan."""

    venue_id: str  # "default" for the server's own (--scenario), "v1", "v2", ... for created ones
    sim: Simulation  # the running simulation: its venue, journal, venue faults (sim.faults)
    auth_store: AuthStore  # Auth: keys, tokens, codes (journaled with the simulation)
    paper_funds: MovePaperFunds  # POST /v1/paper-trading/funds[/remove], bound to the simulation
    stream_hub: StreamHub  # the live stream of this venue (/_sim/stream), the simulation's listener
    http_faults: HttpFaultPlan | None = None  # the plan of POST /_sim/faults, None when none


#: the state of the venue a request is for: set by the middleware before any handler runs
VENUE = web.RequestKey("venue", VenueState)


def auth_store_of(request: web.Request) -> AuthStore:
    """The Auth store of the venue ``request`` is for (the Auth routes' lookup)."""
    return request[VENUE].auth_store
