"""Helpers for the scenario tests: replay a scenario in-process and look at what happened."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from cefisim.api.formats.scenario import Scenario, load_scenario
from cefisim.engine.commands import Command
from cefisim.engine.events import OrderEvent, TradeEvent
from cefisim.engine.journal import event_digest, to_record
from cefisim.engine.records import Order
from cefisim.engine.venue import Result, Venue

ROOT = Path(__file__).resolve().parents[4]
SCENARIOS = ROOT / "scenarios"
SHIPPED = sorted(p.name for p in SCENARIOS.glob("*.json"))
#: a real EC P-256 public key (the demo's): the loader checks the PEM
PUBLIC_KEY = (
    "-----BEGIN PUBLIC KEY-----\n"
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEOWUMYrf8qvpyk3oMGOpz4dthAfG2\n"
    "dPtzti61kY4j3NJMkBpw95hKGkSuv3SH9YqAQNYJd0i592WhRfFjj+uXjA==\n"
    "-----END PUBLIC KEY-----\n"
)


@dataclass
class Replay:
    scenario: Scenario
    venue: Venue
    steps: list[tuple[int, Command, Result]] = field(default_factory=list)
    journal: list[bytes] = field(default_factory=list)

    @property
    def events(self) -> list[tuple]:
        return [e for _, _, r in self.steps for e in r.events]

    @property
    def digest(self) -> str:
        h = event_digest([])
        for _, _, result in self.steps:
            event_digest(result.events, h)
        return h.hexdigest()

    def order(self, client: str, external_id: str) -> Order:
        cid = self.scenario.client_id(client)
        assert cid is not None
        return self.venue.accounts[cid].by_external[external_id]

    def history(self, order: Order) -> list[tuple]:
        """The order's own events and the trades it took part in, in order."""
        return [
            e
            for e in self.events
            if (isinstance(e, OrderEvent) and e.order_id == order.id)
            or (isinstance(e, TradeEvent) and order.id in (e.maker_order_id, e.taker_order_id))
        ]

    def statuses(self, order: Order) -> list[str]:
        return [e.status if isinstance(e, OrderEvent) else "TRADE" for e in self.history(order)]

    def results(self, kind: type, **fields: object) -> list[Result]:
        """Results of the submitted commands of type ``kind`` whose fields have these values."""
        return [
            r
            for _, c, r in self.steps
            if isinstance(c, kind) and all(getattr(c, k, None) == v for k, v in fields.items())
        ]


def replay(name_or_path: str | Path, until: int | None = None, check_every: int = 1) -> Replay:
    """Replay a scenario to its end (or ``until`` ns after its start), checking invariants as it goes."""
    path = Path(name_or_path)
    if not path.is_absolute() and not path.exists():
        path = SCENARIOS / path
    scenario = load_scenario(path)
    out = Replay(scenario, None)  # type: ignore[arg-type]
    option = orjson.OPT_SORT_KEYS

    def submit(cmd: Command, at: int) -> Result:
        """Journal, then submit (as the runtime does)."""
        at = venue.applies_at(cmd, at)
        out.journal.append(orjson.dumps(to_record(at, "scn", cmd), option=option))
        return venue.submit(cmd, at)

    venue = scenario.build_venue()
    out.venue = venue
    totals = venue.asset_totals()
    runner = scenario.runner(venue)
    for n, step in enumerate(runner.steps(scenario.end_ns if until is None else scenario.start_ns + until, submit)):
        out.steps.append(step)
        if n % check_every == 0:
            venue.check_invariants()
    venue.check_invariants()
    if not any(type(c).__name__ in ("RequestTransfer", "PaperFunds") for _, c, _ in out.steps):
        assert venue.asset_totals() == totals, "an asset was not conserved"
    return out


