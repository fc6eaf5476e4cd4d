"""Population entries of the ``agents`` section: ``count`` agents of one kind, each its own client.

Contract: ``population(parser, d, path, inst, group, balances, hmac_keys)`` reads one entry of a
population kind (``value_trader``, ``momentum_trader``, ``noise_trader``, ``inventory_maker``; its keys
already checked against ``keys.AGENT_KEYS``) into ``count`` specs of
:mod:`engine.simulation.population_specs`, or ``[]`` once the document has a problem (the caller
sets the common keys: start, end, name). The clients come from the entry's ``clients`` template:
ids ``first_id`` .. ``first_id + count - 1``, mnemonics ``<mnemonic>-1`` .. ``<mnemonic>-<count>``,
each with the template's balances, self-trade prevention and fees (read by the clients section's own
code, so they are checked as a declared client's are). A generated id or mnemonic that is already a
client is a problem at ``clients``. ``group`` is the entry's index: it keys the state its agents share.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from cefisim.api.formats.scenario.document import join_path
from cefisim.api.formats.scenario.format_keys import ACTIVITY_KEYS, CLIENT_TEMPLATE_KEYS, FUNDAMENTAL_KEYS
from cefisim.api.formats.scenario.parser import Parser
from cefisim.api.formats.scenario.recorded_entries import latency_range
from cefisim.api.formats.scenario.reference_entries import client
from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.reference import Instrument
from cefisim.engine.simulation.population_specs import (
    ActivitySpec,
    FundamentalSpec,
    InventoryMakerSpec,
    MomentumTraderSpec,
    NoiseTraderSpec,
    Spec,
    ValueTraderSpec,
)
from cefisim.engine.units import RATE_ONE

MAX_COUNT = 100_000
MAX_WINDOW = 10_000  # mids a momentum trader averages
MAX_NOISE_VOL = 10_000


def population(
    parser: Parser,
    d: dict,
    path: str,
    inst: Instrument | None,
    group: int,
    balances: dict[int, dict[int, int]],
    hmac_keys: dict[str, tuple[int, str]],
) -> list[Spec]:
    count = parser.get(d, "count", path, lambda v, p: parser.integer(v, p, 1, MAX_COUNT), default=1)
    latency = parser.get(d, "latency_ms", path, lambda v, p: latency_range(parser, v, p), default=(0, 0))
    atype = d["type"]
    read = {
        "value_trader": value_trader,
        "momentum_trader": momentum_trader,
        "noise_trader": noise_trader,
        "inventory_maker": inventory_maker,
    }[atype]
    spec = read(parser, d, path, inst, group)
    if count is None or inst is None:
        return []
    ids = clients(parser, d.get("clients"), join_path(path, "clients"), count, balances, hmac_keys)
    if spec is None or latency is None or parser.problems:
        return []
    lo, hi = latency
    return [
        replace(spec, client_id=cid, instrument_id=inst.id, latency_min_ns=lo, latency_max_ns=hi, name=name)
        for cid, name in ids
    ]


def clients(
    parser: Parser,
    value: object,
    path: str,
    count: int,
    balances: dict[int, dict[int, int]],
    hmac_keys: dict[str, tuple[int, str]],
) -> list[tuple[int, str]]:
    """Make the entry's ``count`` clients from its template: their (id, mnemonic)."""
    d = parser.obj(value, path, CLIENT_TEMPLATE_KEYS)
    if d is None:
        return []
    first = parser.get(d, "first_id", path, parser.id_)
    stem = parser.get(d, "mnemonic", path, parser.name)
    if first is None or stem is None or parser.problems:
        return []
    made = []
    template: dict[str, Any] = {k: v for k, v in d.items() if k not in ("first_id", "mnemonic")}
    for k in range(count):
        cid, mnemonic = first + k, f"{stem}-{k + 1}"
        if cid in parser.clients or cid in parser.client_ids_seen or mnemonic in parser.mnemonics:
            parser.err(path, f"client {cid} ({mnemonic}), made from this template, is already a client")
            return []
        client(parser, {"id": str(cid), "mnemonic": mnemonic, **template}, path, balances, hmac_keys)
        if parser.problems:  # the template is wrong: once is enough
            return []
        made.append((cid, mnemonic))
    return made


def grids(parser: Parser, inst: Instrument | None) -> tuple[Any, Any, Any]:
    """Readers of a price, a positive quantity and a quantity on ``inst``'s grids."""
    pg = inst.price_grid if inst else None
    qg = inst.qty_grid if inst else None
    on_price = f"not a multiple of price_increment {pg.text}" if pg else ""
    on_qty = f"not a multiple of qty_increment {qg.text}" if qg else ""

    def price(v: object, p: str) -> int | None:
        return parser.units(v, p, pg, on_price)

    def qty(v: object, p: str) -> int | None:
        return parser.positive_units(v, p, qg, on_qty)

    def lots(v: object, p: str) -> int | None:
        return parser.units(v, p, qg, on_qty)

    return price, qty, lots


def sizes(parser: Parser, d: dict, path: str, inst: Instrument | None) -> tuple[int | None, int | None]:
    """``qty_min`` and ``qty_max`` in lots (max not below min)."""
    _, qty, _ = grids(parser, inst)
    qmin = parser.get(d, "qty_min", path, qty)
    qmax = parser.get(d, "qty_max", path, qty)
    if qmin is not None and qmax is not None and qmax < qmin:
        parser.err(join_path(path, "qty_max"), "is below qty_min")
        qmax = None
    return qmin, qmax


