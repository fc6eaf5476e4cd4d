"""The hftbacktest side of ``bench_recorded.py``: the same recording and the same quoting strategy.

Imported only by the benchmark, and only when the ``bench`` extra (hftbacktest, with numba) is
installed: cefisim never imports it at run time.

- Events: each recorded level update is ``DEPTH_EVENT`` with ``BUY_EVENT`` (bid) or ``SELL_EVENT``
  (ask) and the level's new size; each trade ``TRADE_EVENT`` with the aggressor's side; a snapshot
  the same depth events (size 0 for every level it leaves out: hftbacktest's ``DEPTH_CLEAR_EVENT``
  walks every tick down to its price); all ``EXCH_EVENT | LOCAL_EVENT`` with the
  local time equal to the exchange time (feed latency 0, as in cefisim). Prices and sizes as floats of
  the integer ticks and lots.
- Exchange: ``HashMapMarketDepthBacktest``, risk-averse queue model, partial fills, trading-value
  fees (maker 0.1%, taker 0.2%, alice's), a constant order latency of ``latency_ns`` each way to the
  exchange (cefisim's is an acknowledgement delay: entry and cancel act ``latency_ns`` late).
- Strategy (numba): every ``step_ns`` of data time, one ``qty`` bid at the best bid and one ask at the
  best ask of the market depth; a quote whose price is no longer the touch is cancelled and replaced
  once the cancel is done; no buying (selling) at a position of +max (-max). The same rules as
  ``bench_recorded.Quoter``.
- Fills: hftbacktest 2.4.4's own state (``state_values``: position, fees, volume, trade count) keeps
  only the last piece of a partially filled order (its issues #299, #316), so the strategy counts
  pieces from the order copies instead (``quote``), and the figures come from them (``figures_of``).
  ``elapse`` is checked: an error code (#312: 14 forever after a partial fill that equalled the
  remaining quantity) ends the run with ``complete`` False.
"""

from __future__ import annotations

import gc
import time
from fractions import Fraction
from typing import Any

import numpy as np
from hftbacktest import (
    BUY_EVENT,
    DEPTH_EVENT,
    EXCH_EVENT,
    GTC,
    LIMIT,
    LOCAL_EVENT,
    SELL_EVENT,
    TRADE_EVENT,
    BacktestAsset,
    HashMapMarketDepthBacktest,
    event_dtype,
)
from numba import njit

from cefisim.engine.recorded.feed import TRADE, UPDATE
from cefisim.engine.vocabulary import Side

BUY = Side.BUY

TICK_TEXT, LOT_TEXT = "0.01", "0.0001"  # the instrument's grids
TICK, LOT = float(TICK_TEXT), float(LOT_TEXT)
NEW = 1  # hftbacktest's order status NEW (resting); PARTIALLY_FILLED is 5
PARTIALLY_FILLED = 5
MAKER_FEE_TEXT, TAKER_FEE_TEXT = "0.001", "0.002"  # alice's rates in the scenario
MAKER_FEE, TAKER_FEE = float(MAKER_FEE_TEXT), float(TAKER_FEE_TEXT)


def to_array(events: list[tuple]) -> np.ndarray:
    rows: list[tuple] = []
    both = EXCH_EVENT | LOCAL_EVENT
    book: dict[bool, dict[int, int]] = {True: {}, False: {}}  # is bid -> ticks -> lots
    for ev in events:
        kind, ts = ev[0], ev[1]
        if kind == UPDATE:
            is_bid = ev[3] == BUY
            flag = BUY_EVENT if is_bid else SELL_EVENT
            book[is_bid][ev[4]] = ev[5]
            rows.append((DEPTH_EVENT | both | flag, ts, ts, ev[4] * TICK, ev[5] * LOT, 0, 0, 0.0))
        elif kind == TRADE:
            flag = BUY_EVENT if ev[3] == BUY else SELL_EVENT
            rows.append((TRADE_EVENT | both | flag, ts, ts, ev[4] * TICK, ev[5] * LOT, 0, 0, 0.0))
        else:
            for is_bid, levels in ((True, ev[3]), (False, ev[4])):
                flag = BUY_EVENT if is_bid else SELL_EVENT
                new = dict(levels)
                gone = [p for p, q in book[is_bid].items() if q and p not in new]
                rows += [(DEPTH_EVENT | both | flag, ts, ts, p * TICK, 0.0, 0, 0, 0.0) for p in sorted(gone)]
                rows += [(DEPTH_EVENT | both | flag, ts, ts, p * TICK, q * LOT, 0, 0, 0.0) for p, q in levels]
                book[is_bid] = new
    return np.array(rows, dtype=event_dtype)


