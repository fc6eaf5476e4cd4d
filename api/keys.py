"""Typed application keys and the server's options."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from aiohttp import web

from .sim import Simulation


@dataclass
class ServerOptions:
    signature_layout: str = "concat"  # concat | newline | either
    sign_reference_data: bool = False
    environment: str = "sandbox"  # sandbox | production
    max_body_bytes: int = 64 * 1024
    quote_max_levels: int = 1000
    control_token: str | None = None
    wall_s: Callable[[], float] = field(default=time.time)


SIM = web.AppKey("sim", Simulation)
OPTIONS = web.AppKey("options", ServerOptions)

# per-request storage
VERSION = web.RequestKey("version", str)  # the CeFi schema version this request gets
REQUEST_ID = web.RequestKey("request_id", str)
CLIENT_ID = web.RequestKey("client_id", int)  # the client a signed request acts for
