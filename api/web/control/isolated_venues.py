"""Isolated venues on one server: ``/_sim/venues`` and the routing of every request to its venue.

| Method | Path | What |
|---|---|---|
| POST | /_sim/venues | ``{"scenario": NAME or DOCUMENT, "seed": N}`` -> 201, the venue's id and credentials |
| GET | /_sim/venues | every venue (the default one first), without credentials |
| GET | /_sim/venues/{venue_id} | one venue, with its credentials |
| DELETE | /_sim/venues/{venue_id} | end a venue (its memory and journal go); the default one cannot be ended (409) |
| any | /_sim/venues/{venue_id}/... | every control route of the venue (``/_sim/venues/v1/book/1``, ``.../reset``) |

Each venue's state is a :class:`~api.web.server.venue_state.VenueState` (its simulation, Auth store,
paper funds, stream hub and HTTP fault plan), made by the app's one factory for the default venue and
every created one; the hub holds them all (``default``, ``created``), and the server's app holds the
hub with what the venues share (options, request log). The server's middleware asks
:meth:`VenueHub.route` once per request which venue the request belongs to and stores its state under
the ``VENUE`` request key, as moto picks a backend from a dict per request; handlers read
``request[VENUE]``, so every handler serves the venue its credentials name without knowing venues
exist:

- a venue segment in the path (``/_sim/venues/{id}/...``): that venue; an unknown id is a 404 problem;
- an HMAC key (``x-svc-auth-token``): the venue of the key (one dict lookup); a key no created venue
  has goes to the default venue, which answers an unknown key with its usual 401;
- a bearer token, refresh token or authorization code minted by a created venue starts with
  ``"{id}."`` (``api/auth/model.mint``); an Auth key id (``key_id``) of a created venue ends with
  ``"@{id}"`` and is looked up like an HMAC key;
- ``?venue={id}`` on ``/_sim/stream`` and ``/_sim/ui/`` (an unknown id is a 404 problem, venues or
  none); on any other ``/_sim/`` route it is a 400 problem naming ``venue``: silently serving the
  default venue would reset or advance a venue the client did not mean;
- anything else (public market data without key headers, the OAuth authorize redirect and consent
  page): the default venue.

A key of one venue is therefore unknown to every other: the request goes to its own venue, or (a key
of an ended venue) to the default one, which answers exactly as it answers any unknown key.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from cefisim.api.edge.problems import Problem, bad_request
from cefisim.api.edge.serialize import iso, ns
from cefisim.api.edge.signing import H_TOKEN
from cefisim.api.formats.scenario import Scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.runtime.venue_keys import taken
from cefisim.api.runtime.venues import DEFAULT_ID, Made, TooManyVenues, VenueError, Venues, VenueSpec
from cefisim.api.web.control.plane import check_control, read_bounded
from cefisim.api.web.server.http import parse_json, respond
from cefisim.api.web.server.ticker import start_ticker, stop_ticker
from cefisim.api.web.server.venue_state import VenueState
from cefisim.api.web.server.venue_work import VenueWork
from cefisim.engine import queries

MAX_SCENARIO_BYTES = 16 << 20  # a create body: a scenario document with its events
VENUE_PREFIX = "/_sim/venues/{venue_id}"  # the control routes of a venue: routed to it (VenueHub.route)
VENUE_RESOURCE = "/_sim/venues/{id}"  # the venue itself: served by the hub, not routed
#: control routes that stay server-wide (the request log shows every venue's requests)
SERVER_WIDE = ("/_sim/requests",)
_AUTH_BODY_PATHS = ("/v1/auth/api-key/token", "/v1/auth/token/refresh", "/v1/auth/oauth/token")
#: the OAuth screens a browser opens before it holds any token: routed by their ``client_id``
_OAUTH_CLIENT_PATHS = ("/v1/auth/oauth/authorize", "/v1/auth/oauth/consent")


#: the one factory of a venue's state (``api/web/app/application.py``: ``venue_states``): id, simulation
MakeState = Callable[[str, Simulation], VenueState]


class VenueHub:
    """The venues of one server over HTTP: their state, their clocks, and the routing of requests."""

    def __init__(
        self, sim: Simulation, venues: Venues, make_state: MakeState, work: VenueWork, speed: float | None = None
    ) -> None:
        """The hub of a server whose default venue runs ``sim``; created venues come from ``venues``;
        every venue's state (the default's at once) from ``make_state``; the venues' clocks tick at
        ``speed`` (the ``--speed`` of the virtual clock, ``api/web/server/ticker.py``), their closing
        advances run as the venues' ``work`` (``api/web/server/venue_work.py``)."""
        self.venues = venues
        self._work = work
        self._make_state = make_state
        self._speed = speed
        self.default = make_state(DEFAULT_ID, sim)  # the server's own venue (--scenario)
        self.created: dict[str, VenueState] = {}  # created venue id -> its state
        self.by_key: dict[str, VenueState] = {}  # HMAC key -> venue
        self.by_key_id: dict[str, VenueState] = {}  # Auth API key id -> venue
        self.by_oauth_client: dict[str, VenueState] = {}  # OAuth client id -> venue
        self._tickers: dict[str, asyncio.Task[None] | None] = {}

    # --- routing -----------------------------------------------------------------------------------

    def route(self, request: web.Request) -> VenueState | None:
        """The state of the venue the request belongs to, by its path or headers. None when the
        credential is in the body (an Auth key id, refresh token or code): the caller then awaits
        :meth:`route_body` once the body may be read. A control route (``/_sim/``) is checked by the
        control plane's guard before any venue is looked up, and follows only its path or its
        ``?venue=``, never a key header."""
        if request.path.startswith("/_sim"):
            venue_id = request.match_info.get("venue_id")
            named = request.query.get("venue") if request.query_string else None
            routed = getattr(request.match_info, "http_exception", None) is None  # an unknown path: its 404
            if named is not None and routed and not _takes_venue(request.path, venue_id):
                check_control(request)
                raise bad_request(
                    "venue",
                    "names a venue on the stream and the page only; another control route of a venue is "
                    "/_sim/venues/{id}/... (GET /_sim/venues lists them)",
                )
            if venue_id is None:
                venue_id = named or ""
            if venue_id in ("", DEFAULT_ID):
                return self.default
            check_control(request)
            target = self.created.get(venue_id)
            if target is None:
                field = "venue_id" if "venue_id" in request.match_info else "venue"
                raise Problem(404, "unknown-venue", f"{field}: no venue {venue_id!r} (GET /_sim/venues lists them)")
            return target
        if not self.created:
            return self.default
        headers = request.headers
        key = headers.get(H_TOKEN)
        if key is not None:
            target = self.by_key.get(key)
        else:
            target = self._by_secret(headers.get("Authorization", "").removeprefix("Bearer "))
            if target is None:
                if request.method == "GET" and request.path in _OAUTH_CLIENT_PATHS:
                    target = self.by_oauth_client.get(request.query.get("client_id", ""))
                elif request.method == "POST" and request.path in _AUTH_BODY_PATHS:
                    return None
        return self.default if target is None else target

    async def route_body(self, request: web.Request) -> VenueState:
        """The venue of an Auth request whose credential is in the body (a key id, a refresh token, a
        code); the default venue when the body names none (its handler reports a bad body)."""
        target: VenueState | None = None
        if request.content_type == "application/x-www-form-urlencoded":
            try:
                form: Any = await request.post()
            except (ValueError, LookupError):  # bytes not of the charset, or a charset Python does not know
                return self.default  # the handler reports it
        else:
            try:
                form = orjson.loads(await request.read())
            except orjson.JSONDecodeError:
                return self.default
            if not isinstance(form, dict):
                return self.default
            key_id = form.get("key_id")
            if isinstance(key_id, str):
                target = self.by_key_id.get(key_id)
                return self.default if target is None else target
        secret = form.get("code") or form.get("refresh_token")
        if isinstance(secret, str):
            target = self._by_secret(secret)
        return self.default if target is None else target

    def _by_secret(self, secret: str) -> VenueState | None:
        venue_id, dot, _ = secret.partition(".")
        return self.created.get(venue_id) if dot else None

    # --- life of a venue ---------------------------------------------------------------------------

    def _attach(self, venue_id: str, sim: Simulation) -> VenueState:
        """A created venue's state, routed to from now on."""
        state = self._make_state(venue_id, sim)
        store = state.auth_store
        self.created[venue_id] = state
        self.by_key.update(dict.fromkeys(sim.scenario.hmac_keys, state))
        self.by_key_id.update(dict.fromkeys(store.key_ids(), state))
        self.by_oauth_client.update(dict.fromkeys(store.oauth_client_ids(), state))
        return state

    def start(self) -> None:
        """Rebuild the venues the journal's manifest leaves alive (on server start)."""
        self.venues.recover()
        for venue_id, (_, sim) in self.venues.live.items():
            self._attach(venue_id, sim)

    def start_clocks(self) -> None:
        """Every venue's clock, the default's and each created one's (``api/web/server/ticker.py``)."""
        self._tickers[DEFAULT_ID] = start_ticker(self.default.sim, self._speed, self._work)
        for venue_id, state in self.created.items():
            self._tickers[venue_id] = start_ticker(state.sim, self._speed, self._work)

    async def create(self, raw: bytes) -> dict[str, Any]:
        """A venue from a create body (JSON bytes): what the 201 answers, its credentials included.
        Parsing and building run off the event loop, each create in a thread of its own (a big
        document holds up neither other venues nor other creates); :class:`VenueError` or
        :class:`TooManyVenues`, and nothing changes. From the make's end to the venue's routing
        nothing awaits: a create's credential check, record and attach are one step of the loop, so
        two creates of the same credentials cannot both pass the check."""
        venue_id = self.venues.reserve()
        try:
            made = await asyncio.to_thread(self._make, venue_id, raw)
            clash = self._taken(made)
            if clash is not None:
                self.venues.discard(made)
                raise VenueError(clash[0], clash[1], status=409)
            self.venues.commit(made)
        finally:
            self.venues.release(venue_id)
        sim = made.sim
        state = self._attach(venue_id, sim)
        self._tickers[venue_id] = start_ticker(sim, self._speed, self._work)
        if gc.get_freeze_count():
            # the server froze what it loaded (``cefisim serve``): a venue made later joins it, or every
            # full collection would walk every venue's books and records again
            gc.freeze()
        doc = self.doc(venue_id, state, credentials=True)
        for client in doc["clients"]:
            client["secret"] = sim.scenario.hmac_keys[client["key"]][1]
        for key in doc["api_keys"]:
            if key["key_id"] in made.private_keys:
                key["private_key"] = made.private_keys[key["key_id"]]
        return doc

    def _make(self, venue_id: str, raw: bytes) -> Made:
        body = parse_json(raw)
        if not isinstance(body, dict):
            raise bad_request("body", "must be a JSON object")
        return self.venues.make(venue_id, body)

    def _taken(self, made: Made) -> tuple[str, str] | None:
        """The first credential of a new venue that another venue already has: (field, reason)."""
        store = self.default.auth_store
        used = {
            "clients": self.by_key.keys() | self.default.sim.scenario.hmac_keys.keys(),
            "api_keys": self.by_key_id.keys() | set(store.key_ids()),
            "oauth_clients": self.by_oauth_client.keys() | set(store.oauth_client_ids()),
        }
        for path, value in taken(made.spec.document):
            if value in used[path.partition("[")[0]]:
                return "scenario." + path, "another venue already has this credential: a venue's own must be new"
        return None

    async def delete(self, venue_id: str) -> None:
        """End a live or set-aside venue. The delete is recorded before the venue ends:
        :class:`JournalWriteError` when it cannot be, and the venue serves on. The venue leaves the
        routing in the same step of the loop (a second delete of it finds none)."""
        self.venues.delete(venue_id)
        state = self.created.pop(venue_id, None)
        if state is None:
            return
        for table in (self.by_key, self.by_key_id, self.by_oauth_client):
            for key in [k for k, s in table.items() if s is state]:
                del table[key]
        await stop_ticker(self._tickers.pop(venue_id, None))
        await state.stream_hub.stop()
        state.sim.set_listener(None)  # the hub listens to the simulation: a cycle, broken

    async def stop(self) -> None:
        for venue_id in list(self._tickers):
            await stop_ticker(self._tickers.pop(venue_id))
        for state in self.created.values():
            await state.stream_hub.stop()
        self.venues.close()

    # --- documents ---------------------------------------------------------------------------------

    def doc(self, venue_id: str, state: VenueState, credentials: bool) -> dict[str, Any]:
        """What ``GET /_sim/venues/{id}`` answers; with ``credentials`` the identifiers of its keys and
        clients (never a secret: those are answered once, by the create)."""
        sim = state.sim
        spec: VenueSpec | None = self.venues.live[venue_id][0] if venue_id != DEFAULT_ID else None
        now = queries.now(sim.venue)
        out: dict[str, Any] = {
            "id": venue_id,
            "state": "live",
            "scenario": spec.scenario if spec is not None and spec.scenario is not None else str(sim.scenario.source),
            "seed": sim.scenario.seed,
            "clock": sim.clock_mode,
            "now_ns": ns(now),
            "now": iso(now),
            "control": "/_sim" if venue_id == DEFAULT_ID else f"/_sim/venues/{venue_id}",
        }
        if credentials:
            out["clients"] = _clients(sim.scenario)
            out["api_keys"] = [
                {k: v for k, v in entry.items() if k in ("key_id", "kind", "user_id", "client_id", "users")}
                for entry in sim.scenario.api_keys
            ]
            out["oauth_clients"] = [
                {k: v for k, v in entry.items() if k in ("client_id", "redirect_uris", "scopes")}
                for entry in sim.scenario.oauth_clients
            ]
        return out

    def set_aside_doc(self, venue_id: str) -> dict[str, Any]:
        """A venue that could not be rebuilt on start: its id and why (its journal kept as it is)."""
        aside = self.venues.set_aside[venue_id]
        return {"id": venue_id, "state": "set-aside", "reason": aside.reason}

    def lookup(self, request: web.Request) -> tuple[str, VenueState | None]:
        """The venue ``/_sim/venues/{id}`` names (not routed to it: a request must not hold a venue it
        ends); None for a set-aside one."""
        venue_id = request.match_info["id"]
        if venue_id == DEFAULT_ID:
            return venue_id, self.default
        state = self.created.get(venue_id)
        if state is None:
            if venue_id in self.venues.set_aside:
                return venue_id, None
            raise Problem(404, "unknown-venue", f"venue_id: no venue {venue_id!r}")
        return venue_id, state


