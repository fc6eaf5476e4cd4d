"""The backtest report: the harness's exact figures as JSON (decimal strings) and as a table.

Every amount is an exact integer or ``Fraction`` until it is written here, rounded half-even to the
asset's decimals (``fixed``). ``docs/backtest.md`` defines each field. Only ``run.wall_s``,
``run.events_per_s`` and ``run.commands_per_s`` depend on the wall clock (``WALL_FIELDS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from cefisim.api.formats.scenario import Scenario, format_time
from cefisim.engine import queries
from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.reference import Asset, Instrument
from cefisim.engine.simulation.backtest import Harness
from cefisim.engine.simulation.figures import Figures

__all__ = ["WALL_FIELDS", "build_report", "fixed", "table"]

WALL_FIELDS = ("wall_s", "events_per_s", "commands_per_s")  # the only fields that differ between runs


@dataclass
class Backtest:
    """A finished backtest: the harness as it ended, the figures computed from it, the report."""

    harness: Harness
    figures: Figures
    report: dict[str, Any]


def fixed(value: Fraction | int, decimals: int) -> str:
    """A signed decimal string with ``decimals`` places, rounded half-even."""
    q = round(Fraction(value) * 10**decimals)
    sign = "-" if q < 0 else ""
    whole, part = divmod(abs(q), 10**decimals)
    return f"{sign}{whole}.{part:0{decimals}d}" if decimals else f"{sign}{whole}"


def amount(h: Harness, asset_id: int, units: Fraction | int | None) -> str | None:
    """Units of an asset (exact or a Fraction rounded half-even) with the asset's decimals."""
    if units is None:
        return None
    decimals = _asset(h, asset_id).decimals
    return fixed(Fraction(units, 10**decimals), decimals)


#: decimals past the asset's own with which ``fees_unrounded`` is written
UNROUNDED_DECIMALS = 6


def unrounded(h: Harness, asset_id: int, units: Fraction | None) -> str | None:
    """Units of an asset that the ledger would round (an exact Fraction) with ``UNROUNDED_DECIMALS``
    more decimals than the asset's, rounded half-even only there."""
    if units is None:
        return None
    decimals = _asset(h, asset_id).decimals
    return fixed(units / 10**decimals, decimals + UNROUNDED_DECIMALS)


def _asset(h: Harness, asset_id: int) -> Asset:
    found = queries.asset(h.venue, asset_id)
    assert found is not None  # the harness reports the venue's assets
    return found


def price_text(inst: Instrument, ticks: Fraction | int | None) -> str | None:
    """A price in ticks (maybe fractional) with the grid's decimals plus up to 4, trailing zeros trimmed."""
    if ticks is None:
        return None
    grid = inst.price_grid
    text = fixed(Fraction(ticks) * grid.coef / 10**grid.scale, grid.scale + 4)
    whole, _, frac = text.partition(".")
    frac = frac.rstrip("0").ljust(grid.scale, "0")
    return f"{whole}.{frac}" if frac else whole


def _share(num: Fraction | int, den: Fraction | int) -> str | None:
    return fixed(Fraction(num) / Fraction(den), 4) if den else None


def maker_share(f: Figures, base_units: dict[int, list[int]]) -> str | None:
    """Maker quantity over all quantity traded. Quantities of different base assets are made
    comparable by their value at the end marks (None when one has no mark)."""
    if len(base_units) <= 1:
        maker, total = next(iter(base_units.values()), (0, 0))
        return _share(maker, total)
    num = den = Fraction(0)
    for b_id, (maker, total) in base_units.items():
        per = f.unit_values.get(b_id)
        if per is None:
            return None
        num += maker * per
        den += total * per
    return _share(num, den)


