"""Reference data sections: assets, instruments, clients with their balances, keys and fees.

Contract: each method checks one list item and, when it is sound and its id and name are new,
registers it on the parser (``assets``/``asset_names``, ``instruments``/``symbols``,
``clients``/``mnemonics``) so later sections can refer to it; otherwise it marks the item broken.
Duplicates across items are reported once, by ``loader``'s ``check_unique``. Balances are exact
units of the asset; a client's ``key``/``secret`` pair goes into ``hmac_keys``.
"""

from __future__ import annotations

from cefisim.engine.reference import ACTIVE, INSTRUMENT_STATUSES, STP_NONE, STP_VALUES, SYMBOL_MAX, Asset, Client, Instrument

from cefisim.api.cefi.validate import UUID_RE
from .document import _join, _kind
from .keys import ASSET_KEYS, CLIENT_KEYS, FEE_KEYS, INSTRUMENT_KEYS
from .parser import _ParserBase


class _ReferenceSections(_ParserBase):
    """``assets``, ``instruments`` and ``clients`` items."""

    def asset(self, value: object, path: str) -> None:
        d = self.obj(value, path, ASSET_KEYS)
        if d is None:
            self.mark_broken("asset", None, "id")
            return
        aid = self.get(d, "id", path, self.id_)
        name = self.get(d, "name", path, self.name)
        decimals = self.get(d, "decimals", path, lambda v, p: self.integer(v, p, 0, 18))
        if aid is None or name is None or decimals is None:
            self.mark_broken("asset", d, "id", "name")
            return
        if aid in self.assets or name in self.asset_names:
            self.mark_broken("asset", d, "id", "name")
            return  # reported by check_unique
        asset = Asset(aid, name, decimals)
        self.assets[aid] = asset
        self.asset_names[name] = asset

    def instrument(self, value: object, path: str) -> None:
        d = self.obj(value, path, INSTRUMENT_KEYS)
        if d is None:
            self.mark_broken("instrument", None, "id")
            return
        iid = self.get(d, "id", path, self.id_)
        symbol = self.get(d, "symbol", path, self.name)
        if symbol is not None and len(symbol) > SYMBOL_MAX:
            self.err(_join(path, "symbol"), f"longer than {SYMBOL_MAX} characters")
            symbol = None
        base = self.get(d, "base", path, self.asset_ref)
        quote = self.get(d, "quote", path, self.asset_ref)
        if base is not None and base is quote:
            self.err(_join(path, "quote"), "must differ from base")
        price_grid = self.get(d, "price_increment", path, self.increment)
        qty_grid = self.get(d, "qty_increment", path, self.increment)
        if qty_grid is not None and base is not None and qty_grid.coef * 10**base.decimals % 10**qty_grid.scale:
            self.err(_join(path, "qty_increment"),
                     f"{qty_grid.text} is finer than {base.name}'s {base.decimals} decimals")
            qty_grid = None
        min_qty = self.get(
            d, "min_qty", path,
            lambda v, p: self.positive_units(v, p, qty_grid, f"not a multiple of qty_increment {qty_grid.text}"
                                             if qty_grid else ""),
            default=1,
        )
        band = self.get(d, "price_band", path, lambda v, p: self.rate(v, p, True, True), default=50_000_000)
        maker = self.get(d, "maker_fee", path, self.rate, default=0)
        taker = self.get(d, "taker_fee", path, self.rate, default=0)
        status = self.get(d, "status", path, lambda v, p: self.enum(v, p, INSTRUMENT_STATUSES), default=ACTIVE)
        parts = (iid, symbol, base, quote, price_grid, qty_grid, min_qty, band, maker, taker, status)
        if any(x is None for x in parts) or base is quote:
            self.mark_broken("instrument", d, "id", "symbol")
            return
        if iid in self.instruments or symbol in self.symbols:
            self.mark_broken("instrument", d, "id", "symbol")
            return  # reported by check_unique
        try:
            inst = Instrument(iid, symbol, base, quote, price_grid, qty_grid, min_qty, band, maker, taker, status)
        except ValueError as exc:  # pragma: no cover - every rule is checked above
            self.err(path, str(exc))
            return
        self.instruments[iid] = inst
        self.symbols[symbol] = inst

    def client(
        self, value: object, path: str, balances: dict[int, dict[int, int]], hmac_keys: dict[str, tuple[int, str]]
    ) -> None:
        d = self.obj(value, path, CLIENT_KEYS)
        if d is None:
            self.mark_broken("client", None, "id")
            return
        cid = self.get(d, "id", path, self.id_)
        mnemonic = self.get(d, "mnemonic", path, self.name)
        key = self.get(d, "key", path, self.key_uuid)
        secret = self.get(d, "secret", path, self.string)
        if ("key" in d) != ("secret" in d):
            self.err(_join(path, "secret" if "key" in d else "key"), "key and secret go together")
        stp = self.get(d, "self_trade_prevention", path, lambda v, p: self.enum(v, p, STP_VALUES), default=STP_NONE)
        amounts: dict[int, int] = {}
        bal_path = _join(path, "balances")
        bal_doc = d.get("balances", {})
        if not isinstance(bal_doc, dict):
            self.err(bal_path, f"must be an object of asset name -> decimal string, got {_kind(bal_doc)}")
            bal_doc = {}
        for dup in getattr(bal_doc, "duplicates", ()):
            self.err(_join(bal_path, dup), "duplicate key")
        for ref, amount in bal_doc.items():
            p = _join(bal_path, ref)
            asset = self.asset_ref(ref, p)
            if asset is None:
                continue
            units = self.units(amount, p, asset.grid, f"finer than {asset.name}'s {asset.decimals} decimals")
            if units is None:
                continue
            if asset.id in amounts:
                self.err(p, f"asset {asset.name} is given twice")
                continue
            amounts[asset.id] = units
        overrides = self.fees(d.get("fees", {}), _join(path, "fees"))
        if cid is not None:
            self.client_ids_seen.add(cid)
        if cid is None or mnemonic is None or stp is None or overrides is None:
            self.mark_broken("client", d, "id", "mnemonic")
            return
        if cid in self.clients or mnemonic in self.mnemonics:
            self.mark_broken("client", d, "id", "mnemonic")
            return  # reported by check_unique
        client = Client(cid, mnemonic, stp, fee_overrides=overrides)
        self.clients[cid] = client
        self.mnemonics[mnemonic] = client
        balances[cid] = amounts
        if key is not None and secret is not None and key not in hmac_keys:
            hmac_keys[key] = (cid, secret)

    def key_uuid(self, value: object, path: str) -> str | None:
        text = self.string(value, path)
        if text is not None and not UUID_RE.match(text):
            self.err(path, f"{text!r} is not a UUID (8-4-4-4-12 hex digits)")
            return None
        return text

    def fees(self, value: object, path: str) -> dict[int, tuple[int, int]] | None:
        if not isinstance(value, dict):
            self.err(path, f"must be an object of instrument -> {{maker, taker}}, got {_kind(value)}")
            return None
        for dup in getattr(value, "duplicates", ()):
            self.err(_join(path, dup), "duplicate key")
        out: dict[int, tuple[int, int]] = {}
        ok = True
        for ref, rates in value.items():
            p = _join(path, ref)
            inst = self.instrument_ref(ref, p)
            d = self.obj(rates, p, FEE_KEYS)
            if d is None:
                ok = False
                continue
            maker = self.get(d, "maker", p, self.rate)
            taker = self.get(d, "taker", p, self.rate)
            if inst is None or maker is None or taker is None:
                ok = False
                continue
            if inst.id in out:
                self.err(p, f"instrument {inst.symbol} is given twice")
                ok = False
                continue
            out[inst.id] = (maker, taker)
        return out if ok else None
