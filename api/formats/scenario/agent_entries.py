"""The ``agents`` section: each entry as :mod:`engine.simulation.agents` or population specs.

Contract: ``agent`` returns an entry's specs, with prices in ticks, quantities in lots and times in
engine nanoseconds: one, or ``count`` for a population kind (``population_entries.py``), and ``[]`` once the
document has a problem. A market maker has exactly one price path: a
seeded random walk, or a series (inline or a file next to the scenario) stepped ``every`` seconds.
"""

from __future__ import annotations

import json
from dataclasses import replace

from cefisim.api.formats.scenario.document import join_path, kind_of, no_constant, os_reason
from cefisim.api.formats.scenario.format_keys import AGENT_COMMON, AGENT_KEYS, POPULATION_KINDS, RANDOM_WALK_KEYS
from cefisim.api.formats.scenario.parser import Parser
from cefisim.api.formats.scenario.population_entries import population as population_agents
from cefisim.engine.reference import Instrument
from cefisim.engine.simulation.agents import (
    MarketMakerSpec,
    NoiseTakerSpec,
    PriceSeries,
    RandomWalk,
)
from cefisim.engine.simulation.population import AnySpec
from cefisim.engine.units import RATE_ONE, Grid

MAX_LEVELS = 100
MAX_VOL = 10_000
MAX_PRICES_FILE_BYTES = 16 << 20  # a prices_file: about a million prices


def agent(
    parser: Parser,
    value: object,
    path: str,
    group: int,
    balances: dict[int, dict[int, int]],
    hmac_keys: dict[str, tuple[int, str]],
) -> list[AnySpec]:
    """The specs of one ``agents`` entry: one, or ``count`` for a population kind (``population_entries.py``,
    which makes their clients into ``balances`` and ``hmac_keys``); ``[]`` once there is a problem."""
    if not isinstance(value, dict):
        parser.err(path, f"must be an object, got {kind_of(value)}")
        return []
    atype = value.get("type")
    if not isinstance(atype, str) or atype not in AGENT_KEYS:
        parser.obj(value, path, (AGENT_COMMON[0], tuple(value)))
        if "type" in value:
            parser.enum(atype, join_path(path, "type"), tuple(AGENT_KEYS))
        return []
    required, optional = AGENT_KEYS[atype]
    d = parser.obj(value, path, (AGENT_COMMON[0] + required, AGENT_COMMON[1] + optional))
    assert d is not None
    inst = parser.get(d, "instrument", path, parser.instrument_ref)
    name = parser.get(d, "name", path, parser.string, default="")
    parser.get(d, "note", path, parser.string)
    start = parser.get(d, "start", path, parser.time, default=parser.start_ns)
    end = parser.get(d, "end", path, parser.time)
    if start is not None and end is not None and end < start:
        parser.err(join_path(path, "end"), "is before the agent's start")
    if atype in POPULATION_KINDS:
        specs = population_agents(parser, d, path, inst, group, balances, hmac_keys)
        # agent k of an entry named "value" is "value-k"; unnamed, it takes its client's mnemonic
        return [
            replace(s, start_ns=start, end_ns=end, name=f"{name}-{k + 1}" if name else s.name)
            for k, s in enumerate(specs)
        ]
    client = parser.get(d, "client", path, parser.client_ref)
    spec = market_maker(parser, d, path, inst) if atype == "market_maker" else noise_taker(parser, d, path, inst)
    if spec is None or parser.problems:  # the document is refused: no spec needed
        return []
    return [replace(spec, client_id=client.id, instrument_id=inst.id, start_ns=start, end_ns=end, name=name)]


