"""Properties of the MARKET protection price over random books (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cefisim.engine.pricing import protection_price
from cefisim.engine.vocabulary import Side
from tests.engine.builders import ALICE, BOB, BTC_USD, CAROL, Sim

BUY = Side.BUY
SELL = Side.SELL

# (client, side, price in ticks, lots, tif): prices around 100.00 so that some trade, some rest and
# some fall outside the band; IOC orders move the last trade without leaving liquidity behind
_orders = st.lists(
    st.tuples(
        st.sampled_from((ALICE, CAROL)),
        st.sampled_from((BUY, SELL)),
        st.integers(8_500, 11_500),
        st.integers(1, 30_000),
        st.sampled_from(("GTC", "GTC", "IOC")),
    ),
    max_size=25,
)


def _book(orders: list[tuple[int, str, int, int, str]]) -> Sim:
    sim = Sim()
    for client, side, ticks, lots, tif in orders:
        sim.limit(client, side, f"{lots / 10_000:.4f}", f"{ticks / 100:.2f}", tif=tif)
    return sim


@settings(max_examples=150, deadline=None)
@given(orders=_orders, side=st.sampled_from((BUY, SELL)), lots=st.integers(1, 100_000))
def test_a_flagged_market_order_never_trades_less_than_a_plain_one(
    orders: list[tuple[int, str, int, int, str]], side: str, lots: int
) -> None:
    plain, flagged = _book(orders), _book(orders)
    inst = plain.v.instruments[BTC_USD]
    p_price = protection_price(plain.v, side, inst, False)
    f_price = protection_price(flagged.v, side, inst, True)
    if p_price is None:
        assert f_price is None
    else:
        assert f_price is not None
        assert (f_price >= p_price) if side == BUY else (f_price <= p_price)
    qty = f"{lots / 10_000:.4f}"
    p = plain.market(BOB, side, qty)
    f = flagged.market(BOB, side, qty, flags=("USE_AGGRESSIVE_PRICING",))
    assert f.reject == p.reject
    assert f.order is not None and p.order is not None
    assert f.order.executed >= p.order.executed
    plain.check()
    flagged.check()
