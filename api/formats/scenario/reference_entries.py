"""Reference data sections: assets, instruments, clients with their balances, keys and fees.

Contract: each function checks one list item and, when it is sound and its id and name are new,
registers it on the parser (``assets``/``asset_names``, ``instruments``/``symbols``,
``clients``/``mnemonics``) so later sections can refer to it; otherwise it marks the item broken.
Duplicates across items are reported once, by ``loader``'s ``check_unique``. Balances are exact
units of the asset; a client's ``key``/``secret`` pair goes into ``hmac_keys``.
"""

from __future__ import annotations

from functools import partial

from cefisim.api.edge.validate import UUID_RE
from cefisim.api.formats.scenario.document import join_path, kind_of
from cefisim.api.formats.scenario.format_keys import ASSET_KEYS, CLIENT_KEYS, FEE_KEYS, INSTRUMENT_KEYS
from cefisim.api.formats.scenario.parser import Parser
from cefisim.engine.reference import SYMBOL_MAX, Asset, Client, Instrument
from cefisim.engine.vocabulary import InstrumentStatus, SelfTradePrevention

ACTIVE = InstrumentStatus.ACTIVE
INSTRUMENT_STATUSES = tuple(InstrumentStatus)
STP_NONE = SelfTradePrevention.NONE
STP_VALUES = tuple(SelfTradePrevention)


def asset(parser: Parser, value: object, path: str) -> None:
    d = parser.obj(value, path, ASSET_KEYS)
    if d is None:
        parser.mark_broken("asset", None, "id")
        return
    aid = parser.get(d, "id", path, parser.id_)
    name = parser.get(d, "name", path, parser.name)
    decimals = parser.get(d, "decimals", path, lambda v, p: parser.integer(v, p, 0, 18))
    if aid is None or name is None or decimals is None:
        parser.mark_broken("asset", d, "id", "name")
        return
    if aid in parser.assets or name in parser.asset_names:
        parser.mark_broken("asset", d, "id", "name")
        return  # reported by check_unique
    asset = Asset(aid, name, decimals)
    parser.assets[aid] = asset
    parser.asset_names[name] = asset


def instrument(parser: Parser, value: object, path: str) -> None:
    d = parser.obj(value, path, INSTRUMENT_KEYS)
    if d is None:
        parser.mark_broken("instrument", None, "id")
        return
    iid = parser.get(d, "id", path, parser.id_)
    symbol = parser.get(d, "symbol", path, parser.name)
    if symbol is not None and len(symbol) > SYMBOL_MAX:
        parser.err(join_path(path, "symbol"), f"longer than {SYMBOL_MAX} characters")
        symbol = None
    base = parser.get(d, "base", path, parser.asset_ref)
    quote = parser.get(d, "quote", path, parser.asset_ref)
    if base is not None and base is quote:
        parser.err(join_path(path, "quote"), "must differ from base")
    price_grid = parser.get(d, "price_increment", path, parser.increment)
    qty_grid = parser.get(d, "qty_increment", path, parser.increment)
    if qty_grid is not None and base is not None and qty_grid.coef * 10**base.decimals % 10**qty_grid.scale:
        parser.err(
            join_path(path, "qty_increment"), f"{qty_grid.text} is finer than {base.name}'s {base.decimals} decimals"
        )
        qty_grid = None
    min_qty = parser.get(
        d,
        "min_qty",
        path,
        lambda v, p: parser.positive_units(
            v, p, qty_grid, f"not a multiple of qty_increment {qty_grid.text}" if qty_grid else ""
        ),
        default=1,
    )
    band = parser.get(d, "price_band", path, lambda v, p: parser.rate(v, p, True, True), default=50_000_000)
    maker = parser.get(d, "maker_fee", path, parser.rate, default=0)
    taker = parser.get(d, "taker_fee", path, parser.rate, default=0)
    status = parser.get(d, "status", path, lambda v, p: parser.enum(v, p, INSTRUMENT_STATUSES), default=ACTIVE)
    parts = (iid, symbol, base, quote, price_grid, qty_grid, min_qty, band, maker, taker, status)
    if any(x is None for x in parts) or base is quote:
        parser.mark_broken("instrument", d, "id", "symbol")
        return
    if iid in parser.instruments or symbol in parser.symbols:
        parser.mark_broken("instrument", d, "id", "symbol")
        return  # reported by check_unique
    try:
        inst = Instrument(iid, symbol, base, quote, price_grid, qty_grid, min_qty, band, maker, taker, status)
    except ValueError as exc:  # pragma: no cover - every rule is checked above
        parser.err(path, str(exc))
        return
    parser.instruments[iid] = inst
    parser.symbols[symbol] = inst