def market_maker(parser: Parser, d: dict, path: str, inst: Instrument | None) -> MarketMakerSpec | None:
    pg = inst.price_grid if inst else None
    qg = inst.qty_grid if inst else None
    on_price = f"not a multiple of price_increment {pg.text}" if pg else ""
    on_qty = f"not a multiple of qty_increment {qg.text}" if qg else ""
    interval = parser.get(d, "interval", path, parser.seconds)
    levels = parser.get(d, "levels", path, lambda v, p: parser.integer(v, p, 1, MAX_LEVELS))
    spread = parser.get(d, "spread", path, lambda v, p: parser.positive_units(v, p, pg, on_price))
    spacing = parser.get(d, "spacing", path, lambda v, p: parser.positive_units(v, p, pg, on_price))
    qty = parser.get(d, "qty", path, lambda v, p: parser.positive_units(v, p, qg, on_qty))
    if qty is not None and inst is not None and qty < inst.min_qty:
        parser.err(join_path(path, "qty"), f"below the instrument's min_qty {inst.qty_grid.format(inst.min_qty)}")
        qty = None
    qty_step = parser.get(d, "qty_step", path, lambda v, p: parser.units(v, p, qg, on_qty), default=0)
    post_only = parser.get(d, "post_only", path, parser.boolean, default=False)
    path_keys = [k for k in ("random_walk", "prices", "prices_file") if k in d]
    price_path: RandomWalk | PriceSeries | None = None
    if len(path_keys) != 1:
        parser.err(path, "give exactly one price path: random_walk, prices or prices_file")
    elif path_keys[0] == "random_walk":
        if "every" in d:
            parser.err(join_path(path, "every"), "only with prices or prices_file (a walk moves every interval)")
        price_path = random_walk(parser, d["random_walk"], join_path(path, "random_walk"), pg, on_price)
    else:
        every = parser.get(d, "every", path, parser.seconds)
        if "every" not in d:
            parser.err(join_path(path, "every"), "missing: the time between two prices of the series")
        key = path_keys[0]
        kp = join_path(path, key)
        texts = read_prices(parser, d[key], kp) if key == "prices_file" else parser.array(d[key], kp)
        if texts is None:
            return None
        ticks = []
        for i, text in enumerate(texts):
            where = kp if key == "prices_file" else join_path(kp, i)
            what = on_price if key == "prices" else f"price {i + 1} of the file is {on_price}"
            t = parser.positive_units(text, where, pg, what)
            ticks.append(t)
        if not texts and isinstance(d[key], (list, str)):  # an empty array or file
            parser.err(kp, "the series has no prices")
        elif every is not None and ticks and None not in ticks:
            price_path = PriceSeries(tuple(t for t in ticks if t is not None), every)
    if parser.problems or price_path is None:  # every way to a missing path reported a problem
        return None
    return MarketMakerSpec(0, 0, price_path, interval, levels, spread, spacing, qty, qty_step, post_only)


def random_walk(parser: Parser, value: object, path: str, pg: Grid | None, on_price: str) -> RandomWalk | None:
    d = parser.obj(value, path, RANDOM_WALK_KEYS)
    if d is None:
        return None
    start = parser.get(d, "start", path, lambda v, p: parser.positive_units(v, p, pg, on_price))
    step = parser.get(d, "step", path, lambda v, p: parser.positive_units(v, p, pg, on_price))
    vol = parser.get(d, "vol", path, lambda v, p: parser.integer(v, p, 1, MAX_VOL), default=1)
    floor = parser.get(d, "floor", path, lambda v, p: parser.positive_units(v, p, pg, on_price), default=1)
    if parser.problems:
        return None
    return RandomWalk(start, step, vol, floor)


def read_prices(parser: Parser, value: object, path: str) -> list | None:
    """A series file next to the scenario: a JSON array of decimal strings, or one per line."""
    name = parser.string(value, path)
    if name is None:
        return None
    file = parser.file(name, path)
    if file is None:
        return None
    try:
        if not file.is_file():  # a device (/dev/zero) or a pipe would never end
            parser.err(path, f"cannot read {name}: not a regular file")
            return None
        with open(file, "rb") as f:
            data = f.read(MAX_PRICES_FILE_BYTES + 1)
        if len(data) > MAX_PRICES_FILE_BYTES:
            parser.err(path, f"{name}: larger than {MAX_PRICES_FILE_BYTES >> 20} MiB")
            return None
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        parser.err(path, f"cannot read {name}: {os_reason(exc)}")
        return None
    if file.suffix == ".json":
        try:
            data = json.loads(text, parse_constant=no_constant)
        except (ValueError, RecursionError) as exc:
            where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
            parser.err(path, f"{name}: invalid JSON{where}: {getattr(exc, 'msg', exc)}")
            return None
        if not isinstance(data, list):
            parser.err(path, f"{name}: must hold a JSON array of decimal strings")
            return None
        return data
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def noise_taker(parser: Parser, d: dict, path: str, inst: Instrument | None) -> NoiseTakerSpec | None:
    pg = inst.price_grid if inst else None
    qg = inst.qty_grid if inst else None
    on_qty = f"not a multiple of qty_increment {qg.text}" if qg else ""
    mean = parser.get(d, "mean_interval", path, parser.seconds)
    qmin = parser.get(d, "qty_min", path, lambda v, p: parser.positive_units(v, p, qg, on_qty))
    qmax = parser.get(d, "qty_max", path, lambda v, p: parser.positive_units(v, p, qg, on_qty))
    if qmin is not None and qmax is not None and qmax < qmin:
        parser.err(join_path(path, "qty_max"), "is below qty_min")
        qmax = None
    market = parser.get(d, "market_fraction", path, parser.rate, default=RATE_ONE)
    buy = parser.get(d, "buy_fraction", path, parser.rate, default=RATE_ONE // 2)
    on_price = f"not a multiple of price_increment {pg.text}" if pg else ""
    through = parser.get(d, "through", path, lambda v, p: parser.units(v, p, pg, on_price), default=0)
    if parser.problems:
        return None
    return NoiseTakerSpec(0, 0, mean, qmin, qmax, market, buy, through)
