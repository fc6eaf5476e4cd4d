"""A Python client generated from the venue's served document does every CeFi operation.

openapi-python-client (the version docs/client.md pins, from the test extra) generates a package from
``GET /v1/cefi/openapi.json`` of a live ``cefisim serve`` by the page's own command; the test imports it
and drives every CeFi operation of the document with ``CefiHttpxAuth``, building each body from the
generated models' declared fields only. Every answer parses into the generator's model of the
operation's success (not the problem model, not ``None``), and datamodel-code-generator's pydantic v2
models of the same document validate every answer of the run. docs/client.md's Python example runs as
written and type-checks with ``mypy --strict`` against the generated package.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import io
import re
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from cefisim.api.client.signing_clients import CefiHttpxAuth
from tests.api.auth.auth_support import sign as es256
from tests.clients.support import (
    DOC_URL,
    PYTHON_SECTION,
    ROOT,
    SLOW,
    declared_only,
    generated_function,
    only,
    operation_at,
    operations,
    reset,
    success_schema,
)

KEY, SECRET, CLIENT_ID = "2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f", "alice-secret", "100"
NEWEST = "9999999999999999999"  # GET /orders and GET /transfers need a cursor: start from the newest record
UUID = "3f2b1c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"


def test_the_documented_generator_version_is_the_one_installed() -> None:
    (pinned,) = re.findall(r"openapi-python-client==([0-9.]+)", only(PYTHON_SECTION, "install"))
    assert importlib.metadata.version("openapi-python-client") == pinned


class Run:
    """Calls generated operations with one signed client and keeps every answer the server gave."""

    def __init__(self, package: ModuleType, document: dict[str, Any], url: str) -> None:
        self.package, self.document = package, document
        self.ops = operations(document)
        self.answers: list[tuple[str, str, int, Any]] = []
        self.called: list[str] = []
        self.client = package.AuthenticatedClient(
            base_url=url,
            token=KEY,
            prefix="",
            auth_header_name="x-svc-auth-token",
            httpx_args={
                "auth": CefiHttpxAuth(KEY, SECRET, client_id=CLIENT_ID),
                "event_hooks": {"response": [self.keep]},
            },
        )

    def keep(self, response: httpx.Response) -> None:
        response.read()
        body = response.json() if response.headers.get("content-type", "").endswith("json") else None
        self.answers.append((response.request.method, response.request.url.path, response.status_code, body))

    def __call__(self, op_id: str, client: Any = None, **kwargs: Any) -> Any:
        """``op_id``'s generated ``sync_detailed`` with ``client`` (the signed one unless given; bodies checked
        to hold declared fields only); the parsed answer, which must be the generator's model of the
        operation's success."""
        _method, _path, op = self.ops[op_id]
        module = generated_function(self.package, op)
        if "body" in kwargs:
            declared_only(kwargs["body"])
        response = module.sync_detailed(client=client or self.client, **kwargs)
        assert response.status_code == 200, (op_id, response.content)
        expected = getattr(self.package.models, success_schema(op))
        assert isinstance(response.parsed, expected), (op_id, type(response.parsed), response.content)
        self.called.append(op_id)
        return response.parsed


def drive_every_operation(call: Run, m: ModuleType, url: str) -> None:
    """Every CeFi operation, each answered 200 (the order of a user's first session)."""
    httpx.post(f"{url}/_sim/settlement-delay", json={"ms": 60_000}).raise_for_status()  # transfers stay active
    assert call("health").status.value == "ok"
    call("versions")
    assert [a.fields.name for a in call("assets").data] == ["BTC", "USD", "ETH"]
    call("instruments")
    call("market_quote", instrument_id="1")
    call("quote_vwap", body=m.MarketQuoteRequest(qty="1000", instrument_id="1"))
    side, unit = m.MarketsQuoteRequestSide.BUY, m.MarketsQuoteRequestQtyUnit.BASE
    call("markets_quote", body=m.MarketsQuoteRequest(qty="0.1", instrument_id="1", side=side, qty_unit=unit))
    assert call("clients").data[0].info.mnemonic == "alice"
    stp = m.PatchClientRequestInfoSelfTradePreventionType1.CANCEL_AGGRESSIVE
    patched = call(
        "set_self_trade_prevention", body=m.PatchClientRequest(id=CLIENT_ID, info=m.PatchClientRequestInfo(stp))
    )
    assert patched.data[0].info.self_trade_prevention.value == "CANCEL_AGGRESSIVE"
    call("balances")

    buy, limit = m.OrderInfoSide.BUY, m.OrderInfoType.LIMIT
    info = m.OrderInfo(client_id=CLIENT_ID, instrument_id="1", side=buy, type_=limit, qty="0.01", price="29500.00")
    placed = call("place_order", body=m.PostOrderRequest(info=info, external_id="py-1"))
    assert placed.status.value == "ACTIVE", placed
    assert call("order_status", ref_id=placed.id).external_id == "py-1"
    assert [o.id for o in call("orders_active").data] == [placed.id]
    by_id = m.PatchOrderRequest(
        id=placed.id, info=m.ModifyInfo(client_id=CLIENT_ID, new_qty="0.02", new_price="29500.00")
    )
    assert call("modify_order", body=by_id).leaves_qty == "0.0200"
    by_external = m.PatchOrderRequest(
        external_id="py-1", info=m.ModifyInfo(client_id=CLIENT_ID, new_qty="0.01", new_price="29400.00")
    )
    assert call("modify_order", body=by_external).order_info.price == "29500.00"  # as entered
    assert call("cancel_order", ref_id="py-1").status.value in ("CANCELED", "CANCEL_PENDING")
    market = m.OrderInfo(client_id=CLIENT_ID, instrument_id="1", side=buy, type_=m.OrderInfoType.MARKET, qty="0.01")
    assert call("place_order", body=m.PostOrderRequest(info=market)).status.value == "FILLED"
    assert len(call("orders_all").data) == 2
    assert len(call("orders_trade").data) >= 1
    call("orders_activity")
    assert len(call("trades", timestamp=NEWEST).data) >= 1
    call("balances_activity")

    fiat = m.FiatInstructions(fiat_account_id=UUID, identity_id=UUID, account_id=UUID, includes_fee=False)
    crypto = m.CryptoInstructions(address="bc1qexample", network="bitcoin", memo="m-1")
    kinds, platforms = m.TransferRequestType, m.TransferRequestPlatform
    for amount, asset_id, kind, platform, instructions in (
        ("100", "2", kinds.DEPOSIT, platforms.FIAT, fiat),
        ("0.5", "1", kinds.WITHDRAW, platforms.CRYPTO, crypto),
    ):
        request = m.TransferRequest(
            amount=amount,
            asset_id=asset_id,
            client_id=CLIENT_ID,
            type_=kind,
            platform=platform,
            instructions=instructions,
        )
        assert call("create_transfer", body=m.PostTransferRequest(request=request)).status.value == "INITIALIZED"
    assert len(call("transfers", timestamp=NEWEST).data) == 2
    assert len(call("transfers_active").data) == 2