def client(
    parser: Parser, value: object, path: str, balances: dict[int, dict[int, int]], hmac_keys: dict[str, tuple[int, str]]
) -> None:
    d = parser.obj(value, path, CLIENT_KEYS)
    if d is None:
        parser.mark_broken("client", None, "id")
        return
    cid = parser.get(d, "id", path, parser.id_)
    mnemonic = parser.get(d, "mnemonic", path, parser.name)
    key = parser.get(d, "key", path, partial(key_uuid, parser))
    secret = parser.get(d, "secret", path, parser.string)
    if ("key" in d) != ("secret" in d):
        parser.err(join_path(path, "secret" if "key" in d else "key"), "key and secret go together")
    stp = parser.get(d, "self_trade_prevention", path, lambda v, p: parser.enum(v, p, STP_VALUES), default=STP_NONE)
    amounts: dict[int, int] = {}
    bal_path = join_path(path, "balances")
    bal_doc = d.get("balances", {})
    if not isinstance(bal_doc, dict):
        parser.err(bal_path, f"must be an object of asset name -> decimal string, got {kind_of(bal_doc)}")
        bal_doc = {}
    for dup in getattr(bal_doc, "duplicates", ()):
        parser.err(join_path(bal_path, dup), "duplicate key")
    for ref, amount in bal_doc.items():
        p = join_path(bal_path, ref)
        asset = parser.asset_ref(ref, p)
        if asset is None:
            continue
        units = parser.units(amount, p, asset.grid, f"finer than {asset.name}'s {asset.decimals} decimals")
        if units is None:
            continue
        if asset.id in amounts:
            parser.err(p, f"asset {asset.name} is given twice")
            continue
        amounts[asset.id] = units
    overrides = fees(parser, d.get("fees", {}), join_path(path, "fees"))
    if cid is not None:
        parser.client_ids_seen.add(cid)
    if cid is None or mnemonic is None or stp is None or overrides is None:
        parser.mark_broken("client", d, "id", "mnemonic")
        return
    if cid in parser.clients or mnemonic in parser.mnemonics:
        parser.mark_broken("client", d, "id", "mnemonic")
        return  # reported by check_unique
    client = Client(cid, mnemonic, stp, fee_overrides=overrides)
    parser.clients[cid] = client
    parser.mnemonics[mnemonic] = client
    balances[cid] = amounts
    if key is not None and secret is not None and key not in hmac_keys:
        hmac_keys[key] = (cid, secret)


def key_uuid(parser: Parser, value: object, path: str) -> str | None:
    text = parser.string(value, path)
    if text is not None and not UUID_RE.match(text):
        parser.err(path, f"{text!r} is not a UUID (8-4-4-4-12 hex digits)")
        return None
    return text


def fees(parser: Parser, value: object, path: str) -> dict[int, tuple[int, int]] | None:
    if not isinstance(value, dict):
        parser.err(path, f"must be an object of instrument -> {{maker, taker}}, got {kind_of(value)}")
        return None
    for dup in getattr(value, "duplicates", ()):
        parser.err(join_path(path, dup), "duplicate key")
    out: dict[int, tuple[int, int]] = {}
    ok = True
    for ref, rates in value.items():
        p = join_path(path, ref)
        inst = parser.instrument_ref(ref, p)
        d = parser.obj(rates, p, FEE_KEYS)
        if d is None:
            ok = False
            continue
        maker = parser.get(d, "maker", p, parser.rate)
        taker = parser.get(d, "taker", p, parser.rate)
        if inst is None or maker is None or taker is None:
            ok = False
            continue
        if inst.id in out:
            parser.err(p, f"instrument {inst.symbol} is given twice")
            ok = False
            continue
        out[inst.id] = (maker, taker)
    return out if ok else None
