"""Paper-trading funds on the venue: what ``POST /v1/paper-trading/funds[/remove]`` does."""

from __future__ import annotations

from typing import Any

from cefisim.engine.commands import PaperFunds
from cefisim.engine.reference import ID_RE
from cefisim.engine.rejects import Reject

from cefisim.api.server.problems import Problem, bad_request
from cefisim.api.cefi.rejects import problem_for
from cefisim.api.cefi.serialize import balance_record
from cefisim.api.runtime.simulation import Simulation


def paper_funds_for(sim: Simulation):  # type: ignore[no-untyped-def]
    """The ``PAPER_FUNDS`` callable of ``api/cefi/paper.py``, bound to a simulation."""

    def paper_funds(client_id: str, asset: str, amount: str, remove: bool) -> dict[str, Any]:
        venue = sim.venue
        found = venue.assets.get(int(asset)) if ID_RE.fullmatch(asset) and len(asset) <= 19 else None
        if found is None:
            found = next((a for a in venue.assets.values() if a.name == asset), None)
        if found is None:
            raise Problem(404, "unknown-asset", f"asset: no asset {asset!r}")
        units = found.grid.to_units(amount)
        if units is None:
            raise bad_request("amount", f"finer than the asset's {found.decimals} decimals")
        if units <= 0:
            raise bad_request("amount", "must be greater than zero")
        client = venue.clients.get(int(client_id))
        if client is None:
            raise Problem(404, "unknown-client", "the user's CeFi client does not exist in this scenario")
        result = sim.submit(PaperFunds(client.id, found.id, amount, remove))
        if result.reject is Reject.INSUFFICIENT_BALANCE:
            raise Problem(400, "insufficient-funds", "amount: more than the available balance")
        if result.reject is not None:
            raise problem_for(result.reject, "amount")
        return balance_record(found, client.balances.get(found.id))

    return paper_funds