def value_trader(parser: Parser, d: dict, path: str, inst: Instrument | None, group: int) -> ValueTraderSpec | None:
    price, _, _ = grids(parser, inst)
    mean = parser.get(d, "mean_interval", path, parser.seconds)
    qmin, qmax = sizes(parser, d, path, inst)
    fpath = join_path(path, "fundamental")
    f = parser.obj(d.get("fundamental"), fpath, FUNDAMENTAL_KEYS)
    fundamental = None
    if f is not None:
        start = parser.get(f, "start", fpath, price)
        centre = parser.get(f, "mean", fpath, price, default=start)
        reversion = parser.get(f, "reversion", fpath, parser.rate, default=RATE_ONE // 100)
        step = parser.get(f, "step", fpath, price)
        vol = parser.get(f, "vol", fpath, lambda v, p: parser.integer(v, p, 1, MAX_NOISE_VOL), default=1)
        every = parser.get(f, "every", fpath, parser.seconds, default=NS_PER_SECOND)
        if None not in (start, centre, reversion, step, vol, every) and not parser.problems:
            fundamental = FundamentalSpec(group, start, centre, reversion, step, vol, every, parser.start_ns or 0)
    noise = parser.get(d, "noise", path, price, default=0)
    noise_vol = parser.get(d, "noise_vol", path, lambda v, p: parser.integer(v, p, 1, MAX_NOISE_VOL), default=4)
    smoothing = parser.get(d, "smoothing", path, lambda v, p: parser.rate(v, p, lo_open=True), default=RATE_ONE // 2)
    margin = parser.get(d, "margin", path, price, default=0)
    if fundamental is None or qmin is None or qmax is None or parser.problems:
        return None
    return ValueTraderSpec(0, 0, fundamental, mean, qmin, qmax, noise, noise_vol, smoothing, margin)


def momentum_trader(
    parser: Parser, d: dict, path: str, inst: Instrument | None, group: int
) -> MomentumTraderSpec | None:
    price, _, _ = grids(parser, inst)
    mean = parser.get(d, "mean_interval", path, parser.seconds)
    qmin, qmax = sizes(parser, d, path, inst)
    short = parser.get(d, "short", path, lambda v, p: parser.integer(v, p, 1, MAX_WINDOW))
    long = parser.get(d, "long", path, lambda v, p: parser.integer(v, p, 2, MAX_WINDOW))
    if short is not None and long is not None and long <= short:
        parser.err(join_path(path, "long"), "must be more than short")
    threshold = parser.get(d, "threshold", path, price, default=0)
    market = parser.get(d, "market_fraction", path, parser.rate, default=RATE_ONE)
    through = parser.get(d, "through", path, price, default=0)
    if qmin is None or qmax is None or parser.problems:
        return None
    return MomentumTraderSpec(0, 0, mean, qmin, qmax, short, long, threshold, market, through)


def noise_trader(parser: Parser, d: dict, path: str, inst: Instrument | None, group: int) -> NoiseTraderSpec | None:
    price, _, _ = grids(parser, inst)
    mean = parser.get(d, "mean_interval", path, parser.seconds)
    qmin, qmax = sizes(parser, d, path, inst)
    activity = None
    if "activity" in d:
        apath = join_path(path, "activity")
        a = parser.obj(d["activity"], apath, ACTIVITY_KEYS)
        if a is not None:
            busy = parser.get(a, "busy", apath, parser.seconds)
            calm = parser.get(a, "calm", apath, parser.seconds)
            if busy is not None and calm is not None:
                activity = ActivitySpec(group, busy, calm, parser.start_ns or 0)
    calm_rate = parser.get(d, "calm_fraction", path, parser.rate, default=RATE_ONE)
    if "calm_fraction" in d and "activity" not in d:
        parser.err(join_path(path, "calm_fraction"), "only with activity (the calm spells it thins)")
    passive = parser.get(d, "passive_fraction", path, parser.rate, default=0)
    depth = parser.get(d, "depth", path, price, default=0)
    market = parser.get(d, "market_fraction", path, parser.rate, default=RATE_ONE)
    through = parser.get(d, "through", path, price, default=0)
    buy = parser.get(d, "buy_fraction", path, parser.rate, default=RATE_ONE // 2)
    if qmin is None or qmax is None or parser.problems:
        return None
    return NoiseTraderSpec(0, 0, mean, qmin, qmax, activity, calm_rate, passive, depth, market, through, buy)


def inventory_maker(
    parser: Parser, d: dict, path: str, inst: Instrument | None, group: int
) -> InventoryMakerSpec | None:
    price, qty, lots = grids(parser, inst)
    interval = parser.get(d, "interval", path, parser.seconds)
    levels = parser.get(d, "levels", path, lambda v, p: parser.integer(v, p, 1, 100))
    spread = parser.get(d, "spread", path, price)
    spacing = parser.get(d, "spacing", path, price)
    size = parser.get(d, "qty", path, qty)
    qty_step = parser.get(d, "qty_step", path, lots, default=0)
    limit = parser.get(d, "max_inventory", path, qty)
    skew = parser.get(d, "skew", path, price, default=0)
    reference = parser.get(d, "reference", path, price)
    post_only = parser.get(d, "post_only", path, parser.boolean, default=False)
    for key, v in (("spread", spread), ("spacing", spacing), ("reference", reference)):
        if v == 0:
            parser.err(join_path(path, key), "must be positive")
    if parser.problems:
        return None
    return InventoryMakerSpec(
        0, 0, interval, levels, spread, spacing, size, qty_step, limit, skew, reference, post_only
    )
