"""The signer for other HTTP clients (cefisim.api.client.signing_clients): real httpx and requests against a live
server."""

from __future__ import annotations

import asyncio
import sys

import httpx
import pytest
import requests

from cefisim.api.client import signing_clients as signing
from cefisim.api.client.signing_clients import CefiHttpxAuth, CefiRequestsAuth
from tests.api.conftest import ALICE_KEY, scenario_doc
from tests.fuzz.support import serve_sim

INFO = {"client_id": "100", "instrument_id": "1", "side": "BUY", "type": "LIMIT", "qty": "0.01", "price": "29500.00"}


@pytest.fixture(scope="module")
def url() -> str:
    with serve_sim(scenario_doc()) as served:
        yield f"http://127.0.0.1:{served.port}"


def test_httpx_signs_gets_with_a_query_and_posts(url: str) -> None:
    with httpx.Client(base_url=url, auth=CefiHttpxAuth(ALICE_KEY, "alice-secret", 100)) as client:
        assert client.get("/v1/cefi/balances", params={"asset_name": "USD"}).status_code == 200
        placed = client.post("/v1/cefi/orders", json={"external_id": "hx-1", "info": INFO})
        assert placed.status_code == 200, placed.text
        assert client.get("/v1/cefi/orders/status/hx-1").status_code == 200


def test_the_newline_layout() -> None:
    with serve_sim(scenario_doc(), signature_layout="newline") as served:
        auth = CefiHttpxAuth(ALICE_KEY, "alice-secret", 100, layout="newline")
        answer = httpx.post(f"http://127.0.0.1:{served.port}/v1/cefi/orders", json={"info": INFO}, auth=auth)
        assert answer.status_code == 200, answer.text


def test_httpx_async_signs_too(url: str) -> None:
    async def go() -> int:
        async with httpx.AsyncClient(base_url=url, auth=CefiHttpxAuth(ALICE_KEY, "alice-secret", "100")) as client:
            return (await client.get("/v1/cefi/balances")).status_code

    assert asyncio.run(go()) == 200


def test_requests_signs_gets_with_a_query_and_posts(url: str) -> None:
    auth = CefiRequestsAuth(ALICE_KEY, "alice-secret", 100)
    with requests.Session() as session:
        session.auth = auth
        assert session.get(f"{url}/v1/cefi/orders/all", params={"size": "5"}).status_code == 200
        placed = session.post(f"{url}/v1/cefi/orders", json={"external_id": "rq-1", "info": INFO})
        assert placed.status_code == 200, placed.text
        assert session.delete(f"{url}/v1/cefi/orders/rq-1").status_code == 200


def test_a_wrong_secret_is_refused(url: str) -> None:
    answer = httpx.get(f"{url}/v1/cefi/balances", auth=CefiHttpxAuth(ALICE_KEY, "nope", 100))
    assert answer.status_code == 401 and "does not match" in answer.text


def test_each_class_needs_only_its_own_library(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(vars(signing), "CefiRequestsAuth", raising=False)
    monkeypatch.setitem(sys.modules, "requests", None)
    with pytest.raises(ImportError, match="CefiRequestsAuth needs requests: pip install requests"):
        signing.CefiRequestsAuth  # noqa: B018
    assert signing.CefiHttpxAuth.__module__ == "cefisim.api.client.signing_clients"
    with pytest.raises(ValueError, match="layout"):
        CefiHttpxAuth(ALICE_KEY, "alice-secret", 100, "either")


def test_the_documented_signer_example_runs(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.api.client.test_client import doc_examples

    (example,) = [code for code in doc_examples() if "CefiRequestsAuth(key" in code]
    exec(compile(example.replace("http://127.0.0.1:8080", url), "docs/client.md", "exec"), {"__name__": "doc"})
    assert capsys.readouterr().out.split() == ["ACTIVE", "ACTIVE"]
