"""The paging of the CeFi list reads: ``size``, ``skip`` and the ``timestamp`` cursor, by schema version.

Pages exist under v2026_01_23 only: v2024_01_01 answers every matching record (size None). ``size``
is checked under both versions (the one document declares it for both, and a malformed value is a
400 either way); ``skip`` and ``timestamp`` apply to both. The cursor is exclusive: records created
strictly before it (``engine/queries.py``); without one, every record so far. Reads lagging the engine
and late fills (``docs/faults.md``) move the cursor back.
"""

from __future__ import annotations

from aiohttp import web

from cefisim.api.edge.validate import query_int, query_timestamp
from cefisim.api.edge.versions import V2024
from cefisim.api.web.cefi.identity import same_client, signed_client
from cefisim.api.web.server.keys import VERSION
from cefisim.api.web.server.venue_state import VENUE
from cefisim.engine.queries import next_stamp

MAX_SKIP = 2_147_483_647
DEFAULT_SIZE = 10
MAX_SIZE = 100


def paging(request: web.Request, timestamp_required: bool) -> tuple[int | None, int, int]:
    """(size, skip, before) of a list read; a 400 problem naming the malformed parameter."""
    q = request.query
    size: int | None = query_int(q, "size", DEFAULT_SIZE, 1, MAX_SIZE, clamp=True)
    if request.get(VERSION) == V2024:
        size = None
    skip = query_int(q, "skip", 0, 0, MAX_SKIP, clamp=False)
    before = query_timestamp(q, "timestamp", timestamp_required)
    sim = request[VENUE].sim
    if before is None:
        before = next_stamp(sim.venue) + 1
    if sim.faults.read_lag_ns:  # reads behind the engine (docs/faults.md)
        before = sim.faults.visible_before(sim.now_ns(), before)
    return size, skip, before


def fills_before(request: web.Request, before: int) -> int | None:
    """The cursor of trade records, late fills held back (``docs/faults.md``); None when none are."""
    sim = request[VENUE].sim
    if not sim.faults.fill_delay_ns:
        return None
    return sim.faults.fills_before(sim.now_ns(), before)


def trades_cursor(request: web.Request, before: int) -> int:
    """``before`` for a list of trade records: late fills held back (``docs/faults.md``)."""
    late = fills_before(request, before)
    return before if late is None else late


async def listing_client(request: web.Request) -> int:
    """The signed client of a list read, which a ``client_id`` query parameter must name if given."""
    client_id = await signed_client(request)
    same_client(request, client_id, request.query.get("client_id"), "client_id")
    return client_id
