"""Typed keys of the server's app and of a request, and the server's options (a venue's own state is
``api/web/server/venue_state.py``, on the request)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from cefisim.api.runtime.venues import DEFAULT_MAX_VENUES
from cefisim.api.web.server.limits import RateLimits
from cefisim.api.web.server.venue_work import VenueWork

if TYPE_CHECKING:
    from cefisim.api.formats.scenario import Scenario
    from cefisim.engine.venue import VenueConfig


@dataclass
class ServerOptions:
    signature_layout: str = "concat"  # concat | newline | either
    sign_reference_data: bool = False
    environment: str = "sandbox"  # sandbox | production
    max_body_bytes: int = 64 * 1024
    quote_max_levels: int = 1000  # price levels a quote may walk (400 quote-depth-limit beyond)
    max_header_bytes: int = 8190  # request line and each header line (aiohttp's parser: 400 beyond)
    read_timeout_s: float | None = 30.0  # a /v1/ request body must arrive within this (408); None: off
    rate_limits: RateLimits | None = None  # token bucket per HMAC key (429); None: off
    control_token: str | None = None
    speed: float | None = None  # virtual clock only: engine seconds per real second, between requests
    access_log: str | None = None  # one line per request on stderr: "text" | "json"; None: none
    request_history: int = 1000  # requests GET /_sim/requests keeps (api/web/server/request_log.py)
    wall_s: Callable[[], float] = field(default=time.time)
    max_venues: int = (
        DEFAULT_MAX_VENUES  # venues one server runs, the default one included (api/web/control/isolated_venues.py)
    )
    venue_config: Callable[[Scenario], VenueConfig] | None = None  # a created venue's limits; None: its scenario's
    data_dir: Path | None = None  # the folder posted venue documents may name files in; None: no file


# the server's app: what every venue shares
OPTIONS = web.AppKey("options", ServerOptions)
VENUE_WORK = web.AppKey("venue_work", VenueWork)  # the venues' long work, in steps (api/web/server/venue_work.py)

# per-request storage
VERSION = web.RequestKey("version", str)  # the CeFi schema version this request gets
REQUEST_ID = web.RequestKey("request_id", str)
CLIENT_ID = web.RequestKey("client_id", int)  # the client a signed request acts for