def build_report(
    scenario: Scenario, h: Harness, f: Figures, meta: dict[str, Any], latency_ns: int | None, wall: float
) -> dict[str, Any]:
    assets = {a.id: a for a in queries.assets(h.venue)}
    v_id = f.valuation_id
    v_name = assets[v_id].name
    by_inst: dict[str, Any] = {}
    volume: dict[str, Any] = {}
    slippage: dict[str, Any] = {}
    fees_by_asset: dict[int, int] = {}
    unrounded_by_asset: dict[int, Fraction] = {}
    # the totals in the valuation asset; valued turns False (totals None) once an instrument's quote
    # asset has no value in it
    valued = True
    total_fees = total_unrounded = total_volume = slip_bps_num = slip_weight = Fraction(0)
    base_units: dict[int, list[int]] = {}  # base asset id -> [maker base units, all base units]
    n_fills = n_maker = 0
    for inst in h.instruments:
        x = f.by_instrument[inst.id]
        q_id, b_id = inst.quote.id, inst.base.id
        n_fills += x.fills
        n_maker += x.maker_fills
        if x.fills or inst.id in h.watch:
            by_inst[inst.symbol] = {
                "quote_asset": inst.quote.name,
                "pnl": amount(h, q_id, x.pnl),
                "position": amount(h, b_id, x.position),
                "cash": amount(h, q_id, x.cash),
                "mark": None if x.mark2 is None else price_text(inst, Fraction(x.mark2, 2)),
            }
        if not x.fills:
            continue
        fees_by_asset[q_id] = fees_by_asset.get(q_id, 0) + x.fees
        unrounded_by_asset[q_id] = unrounded_by_asset.get(q_id, Fraction(0)) + x.fees_unrounded
        slot = base_units.setdefault(b_id, [0, 0])
        slot[0] += x.maker_lots * inst.base_per_lot
        slot[1] += x.lots * inst.base_per_lot
        volume[inst.symbol] = {
            "fills": x.fills,
            "base": inst.qty_grid.format(x.lots),
            "quote": amount(h, q_id, x.quote),
            "maker_share": _share(x.maker_lots, x.lots),
        }
        slippage[inst.symbol] = {
            "fills": x.slip_fills,
            "avg": price_text(inst, Fraction(x.slip2_lots, 2 * x.slip_lots)) if x.slip_lots else None,
            "bps": fixed(Fraction(x.slip2_lots * 10_000, x.mid2_lots), 2) if x.mid2_lots else None,
        }
        per = f.unit_values.get(q_id)
        if per is None:
            valued = False
            continue
        if valued:
            total_fees += x.fees * per
            total_unrounded += x.fees_unrounded * per
            total_volume += x.quote * per
            if x.mid2_lots:
                w = x.slip_quote * per
                slip_bps_num += Fraction(x.slip2_lots * 10_000, x.mid2_lots) * w
                slip_weight += w
    by_asset = {}
    for a in h.assets:
        start, end = f.start[a], f.end[a]
        by_asset[assets[a].name] = {
            "start": amount(h, a, start),
            "end": amount(h, a, end),
            "change": amount(h, a, end - start),
            "value": amount(h, v_id, f.value(a, end - start)),
        }
    series = []
    for at, totals, pnl in f.series:
        point: dict[str, Any] = {"t": format_time(at)}
        for a, units in zip(h.assets, totals, strict=True):
            point[assets[a].name] = amount(h, a, units)
        point["pnl"] = amount(h, v_id, pnl)
        series.append(point)
    counts = h.counts
    until = h.now
    span = until - h.start_ns
    events_per_s = h.events / wall if wall > 0 else 0.0
    return {
        "scenario": scenario.source,
        **meta,
        "client": {"id": str(h.account.id), "mnemonic": h.account.client.mnemonic},
        "start": format_time(h.start_ns),
        "end": format_time(until),
        "seconds": fixed(Fraction(span, NS_PER_SECOND), 3),
        "latency_ms": None if latency_ns is None else fixed(Fraction(latency_ns, 1_000_000), 3),
        "quote_asset": v_name,
        "pnl": {
            "total": amount(h, v_id, f.pnl),
            "by_instrument": by_inst,
            "by_asset": by_asset,
            "unvalued_assets": [assets[a].name for a in f.unvalued],
        },
        "fills": {"count": n_fills, "maker": n_maker, "taker": n_fills - n_maker},
        "volume": {"total": amount(h, v_id, total_volume if valued else None), **volume},
        "fees": {
            "total": amount(h, v_id, total_fees if valued else None),
            **{assets[a].name: amount(h, a, units) for a, units in fees_by_asset.items()},
        },
        "fees_unrounded": {
            "total": unrounded(h, v_id, total_unrounded if valued else None),
            **{assets[a].name: unrounded(h, a, units) for a, units in unrounded_by_asset.items()},
        },
        "maker_share": maker_share(f, base_units),
        "slippage": {"bps": fixed(slip_bps_num / slip_weight, 2) if valued and slip_weight else None, **slippage},
        "orders": {
            "placed": counts.orders,
            "rejected": counts.rejected,
            "cancels": counts.cancels,
            "cancels_refused": counts.cancels_refused,
            "modifies": counts.modifies,
            "modifies_refused": counts.modifies_refused,
        },
        "inventory": {"every_s": fixed(Fraction(h.sample_every_ns or 0, NS_PER_SECOND), 3), "series": series},
        "run": {
            "commands": h.commands,
            "events": h.events,
            "wall_s": round(wall, 6),
            "events_per_s": round(events_per_s),
            "commands_per_s": round(h.commands / wall) if wall > 0 else 0,
        },
    }