# one row of PIECES per fill piece the strategy sees: local time, side (+1 buy, -1 sell), lots, ticks, maker
PIECE_COLUMNS = 5
ELAPSE_OK = 0
ELAPSE_END = 1  # hftbacktest's elapse: 0 elapsed, 1 end of the data, anything else an error


@njit
def quote(hbt, step_ns, qty, max_pos, pieces, seen):  # type: ignore[no-untyped-def]
    """The strategy. Its fills are counted from hftbacktest's order copies: each step, an order's
    executed lots (``qty - leaves_qty``) less what ``seen`` holds for it is a new piece, written to
    ``pieces`` (hftbacktest's own position, fees and trade count keep only a partially filled
    order's last piece: its issues #299 and #316). Returns (elapse's last code, pieces written): a
    code other than ``ELAPSE_END`` means hftbacktest stopped before the end of the data."""
    bid_id = 0
    ask_id = 0
    next_id = 1
    n = 0
    position = 0  # lots, from the pieces
    code = hbt.elapse(step_ns)
    while code == 0:
        depth = hbt.depth(0)
        orders = hbt.orders(0)
        bid_live = False
        ask_live = False
        bid_cancellable = False
        ask_cancellable = False
        bid_tick = 0
        ask_tick = 0
        values = orders.values()
        while values.has_next():
            order = values.get()
            oid = order.order_id
            lots = round((order.qty - order.leaves_qty) / LOT)
            if lots > seen[oid]:
                pieces[n, 0] = hbt.current_timestamp
                pieces[n, 1] = order.side
                pieces[n, 2] = lots - seen[oid]
                pieces[n, 3] = order.exec_price_tick
                pieces[n, 4] = 1 if order.arr[0].maker else 0
                position += order.side * (lots - seen[oid])
                seen[oid] = lots
                n += 1
            if oid == bid_id and (order.status == NEW or order.status == PARTIALLY_FILLED or order.req == NEW):
                bid_live = True
                bid_cancellable = order.cancellable
                bid_tick = order.price_tick
            elif oid == ask_id and (order.status == NEW or order.status == PARTIALLY_FILLED or order.req == NEW):
                ask_live = True
                ask_cancellable = order.cancellable
                ask_tick = order.price_tick
        hbt.clear_inactive_orders(0)
        pos = position * LOT
        # bids
        target = depth.best_bid_tick
        allowed = pos < max_pos - 1e-9
        if bid_live:
            if (bid_tick != target or not allowed) and bid_cancellable:
                hbt.cancel(0, bid_id, False)
        elif allowed and depth.best_bid_tick > -2147483647:
            bid_id = next_id
            next_id += 1
            hbt.submit_buy_order(0, bid_id, target * depth.tick_size, qty, GTC, LIMIT, False)
        # asks
        target = depth.best_ask_tick
        allowed = pos > -max_pos + 1e-9
        if ask_live:
            if (ask_tick != target or not allowed) and ask_cancellable:
                hbt.cancel(0, ask_id, False)
        elif allowed and depth.best_ask_tick < 2147483647:
            ask_id = next_id
            next_id += 1
            hbt.submit_sell_order(0, ask_id, target * depth.tick_size, qty, GTC, LIMIT, False)
        code = hbt.elapse(step_ns)
    return code, n


