"""The aiohttp application: one route table, the simulation under a typed key, one middleware.

``create_app(sim, options)`` builds the app that ``cefisim serve``, the pytest plugin and the tests
all run. CeFi direct is served under ``/v1/cefi/``, Auth under ``/v1/auth/``, paper trading under
``/v1/paper-trading/`` and the emulator's control plane under ``/_sim/``; ``GET /`` lists what the
server serves and ``/docs/`` the documentation (``api/web/app/pages.py``). Nothing else exists: the
removed ``/api/v1/`` prefix and the singular aliases of the earlier interface answer 404.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator

from aiohttp import web

from cefisim.api.auth import AUTH_STORE
from cefisim.api.auth.auth_log import NAMESPACE
from cefisim.api.auth.routes import auth_routes
from cefisim.api.auth.store import AuthStore
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.app.openapi_documents import openapi_routes
from cefisim.api.web.app.pages import pages_routes
from cefisim.api.web.cefi.funds import paper_funds_for
from cefisim.api.web.cefi.paper import ENVIRONMENT, PAPER_FUNDS, paper_routes
from cefisim.api.web.cefi.route_table import cefi_routes
from cefisim.api.web.control.faults import HTTP_FAULTS, dispatch, fault_routes
from cefisim.api.web.control.isolated_venues import VenueHub, install_venues, make_venues, venue_routes
from cefisim.api.web.control.plane import control_routes
from cefisim.api.web.control.stream import install_streams
from cefisim.api.web.server.keys import OPTIONS, SIM, VENUE_WORK, ServerOptions
from cefisim.api.web.server.limits import handler_args
from cefisim.api.web.server.middleware import request_middleware
from cefisim.api.web.server.request_log import REQUEST_LOG, RequestLog, flush_request_log
from cefisim.api.web.server.ticker import start_ticker, stop_ticker
from cefisim.api.web.server.venue_work import VenueWork

log = logging.getLogger("cefisim.app")


async def _ticker(app: web.Application) -> AsyncIterator[None]:
    """The default venue's clock (``api/web/server/ticker.py``)."""
    task = start_ticker(app[SIM], app[OPTIONS].speed)
    yield
    await stop_ticker(task)


def auth_store_for(sim: Simulation, options: ServerOptions, token_prefix: str = "") -> AuthStore:
    """The scenario's API keys and OAuth clients; tokens live on the engine clock. The store is the
    simulation's ``auth`` side: brought back from its journal, and journaled with it from now on."""
    store = AuthStore.from_scenario(
        sim.scenario.api_keys,
        sim.scenario.oauth_clients,
        clock=sim.now_ns,
        wall=lambda: sim.faults.skewed_s(options.wall_s()),  # the server's clock, skewed by a venue fault
        token_prefix=token_prefix,
    )
    store.auth_log.journal = sim.attach(NAMESPACE, store)
    return store


async def _close_journal(app: web.Application) -> None:
    app[SIM].close()


def create_app(sim: Simulation, options: ServerOptions | None = None) -> web.Application:
    options = options or ServerOptions()
    requests = RequestLog(
        options.request_history, sys.stderr if options.access_log else None, options.access_log or "text"
    )
    venues = VenueHub(
        make_venues(sim, options.venue_config, options.max_venues, options.data_dir),
        lambda venue_sim, prefix: auth_store_for(venue_sim, options, prefix),
    )
    work = VenueWork()
    app = web.Application(
        middlewares=[request_middleware(options, requests=requests, venues=venues, around=dispatch, work=work)],
        client_max_size=options.max_body_bytes,
        handler_args=handler_args(options),
    )
    app[SIM] = sim
    app[VENUE_WORK] = work
    app[OPTIONS] = options
    app[REQUEST_LOG] = requests
    app[HTTP_FAULTS] = []
    app[AUTH_STORE] = auth_store_for(sim, options)
    app[ENVIRONMENT] = options.environment
    app[PAPER_FUNDS] = paper_funds_for(sim)
    app.add_routes(cefi_routes())
    app.add_routes(openapi_routes())
    app.add_routes(pages_routes())
    app.add_routes(auth_routes())
    app.add_routes(paper_routes())
    app.add_routes(control_routes())
    app.add_routes(fault_routes())
    app.add_routes(venue_routes(control_routes() + fault_routes()))
    install_streams(app)
    install_venues(app, venues)
    venues.start()
    app.on_cleanup.append(_close_journal)
    app.on_cleanup.append(flush_request_log)
    app.cleanup_ctx.append(_ticker)
    return app
