"""The ``events`` section: timed commands, each checked and turned into an engine command.

Contract: ``event`` returns ``(at, command)`` with ``at`` not before the start, or None once the
document has a problem (it is refused as a whole, so a partial command is never built). Order
prices and quantities are checked for syntax only (why: ``loader.py``); transfer amounts must be
exact in the asset.
"""

from __future__ import annotations

from cefisim.engine.commands import (
    AdvanceClock, CancelOrder, Command, ModifyOrder, PaperFunds, PlaceOrder, RequestTransfer,
    SetClientInfo, SetInstrumentStatus, SetLatency, SetSettlementDelay,
)
from cefisim.engine.order import GTC, LIMIT, MARKET
from cefisim.engine.records import FIAT
from cefisim.engine.reference import ID_RE, INSTRUMENT_STATUSES, STP_VALUES, Asset

from cefisim.api.cefi.validate import UUID_RE, is_external_id
from .document import _join, _kind
from .keys import (
    EVENT_COMMON, EVENT_KEYS, EXEC_INST, FIAT_INSTRUCTIONS, FLAGS, LATENCY_KEYS, ORDER_TYPES, PLATFORMS,
    SIDES, TIFS, TRANSFER_TYPES,
)
from .parser import _ParserBase


class _EventSections(_ParserBase):
    """``events`` items, one ``ev_<type>`` method per event type."""

    def event(self, value: object, path: str) -> tuple[int, Command] | None:
        """One timed event as (at, command); None once the document has a problem (it is refused)."""
        if not isinstance(value, dict):
            self.err(path, f"must be an object, got {_kind(value)}")
            return None
        etype = value.get("type")
        if not isinstance(etype, str) or etype not in EVENT_KEYS:
            self.obj(value, path, (EVENT_COMMON[0], tuple(value)))
            if "type" in value:
                self.enum(etype, _join(path, "type"), tuple(EVENT_KEYS))
            return None
        required, optional = EVENT_KEYS[etype]
        d = self.obj(value, path, (EVENT_COMMON[0] + required, EVENT_COMMON[1] + optional))
        assert d is not None
        at = self.get(d, "at", path, self.time)
        self.get(d, "note", path, self.string)
        # each ev_ checks every field it reads, then builds its command only while nothing is wrong:
        # a document with any problem is refused as a whole, so a partial command is never needed
        cmd = getattr(self, "ev_" + etype)(d, path, at)
        return None if self.problems else (at, cmd)

    def ev_order(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        inst = self.get(d, "instrument", path, self.instrument_ref)
        side = self.get(d, "side", path, lambda v, p: self.enum(v, p, SIDES))
        otype = self.get(d, "order_type", path, lambda v, p: self.enum(v, p, ORDER_TYPES))
        qty = self.get(d, "qty", path, self.decimal)
        price = self.get(d, "price", path, self.decimal)
        if otype == LIMIT and "price" not in d:
            self.err(_join(path, "price"), "a LIMIT order needs a price")
        tif = self.get(d, "tif", path, lambda v, p: self.enum(v, p, TIFS), default=GTC)
        flags = self.get(d, "flags", path, lambda v, p: self.unique_strings(v, p, FLAGS), default=())
        exec_inst = self.get(d, "exec_inst", path, lambda v, p: self.unique_strings(v, p, EXEC_INST), default=())
        stp = self.get(d, "stp", path, lambda v, p: self.enum(v, p, STP_VALUES))
        self.get(d, "hold_fee_rate", path, self.rate)
        ext = self.get(d, "external_id", path, self.external_id)
        msg_id = self.get(d, "msg_id", path, self.string)
        parent_id = self.get(d, "parent_id", path, self.string)
        if self.problems:
            return None
        return PlaceOrder(
            client_id=client.id, instrument_id=inst.id, side=side, type=otype, qty=qty, price=price, tif=tif,
            flags=flags, exec_inst=exec_inst, stp=stp, hold_fee_rate=d.get("hold_fee_rate"), external_id=ext,
            msg_id=msg_id, parent_id=parent_id,
        )

    def external_id(self, value: object, path: str) -> str | None:
        if not isinstance(value, str) or not is_external_id(value):
            self.err(path, "not an external id (a lowercase UUID v4, or at most 18 of A-Z a-z 0-9 - _ . ~)")
            return None
        return value

    def ev_modify(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        order_id = self.get(d, "order_id", path, self.id_)
        ext = self.get(d, "external_id", path, self.external_id)
        if "order_id" not in d and "external_id" not in d:
            self.err(path, "a modify names its order: order_id or external_id")
        new_qty = self.get(d, "new_qty", path, self.decimal)
        new_price = self.get(d, "new_price", path, self.decimal)
        new_type = self.get(d, "new_type", path, lambda v, p: self.enum(v, p, (MARKET,)))
        texts = {k: self.get(d, k, path, self.string) for k in ("msg_id", "parent_id", "prev_modify")}
        if self.problems:
            return None
        return ModifyOrder(client.id, order_id, ext, new_qty, new_price, new_type, **texts)

    def ev_cancel(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        ref = d.get("ref")
        if "ref" in d and (not isinstance(ref, str) or not (ID_RE.match(ref) or is_external_id(ref))):
            self.err(_join(path, "ref"), "must be an exchange order id or an external id")
        return None if self.problems else CancelOrder(client.id, ref)

    def ev_transfer(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        asset = self.get(d, "asset", path, self.asset_ref)
        ttype = self.get(d, "transfer_type", path, lambda v, p: self.enum(v, p, TRANSFER_TYPES))
        platform = self.get(d, "platform", path, lambda v, p: self.enum(v, p, PLATFORMS))
        amount = self.get(d, "amount", path, lambda v, p: self.amount(v, p, asset))
        instructions = self.get(d, "instructions", path, lambda v, p: self.instructions(v, p, platform), default=())
        if self.problems:
            return None
        return RequestTransfer(client.id, asset.id, amount, ttype, platform, instructions)

    def amount(self, value: object, path: str, asset: Asset | None) -> str | None:
        what = f"finer than {asset.name}'s {asset.decimals} decimals" if asset else ""
        units = self.positive_units(value, path, asset.grid if asset else None, what)
        return value if units is not None else None  # type: ignore[return-value]

    def instructions(self, value: object, path: str, platform: str | None) -> tuple[tuple[str, object], ...] | None:
        if not isinstance(value, dict):
            self.err(path, f"must be an object, got {_kind(value)}")
            return None
        for key in getattr(value, "duplicates", ()):
            self.err(_join(path, key), "duplicate key")
        for key, item in value.items():
            p = _join(path, key)
            if platform == FIAT:
                want = FIAT_INSTRUCTIONS.get(key)
                if want is None:
                    self.err(p, f"unknown key (FIAT instructions: {', '.join(FIAT_INSTRUCTIONS)})")
                elif want == "bool" and not isinstance(item, bool):
                    self.err(p, f"must be true or false, got {_kind(item)}")
                elif want == "uuid" and not (isinstance(item, str) and UUID_RE.match(item)):
                    self.err(p, "must be a UUID string")
            elif not isinstance(item, (str, bool)):
                self.err(p, f"must be a string or a boolean, got {_kind(item)}")
        return tuple(sorted(value.items()))

    def ev_instrument_status(self, d: dict, path: str, at: int) -> Command | None:
        inst = self.get(d, "instrument", path, self.instrument_ref)
        status = self.get(d, "status", path, lambda v, p: self.enum(v, p, INSTRUMENT_STATUSES))
        return None if self.problems else SetInstrumentStatus(inst.id, status)

    def ev_latency(self, d: dict, path: str, at: int) -> Command | None:
        entry, modify, cancel = (self.get(d, k, path, self.millis, default=0) for k in LATENCY_KEYS[1])
        return None if self.problems else SetLatency(entry, modify, cancel)

    def ev_settlement_delay(self, d: dict, path: str, at: int) -> Command | None:
        delay = self.get(d, "delay_ms", path, self.millis)
        return None if self.problems else SetSettlementDelay(delay)

    def ev_clock(self, d: dict, path: str, at: int) -> Command | None:
        return None if self.problems else AdvanceClock(at)

    def ev_paper_funds(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        asset = self.get(d, "asset", path, self.asset_ref)
        amount = self.get(d, "amount", path, lambda v, p: self.amount(v, p, asset))
        remove = self.get(d, "remove", path, self.boolean, default=False)
        return None if self.problems else PaperFunds(client.id, asset.id, amount, remove)

    def ev_client_info(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        stp = self.get(d, "self_trade_prevention", path, lambda v, p: self.enum(v, p, STP_VALUES))
        return None if self.problems else SetClientInfo(client.id, stp)
