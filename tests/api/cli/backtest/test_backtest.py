"""The strategy harness: ``cefisim backtest`` (``api/cli/backtest/``) over ``engine/simulation/backtest.py``."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cefisim.api.cli.backtest import StrategyFailed, backtest_main, run_backtest
from cefisim.api.client import ProblemError
from cefisim.api.edge.serialize import trade_record
from cefisim.api.formats.scenario import load_scenario, parse_scenario

ROOT = Path(__file__).resolve().parents[4]
SCENARIOS = ROOT / "scenarios"
EXAMPLE = "simple_mm"  # the shipped example strategy, by name
HERE = "tests.api.cli.backtest.test_backtest"

REPORT_KEYS = {
    "scenario",
    "strategy",
    "params",
    "client",
    "start",
    "end",
    "seconds",
    "latency_ms",
    "quote_asset",
    "pnl",
    "fills",
    "volume",
    "fees",
    "fees_unrounded",
    "maker_share",
    "slippage",
    "orders",
    "inventory",
    "run",
}


def run_cli(tmp_path: Path, *args: str, name: str = "report.json") -> dict[str, Any]:
    out = tmp_path / name
    assert backtest_main([*args, "--report", str(out), "--quiet"]) == 0
    return json.loads(out.read_text())


def strip_wall(report: dict[str, Any]) -> dict[str, Any]:
    run = dict(report["run"])
    for key in ("wall_s", "events_per_s", "commands_per_s"):
        del run[key]
    return {**report, "run": run}


# --- a tiny scenario, checked by hand ---------------------------------------------------------

TINY: dict[str, Any] = {
    "seed": 1,
    "start": "2026-11-02T09:00:00Z",
    "end": "+10",
    "assets": [{"id": "1", "name": "X", "decimals": 0}, {"id": "2", "name": "USD", "decimals": 2}],
    "instruments": [
        {
            "id": "1",
            "symbol": "X-USD",
            "base": "X",
            "quote": "USD",
            "price_increment": "1",
            "qty_increment": "1",
            "min_qty": "1",
            "price_band": "0.5",
            "maker_fee": "0.001",
            "taker_fee": "0.002",
            "status": "ACTIVE",
        }
    ],
    "clients": [
        {"id": "900", "mnemonic": "mm", "balances": {"X": "100", "USD": "100000"}},
        {"id": "100", "mnemonic": "strat", "balances": {"X": "10", "USD": "10000"}},
    ],
    "events": [
        {
            "at": "+1",
            "type": "order",
            "client": "mm",
            "instrument": "X-USD",
            "side": "SELL",
            "order_type": "LIMIT",
            "qty": "5",
            "price": "101",
        },
        {
            "at": "+1",
            "type": "order",
            "client": "mm",
            "instrument": "X-USD",
            "side": "BUY",
            "order_type": "LIMIT",
            "qty": "5",
            "price": "99",
        },
        {
            "at": "+5",
            "type": "order",
            "client": "mm",
            "instrument": "X-USD",
            "side": "BUY",
            "order_type": "LIMIT",
            "qty": "3",
            "price": "100",
        },
    ],
    "agents": [
        {
            "type": "noise_taker",
            "client": "mm",
            "instrument": "X-USD",
            "mean_interval": "1000",
            "qty_min": "1",
            "qty_max": "1",
            "start": "+100",
        }
    ],  # never acts before the end
}


class TinyTaker:
    """On the first two-sided book: buy 2 at market, then offer 1 at 100 (which the mm's bid takes)."""

    def __init__(self) -> None:
        self.done = False
        self.records: list[dict[str, Any]] = []

    def on_book(self, ctx: Any, instrument_id: str, book: dict[str, Any]) -> None:
        if self.done or book["mid"] is None:
            return
        self.done = True
        self.records.append(ctx.place_order(instrument_id, "BUY", "MARKET", "2"))
        self.records.append(ctx.place_order(instrument_id, "SELL", "LIMIT", 1, price="100", external_id="ask-1"))


def tiny_file(tmp_path: Path, doc: dict[str, Any] | None = None) -> str:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(doc or TINY))
    return str(path)


