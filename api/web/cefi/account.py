"""CeFi direct account operations: clients, balances and their activity, transfers."""

from __future__ import annotations

from functools import partial
from typing import Any

from aiohttp import web

from cefisim.api.edge.intake import request_transfer
from cefisim.api.edge.problems import Problem, bad_request
from cefisim.api.edge.serialize import balance_record, client_record, ns, transfer_record
from cefisim.api.edge.validate import F, FieldProblem, check_object, query_id
from cefisim.api.web.cefi.identity import same_client, signed_client, signed_json
from cefisim.api.web.cefi.paging import listing_client, paging
from cefisim.api.web.cefi.reject_problems import problem_for
from cefisim.api.web.server.http import respond, respond_list
from cefisim.api.web.server.venue_state import VENUE
from cefisim.engine import queries
from cefisim.engine.commands import SetClientInfo
from cefisim.engine.queries import page, transfers
from cefisim.engine.venue import Venue
from cefisim.engine.vocabulary import SelfTradePrevention, TransferStatus

T_INITIALIZED = TransferStatus.INITIALIZED

# ``info`` is a partial update: any subset of the writable fields. The read-only fields of the record
# GET /clients returns are accepted when unchanged, so a client can send back what it read.
CLIENT_INFO_WRITABLE = {
    "self_trade_prevention": F("enum", values=tuple(SelfTradePrevention)),
}
CLIENT_INFO_READ_ONLY = {"mnemonic": F("str")}
PATCH_CLIENT = {
    "id": F("id", required=True),
    "info": F("object", required=True, fields={**CLIENT_INFO_WRITABLE, **CLIENT_INFO_READ_ONLY}),
}


# --- clients ------------------------------------------------------------------------------------


async def get_clients(request: web.Request) -> web.Response:
    client_id = await signed_client(request)
    same_client(request, client_id, request.query.get("id"), "id")
    client = queries.client(request[VENUE].sim.read_venue(), client_id)
    assert client is not None  # the signature named it
    mnemonic = request.query.get("mnemonic")
    found = [client] if mnemonic is None or mnemonic == client.mnemonic else []
    return respond_list(request, [client_record(c) for c in found])


async def patch_clients(request: web.Request) -> web.Response:
    """Change the writable fields ``info`` names (none: nothing changes); a read-only field must equal
    its current value. Answers the client's record."""
    client_id, body = await signed_json(request)
    body = check_object(body, PATCH_CLIENT, "")
    same_client(request, client_id, body["id"], "id")
    sim = request[VENUE].sim
    info = body["info"]
    current = _client_record(sim.venue, client_id)["info"]
    for name in CLIENT_INFO_READ_ONLY:
        if info.get(name) is not None and info[name] != current[name]:
            raise bad_request(f"info.{name}", f"is read-only (currently {current[name]!r})")
    stp = info.get("self_trade_prevention")
    if stp is not None:
        result = sim.submit(SetClientInfo(client_id, stp))
        if result.reject is not None:
            raise problem_for(result.reject, "info.self_trade_prevention")
    return respond_list(request, [_client_record(sim.venue, client_id)])


def _client_record(venue: Venue, client_id: int) -> dict[str, Any]:
    client = queries.client(venue, client_id)
    assert client is not None  # the signature named it
    return client_record(client)


# --- balances -----------------------------------------------------------------------------------


async def get_balances(request: web.Request) -> web.Response:
    client_id = await signed_client(request)
    same_client(request, client_id, request.query.get("client_id"), "client_id")
    venue = request[VENUE].sim.read_venue()
    asset_id = query_id(request.query, "asset_id")
    name = request.query.get("asset_name")
    records = [
        balance_record(asset, queries.balance(venue, client_id, asset.id))
        for asset in queries.assets(venue)
        if (asset_id is None or asset.id == asset_id) and (name is None or asset.name == name)
    ]
    return respond_list(request, records)


async def get_balances_activity(request: web.Request) -> web.Response:
    """The changes to the client's balances of the last 24 hours: trades (base, quote, fee), transfers
    and test funds."""
    client_id = await listing_client(request)
    size, skip, before = paging(request, timestamp_required=False)
    venue = request[VENUE].sim.read_venue()
    asset_filter = query_id(request.query, "asset_id")
    changes = queries.balance_changes(venue, client_id)
    if asset_filter is not None:
        changes = [e for e in changes if any(asset_id == asset_filter for asset_id, _ in e.changes)]
    items, cursor = page(changes, _change_ts, before, queries.window_start(venue), skip, size)
    return respond_list(request, [_change_record(venue, e) for e in items], size, cursor)


def _change_ts(change: queries.BalanceChange) -> int:
    return change.timestamp


def _change_record(venue: Venue, e: queries.BalanceChange) -> dict[str, Any]:
    rows = []
    for asset_id, units in e.changes:
        asset = queries.asset(venue, asset_id)
        assert asset is not None  # the venue moved it
        grid = asset.grid
        rows.append(
            {"asset_id": str(asset_id), "amount": grid.format(units) if units >= 0 else "-" + grid.format(-units)}
        )
    record: dict[str, Any] = {"type": e.kind, "timestamp": ns(e.timestamp), "changes": rows}
    if e.order_id is not None:
        record["order_id"] = str(e.order_id)
        record["match_id"] = str(e.match_id)
    if e.transfer_id is not None:
        record["transfer_id"] = str(e.transfer_id)
    return record


# --- transfers ----------------------------------------------------------------------------------


async def post_transfer(request: web.Request) -> web.Response:
    client_id, body = await signed_json(request)
    sim = request[VENUE].sim
    cmd = request_transfer(client_id, body, partial(queries.asset, sim.venue))
    if isinstance(cmd, FieldProblem):
        raise cmd.http()
    same_client(request, client_id, body["request"]["client_id"], "request.client_id")
    result = sim.submit(cmd)
    if result.transfer is None:
        assert result.reject is not None
        raise problem_for(result.reject, "request")
    return respond(transfer_record(result.transfer, listing=False, status=result.snapshot_status))


async def get_transfers(request: web.Request) -> web.Response:
    client_id = await listing_client(request)
    size, skip, before = paging(request, timestamp_required=True)
    found, cursor = transfers(request[VENUE].sim.read_venue(), client_id, before, skip, size)
    return respond_list(request, [transfer_record(t, listing=True) for t in found], size, cursor)


async def get_transfers_active(request: web.Request) -> web.Response:
    client_id = await listing_client(request)
    venue = request[VENUE].sim.read_venue()
    wanted = query_id(request.query, "transfer_id")
    if wanted is not None:
        t = queries.client_transfer(venue, client_id, wanted)
        if t is None:
            raise Problem(404, "unknown-transfer", "transfer_id: no such transfer for this client")
        found = [t] if t.status == T_INITIALIZED else []
    else:
        found, _ = transfers(venue, client_id, queries.next_stamp(venue) + 1, 0, None, active_only=True)
    return respond_list(request, [transfer_record(t, listing=True) for t in found])