def full_doc() -> dict:
    """A valid document that uses every key of the format, every event type and both agents."""
    return {
        "$schema": "../api/scenario/schema.json",
        "description": "every feature once",
        "seed": 1,
        "start": "2026-11-02T09:00:00Z",
        "end": "+20",
        "settings": {
            "latency": {"entry_ms": 0, "modify_ms": "0", "cancel_ms": "1.5"},
            "settlement_delay_ms": 2000,
            "signature_layout": "either",
            "sign_reference_data": False,
            "max_open_orders": 1000,
        },
        "assets": [
            {"id": "1", "name": "BTC", "decimals": 8},
            {"id": "2", "name": "USD", "decimals": 2},
        ],
        "instruments": [
            {
                "id": "1",
                "symbol": "BTC-USD",
                "base": "BTC",
                "quote": "2",
                "price_increment": "0.01",
                "qty_increment": "0.0001",
                "min_qty": "0.0002",
                "price_band": "0.05",
                "maker_fee": "0.001",
                "taker_fee": "0.002",
                "status": "ACTIVE",
            },
        ],
        "clients": [
            {
                "id": "100",
                "mnemonic": "alice",
                "key": "2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f",
                "secret": "alice-secret",
                "balances": {"BTC": "10", "2": "1000000.50"},
                "self_trade_prevention": "NONE",
                "fees": {"BTC-USD": {"maker": "0", "taker": "0.0015"}},
            },
            {
                "id": "101",
                "mnemonic": "bob",
                "key": "7c0e4b1a-3d2f-4e5a-8b6c-9d0e1f2a3b4c",
                "secret": "bob-secret",
                "balances": {"BTC": "10", "USD": "1000000"},
            },
            {"id": "900", "mnemonic": "mm", "balances": {"BTC": "100", "USD": "10000000"}},
        ],
        "api_keys": [
            {
                "key_id": "k-alice",
                "kind": "user",
                "user_id": "u-alice",
                "client_id": "100",
                "name": "alice",
                "public_key": PUBLIC_KEY,
                "revoked": False,
                "expires_at": "2030-01-01T00:00:00+00:00",
            },
            {
                "key_id": "k-org",
                "kind": "organization",
                "public_key": PUBLIC_KEY,
                "users": [{"user_id": "u-bob", "client_id": "101"}],
            },
        ],
        "oauth_clients": [
            {
                "client_id": "cli-demo",
                "name": "demo",
                "disabled": False,
                "redirect_uris": ["https://app.example/cb"],
                "scopes": ["mcp:read", "mcp:trade"],
            },
        ],
        "agents": [
            {
                "type": "market_maker",
                "name": "mm",
                "note": "quotes",
                "client": "mm",
                "instrument": "BTC-USD",
                "start": "+0",
                "end": "+15",
                "interval": "1",
                "levels": 3,
                "spread": "2.00",
                "spacing": "1.00",
                "qty": "0.1",
                "qty_step": "0.01",
                "post_only": True,
                "prices": ["30000.00", "30010.00"],
                "every": 5,
            },
            {
                "type": "noise_taker",
                "name": "noise",
                "client": "101",
                "instrument": "1",
                "start": "+1",
                "end": "2026-11-02T09:00:12Z",
                "mean_interval": "0.5",
                "qty_min": "0.001",
                "qty_max": "0.01",
                "market_fraction": "0.5",
                "buy_fraction": "0.5",
                "through": "0.50",
            },
        ],
        "events": [
            {
                "at": "+2",
                "type": "order",
                "note": "a resting bid",
                "client": "alice",
                "instrument": "BTC-USD",
                "side": "BUY",
                "order_type": "LIMIT",
                "qty": "0.5",
                "price": "29900.00",
                "tif": "GTC",
                "flags": [],
                "exec_inst": ["ALO"],
                "stp": "NONE",
                "hold_fee_rate": "0.002",
                "external_id": "bid-1",
                "msg_id": "m1",
                "parent_id": "0",
            },
            {"at": "+1", "type": "latency", "entry_ms": 0, "modify_ms": 0, "cancel_ms": 0},
            {
                "at": "+3",
                "type": "modify",
                "client": "alice",
                "external_id": "bid-1",
                "new_qty": "0.4",
                "new_price": "29905.00",
                "msg_id": "m2",
                "parent_id": "0",
                "prev_modify": "m1",
            },
            {"at": "+3.5", "type": "modify", "client": "alice", "order_id": "1", "new_qty": "0.1"},
            {"at": "+4", "type": "cancel", "client": "alice", "ref": "bid-1"},
            {"at": "+5", "type": "settlement_delay", "delay_ms": "500"},
            {
                "at": "+5",
                "type": "transfer",
                "client": "alice",
                "asset": "USD",
                "amount": "100.25",
                "transfer_type": "DEPOSIT",
                "platform": "FIAT",
                "instructions": {"fiat_account_id": "2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f", "includes_fee": False},
            },
            {
                "at": "+6",
                "type": "transfer",
                "client": "bob",
                "asset": "BTC",
                "amount": "1",
                "transfer_type": "WITHDRAW",
                "platform": "CRYPTO",
                "instructions": {"address": "bc1q..."},
            },
            {"at": "+7", "type": "paper_funds", "client": "alice", "asset": "BTC", "amount": "2"},
            {"at": "+7", "type": "paper_funds", "client": "alice", "asset": "BTC", "amount": "1", "remove": True},
            {"at": "+8", "type": "client_info", "client": "bob", "self_trade_prevention": "CANCEL_BOTH"},
            {"at": "+9", "type": "instrument_status", "instrument": "BTC-USD", "status": "HALTED"},
            {"at": "+10", "type": "instrument_status", "instrument": "1", "status": "ACTIVE"},
            {"at": "2026-11-02T09:00:11.5Z", "type": "clock"},
        ],
    }