def _backtest(data: np.ndarray, latency_ns: int) -> Any:
    asset = (
        BacktestAsset()
        .data([data])
        .linear_asset(1.0)
        .constant_order_latency(latency_ns, 0)
        .risk_adverse_queue_model()
        .partial_fill_exchange()
        .trading_value_fee_model(MAKER_FEE, TAKER_FEE)
        .tick_size(TICK)
        .lot_size(LOT)
    )
    return HashMapMarketDepthBacktest([asset])


def _quote(hbt: Any, data: np.ndarray, step_ns: int, qty_lots: int, max_lots: int) -> tuple[int, np.ndarray]:
    steps = (int(data["exch_ts"][-1]) - int(data["exch_ts"][0])) // step_ns + 2
    pieces = np.zeros((2 * steps + 2, PIECE_COLUMNS), dtype=np.int64)
    seen = np.zeros(2 * steps + 2, dtype=np.int64)  # order id -> executed lots counted so far
    code, n = quote(hbt, step_ns, qty_lots * LOT, max_lots * LOT, pieces, seen)
    return int(code), pieces[:n]


def figures_of(pieces: np.ndarray, mid2: int) -> dict[str, Any]:
    """Fills, filled BTC, position, fees and PnL (marked to the mid, ``mid2`` / 2 ticks) from the
    pieces, exactly: lots, ticks and the fee rates are integers and fractions until the end."""
    usd = Fraction(LOT_TEXT) * Fraction(TICK_TEXT)  # USD per lot x tick
    rate = {1: Fraction(MAKER_FEE_TEXT), 0: Fraction(TAKER_FEE_TEXT)}
    lots = position = 0
    cash = fees = Fraction(0)
    for _ts, side, q, ticks, maker in pieces.tolist():
        notional = q * ticks * usd
        fees += notional * rate[maker]
        lots += q
        position += side * q
        cash -= side * notional
    pnl = cash - fees + position * Fraction(mid2, 2) * usd
    return {
        "fills": len(pieces),
        "filled_qty": float(lots * Fraction(LOT_TEXT)),
        "position": float(position * Fraction(LOT_TEXT)),
        "pnl": float(round(pnl, 2)),
        "fees": float(round(fees, 2)),
    }


def run(
    events: list[tuple], scenario: Any, step_ns: int, latency_ns: int, qty_lots: int, max_lots: int, gc_on: bool
) -> dict[str, Any]:
    """The comparison's hftbacktest side. ``complete`` is False (with ``elapse_code`` and
    ``stopped_at_s``) when hftbacktest's elapse returned an error before the end of the data (its
    issue #312: a partial fill equal to the remaining quantity leaves the order in its book, and the
    next trade at its price makes every elapse return 14); the figures then cover the data before it."""
    data = to_array(events)
    warm = _backtest(data[: min(len(data), 5000)], latency_ns)
    _quote(warm, data[: min(len(data), 5000)], step_ns, qty_lots, max_lots)  # compiles; discarded
    warm.close()
    hbt = _backtest(data, latency_ns)
    if not gc_on:
        gc.disable()
    t0 = time.process_time()
    code, pieces = _quote(hbt, data, step_ns, qty_lots, max_lots)
    took = time.process_time() - t0
    gc.enable()
    sv = hbt.state_values(0)
    depth = hbt.depth(0)
    first, last = int(data["exch_ts"][0]), int(data["exch_ts"][-1])
    stopped = min(int(hbt.current_timestamp), last)
    figures = figures_of(pieces, int(depth.best_bid_tick) + int(depth.best_ask_tick))
    figures.update(
        {
            "events": len(events),
            "complete": code == ELAPSE_END,
            "elapse_code": code,
            "stopped_at_s": round((stopped - first) / 1e9, 3),
            "span_s": round((last - first) / 1e9, 3),
            # hftbacktest's own state: a partially filled order counts its last piece only
            "own_state": {
                "fills": int(sv.num_trades),
                "filled_qty": round(float(sv.trading_volume), 4),
                "position": round(float(sv.position), 4),
                "fees": round(float(sv.fee), 2),
            },
            "events_per_s": round(len(events) / took),
        }
    )
    hbt.close()
    return figures


__all__ = ["figures_of", "quote", "run", "to_array"]
