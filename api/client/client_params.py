"""How the client's arguments become query parameters and body values.

Quantities, prices and amounts go out as decimal strings: ``int`` and ``decimal.Decimal`` are written
exactly, ``float`` is refused (it cannot say 0.1 exactly). Ids are strings; ``None`` means "not sent".
The order bodies (:func:`order_body`, :func:`modify_body`) are what :class:`api.client.CefiClient`
sends and what the backtest strategy's context hands the order intake (``api/edge/intake.py``): the
same arguments make the same command in-process and over HTTP.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any


def decimal_value(value: Any, name: str) -> str:
    if isinstance(value, (bool, float)):
        raise TypeError(f"{name}: give a decimal string, int or Decimal, not {type(value).__name__}")
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, (int, str)):
        return str(value)
    raise TypeError(f"{name}: give a decimal string, int or Decimal, not {type(value).__name__}")


def id_value(value: Any) -> str:
    return str(value)


def query_params(**params: Any) -> dict[str, str]:
    """Query parameters with the ``None`` ones left out, every value as a string."""
    return {k: str(v) for k, v in params.items() if v is not None}


def drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def order_body(client_id: str | None, args: Mapping[str, Any]) -> dict[str, Any]:
    """The ``POST /orders`` body of ``place_order``'s arguments: ``args`` holds them by the names
    :class:`api.client.Trading` gives them (its implementations hand over their ``locals()``)."""
    parent_id, price, rate = args["parent_id"], args["price"], args["hold_fee_rate"]
    info = drop_none(
        {
            "msg_id": args["msg_id"],
            "parent_id": None if parent_id is None else id_value(parent_id),
            "client_id": client_id,
            "instrument_id": id_value(args["instrument_id"]),
            "qty": decimal_value(args["qty"], "qty"),
            "price": None if price is None else decimal_value(price, "price"),
            "flags": _array(args["flags"]),
            "side": args["side"],
            "type": args["type"],
            "tif": args["tif"],
            "exec_inst_flags": _array(args["exec_inst_flags"]),
            "hold_fee_rate": None if rate is None else decimal_value(rate, "hold_fee_rate"),
            "stp": args["stp"],
        }
    )
    return drop_none({"external_id": args["external_id"], "info": info})


def modify_body(client_id: str | None, args: Mapping[str, Any]) -> dict[str, Any]:
    """The ``PATCH /orders`` body of ``modify_order``'s arguments (``args``: as for :func:`order_body`)."""
    parent_id, new_price, order_id = args["parent_id"], args["new_price"], args["id"]
    info = drop_none(
        {
            "msg_id": args["msg_id"],
            "parent_id": None if parent_id is None else id_value(parent_id),
            "client_id": client_id,
            "prev_modify": args["prev_modify"],
            "new_qty": decimal_value(args["new_qty"], "new_qty"),
            "new_price": None if new_price is None else decimal_value(new_price, "new_price"),
            "new_type": args["new_type"],
        }
    )
    external_id = args["external_id"]
    return drop_none({"id": None if order_id is None else id_value(order_id), "external_id": external_id, "info": info})


def _array(values: Any) -> Any:
    """A list or tuple as the JSON array it is sent as (anything else as given, for the intake to refuse)."""
    return list(values) if isinstance(values, (list, tuple)) else values