def _takes_venue(path: str, venue_id: str | None) -> bool:
    """Whether the /_sim/ route of ``path`` takes a ``?venue=`` (the stream and the page: an
    EventSource and a bookmarked page address a venue in their query); ``venue_id`` is the venue the
    path names, whose prefix is left out."""
    path = path.removeprefix("/_sim" if venue_id is None else f"/_sim/venues/{venue_id}")
    return path in ("/stream", "/ui") or path.startswith("/ui/")


def _clients(scenario: Scenario) -> list[dict[str, str]]:
    return [
        {"client_id": str(client_id), "mnemonic": scenario.clients[client_id].mnemonic, "key": key}
        for key, (client_id, _) in scenario.hmac_keys.items()
    ]


VENUES = web.AppKey("venues", VenueHub)


# --- handlers ----------------------------------------------------------------------------------------


async def create_venue(request: web.Request) -> web.Response:
    hub = request.app[VENUES]
    try:
        raw = await read_bounded(request, MAX_SCENARIO_BYTES)
    except Problem as problem:
        if problem.status != 413:
            raise
        raise Problem(
            413,
            "payload-too-large",
            f"body: a create body (the scenario document, its events included) is at most "
            f"{MAX_SCENARIO_BYTES >> 20} MiB; a bigger market belongs in a recording (docs/recorded.md)",
        ) from None
    try:
        doc = await hub.create(raw)
    except TooManyVenues:
        limit = hub.venues.max_venues
        raise Problem(
            429,
            "too-many-venues",
            f"this server runs at most {limit} venues (--max-venues), the default one included; delete one first",
        ) from None
    except VenueError as exc:
        if exc.status == 409:
            raise Problem(409, "credential-taken", f"{exc.field}: {exc.reason}") from None
        raise bad_request(exc.field, exc.reason) from None
    return respond(doc, status=201)


