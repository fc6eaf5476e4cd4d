"""What strategy code may call on either side: :class:`Trading`, the operations the HTTP client
(:class:`api.client.CefiClient`) and the backtest strategy's context (``api/cli/backtest/context.py``)
share, with the same names and the same parameters.

Both declare that they implement it, so mypy (``make lint``) checks each method of theirs against it,
and ``tests/api/client/test_trading.py`` holds their parameters to it name for name. Where they differ,
and why:

- The client's calls are coroutines (HTTP takes time); the context's return at once (the backtest
  applies a command at the current engine instant). So the answers are type parameters: ``Record`` for
  one record, ``Records`` for a list read.
- A list read of the client answers what the server sent (under ``v2026_01_23`` a page,
  ``{"data": [...], ...}``; under ``v2024_01_01`` the array); the context's answers the records
  themselves, as a list: it has no pages to follow.
- ``client_id``, which both carry, is no part of it: the client's may be None (a client without
  credentials signs nothing), a strategy's is always its client's.

The order operations make the same request body from the same arguments
(``api/client/client_params.py``), and the venue refuses what it would refuse over HTTP, with the same
:class:`api.client.ProblemError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

Record = TypeVar("Record", covariant=True)
Records = TypeVar("Records", covariant=True)


class Trading(Protocol[Record, Records]):
    """The order operations and reads a strategy uses, as both the client and the context offer them."""

    def place_order(
        self,
        instrument_id: Any,
        side: str,
        type: str,
        qty: Any,
        price: Any = None,
        tif: str | None = None,
        flags: Sequence[str] | None = None,
        exec_inst_flags: Sequence[str] | None = None,
        stp: str | None = None,
        hold_fee_rate: Any = None,
        external_id: str | None = None,
        msg_id: str | None = None,
        parent_id: Any = None,
    ) -> Record:
        """``POST /orders``: the order record (REJECTED with ``reject_reason`` when the venue refuses it)."""

    def modify_order(
        self,
        new_qty: Any,
        new_price: Any = None,
        id: Any = None,
        external_id: str | None = None,
        new_type: str | None = None,
        msg_id: str | None = None,
        parent_id: Any = None,
        prev_modify: str | None = None,
    ) -> Record:
        """``PATCH /orders``: ``new_qty`` is the new total quantity; name the order by ``id`` or ``external_id``."""

    def cancel_order(self, ref_id: Any) -> Record:
        """``DELETE /orders/{ref_id}`` (exchange id or external id): CANCELED, or CANCEL_PENDING under latency."""

    def order_status(self, ref_id: Any) -> Record:
        """``GET /orders/status/{ref_id}``: the order record."""

    def balances(self, asset_id: Any = None, asset_name: str | None = None) -> Records:
        """``GET /balances``: one record per asset (TOTAL, AVAILABLE, HOLD), or the one asked for."""

    def instruments(self, id: Any = None, symbol: str | None = None) -> Records:
        """``GET /instruments``: every instrument, or the one asked for."""
