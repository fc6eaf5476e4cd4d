"""Paper-trading funds on the venue: what ``POST /v1/paper-trading/funds[/remove]`` does.

The asset may be named by id or by name (resolving the name is this module's job); every other check
(known client, the amount on the asset's grid and positive, enough available to remove) is the
engine's, whose typed reject is turned into the problem the paper-trading interface answers.
"""

from __future__ import annotations

from typing import Any

from cefisim.api.edge.problems import Problem, bad_request
from cefisim.api.edge.serialize import balance_record
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.cefi.reject_problems import problem_for
from cefisim.api.web.server.venue_state import MovePaperFunds
from cefisim.engine import queries
from cefisim.engine.commands import PaperFunds
from cefisim.engine.reference import ID_RE, Asset
from cefisim.engine.rejects import Reject


def _funds_problem(reason: Reject, asset: Asset) -> Problem:
    """The paper-trading interface's problem for an engine reject of a funds command."""
    if reason is Reject.UNKNOWN_CLIENT:
        return Problem(404, "unknown-client", "the user's CeFi client does not exist in this scenario")
    if reason is Reject.QTY_OFF_GRID:
        return bad_request("amount", f"finer than the asset's {asset.decimals} decimals")
    if reason is Reject.QTY_NOT_POSITIVE:
        return bad_request("amount", "must be greater than zero")
    if reason is Reject.INSUFFICIENT_BALANCE:
        return Problem(400, "insufficient-funds", "amount: more than the available balance")
    return problem_for(reason, "amount")


def paper_funds_for(sim: Simulation) -> MovePaperFunds:
    """A venue's ``paper_funds`` (``api/web/server/venue_state.py``, served by ``api/web/cefi/paper.py``),
    bound to its simulation."""

    def paper_funds(client_id: str, asset: str, amount: str, remove: bool) -> dict[str, Any]:
        venue = sim.venue
        found = queries.asset(venue, int(asset)) if ID_RE.fullmatch(asset) and len(asset) <= 19 else None
        if found is None:
            found = queries.asset_named(venue, asset)
        if found is None:
            raise Problem(404, "unknown-asset", f"asset: no asset {asset!r}")
        result = sim.submit(PaperFunds(int(client_id), found.id, amount, remove))
        if result.reject is not None:
            raise _funds_problem(result.reject, found)
        return balance_record(found, queries.balance(sim.venue, int(client_id), found.id))

    return paper_funds
