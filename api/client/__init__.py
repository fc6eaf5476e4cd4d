"""An asyncio client of the CeFi direct interface (the emulator's, or any venue that speaks it).

    async with CefiClient("http://127.0.0.1:8080", key=KEY, secret=SECRET, client_id="100") as c:
        order = await c.place_order("1", "BUY", "LIMIT", "0.5", price="50000.00")
        status = await c.order_status(order["id"])

- Every signed request carries the four ``x-svc-auth-*`` headers, signed with
  :func:`api.edge.signing.sign` over the wall-clock time (``time.time()``), the path actually requested
  (without the query string) and the exact bytes sent as the body (serialised once with orjson).
- Every request names its schema version in ``X-Svc-Version`` (default v2026_01_23; ``version=None``
  sends nothing and gets the server's default).
- Responses come back as parsed JSON, pages as the server gave them; :meth:`CefiClient.paginate`
  follows ``next_cursor``. A 4xx/5xx answer raises :class:`ProblemError` with the RFC 7807 fields,
  unwrapped from the ``error`` nesting of v2026_01_23.
- Quantities, prices and amounts are decimal strings; ``int`` and ``decimal.Decimal`` are accepted and
  formatted exactly; ``float`` is refused (it cannot say 0.1 exactly).

The answer types live in ``api/client/client_response.py``, the argument formatting in
``api/client/client_params.py`` and the calls it shares with the backtest strategy's context in
``api/client/trading.py`` (:class:`Trading`); import the public names (``__all__``) from here.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import aiohttp
import orjson
from yarl import URL

from cefisim.api.client.client_params import decimal_value, id_value, modify_body, order_body, query_params
from cefisim.api.client.client_response import ProblemError, RawResponse
from cefisim.api.client.trading import Trading
from cefisim.api.edge.signing import H_SIGNATURE, H_TIMESTAMP, H_TOKEN, H_USERID, sign

__all__ = ["NEWEST", "V2024", "V2026", "CefiClient", "ProblemError", "RawResponse", "Trading"]

CEFI = "/v1/cefi"
V2024 = "v2024_01_01"
V2026 = "v2026_01_23"
VERSION_HEADER = "X-Svc-Version"
#: the ``timestamp`` sent when a listing that requires one is asked for without it: "before the end
#: of time", i.e. start from the newest record
NEWEST = "9" * 19

#: list reads :meth:`CefiClient.paginate` can follow, by method name
PAGED = {
    "trades": "/orders",
    "orders_all": "/orders/all",
    "orders_active": "/orders/active",
    "orders_trade": "/orders/trade",
    "orders_activity": "/orders/activity",
    "balances_activity": "/balances/activity",
    "transfers": "/transfers",
}
_TIMESTAMP_REQUIRED = ("/orders", "/transfers")


class CefiClient(Trading[Awaitable[Any], Awaitable[Any]]):
    """One client of the CeFi direct interface; use ``async with`` (or call :meth:`close`).

    Its order operations and reads are :class:`Trading`'s, which the backtest strategy's context
    offers too (``api/client/trading.py``)."""

    def __init__(
        self,
        base_url: str,
        key: str | None = None,
        secret: str | None = None,
        client_id: str | int | None = None,
        version: str | None = V2026,
        layout: str = "concat",
        session: aiohttp.ClientSession | None = None,
        timeout: float = 30.0,
    ) -> None:
        if layout not in ("concat", "newline"):
            raise ValueError("layout must be 'concat' or 'newline'")
        base = base_url.rstrip("/")
        base = base.removesuffix(CEFI)
        self.base_url = base
        self.key = key
        self.secret = secret
        self.client_id = None if client_id is None else str(client_id)
        self.version = version
        self.layout = layout
        self._session = session
        self._own_session = session is None
        self._timeout = aiohttp.ClientTimeout(total=timeout)

    # --- lifecycle --------------------------------------------------------------------------------

    async def __aenter__(self) -> CefiClient:
        self._ensure_session()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _ensure_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
            self._own_session = True
        return self._session

    async def close(self) -> None:
        if self._own_session and self._session is not None and not self._session.closed:
            await self._session.close()

    @property
    def can_sign(self) -> bool:
        return bool(self.key and self.secret and self.client_id)

    # --- transport --------------------------------------------------------------------------------

    def signing_headers(self, method: str, path: str, body: bytes, timestamp: str | None = None) -> dict[str, str]:
        """The four ``x-svc-auth-*`` headers for a request (path without query, exact body bytes)."""
        if not self.can_sign:
            raise ValueError("this client has no key, secret and client_id to sign with")
        assert self.key is not None and self.secret is not None and self.client_id is not None
        ts = timestamp if timestamp is not None else str(int(time.time()))
        return {
            H_TOKEN: self.key,
            H_SIGNATURE: sign(self.secret, ts, method.upper(), path, body, self.layout),
            H_TIMESTAMP: ts,
            H_USERID: self.client_id,
        }

    async def raw(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        body: bytes | str | None = None,
        params: Mapping[str, Any] | None = None,
        signed: bool = True,
        headers: Mapping[str, str | None] | None = None,
        sign_path: str | None = None,
        timestamp: str | None = None,
    ) -> RawResponse:
        """Send one request and return the response as it came (never raises for a status).

        ``path`` is everything after the host (``/v1/cefi/orders``). ``json`` is serialised once with
        orjson; ``body`` is sent as given. ``headers`` are applied last (a ``None`` value removes a
        header). ``sign_path`` and ``timestamp`` override what is signed, for testing refusals.
        """
        method = method.upper()
        if json is not None and body is not None:
            raise ValueError("give json or body, not both")
        data = orjson.dumps(json) if json is not None else (body.encode() if isinstance(body, str) else body or b"")
        url = URL(self.base_url + path, encoded=True)
        query = {k: str(v) for k, v in (params or {}).items() if v is not None}
        if query:
            url = url.update_query(query)
        out: dict[str, str] = {}
        if self.version is not None:
            out[VERSION_HEADER] = self.version
        if json is not None:
            out["Content-Type"] = "application/json"
        if signed and self.can_sign:
            out.update(self.signing_headers(method, sign_path or url.raw_path, data, timestamp))
        for name, value in (headers or {}).items():
            for existing in [k for k in out if k.lower() == name.lower()]:
                del out[existing]
            if value is not None:
                out[name] = value
        session = self._ensure_session()
        async with session.request(method, url, data=data or None, headers=out, allow_redirects=False) as resp:
            payload = await resp.read()
            parsed: Any = None
            if payload:
                try:
                    parsed = orjson.loads(payload)
                except orjson.JSONDecodeError:
                    parsed = None
            return RawResponse(resp.status, resp.headers, payload, parsed)

    async def request(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None, signed: bool = True
    ) -> Any:
        """One CeFi call (``path`` relative to ``/v1/cefi``): the parsed body, or :class:`ProblemError`."""
        resp = await self.raw(method, CEFI + path, json=json, params=params, signed=signed)
        if resp.status >= 400:
            raise resp.problem()
        return resp.json

    # --- public -----------------------------------------------------------------------------------

    async def health(self) -> Any:
        return await self.request("GET", "/health", signed=False)

    async def versions(self) -> Any:
        return await self.request("GET", "/versions", signed=False)

    async def assets(self, id: Any = None, name: str | None = None) -> Any:
        """Signed when the client has credentials (servers run with --sign-reference-data need it)."""
        return await self.request("GET", "/assets", params=query_params(id=id, name=name))

    async def instruments(self, id: Any = None, symbol: str | None = None) -> Any:
        return await self.request("GET", "/instruments", params=query_params(id=id, symbol=symbol))

    async def market_quote(self, instrument_id: Any = None) -> Any:
        """GET /market/quote: best bid and offer per instrument."""
        return await self.request(
            "GET", "/market/quote", params=query_params(instrument_id=instrument_id), signed=False
        )

    async def quote_vwap(self, instrument_id: Any, qty: Any) -> Any:
        """POST /market/quote: VWAP for spending ``qty`` of the quote asset."""
        body = {"qty": decimal_value(qty, "qty"), "instrument_id": id_value(instrument_id)}
        return await self.request("POST", "/market/quote", json=body, signed=False)

    async def markets_quote(self, instrument_id: Any, qty: Any, side: str, qty_unit: str) -> Any:
        """POST /markets/quote: price a BASE or QUOTE quantity against the visible book."""
        body = {
            "qty": decimal_value(qty, "qty"),
            "instrument_id": id_value(instrument_id),
            "side": side,
            "qty_unit": qty_unit,
        }
        return await self.request("POST", "/markets/quote", json=body, signed=False)

    # --- clients ----------------------------------------------------------------------------------

    async def clients(self, id: Any = None, mnemonic: str | None = None) -> Any:
        return await self.request("GET", "/clients", params=query_params(id=id, mnemonic=mnemonic))

    async def set_self_trade_prevention(self, stp: str) -> Any:
        body = {"id": self.client_id, "info": {"self_trade_prevention": stp}}
        return await self.request("PATCH", "/clients", json=body)

    # --- orders -----------------------------------------------------------------------------------

    async def place_order(
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
    ) -> Any:
        """POST /orders; ``info.client_id`` is this client's. Returns the order record."""
        body = order_body(self.client_id, locals())  # the arguments, as Trading names them
        return await self.request("POST", "/orders", json=body)

    async def modify_order(
        self,
        new_qty: Any,
        new_price: Any = None,
        id: Any = None,
        external_id: str | None = None,
        new_type: str | None = None,
        msg_id: str | None = None,
        parent_id: Any = None,
        prev_modify: str | None = None,
    ) -> Any:
        """PATCH /orders: ``new_qty`` is the new total quantity; name the order by ``id`` or ``external_id``."""
        body = modify_body(self.client_id, locals())
        return await self.request("PATCH", "/orders", json=body)

    async def cancel_order(self, ref_id: Any) -> Any:
        """DELETE /orders/{ref_id} (exchange id or external id): begins cancellation."""
        return await self.request("DELETE", "/orders/" + quote(id_value(ref_id), safe=""))

    async def order_status(self, ref_id: Any) -> Any:
        return await self.request("GET", "/orders/status/" + quote(id_value(ref_id), safe=""))

    async def trades(self, timestamp: Any = None, size: int | None = None, skip: int | None = None) -> Any:
        """GET /orders: the client's trade records, newest first before ``timestamp`` (default: newest)."""
        return await self.request(
            "GET",
            "/orders",
            params=query_params(size=size, skip=skip, timestamp=NEWEST if timestamp is None else timestamp),
        )

    async def orders_all(self, size: int | None = None, skip: int | None = None, timestamp: Any = None) -> Any:
        return await self.request("GET", "/orders/all", params=query_params(size=size, skip=skip, timestamp=timestamp))

    async def orders_active(
        self, id: Any = None, size: int | None = None, skip: int | None = None, timestamp: Any = None
    ) -> Any:
        return await self.request(
            "GET", "/orders/active", params=query_params(id=id, size=size, skip=skip, timestamp=timestamp)
        )

    async def orders_trade(self, size: int | None = None, skip: int | None = None, timestamp: Any = None) -> Any:
        return await self.request(
            "GET", "/orders/trade", params=query_params(size=size, skip=skip, timestamp=timestamp)
        )

    async def orders_activity(self, size: int | None = None, skip: int | None = None, timestamp: Any = None) -> Any:
        return await self.request(
            "GET", "/orders/activity", params=query_params(size=size, skip=skip, timestamp=timestamp)
        )

    # --- balances and transfers -------------------------------------------------------------------

    async def balances(self, asset_id: Any = None, asset_name: str | None = None) -> Any:
        return await self.request("GET", "/balances", params=query_params(asset_id=asset_id, asset_name=asset_name))

    async def balances_activity(
        self, asset_id: Any = None, size: int | None = None, skip: int | None = None, timestamp: Any = None
    ) -> Any:
        return await self.request(
            "GET",
            "/balances/activity",
            params=query_params(asset_id=asset_id, size=size, skip=skip, timestamp=timestamp),
        )

    async def transfers(self, timestamp: Any = None, size: int | None = None, skip: int | None = None) -> Any:
        """GET /transfers: newest first before ``timestamp`` (default: newest)."""
        return await self.request(
            "GET",
            "/transfers",
            params=query_params(size=size, skip=skip, timestamp=NEWEST if timestamp is None else timestamp),
        )

    async def create_transfer(
        self, asset_id: Any, amount: Any, type: str, platform: str, instructions: Mapping[str, Any]
    ) -> Any:
        """POST /transfers (``request.client_id`` is this client's)."""
        body = {
            "request": {
                "amount": decimal_value(amount, "amount"),
                "asset_id": id_value(asset_id),
                "client_id": self.client_id,
                "type": type,
                "platform": platform,
                "instructions": dict(instructions),
            }
        }
        return await self.request("POST", "/transfers", json=body)

    async def transfers_active(self, transfer_id: Any = None) -> Any:
        return await self.request("GET", "/transfers/active", params=query_params(transfer_id=transfer_id))

    # --- pagination -------------------------------------------------------------------------------

    async def paginate(self, method_name_or_path: str, **params: Any) -> AsyncIterator[dict[str, Any]]:
        """Every record of a list read, page after page.

        Give a method name (``"orders_all"``, ``"trades"``, ...) or a path (``"/orders/all"`` or
        ``"/v1/cefi/orders/all"``) and its query parameters. Under v2026_01_23 it sends each page's
        ``next_cursor`` back as ``timestamp`` until it is null; an empty page is the end even when it
        carries a cursor. ``skip`` applies to the first page only (the cursor already counts it).
        Under v2024_01_01 a list read answers every matching record at once: one request.
        """
        name = method_name_or_path
        if name.startswith(CEFI + "/"):
            path = name[len(CEFI) :]
        elif name.startswith("/"):
            path = name
        elif name in PAGED:
            path = PAGED[name]
        else:
            raise ValueError(f"unknown list read {name!r}; one of {', '.join(PAGED)} or a path")
        query = query_params(**params)
        if path in _TIMESTAMP_REQUIRED:
            query.setdefault("timestamp", NEWEST)
        while True:
            page = await self.request("GET", path, params=query)
            if isinstance(page, list):  # v2024_01_01: the raw array holds every record
                for record in page:
                    yield record
                return
            if not isinstance(page, dict) or not isinstance(page.get("data"), list):
                raise ValueError(f"GET {path} did not answer with a {V2026} page")
            for record in page["data"]:
                yield record
            cursor = (page.get("pagination") or {}).get("next_cursor")
            if cursor is None or not page["data"]:
                return
            query["timestamp"] = str(cursor)
            query.pop("skip", None)
