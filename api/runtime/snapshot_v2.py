"""Reading ``cefisim-snapshot/2``: its table upgraded to the current format before the codec reads it.

What changed from /2 (docs/snapshot.md):
- an object names its class by its own name (``Order``), not ``module.Class``, and holds ``state``
  where /2 held ``attrs``; ``random.Random`` is ``Random``;
- a client's balances and records moved from the ``Client`` to its ``Account``: each client object
  gives up those attributes to a new account object, the venue gains ``accounts`` (in the order of its
  clients), and orders and transfers point to the account where they pointed to the client;
- /2 restored an attribute a document did not hold as its class's default (a venue written before the
  ended-order caps were checked periodically has no ``_cap_check_at``: 0, it checks them at its next
  command); the current format holds every attribute, so the upgrade writes those defaults in.

The upgrade builds new entries and leaves the document it reads unchanged. A malformed document makes
it raise ``KeyError``, ``TypeError`` or ``ValueError``, which the codec reports as a malformed snapshot.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

FORMAT_V2 = "cefisim-snapshot/2"

#: what a /2 client held that its account holds now
_ACCOUNT_ATTRS = (
    "balances",
    "orders",
    "live_external",
    "by_external",
    "fills",
    "transfers",
    "open_orders",
    "funds_log",
)


def _value(v: Any) -> Any:
    """A value as the current format writes it (a copy: the document read stays as it is)."""
    if isinstance(v, dict) and "$tuple" in v:
        return {"$tuple": [_value(x) for x in v["$tuple"]]}
    return v


def _entry(spec: Any) -> Any:
    """One table entry in the current naming; the Account split is made afterwards."""
    if not isinstance(spec, dict):
        raise ValueError("a table entry is not an object")
    if "list" in spec:
        return {"list": [_value(x) for x in spec["list"]]}
    if "dict" in spec:
        return {"dict": [[_value(k), _value(x)] for k, x in spec["dict"]]}
    cls = spec["cls"]
    if cls == "SortedDict":
        return {"cls": cls, "items": [[_value(k), _value(x)] for k, x in spec["items"]]}
    if cls == "deque":
        return {"cls": cls, "items": [_value(x) for x in spec["items"]]}
    if cls == "random.Random":
        return {"cls": "Random", "state": spec["state"]}
    return {"cls": cls.rpartition(".")[2], "state": {attr: _value(x) for attr, x in spec["attrs"].items()}}


def _class_default(cls: type, attr: str, absent: Any) -> Any:
    """The default of ``cls``'s attribute: a dataclass field's own, else a class attribute (in the
    compiled build a dataclass is a C type, whose class holds a descriptor where a field's default
    was: docs/build.md); ``absent`` when it has none."""
    if dataclasses.is_dataclass(cls):
        for field in dataclasses.fields(cls):
            if field.name == attr:
                return absent if field.default is dataclasses.MISSING else field.default
    return getattr(cls, attr, absent)


def _defaults(spec: dict[str, Any], classes: Mapping[str, type], fields: Mapping[type, tuple[str, ...]]) -> None:
    """Write in the class defaults of the attributes an object does not hold (what /2 read them as)."""
    cls = classes.get(spec.get("cls", ""))
    if cls is None or "state" not in spec:
        return
    state = spec["state"]
    for attr in fields.get(cls, ()):
        default = _class_default(cls, attr, state)  # (state: no default)
        if attr not in state and (default is None or isinstance(default, (bool, int, str))):
            state[attr] = default


def upgrade_v2(
    table: list[Any], root: dict[str, Any], classes: Mapping[str, type], fields: Mapping[type, tuple[str, ...]]
) -> tuple[list[Any], dict[str, Any]]:
    """The (table, root) of a /2 document, as the current format writes them (``classes``: the current
    classes by name, ``fields``: what each saves)."""
    out = [_entry(spec) for spec in table]
    account_of: dict[int, int] = {}  # client object -> its new account object
    for ref, spec in enumerate(list(out)):
        if spec.get("cls") == "Client":
            state = spec["state"]
            account = {"client": {"$ref": ref}, "id": state["id"]}
            account.update((attr, state.pop(attr)) for attr in _ACCOUNT_ATTRS)
            account_of[ref] = len(out)
            out.append({"cls": "Account", "state": account})
    for spec in list(out):
        cls, state = spec.get("cls"), spec.get("state")
        if cls in ("Order", "Transfer"):
            client = state.pop("client")
            state["account"] = {"$ref": account_of[client["$ref"]]}
        elif cls == "Venue":
            clients = out[state["clients"]["$ref"]]["dict"]
            state["accounts"] = {"$ref": len(out)}
            out.append({"dict": [[cid, {"$ref": account_of[client["$ref"]]}] for cid, client in clients]})
            state.setdefault("_cap_check_at", 0)  # (the class default went with /2)
    for spec in out:
        _defaults(spec, classes, fields)
    return out, dict(root)
