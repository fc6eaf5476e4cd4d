"""An unwritable journal over HTTP: every state-changing request is a 503 problem and changes nothing;
reads keep working; once the journal is writable again, a restart replays to the same state."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path

import orjson

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from tests.api.conftest import journal_on_a_full_disk
from tests.fuzz.support import (
    USER_KEY,
    Client,
    assert_problem,
    build_app,
    es256,
    fuzz_doc,
    serve,
    signed_headers,
    state,
)

UUID = str(uuid.UUID(int=7, version=4))


def _signed(client: Client, method: str, path: str, doc: object | None = None, client_id: int = 100):
    body = orjson.dumps(doc) if doc is not None else b""
    headers = {**signed_headers(client_id, method, path, body), "Content-Type": "application/json"}
    return client.request(method, path, body, headers)


def _order(price: str, ext: str) -> dict:
    return {
        "external_id": ext,
        "info": {
            "client_id": "100",
            "instrument_id": "1",
            "side": "BUY",
            "type": "LIMIT",
            "qty": "0.01",
            "price": price,
        },
    }


def test_unwritable_journal_is_503_and_changes_nothing(tmp_path: Path) -> None:
    journal = tmp_path / "journal.jsonl"
    scenario = parse_scenario(fuzz_doc(), "journal-http.json")
    sim = Simulation(scenario, clock="virtual", journal_path=journal)
    app, handler = build_app(sim)
    with serve(app, sim, **handler) as served:
        client = Client(served.port)
        assert _signed(client, "POST", "/v1/cefi/orders", _order("49000.00", "keep")).status == 200
        ts = int(time.time())
        token = orjson.loads(
            client.request(
                "POST",
                "/v1/auth/api-key/token",
                orjson.dumps({"key_id": "k-alice", "timestamp": ts, "signature": es256(USER_KEY, "k-alice", ts)}),
                {"Content-Type": "application/json"},
            ).body
        )["access_token"]

        mend: list[Callable[[], None]] = []

        def break_journal() -> None:
            mend.append(journal_on_a_full_disk(sim))  # every write fails: no space left on device

        served.on_loop(break_journal)
        before = served.snapshot()
        refused = [
            _signed(client, "POST", "/v1/cefi/orders", _order("48000.00", "lost")),
            _signed(
                client,
                "PATCH",
                "/v1/cefi/orders",
                {"external_id": "keep", "info": {"client_id": "100", "new_qty": "0.005", "new_price": "49000.00"}},
            ),
            _signed(client, "DELETE", "/v1/cefi/orders/keep"),
            _signed(
                client, "PATCH", "/v1/cefi/clients", {"id": "100", "info": {"self_trade_prevention": "CANCEL_BOTH"}}
            ),
            _signed(
                client,
                "POST",
                "/v1/cefi/transfers",
                {
                    "request": {
                        "amount": "1.00",
                        "asset_id": "2",
                        "client_id": "100",
                        "type": "WITHDRAW",
                        "platform": "FIAT",
                        "instructions": {
                            "fiat_account_id": UUID,
                            "identity_id": UUID,
                            "account_id": UUID,
                            "includes_fee": False,
                        },
                    }
                },
            ),
        ]
        for path, body in [
            ("/_sim/clock/advance", {"seconds": "60"}),
            ("/_sim/latency", {"entry_ms": 5}),
            ("/_sim/instruments/1/status", {"status": "HALTED"}),
        ]:
            refused.append(client.request("POST", path, orjson.dumps(body), {"Content-Type": "application/json"}))
        refused.append(
            client.request(
                "POST",
                "/v1/paper-trading/funds",
                orjson.dumps({"asset": "USD", "amount": "5"}),
                {"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
            )
        )
        for reply in refused:
            assert reply.status == 503, reply.body
        paths = ["/v1/cefi/orders"] * 5 + ["/_sim/x"] * 3 + ["/v1/paper-trading/funds"]
        for reply, path in zip(refused, paths, strict=True):
            problem = assert_problem(reply, path)
            assert problem["type"].endswith("/journal-unavailable")
        assert served.snapshot() == before
        # reads do not write the journal
        assert _signed(client, "GET", "/v1/cefi/balances").status == 200
        assert _signed(client, "GET", "/v1/cefi/orders/status/keep").json()["status"] == "ACTIVE"

        served.on_loop(mend[0])
        assert _signed(client, "POST", "/v1/cefi/orders", _order("47000.00", "after")).status == 200
        final = served.snapshot()
        client.close()
    sim.close()
    again = Simulation(scenario, clock="virtual", journal_path=journal)
    try:
        assert state(again.snapshot()) == final
        assert again.recovered_commands == 2
    finally:
        again.close()