async def list_venues(request: web.Request) -> web.Response:
    hub = request.app[VENUES]
    docs = [hub.doc(DEFAULT_ID, hub.default, credentials=False)]
    docs += [hub.doc(venue_id, state, credentials=False) for venue_id, state in hub.created.items()]
    docs += [hub.set_aside_doc(venue_id) for venue_id in hub.venues.set_aside]
    return respond(docs)


async def get_venue(request: web.Request) -> web.Response:
    hub = request.app[VENUES]
    venue_id, state = hub.lookup(request)
    return respond(hub.set_aside_doc(venue_id) if state is None else hub.doc(venue_id, state, credentials=True))


async def delete_venue(request: web.Request) -> web.Response:
    hub = request.app[VENUES]
    venue_id = hub.lookup(request)[0]  # holds no reference to the venue it ends
    if venue_id == DEFAULT_ID:
        raise Problem(
            409,
            "default-venue",
            "venue_id: the default venue (the server's --scenario) cannot be deleted; reset it with POST /_sim/reset",
        )
    await hub.delete(venue_id)
    return respond({"id": venue_id, "deleted": True})


def venue_routes(control: list[web.RouteDef]) -> list[web.RouteDef]:
    """``/_sim/venues`` and, for each control route of ``control`` (the tables the server serves under
    ``/_sim/``), the same route under ``/_sim/venues/{venue_id}``: one table serves every venue."""
    scoped = [
        web.route(r.method, VENUE_PREFIX + r.path.removeprefix("/_sim"), r.handler, **r.kwargs)
        for r in control
        if r.path not in SERVER_WIDE
    ]
    return [
        web.post("/_sim/venues", create_venue),
        web.get("/_sim/venues", list_venues),
        web.get(VENUE_RESOURCE, get_venue),
        web.delete(VENUE_RESOURCE, delete_venue),
        *scoped,
    ]


def install_venues(app: web.Application, hub: VenueHub) -> None:
    """Give ``app`` (the server's) its venue hub; the default venue's streams end when the server shuts
    down, every venue's clock runs while the server does, and created venues' journals close with it."""
    app[VENUES] = hub

    async def end_streams(_: web.Application) -> None:
        await hub.default.stream_hub.stop()

    async def clocks(_: web.Application) -> Any:
        hub.start_clocks()
        yield
        await hub.stop()

    app.on_shutdown.append(end_streams)
    app.cleanup_ctx.append(clocks)


def make_venues(
    sim: Simulation, config: Callable[[Scenario], Any] | None, max_venues: int, data_dir: Path | None = None
) -> Venues:
    """The created venues of a server whose default venue is ``sim``: same clock mode, journals beside
    its; posted documents may name files inside ``data_dir`` only (None: no file)."""

    def make(scenario: Scenario, journal: Path | None) -> Simulation:
        return Simulation(
            scenario,
            clock=sim.clock_mode,
            journal_path=journal,
            venue_config=config(scenario) if config is not None else None,
        )

    return Venues(make, max_venues, sim.journal_path, data_dir)
