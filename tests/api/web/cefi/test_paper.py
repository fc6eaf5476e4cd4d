"""Paper trading: POST /v1/paper-trading/funds and /funds/remove with a fake funds callable."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from cefisim.api.edge.problems import Problem
from tests.api.auth.auth_support import Harness, running

ADD = "/v1/paper-trading/funds"
REMOVE = "/v1/paper-trading/funds/remove"
ASSETS = {"1": "BTC", "2": "USD"}
SCALE = 10**8


class FakeFunds:
    """In-memory balances in units of 10**-8; the real callable moves engine balances."""

    def __init__(self) -> None:
        self.balances: dict[tuple[str, str], int] = {}
        self.calls: list[tuple[str, str, str, bool]] = []

    def __call__(self, client_id: str, asset: str, amount: str, remove: bool) -> dict[str, Any]:
        self.calls.append((client_id, asset, amount, remove))
        asset_id = asset if asset in ASSETS else {v: k for k, v in ASSETS.items()}.get(asset)
        if asset_id is None:
            raise Problem(404, "not-found", "asset: unknown asset")
        whole, _, frac = amount.partition(".")
        units = int(whole) * SCALE + int((frac + "0" * 8)[:8])
        key = (client_id, asset_id)
        have = self.balances.get(key, 0)
        if remove and units > have:
            raise Problem(400, "insufficient-funds", "amount: more than the available balance")
        self.balances[key] = have - units if remove else have + units
        total = f"{self.balances[key] // SCALE}.{self.balances[key] % SCALE:08d}"
        return {"id": asset_id, "status": "ACTIVE", "balances": [{"type": "TOTAL", "amount": total}]}


def started(environment: str = "sandbox", funds: Any = None) -> Any:
    return running(paper=funds or FakeFunds(), environment=environment)


@pytest.fixture
async def paper() -> AsyncIterator[Harness]:
    async with started() as h:
        yield h


async def call(h: Harness, path: str, body: Any = None, *, token: str | None = None, method: str = "POST",
               on_behalf_of: str | None = None, raw: bytes | None = None) -> tuple[int, Any]:  # fmt: skip
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    if on_behalf_of:
        headers["SVC-On-Behalf-Of"] = on_behalf_of
    kw: dict[str, Any] = {"data": raw} if raw is not None else {"json": body}
    resp = await h.client.request(method, path, headers=headers, **kw)
    return resp.status, await resp.json(content_type=None)


def funds(h: Harness) -> FakeFunds:
    from tests.api.auth.auth_support import VENUE_PARTS

    return h.client.server.app[VENUE_PARTS].paper_funds  # type: ignore[union-attr]


async def test_add_and_remove_funds(paper: Harness) -> None:
    token = await paper.token("k-alice")
    status, body = await call(paper, ADD, {"asset": "BTC", "amount": "1.5"}, token=token)
    assert status == 200 and body["balances"] == [{"type": "TOTAL", "amount": "1.50000000"}]
    status, body = await call(paper, REMOVE, {"asset": "1", "amount": "0.25"}, token=token)
    assert status == 200 and body["balances"][0]["amount"] == "1.25000000"
    assert funds(paper).calls == [("100", "BTC", "1.5", False), ("100", "1", "0.25", True)]


async def test_removing_more_than_available_is_400_insufficient_funds(paper: Harness) -> None:
    token = await paper.token()
    status, body = await call(paper, REMOVE, {"asset": "USD", "amount": "1"}, token=token)
    assert status == 400 and body["type"].endswith("/insufficient-funds")


async def test_unknown_asset_is_404(paper: Harness) -> None:
    status, body = await call(paper, ADD, {"asset": "DOGE", "amount": "1"}, token=await paper.token())
    assert status == 404 and "asset" in body["detail"]


async def test_organization_token_moves_the_funds_of_the_user_it_acts_for(paper: Harness) -> None:
    token = await paper.token("k-org")
    status, _ = await call(paper, ADD, {"asset": "USD", "amount": "10"}, token=token)
    assert status == 401
    status, _ = await call(paper, ADD, {"asset": "USD", "amount": "10"}, token=token, on_behalf_of="u-alice")
    assert status == 403
    status, _ = await call(paper, ADD, {"asset": "USD", "amount": "10"}, token=token, on_behalf_of="u-dave")
    assert status == 200 and funds(paper).calls == [("400", "USD", "10", False)]


@pytest.mark.parametrize("token", [None, "made-up"])
async def test_paper_trading_needs_a_bearer_token(paper: Harness, token: str | None) -> None:
    status, body = await call(paper, ADD, {"asset": "USD", "amount": "10"}, token=token)
    assert status == 401 and body["status"] == 401
    assert funds(paper).calls == []


async def test_auth_comes_before_body_validation(paper: Harness) -> None:
    status, _ = await call(paper, ADD, raw=b"not json")
    assert status == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"asset": "USD"}, "amount"),
        ({"amount": "1"}, "asset"),
        ({"asset": 2, "amount": "1"}, "asset"),
        ({"asset": "", "amount": "1"}, "asset"),
        ({"asset": "USD", "amount": 1}, "amount"),
        ({"asset": "USD", "amount": 1.5}, "amount"),
        ({"asset": "USD", "amount": "-1"}, "amount"),
        ({"asset": "USD", "amount": "1e5"}, "amount"),
        ({"asset": "USD", "amount": "1."}, "amount"),
        ({"asset": "USD", "amount": ".5"}, "amount"),
        ({"asset": "USD", "amount": " 1"}, "amount"),
        ({"asset": "USD", "amount": "1\n"}, "amount"),
        ({"asset": "USD", "amount": "0"}, "amount"),
        ({"asset": "USD", "amount": "0.000"}, "amount"),
        ({"asset": "USD", "amount": "1" * 65}, "amount"),
        ({"asset": "USD", "amount": "1", "client_id": "200"}, "client_id"),
        ([], "body"),
        ("USD", "body"),
    ],
)
async def test_invalid_body_is_400_naming_the_field(paper: Harness, body: Any, field: str) -> None:
    status, problem = await call(paper, ADD, body, token=await paper.token())
    assert status == 400, problem
    assert problem["detail"].startswith(f"{field}:")
    assert funds(paper).calls == []


async def test_invalid_json_is_400(paper: Harness) -> None:
    status, problem = await call(paper, REMOVE, raw=b"{", token=await paper.token())
    assert status == 400 and problem["detail"].startswith("body:")


async def test_other_methods_and_paths(paper: Harness) -> None:
    token = await paper.token()
    status, body = await call(paper, ADD, method="GET", token=token)
    assert status == 405 and body["status"] == 405
    for path in ("/v1/paper-trading", "/v1/paper-trading/", "/v1/paper-trading/balances"):
        assert (await call(paper, path, {}, token=token))[0] == 404


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", ADD), ("POST", REMOVE), ("GET", ADD), ("DELETE", REMOVE), ("POST", "/v1/paper-trading/x"),
     ("GET", "/v1/paper-trading")],
)  # fmt: skip
async def test_production_answers_404_everywhere(method: str, path: str) -> None:
    async with started("production") as h:
        status, body = await call(h, path, {"asset": "USD", "amount": "1"}, token=await h.token(), method=method)
        assert status == 404 and body["status"] == 404
        status, _ = await call(h, path, {"asset": "USD", "amount": "1"}, method=method)
        assert status == 404  # not even a 401: the operation does not exist
        assert funds(h).calls == []
