"""Builders of scenario documents for tests: the assets, instruments and clients most tests trade, in
one place, so a test names only what it changes.

Plain dicts and nothing imported from cefisim, so a fixture generator that runs the code of an older
version (``tests/api/runtime/fixtures/make_snapshot.py``) can build its scenario here too. Every
builder returns a fresh object: a test may change what it gets.
"""

from __future__ import annotations

from typing import Any

_ASSETS: dict[str, dict[str, Any]] = {
    "BTC": {"id": "1", "name": "BTC", "decimals": 8},
    "USD": {"id": "2", "name": "USD", "decimals": 2},
    "ETH": {"id": "3", "name": "ETH", "decimals": 8},
}


def assets(*names: str) -> list[dict[str, Any]]:
    """The assets named (``"BTC"``, ``"USD"``, ``"ETH"``), in that order, with ids 1, 2 and 3."""
    return [dict(_ASSETS[name]) for name in names]


def btc_usd(**fields: Any) -> dict[str, Any]:
    """Instrument 1, BTC-USD: cent prices, 0.0001 BTC steps, a 5% band, 0.1%/0.2% fees; ``fields``
    replace any of its keys."""
    return {
        "id": "1",
        "symbol": "BTC-USD",
        "base": "1",
        "quote": "2",
        "price_increment": "0.01",
        "qty_increment": "0.0001",
        "min_qty": "0.0001",
        "price_band": "0.05",
        "maker_fee": "0.001",
        "taker_fee": "0.002",
        "status": "ACTIVE",
        **fields,
    }


def eth_usd(**fields: Any) -> dict[str, Any]:
    """Instrument 2, ETH-USD (asset 3 against USD): 0.001 ETH steps and a 10% band, else as BTC-USD."""
    eth = {"id": "2", "symbol": "ETH-USD", "base": "3", "qty_increment": "0.001", "min_qty": "0.001"}
    return btc_usd(**(eth | {"price_band": "0.10"} | fields))


def client(client_id: str, mnemonic: str, balances: dict[str, str], **fields: Any) -> dict[str, Any]:
    """A client of the scenario; ``fields`` adds its key, secret, self-trade prevention, fees, ..."""
    return {"id": client_id, "mnemonic": mnemonic, "balances": dict(balances), **fields}


def scenario(
    *,
    seed: int,
    start: str,
    assets: list[dict[str, Any]],
    instruments: list[dict[str, Any]],
    clients: list[dict[str, Any]],
    **fields: Any,
) -> dict[str, Any]:
    """A scenario document: ``fields`` adds its other top-level keys (``events``, ``api_keys``, ...)."""
    return {"seed": seed, "start": start, "assets": assets, "instruments": instruments, "clients": clients, **fields}
