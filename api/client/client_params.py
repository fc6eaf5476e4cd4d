"""How the client's arguments become query parameters and body values.

Quantities, prices and amounts go out as decimal strings: ``int`` and ``decimal.Decimal`` are written
exactly, ``float`` is refused (it cannot say 0.1 exactly). Ids are strings; ``None`` means "not sent".
"""

from __future__ import annotations

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
