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
"""

from __future__ import annotations

import gc
import time
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

from cefisim.engine.recorded_events import TRADE, UPDATE
from cefisim.engine.vocabulary import Side

BUY = Side.BUY

TICK = 0.01
LOT = 0.0001
NEW = 1  # hftbacktest's order status NEW (resting); PARTIALLY_FILLED is 5
PARTIALLY_FILLED = 5


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


@njit
def quote(hbt, step_ns, qty, max_pos):  # type: ignore[no-untyped-def]
    bid_id = 0
    ask_id = 0
    next_id = 1
    while hbt.elapse(step_ns) == 0:
        depth = hbt.depth(0)
        pos = hbt.position(0)
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
            if order.order_id == bid_id and (
                order.status == NEW or order.status == PARTIALLY_FILLED or order.req == NEW
            ):
                bid_live = True
                bid_cancellable = order.cancellable
                bid_tick = order.price_tick
            elif order.order_id == ask_id and (
                order.status == NEW or order.status == PARTIALLY_FILLED or order.req == NEW
            ):
                ask_live = True
                ask_cancellable = order.cancellable
                ask_tick = order.price_tick
        hbt.clear_inactive_orders(0)
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
    return True


def _backtest(data: np.ndarray, latency_ns: int) -> Any:
    asset = (
        BacktestAsset()
        .data([data])
        .linear_asset(1.0)
        .constant_order_latency(latency_ns, 0)
        .risk_adverse_queue_model()
        .partial_fill_exchange()
        .trading_value_fee_model(0.001, 0.002)
        .tick_size(TICK)
        .lot_size(LOT)
    )
    return HashMapMarketDepthBacktest([asset])


def run(
    events: list[tuple], scenario: Any, step_ns: int, latency_ns: int, qty_lots: int, max_lots: int, gc_on: bool
) -> dict[str, Any]:
    data = to_array(events)
    warm = _backtest(data[: min(len(data), 5000)], latency_ns)
    quote(warm, step_ns, qty_lots * LOT, max_lots * LOT)  # compiles; discarded
    warm.close()
    hbt = _backtest(data, latency_ns)
    if not gc_on:
        gc.disable()
    t0 = time.process_time()
    quote(hbt, step_ns, qty_lots * LOT, max_lots * LOT)
    took = time.process_time() - t0
    gc.enable()
    sv = hbt.state_values(0)
    depth = hbt.depth(0)
    mid = (depth.best_bid + depth.best_ask) / 2
    figures = {
        "events": len(events),
        "fills": int(sv.num_trades),
        "filled_qty": round(float(sv.trading_volume), 4),
        "pnl": round(float(sv.balance + sv.position * mid - sv.fee), 2),
        "fees": round(float(sv.fee), 2),
        "position": round(float(sv.position), 4),
        "events_per_s": round(len(events) / took),
    }
    hbt.close()
    return figures


__all__ = ["run", "to_array"]
