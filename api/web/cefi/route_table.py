"""The CeFi direct route table: declared once, served by the app and described by the OpenAPI document.

``CEFI_ROUTES`` has one row per operation, ``(method, path, handler, signed)``, the path relative to
``/v1/cefi``. ``api/web/app/application.py`` adds :func:`cefi_routes` to the application and
``api/web/app/openapi_documents.py`` builds one operation per row, so a route cannot be served undescribed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from cefisim.api.edge.paths import CEFI
from cefisim.api.web.cefi import account, orders, public

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: (method, path, handler, signed) — the CeFi direct interface, one row per operation
CEFI_ROUTES: list[tuple[str, str, Handler, bool]] = [
    ("GET", "/health", public.get_health, False),
    ("GET", "/versions", public.get_versions, False),
    ("GET", "/assets", public.get_assets, False),
    ("GET", "/instruments", public.get_instruments, False),
    ("GET", "/market/quote", public.get_market_quote, False),
    ("POST", "/market/quote", public.post_market_quote, False),
    ("POST", "/markets/quote", public.post_markets_quote, False),
    ("GET", "/clients", account.get_clients, True),
    ("PATCH", "/clients", account.patch_clients, True),
    ("GET", "/orders", orders.get_orders, True),
    ("POST", "/orders", orders.post_order, True),
    ("PATCH", "/orders", orders.patch_order, True),
    ("GET", "/orders/all", orders.get_orders_all, True),
    ("GET", "/orders/active", orders.get_orders_active, True),
    ("GET", "/orders/trade", orders.get_orders_trade, True),
    ("GET", "/orders/activity", orders.get_orders_activity, True),
    ("GET", "/orders/status/{ref_id}", orders.get_order_status, True),
    ("DELETE", "/orders/{ref_id}", orders.delete_order, True),
    ("GET", "/balances", account.get_balances, True),
    ("GET", "/balances/activity", account.get_balances_activity, True),
    ("GET", "/transfers", account.get_transfers, True),
    ("POST", "/transfers", account.post_transfer, True),
    ("GET", "/transfers/active", account.get_transfers_active, True),
]

# DELETE /orders/{ref_id} must not answer on the listing paths next to it (/orders/all, ...): an order
# whose external id is one of these words is cancelled by its exchange id instead
LISTING_NAMES = "all|active|trade|activity"
REF_ID_ROUTE = "{ref_id:(?!(?:" + LISTING_NAMES + ")$)[^/]+}"


def cefi_routes() -> list[web.RouteDef]:
    """:data:`CEFI_ROUTES` as aiohttp route definitions under ``/v1/cefi``."""
    return [
        web.route(method, CEFI + (path.replace("{ref_id}", REF_ID_ROUTE) if method == "DELETE" else path), handler)
        for method, path, handler, _ in CEFI_ROUTES
    ]