def test_pnl_accounting_on_a_hand_checked_scenario(tmp_path: Path) -> None:
    # buy 2 @ 101 as taker: 202.00 + fee ceil(0.404) = 0.41; sell 1 @ 100 as maker: 100.00 - 0.10.
    # position +1 X, cash -202.41 + 99.90 = -102.51; end mid (100 + 101) / 2 = 100.5 -> pnl -2.01 USD
    r = run_cli(tmp_path, tiny_file(tmp_path), "--strategy", f"{HERE}:TinyTaker")
    assert r["client"] == {"id": "100", "mnemonic": "strat"}  # the first client no agent uses
    assert r["quote_asset"] == "USD"
    assert r["pnl"]["total"] == "-2.01"
    assert r["pnl"]["by_instrument"]["X-USD"] == {
        "quote_asset": "USD",
        "pnl": "-2.01",
        "position": "1",
        "cash": "-102.51",
        "mark": "100.5",
    }
    assert r["pnl"]["by_asset"]["X"] == {"start": "10", "end": "11", "change": "1", "value": "100.50"}
    assert r["pnl"]["by_asset"]["USD"]["change"] == "-102.51"
    assert r["fills"] == {"count": 2, "maker": 1, "taker": 1}
    assert r["volume"]["X-USD"] == {"fills": 2, "base": "3", "quote": "302.00", "maker_share": "0.3333"}
    assert r["volume"]["total"] == "302.00"
    assert r["fees"] == {"total": "0.51", "USD": "0.51"}
    # before the ledger rounds the taker order's fee up to the cent: 0.404 + 0.100
    assert r["fees_unrounded"] == {"total": "0.50400000", "USD": "0.50400000"}
    assert r["maker_share"] == "0.3333"  # by quantity: 1 of 3
    # buy 2 @ 101 vs mid 100: +1 each; sell 1 @ 100 vs mid 99.5: -0.5 -> (2 - 0.5) / 3 = 0.5
    assert r["slippage"]["X-USD"] == {"fills": 2, "avg": "0.5", "bps": "50.08"}  # 1.5 / (200 + 99.5) * 1e4
    assert r["slippage"]["bps"] == "50.08"
    assert r["orders"] == {
        "placed": 2,
        "rejected": 0,
        "cancels": 0,
        "cancels_refused": 0,
        "modifies": 0,
        "modifies_refused": 0,
    }
    series = r["inventory"]["series"]
    assert series[0] == {"t": "2026-11-02T09:00:00Z", "X": "10", "USD": "10000.00", "pnl": "0.00"}
    assert series[-1] == {"t": "2026-11-02T09:00:10Z", "X": "11", "USD": "9897.49", "pnl": "-2.01"}
    assert r["inventory"]["every_s"] == "0.100" and len(series) == 101
    at_3s = next(p for p in series if p["t"] == "2026-11-02T09:00:03Z")
    assert at_3s == {"t": "2026-11-02T09:00:03Z", "X": "12", "USD": "9797.59", "pnl": "-3.41"}  # mid 99.5


def test_report_has_every_field_for_the_example_on_a_shipped_scenario(tmp_path: Path) -> None:
    r = run_cli(
        tmp_path,
        str(SCENARIOS / "flash_crash.json"),
        "--strategy",
        EXAMPLE,
        "--until",
        "+40",
        "--param",
        "qty=0.05",
        "--param",
        "half_spread=100",
        "--client",
        "noise",
    )
    assert set(r) >= REPORT_KEYS
    assert r["end"] == "2026-11-02T09:00:40Z" and r["strategy"] == EXAMPLE
    assert r["params"] == {"qty": "0.05", "half_spread": "100"}
    assert r["fills"]["count"] > 0 and r["fills"]["maker"] > 0
    assert r["orders"]["placed"] > 0 and r["orders"]["cancels"] > 0
    assert set(r["pnl"]) == {"total", "by_instrument", "by_asset", "unvalued_assets"}
    assert r["pnl"]["total"] is not None and r["maker_share"] is not None
    assert r["slippage"]["bps"] is not None and r["slippage"]["BTC-USD"]["avg"] is not None
    assert r["fees"]["total"] == r["fees"]["USD"]
    assert len(r["inventory"]["series"]) == 101
    assert set(r["run"]) == {"commands", "events", "wall_s", "events_per_s", "commands_per_s"}
    assert r["run"]["events"] > 0 and r["run"]["events_per_s"] > 0
    # the PnL of the only instrument is the PnL of the balances (no transfers in this scenario)
    assert r["pnl"]["by_instrument"]["BTC-USD"]["pnl"] == r["pnl"]["total"]