def table(report: dict[str, Any]) -> list[str]:
    """The report as the lines ``cefisim backtest`` prints."""
    r = report
    q = r["quote_asset"]
    pnl = r["pnl"]["total"]
    if pnl is None:
        pnl = "? (unvalued: " + ", ".join(r["pnl"]["unvalued_assets"]) + ")"
    lines = [
        f"scenario   {r['scenario']}",
        f"strategy   {r.get('strategy', '-')}  as {r['client']['mnemonic']} ({r['client']['id']})",
        (
            f"time       {r['start']} -> {r['end']} ({r['seconds'].rstrip('0').rstrip('.')} s)  "
            f"latency {r['latency_ms'] + ' ms' if r['latency_ms'] is not None else 'as the scenario'}"
        ),
        f"pnl        {pnl} {q}  (balances end - start, marked to mid)",
    ]
    width = max((len(s) for s in r["pnl"]["by_instrument"]), default=0)
    for sym, x in r["pnl"]["by_instrument"].items():
        lines.append(
            f"  {sym:<{width}}  pnl {x['pnl'] or '?'} {x['quote_asset']}  position {x['position']}  "
            f"cash {x['cash']}  mark {x['mark'] or '-'}"
        )
    fills = r["fills"]
    share = r["maker_share"]
    lines.append(
        f"fills      {fills['count']} (maker {fills['maker']}, taker {fills['taker']})  maker share "
        f"{fixed(Fraction(share) * 100, 1) + '%' if share is not None else '-'} by quantity"
    )
    lines.append(f"volume     {r['volume']['total'] or '?'} {q}")
    for sym, x in r["volume"].items():
        if sym != "total":
            lines.append(f"  {sym:<{width}}  {x['base']} base  {x['quote']} quote  in {x['fills']} fills")
    parts = [(k, v) for k, v in r["fees"].items() if k != "total"]
    detail = ", ".join(f"{v} {k}" for k, v in parts) if parts and [k for k, _ in parts] != [q] else ""
    lines.append(f"fees       {r['fees']['total'] or '?'} {q}" + (f"  ({detail})" if detail else ""))
    exact = r["fees_unrounded"]["total"]
    if exact is not None and r["fills"]["count"]:
        lines.append(f"  unrounded {exact} {q}  (before the ledger rounds each order's fees up to the unit)")
    slip = r["slippage"]
    lines.append(
        f"slippage   {slip['bps'] + ' bps' if slip['bps'] is not None else '-'} vs mid before the fill"
        " (positive: paid away)"
    )
    for sym, x in slip.items():
        if sym != "bps":
            lines.append(f"  {sym:<{width}}  avg {x['avg'] or '-'}  {x['bps'] or '-'} bps  over {x['fills']} fills")
    o = r["orders"]
    lines.append(
        f"orders     {o['placed']} placed ({o['rejected']} rejected), {o['cancels']} cancels "
        f"({o['cancels_refused']} refused), {o['modifies']} modifies ({o['modifies_refused']} refused)"
    )
    series = r["inventory"]["series"]
    for name, x in r["pnl"]["by_asset"].items():
        values = [p[name] for p in series if p.get(name) is not None]
        span = f"  min {min(values, key=Decimal)} max {max(values, key=Decimal)}" if values else ""
        lines.append(f"inventory  {name} {x['start']} -> {x['end']} ({x['change']}){span}")
    run = r["run"]
    lines.append(
        f"run        {run['commands']} commands, {run['events']} events in {run['wall_s']:.3f} s wall: "
        f"{run['events_per_s']:,} events/s"
    )
    return lines