def fund_the_paper_account(call: Run, m: ModuleType, url: str) -> None:
    """The key exchange and a refresh (Auth), then paper trading with the bearer token they give."""
    key = serialization.load_pem_private_key((ROOT / "scenarios" / "keys" / "alice-es256.pem").read_bytes(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    now = int(time.time())
    proof = m.KeyExchangeRequest(key_id="k-alice", timestamp=now, signature=es256(key, "k-alice", now))
    tokens = call("api_key_token", body=proof)
    assert isinstance(tokens.refresh_token, str)
    tokens = call("token_refresh", body=m.RefreshRequest(refresh_token=tokens.refresh_token))
    hooks = {"event_hooks": {"response": [call.keep]}}
    with call.package.AuthenticatedClient(base_url=url, token=tokens.access_token, httpx_args=hooks) as bearer:
        added = call("paper_add_funds", client=bearer, body=m.PaperFundsRequest(asset="BTC", amount="1.5"))
        removed = call("paper_remove_funds", client=bearer, body=m.PaperFundsRequest(asset="1", amount="0.5"))
    assert Decimal(added.balances[0].amount) - Decimal(removed.balances[0].amount) == Decimal("0.5")


@pytest.mark.timeout(SLOW)
def test_a_generated_client_does_every_cefi_operation(
    sandbox: str, documents: dict[str, Any], cefi_client: ModuleType, pydantic_models: dict[str, ModuleType]
) -> None:
    reset(sandbox)
    document = documents["cefi"][0]
    call = Run(cefi_client, document, sandbox)
    with call.client:
        drive_every_operation(call, cefi_client.models, sandbox)
        fund_the_paper_account(call, cefi_client.models, sandbox)
    # every operation but OAuth's (a browser's flow): CeFi, paper trading, the key exchange and refresh
    oauth = {op_id for op_id in call.ops if op_id.startswith("oauth_")}
    assert set(call.called) == set(call.ops) - oauth, set(call.ops) - oauth - set(call.called)
    assert call.called.count("modify_order") == 2 and call.called.count("create_transfer") == 2
    # datamodel-code-generator's models of the same document hold every answer of the run
    models = pydantic_models["cefi"]
    assert len(call.answers) == len(call.called)
    for method, path, status, body in call.answers:
        assert status == 200, (method, path, body)
        getattr(models, success_schema(operation_at(document, method, path))).model_validate(body)


@pytest.mark.timeout(SLOW)
def test_the_documented_python_example_runs(sandbox: str, cefi_client: ModuleType) -> None:
    reset(sandbox)
    example = only(PYTHON_SECTION, "generated_client.py")
    assert DOC_URL in example
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example.replace(DOC_URL, sandbox), "docs/client.md", "exec"), {"__name__": "example"})
    placed, modified, canceled = out.getvalue().splitlines()
    assert re.fullmatch(r"[1-9][0-9]* ACTIVE", placed) and modified == "ACTIVE 0.0200", out.getvalue()
    assert canceled == "CANCELED"


@pytest.mark.timeout(SLOW)
def test_the_documented_python_example_type_checks(cefi_client: ModuleType, tmp_path: Path) -> None:
    """mypy --strict on the example, against the generated package and cefisim (through the mirror of the
    installed layout, tools/typecheck/); errors inside the generated package are the generator's, not
    the example's, and are not reported (``--follow-imports=silent``)."""
    example = tmp_path / "generated_client.py"
    example.write_text(only(PYTHON_SECTION, "generated_client.py"), encoding="utf-8")
    broken = tmp_path / "broken.py"
    broken.write_text(example.read_text().replace("placed.id,", "placed.order_id,"), encoding="utf-8")
    package_root = Path(cefi_client.__file__).parents[1]
    found = []
    for file in (example, broken):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "mypy",
                "--strict",
                "--follow-imports=silent",
                "--no-error-summary",
                "--cache-dir",
                str(tmp_path / "mypy-cache"),
                str(file),
            ],
            cwd=tmp_path,
            env={
                "MYPYPATH": f"{package_root}:{ROOT / 'tools' / 'typecheck'}",
                "PATH": str(Path(sys.executable).parent),
            },
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        found.append((done.returncode, done.stdout + done.stderr))
    assert found[0] == (0, ""), found[0]
    assert found[1][0] == 1 and '"OrderRecord" has no attribute "order_id"' in found[1][1], found[1]