def test_example_on_demo_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    code = backtest_main(
        [
            str(SCENARIOS / "demo.json"),
            "--strategy",
            EXAMPLE,
            "--until",
            "+120",
            "--param",
            "instrument=BTC-USD",
            "--latency-ms",
            "20",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    for head in ("scenario", "strategy", "pnl", "fills", "volume", "fees", "slippage", "orders", "inventory", "run"):
        assert any(line.startswith(head) for line in out.splitlines()), head
    assert "as alice (100)" in out and "latency 20.000 ms" in out


def test_two_runs_give_the_same_report_but_for_wall_time(tmp_path: Path) -> None:
    args = (
        str(SCENARIOS / "demo.json"),
        "--strategy",
        EXAMPLE,
        "--until",
        "+200",
        "--param",
        "instrument=ETH-USD",
        "--latency-ms",
        "5",
    )
    first = run_cli(tmp_path, *args, name="a.json")
    second = run_cli(tmp_path, *args, name="b.json")
    assert first["fills"]["count"] > 0
    assert strip_wall(first) == strip_wall(second)


# --- callbacks ------------------------------------------------------------------------------------


class Recorder:
    """Rests a bid and an offer one tick inside the touch on the first book, re-offers after each fill,
    and takes on a timer: records every callback it gets."""

    instruments: ClassVar[list[str]] = ["BTC-USD"]  # the strategy attribute docs/backtest.md names

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.fills: list[dict[str, Any]] = []
        self.books = 0
        self.timer_due: dict[str, int] = {}

    def on_start(self, ctx: Any) -> None:
        self.calls.append(("start", ctx.now))
        self.set(ctx, "take", 30)
        self.set(ctx, "never", 10_000)
        assert ctx.cancel_timer("never")

    def set(self, ctx: Any, name: str, seconds: int) -> None:
        ctx.set_timer(name, seconds)
        self.timer_due[name] = ctx.now + seconds * 10**9

    def on_book(self, ctx: Any, instrument_id: str, book: dict[str, Any]) -> None:
        assert instrument_id == "1" and book["symbol"] == "BTC-USD"
        self.books += 1
        if self.books == 1:
            bid, ask = book["bids"][0][0], book["asks"][0][0]
            ctx.place_order("1", "BUY", "LIMIT", "0.01", price=_tick(bid, +1))
            ctx.place_order("1", "SELL", "LIMIT", "0.01", price=_tick(ask, -1))

    def on_fill(self, ctx: Any, fill: dict[str, Any]) -> None:
        self.fills.append(fill)

    def on_timer(self, ctx: Any, name: str) -> None:
        assert name != "never"
        assert ctx.now == self.timer_due[name]
        self.calls.append(("timer", name, ctx.now))
        ctx.place_order("1", "BUY", "MARKET", "0.02")
        self.set(ctx, "take", 30)

    def on_end(self, ctx: Any) -> None:
        self.calls.append(("end", ctx.now))
        for order in ctx.open_orders():
            ctx.cancel_order(order["id"])


def _tick(price: str, n: int) -> str:
    whole, frac = price.split(".")
    cents = int(whole + frac) + n
    return f"{cents // 100}.{cents % 100:02d}"


def test_callbacks_fire_and_on_fill_gets_the_fills_the_engine_made() -> None:
    scenario = load_scenario(SCENARIOS / "demo.json")
    rec = Recorder()
    bt = run_backtest(scenario, rec, until_ns=scenario.start_ns + 200 * 10**9)
    account = bt.harness.account
    assert account.client.mnemonic == "alice"
    assert rec.calls[0] == ("start", scenario.start_ns)
    assert rec.calls[-1] == ("end", scenario.start_ns + 200 * 10**9)
    assert [c[1] for c in rec.calls if c[0] == "timer"] == ["take"] * 6  # 30, 60, ... 180 s
    assert rec.books > 10
    engine_fills = [
        {**trade_record(f), "side": f.order.side, "external_id": f.order.external_id} for f in account.fills
    ]
    assert len(engine_fills) >= 7  # 6 market buys and the resting quotes hit by the noise
    assert rec.fills == engine_fills
    assert {f["liq_flag"] for f in rec.fills} == {"MAKER", "TAKER"}
    assert bt.report["fills"]["count"] == len(engine_fills)
    assert bt.report["orders"]["placed"] == 8
    assert not [o for o in account.orders.values() if o.status in ("ACTIVE", "NEW_PENDING")]


class LatencyProbe:
    """Places one order on the first book and watches it become live after the latency."""

    def __init__(self) -> None:
        self.placed: dict[str, Any] | None = None
        self.seen_live_at: int | None = None

    def on_book(self, ctx: Any, instrument_id: str, book: dict[str, Any]) -> None:
        if self.placed is None and book["bids"]:
            self.placed = ctx.place_order(instrument_id, "BUY", "LIMIT", "1", price="98", external_id="probe")
            self.placed_at = ctx.now
            with pytest.raises(ProblemError) as err:  # pending: refused until acknowledged, as over HTTP
                ctx.cancel_order("probe")
            assert err.value.status == 409 and err.value.slug == "order-pending"
        elif self.placed is not None and self.seen_live_at is None and ["98", "1"] in book["bids"]:
            self.seen_live_at = ctx.now


def test_latency_delays_only_the_strategys_commands(tmp_path: Path) -> None:
    scenario = parse_scenario(TINY, "tiny")
    probe = LatencyProbe()
    bt = run_backtest(scenario, probe, latency_ns=250_000_000)
    assert probe.placed is not None and probe.placed["status"] == "NEW_PENDING"
    assert probe.seen_live_at == probe.placed_at + 250_000_000  # heard when the venue acknowledged it
    venue = bt.harness.venue
    assert (venue.latency_entry_ns, venue.latency_modify_ns, venue.latency_cancel_ns) == (0, 0, 0)
    mm_orders = venue.accounts[900].orders.values()
    assert all(o.extra is None or o.extra.acked is None for o in mm_orders)  # the scenario's own: no delay
    assert bt.report["latency_ms"] == "250.000"


class Timers:
    """A timer due at the same instant as a scenario event sees the event's effect (scenario first)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def on_start(self, ctx: Any) -> None:
        ctx.set_timer("at-1s", "1")
        ctx.set_timer("at-0s", 0)
        ctx.set_timer("moved", 2)
        ctx.set_timer("moved", "1.5")

    def on_timer(self, ctx: Any, name: str) -> None:
        self.seen.append((name, ctx.book("1")["mid"], ctx.time))


def test_timers_run_after_the_scenario_at_the_same_instant() -> None:
    scenario = parse_scenario(TINY, "tiny")
    t = Timers()
    run_backtest(scenario, t)
    assert t.seen == [
        ("at-0s", None, "2026-11-02T09:00:00Z"),
        ("at-1s", "100", "2026-11-02T09:00:01Z"),
        ("moved", "100", "2026-11-02T09:00:01.5Z"),
    ]


class Looper:
    """Moves its bid between 97 and 98 on every book change, its own included."""

    def __init__(self) -> None:
        self.order: dict[str, Any] | None = None

    def on_book(self, ctx: Any, instrument_id: str, book: dict[str, Any]) -> None:
        price = "97" if self.order is not None and self.order["order_info"]["price"] == "98" else "98"
        if self.order is not None:
            ctx.cancel_order(self.order["id"])
        self.order = ctx.place_order(instrument_id, "BUY", "LIMIT", "1", price=price)


class Raiser:
    def on_start(self, ctx: Any) -> None:
        ctx.place_order("1", "BUY", "LIMIT", "1")  # no price: a 400 problem, uncaught


def test_a_strategy_that_reacts_to_itself_forever_is_stopped(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(StrategyFailed, match="reacted to its own commands"):
        run_backtest(parse_scenario(TINY, "tiny"), Looper())


def test_a_strategy_that_raises_exits_1_with_its_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert backtest_main([tiny_file(tmp_path), "--strategy", f"{HERE}:Raiser"]) == 1
    err = capsys.readouterr().err
    assert "the strategy failed in on_start at 2026-11-02T09:00:00Z" in err
    assert "info.price: is required for LIMIT orders" in err


# --- clean errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("simple_mn", "give module:Class, path/to/file.py:Class or a shipped strategy (simple_mm)"),
        ("no_such_module_xyz:Strategy", "cannot import no_such_module_xyz"),
        ("cefisim/strategies/simple_mm.py:Nope", "has no Nope"),
        ("cefisim/strategies/missing.py:Strategy", "no such file"),
        ("cefisim.strategies.simple_mm:SimpleMarketMaker", None),  # the shipped one, by module
        ("json:dumps", "is not a class"),
        ("json:JSONDecoder", "defines none of on_start"),
        ("tests.api.cli.backtest.test_backtest:TinyTaker", None),  # fine, for contrast
    ],
)
def test_a_bad_strategy_is_a_clean_error(
    spec: str, message: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = backtest_main([tiny_file(tmp_path), "--strategy", spec, "--quiet", "--until", "+2"])
    err = capsys.readouterr().err
    if message is None:
        assert code == 0, err
        return
    assert code == 2
    assert message in err and "Traceback" not in err


class WrongFill:
    def on_fill(self, ctx: Any) -> None:  # called as on_fill(ctx, fill)
        pass


class WrongBook:
    def on_start(self, ctx: Any) -> None:
        pass

    def on_book(self, ctx: Any, book: Any) -> None:  # called as on_book(ctx, instrument_id, book)
        pass


class Flexible:
    """Signatures that do take what the harness passes: defaults, *args, a static and a class method."""

    def on_start(self, ctx: Any, extra: int = 0) -> None:
        pass

    def on_book(self, *args: Any) -> None:
        pass

    @staticmethod
    def on_fill(ctx: Any, fill: Any) -> None:
        pass

    @classmethod
    def on_timer(cls, ctx: Any, name: str) -> None:
        pass


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("WrongFill", "WrongFill.on_fill(self, ctx) cannot be called as on_fill(ctx, fill)"),
        ("WrongBook", "WrongBook.on_book(self, ctx, book) cannot be called as on_book(ctx, instrument_id, book)"),
        ("Flexible", None),
    ],
)
def test_a_callback_with_the_wrong_arguments_is_refused_at_load(
    name: str, message: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found before the run, in one line, rather than as a TypeError in the middle of it."""
    report = tmp_path / "r.json"
    argv = [tiny_file(tmp_path), "--strategy", f"{HERE}:{name}", "--quiet", "--until", "+2", "--report", str(report)]
    code = backtest_main(argv)
    err = capsys.readouterr().err
    if message is None:
        assert code == 0, err
        return
    assert code == 2 and err.strip().splitlines() == [
        f"cefisim backtest: --strategy: {HERE}:{message} (docs/backtest.md, the strategy API)"
    ]
    assert not report.exists()


def test_a_parameter_that_is_not_a_number_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for key, value, reason in (("qty", "abc", "is not a decimal number"), ("requote", "0", "must be above 0")):
        assert backtest_main([tiny_file(tmp_path), "--strategy", EXAMPLE, "--param", f"{key}={value}"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [
            f"cefisim backtest: --strategy: {EXAMPLE}({key}={value!r}) raised ValueError: {key}={value!r} {reason}"
        ]


def test_a_constructor_that_raises_invalid_operation_says_which_kind_of_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """decimal's own message is a list of classes; the line says a value is not a decimal number."""
    assert backtest_main([tiny_file(tmp_path), "--strategy", f"{HERE}:DecimalTaker", "--param", "qty=x"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"cefisim backtest: --strategy: {HERE}:DecimalTaker(qty='x') raised InvalidOperation:"
        " a value is not a decimal number"
    )


class DecimalTaker:
    def __init__(self, qty: str) -> None:
        self.qty = Decimal(qty)

    def on_start(self, ctx: Any) -> None:
        pass


def test_a_strategy_whose_constructor_refuses_the_params_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = backtest_main([tiny_file(tmp_path), "--strategy", EXAMPLE, "--param", "colour=red"])
    err = capsys.readouterr().err
    assert code == 2 and "unexpected keyword argument 'colour'" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--until", "2020-01-01T00:00:00Z"], "before the scenario's start"),
        (["--until", "soon"], "--until"),
        (["--client", "nobody"], "no client 'nobody'"),
        (["--quote", "EUR"], "no asset 'EUR'"),
        (["--latency-ms", "-1"], "--latency-ms"),
        (["--param", "oops"], "KEY=VALUE"),
    ],
)
def test_bad_options_are_clean_errors(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = backtest_main([tiny_file(tmp_path), "--strategy", f"{HERE}:TinyTaker", *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_a_bad_scenario_is_a_clean_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"seed": 1, "start": "yesterday"}')
    assert backtest_main([str(bad), "--strategy", EXAMPLE]) == 2
    err = capsys.readouterr().err
    assert "bad.json: $.start" in err and "Traceback" not in err


class Flattener:
    """Buys on start and sells it all back at market in on_end: the report counts what on_end did."""

    def on_book(self, ctx: Any, instrument_id: str, book: dict[str, Any]) -> None:
        if book["mid"] is not None and not getattr(self, "bought", False):
            self.bought = True
            ctx.place_order(instrument_id, "BUY", "MARKET", "2")

    def on_end(self, ctx: Any) -> None:
        ctx.place_order("1", "SELL", "MARKET", "2")


def test_what_on_end_sends_is_in_the_report() -> None:
    bt = run_backtest(parse_scenario(TINY, "tiny"), Flattener())
    r = bt.report
    # buy 2 @ 101 (202.00 + 0.41), sell 2 @ 100 to the mm's bid at +5 (200.00 - 0.40): flat, -2.81 USD
    assert r["fills"]["count"] == 2 and r["orders"]["placed"] == 2
    assert r["pnl"]["total"] == "-2.81"
    assert r["pnl"]["by_asset"]["X"]["change"] == "0"
    last = r["inventory"]["series"][-1]
    assert last == {"t": "2026-11-02T09:00:10Z", "X": "10", "USD": "9997.19", "pnl": "-2.81"}
