"""The aiohttp application: one route table, every venue's state from one factory, one middleware.

``create_app(sim, options)`` builds the app that ``cefisim serve``, the pytest plugin and the tests
all run. CeFi direct is served under ``/v1/cefi/``, Auth under ``/v1/auth/``, paper trading under
``/v1/paper-trading/`` and the emulator's control plane under ``/_sim/``; ``GET /`` lists what the
server serves and ``/docs/`` the documentation (``api/web/app/pages.py``). Nothing else exists: the
removed ``/api/v1/`` prefix and the singular aliases of the earlier interface answer 404.

The app holds what the server's venues share: its options, its request log, the venues' long work and
the venue hub (``VENUES``), which holds each venue's state (``api/web/server/venue_state.py``): the
default venue's (``sim``) and every created one's, all made by :func:`venue_states`.
"""

from __future__ import annotations

import logging
import sys

from aiohttp import web

from cefisim.api.auth.auth_log import NAMESPACE
from cefisim.api.auth.routes import auth_routes
from cefisim.api.auth.store import AuthStore
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.runtime.venues import DEFAULT_ID
from cefisim.api.web.app.openapi_documents import openapi_routes
from cefisim.api.web.app.pages import pages_routes
from cefisim.api.web.cefi.funds import paper_funds_for
from cefisim.api.web.cefi.paper import paper_routes
from cefisim.api.web.cefi.route_table import cefi_routes
from cefisim.api.web.control.faults import dispatch, fault_routes
from cefisim.api.web.control.isolated_venues import (
    VENUES,
    MakeState,
    VenueHub,
    install_venues,
    make_venues,
    venue_routes,
)
from cefisim.api.web.control.plane import control_routes
from cefisim.api.web.control.stream import stream_routes
from cefisim.api.web.server.keys import OPTIONS, VENUE_WORK, ServerOptions
from cefisim.api.web.server.limits import handler_args
from cefisim.api.web.server.middleware import request_middleware
from cefisim.api.web.server.request_log import REQUEST_LOG, RequestLog, flush_request_log
from cefisim.api.web.server.stream_hub import OpenStreams, StreamHub, StreamSettings
from cefisim.api.web.server.venue_state import VenueState, auth_store_of
from cefisim.api.web.server.venue_work import VenueWork

log = logging.getLogger("cefisim.app")


def auth_store_for(sim: Simulation, options: ServerOptions, token_prefix: str = "") -> AuthStore:
    """The scenario's API keys and OAuth clients; tokens live on the engine clock. The store is the
    simulation's ``auth`` side-state: brought back from its journal, and journaled with it from now on."""
    store = AuthStore.from_scenario(
        sim.scenario.api_keys,
        sim.scenario.oauth_clients,
        clock=sim.now_ns,
        wall=lambda: sim.faults.skewed_s(options.wall_s()),  # the server's clock, skewed by a venue fault
        token_prefix=token_prefix,
    )
    store.auth_log.journal = sim.attach(NAMESPACE, store)
    return store


def venue_states(options: ServerOptions) -> MakeState:
    """The one factory of a venue's state, for the default venue and every venue created on the server
    of ``options``: ``(venue_id, sim) -> VenueState``. A created venue's tokens and codes start with
    ``"{venue_id}."`` (how the venue hub routes them); the stream hubs of all venues share one set of
    limits and one count of the server's open streams (``max_streams`` is per server)."""
    settings = StreamSettings()
    open_streams = OpenStreams()

    def make(venue_id: str, sim: Simulation) -> VenueState:
        return VenueState(
            venue_id=venue_id,
            sim=sim,
            auth_store=auth_store_for(sim, options, "" if venue_id == DEFAULT_ID else f"{venue_id}."),
            paper_funds=paper_funds_for(sim),
            stream_hub=StreamHub(sim, settings, venue=venue_id, server=open_streams),
        )

    return make


async def _close_journal(app: web.Application) -> None:
    app[VENUES].default.sim.close()


def create_app(sim: Simulation, options: ServerOptions | None = None) -> web.Application:
    options = options or ServerOptions()
    requests = RequestLog(
        options.request_history, sys.stderr if options.access_log else None, options.access_log or "text"
    )
    work = VenueWork()
    venues = VenueHub(
        sim,
        make_venues(sim, options.venue_config, options.max_venues, options.data_dir),
        venue_states(options),
        work,
        options.speed,
    )
    app = web.Application(
        middlewares=[request_middleware(options, venues, requests=requests, around=dispatch, work=work)],
        client_max_size=options.max_body_bytes,
        handler_args=handler_args(options),
    )
    app[VENUE_WORK] = work
    app[OPTIONS] = options
    app[REQUEST_LOG] = requests
    app.add_routes(cefi_routes())
    app.add_routes(openapi_routes())
    app.add_routes(pages_routes())
    app.add_routes(auth_routes(auth_store_of))
    app.add_routes(paper_routes())
    app.add_routes(control_routes())
    app.add_routes(fault_routes())
    app.add_routes(venue_routes(control_routes() + fault_routes()))
    app.add_routes(stream_routes())
    install_venues(app, venues)
    venues.start()
    app.on_cleanup.append(_close_journal)
    app.on_cleanup.append(flush_request_log)
    return app
