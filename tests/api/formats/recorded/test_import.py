"""Importers (Tardis CSV, Binance stream messages), ``cefisim data convert`` and ``data record``."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from cefisim.api.cli.main import main
from cefisim.api.formats.recorded.format import read_events
from cefisim.engine.recorded.feed import SNAPSHOT, TRADE, UPDATE
from cefisim.engine.vocabulary import Side

BUY = Side.BUY
SELL = Side.SELL

SCENARIOS = Path(__file__).resolve().parents[4] / "scenarios"

TARDIS_BOOK = """exchange,symbol,timestamp,local_timestamp,is_snapshot,side,price,amount
binance,BTCUSDT,1700000000000000,1700000000000100,true,ask,30001.5,0.25
binance,BTCUSDT,1700000000000000,1700000000000100,true,bid,30000,1.5
binance,BTCUSDT,1700000000000000,1700000000000100,true,bid,29999.5,2
binance,BTCUSDT,1700000000001000,1700000000001100,false,bid,30000,0.5
binance,BTCUSDT,1700000000003000,1700000000003100,false,ask,30001.5,0
binance,BTCUSDT,1700000000003000,1700000000003100,false,ask,30002,1.125
"""
TARDIS_TRADES = """exchange,symbol,timestamp,local_timestamp,id,side,price,amount
binance,BTCUSDT,1700000000001000,1700000000001050,11,sell,30000,1
binance,BTCUSDT,1700000000002000,1700000000002050,12,buy,30001.5,0.25
"""
BINANCE = """{"lastUpdateId": 100, "E": 1700000000000, "bids": [["30000.00", "1.0"]], "asks": [["30001.00", "2.0"]]}
{"e": "depthUpdate", "E": 1700000000001, "s": "BTCUSDT", "U": 95, "u": 100, "b": [["29000.00", "9"]], "a": []}
{"local_ts": 1700000000002500000, "stream": "btcusdt@depth", "data": {"e": "depthUpdate", "E": 1700000000002, "s": "BTCUSDT", "U": 101, "u": 103, "b": [["30000.00", "0.5"]], "a": [["30001.00", "0"], ["30001.50", "3"]]}}
{"e": "trade", "E": 1700000000003, "s": "BTCUSDT", "t": 5, "p": "30000.00", "q": "0.5", "T": 1700000000003, "m": true}
{"e": "aggTrade", "E": 1700000000004, "s": "BTCUSDT", "a": 6, "p": "30001.50", "q": "0.1", "f": 1, "l": 2, "T": 1700000000004, "m": false}
"""  # noqa: E501  one venue message per line, verbatim as the exchange sends it
US, MS = 1000, 1_000_000


def test_tardis_book_and_trades_are_merged_by_exchange_time(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    book, trades = tmp_path / "book.csv", tmp_path / "trades.csv.gz"
    book.write_text(TARDIS_BOOK)
    trades.write_bytes(gzip.compress(TARDIS_TRADES.encode()))
    out = tmp_path / "out.jsonl.gz"
    assert main(["data", "convert", str(book), str(trades), "--from", "tardis", "--out", str(out)]) == 0
    assert "wrote 6 events" in capsys.readouterr().out
    header: dict = {}
    events = list(read_events(out, header=header))
    assert (header["price_increment"], header["qty_increment"]) == ("0.1", "0.001")
    t0 = 1700000000000000 * US
    assert events == [
        (SNAPSHOT, t0, t0 + 100 * US, ((300000, 1500), (299995, 2000)), ((300015, 250),)),
        (UPDATE, t0 + 1000 * US, t0 + 1100 * US, BUY, 300000, 500),
        (TRADE, t0 + 1000 * US, t0 + 1050 * US, SELL, 300000, 1000),
        (TRADE, t0 + 2000 * US, t0 + 2050 * US, BUY, 300015, 250),
        (UPDATE, t0 + 3000 * US, t0 + 3100 * US, SELL, 300015, 0),
        (UPDATE, t0 + 3000 * US, t0 + 3100 * US, SELL, 300020, 1125),
    ]


def test_binance_depth_diffs_snapshot_and_trades(tmp_path: Path) -> None:
    src = tmp_path / "binance.jsonl"
    src.write_text(BINANCE)
    out = tmp_path / "out.jsonl"
    assert (
        main(
            [
                "data",
                "convert",
                str(src),
                "--from",
                "binance",
                "--out",
                str(out),
                "--price-increment",
                "0.01",
                "--qty-increment",
                "0.0001",
            ]
        )
        == 0
    )
    t0 = 1700000000000 * MS
    assert list(read_events(out)) == [
        (SNAPSHOT, t0, t0, ((3000000, 10000),), ((3000100, 20000),)),
        # the diff with u <= lastUpdateId is dropped
        (UPDATE, t0 + 2 * MS, 1700000000002500000, BUY, 3000000, 5000),
        (UPDATE, t0 + 2 * MS, 1700000000002500000, SELL, 3000100, 0),
        (UPDATE, t0 + 2 * MS, 1700000000002500000, SELL, 3000150, 30000),
        (TRADE, t0 + 3 * MS, t0 + 3 * MS, SELL, 3000000, 5000),
        (TRADE, t0 + 4 * MS, t0 + 4 * MS, BUY, 3000150, 1000),
    ]


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        (
            "tardis",
            TARDIS_BOOK.replace("false,bid,30000,0.5", "false,bid,30000,-0.5"),
            "book.csv:5: negative size -0.5",
        ),
        ("tardis", TARDIS_BOOK.replace("false,bid,30000,0.5", "false,buy,30000,0.5"), "book.csv:5: unknown side 'buy'"),
        (
            "tardis",
            TARDIS_BOOK.replace(
                "1700000000003000,1700000000003100,false,ask,30001.5",
                "1700000000000500,1700000000003100,false,ask,30001.5",
            ),
            "book.csv:6: out-of-order timestamp",
        ),
        ("tardis", TARDIS_BOOK.replace("false,bid,30000,0.5", "false,bid,30005,0.5"), "book.csv:5: crossed book"),
        ("tardis", "a,b,c\n1,2,3\n", "book.csv:1: not a Tardis"),
        ("binance", BINANCE.replace('"U": 101', '"U": 105'), "book.csv:3: gap in the depth stream"),
        ("binance", BINANCE.replace('"m": true', '"m": "yes"'), "book.csv:4: unknown side"),
        ("binance", BINANCE + "not json\n", "book.csv:6: not JSON"),
        ("binance", BINANCE.replace('"e": "trade"', '"e": "kline"'), "book.csv:4: unknown message 'kline'"),
    ],
)
def test_bad_input_is_one_line_with_file_line_and_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture, fmt: str, text: str, message: str
) -> None:
    src = tmp_path / "book.csv"
    src.write_text(text)
    assert main(["data", "convert", str(src), "--from", fmt, "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_record_exports_a_scenario_that_loads_and_is_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    for out in (a, b):
        assert main(["data", "record", str(SCENARIOS / "demo.json"), "--until", "+60", "--out", str(out)]) == 0
    assert a.read_bytes() == b.read_bytes()
    kinds = [ev[0] for ev in read_events(a)]
    assert kinds[0] == SNAPSHOT and UPDATE in kinds and TRADE in kinds


def test_record_names_an_unknown_instrument(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert (
        main(
            [
                "data",
                "record",
                str(SCENARIOS / "demo.json"),
                "--instrument",
                "DOGE-USD",
                "--out",
                str(tmp_path / "x.jsonl"),
            ]
        )
        == 2
    )
    assert "no instrument 'DOGE-USD'" in capsys.readouterr().err


def test_the_shipped_recording_is_small_and_loads() -> None:
    path = SCENARIOS / "recordings" / "busy_btcusd.jsonl.gz"
    assert path.stat().st_size < 1_000_000
    header: dict = {}
    count = sum(1 for _ in read_events(path, header=header))
    assert header["symbol"] == "BTC-USD" and count > 10_000


def test_the_shipped_flash_crash_recording_is_what_data_record_writes(tmp_path: Path) -> None:
    """The hftbacktest comparison's second recording (``benchmarks/bench_recorded.py``) is
    ``cefisim data record scenarios/flash_crash.json``, byte for byte."""
    shipped = SCENARIOS / "recordings" / "flash_crash_btcusd.jsonl.gz"
    out = tmp_path / "flash.jsonl.gz"
    assert main(["data", "record", str(SCENARIOS / "flash_crash.json"), "--out", str(out)]) == 0
    assert out.read_bytes() == shipped.read_bytes()


LONG_TARDIS = (
    TARDIS_TRADES.split("\n", 1)[0]
    + "\n"
    + "".join(
        f"binance,BTCUSDT,{1700000000000000 + i},{1700000000000000 + i},{i},buy,30000.5,0.{i % 97 + 1:03d}\n"
        for i in range(3000)
    )
)
LONG_BINANCE = "".join(
    f'{{"e": "trade", "E": {1700000000000 + i}, "p": "30000.00", "q": "0.{i % 97 + 1:03d}", "m": true}}\n'
    for i in range(3000)
)


@pytest.mark.parametrize(("fmt", "text"), [("tardis", LONG_TARDIS), ("binance", LONG_BINANCE)])
def test_a_truncated_gzip_input_is_one_line_too(
    tmp_path: Path, capsys: pytest.CaptureFixture, fmt: str, text: str
) -> None:
    src = tmp_path / "in.gz"
    src.write_bytes(gzip.compress(text.encode())[:1500])
    assert main(["data", "convert", str(src), "--from", fmt, "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "in.gz:" in err and "cannot read" in err and err.count("\n") == 1


def test_record_takes_a_shipped_scenario_by_name_like_serve_and_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no file of that name here: the name is a shipped scenario's
    by_name, by_path = tmp_path / "name.jsonl", tmp_path / "path.jsonl"
    assert main(["data", "record", "demo", "--until", "+5", "--out", str(by_name)]) == 0
    assert main(["data", "record", str(SCENARIOS / "demo.json"), "--until", "+5", "--out", str(by_path)]) == 0
    assert by_name.read_bytes() == by_path.read_bytes()


def test_record_of_a_recorded_market_writes_the_recordings_trades_against_client_orders(tmp_path: Path) -> None:
    """In a recorded market a recorded trade's taker is the recording's, no client's order: its side is
    the one facing the client's resting order it hit (this crashed with "taker order ... is unknown")."""
    out = tmp_path / "busy.jsonl"
    assert main(["data", "record", "recorded_busy", "--until", "+60", "--out", str(out)]) == 0
    trades = [ev for ev in read_events(out) if ev[0] == TRADE]
    assert trades and {ev[3] for ev in trades} <= {Side.BUY, Side.SELL}
