"""The cefisim market-data format: the streaming loader's rules and the writer."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cefisim.api.formats.recorded.format import FORMAT, RecordingError, Writer, open_output, read_events
from cefisim.engine.recorded.feed import SNAPSHOT, TRADE, UPDATE
from cefisim.engine.units import Grid
from cefisim.engine.vocabulary import Side

BUY = Side.BUY
SELL = Side.SELL

HEADER = {"type": "header", "format": FORMAT, "version": 1, "price_increment": "0.01", "qty_increment": "0.001"}


def write_lines(path: Path, lines: list[dict], header: dict | None = HEADER) -> Path:
    body = b"".join(orjson.dumps(obj) + b"\n" for obj in ([header] if header else []) + lines)
    path.write_bytes(body)
    return path


def upd(ts: int, side: str, price: str, qty: str) -> dict:
    return {"type": "update", "ts": ts, "local_ts": ts + 5, "side": side, "price": price, "qty": qty}


def test_reads_snapshot_updates_and_trades_as_integers(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "a.jsonl",
        [
            {
                "type": "snapshot",
                "ts": 10,
                "local_ts": 12,
                "bids": [["99.00", "1"], ["100.00", "2"]],
                "asks": [["101.00", "0.5"]],
            },
            upd(11, "bid", "100.00", "0"),
            {"type": "trade", "ts": 11, "local_ts": 13, "side": "sell", "price": "100.00", "qty": "2", "id": "7"},
        ],
    )
    assert list(read_events(path)) == [
        (SNAPSHOT, 10, 12, ((10000, 2000), (9900, 1000)), ((10100, 500),)),
        (UPDATE, 11, 16, BUY, 10000, 0),
        (TRADE, 11, 13, SELL, 10000, 2000),
    ]


def test_gzip_is_read_transparently_and_the_writer_round_trips(tmp_path: Path) -> None:
    events = [
        (SNAPSHOT, 1, 1, ((10000, 3),), ((10100, 4),)),
        (UPDATE, 2, 3, SELL, 10050, 7),
        (TRADE, 2, 3, BUY, 10050, 7),
        (UPDATE, 2, 3, SELL, 10050, 0),
    ]
    out = tmp_path / "r.jsonl.gz"
    with open_output(out) as stream:
        writer = Writer(stream, Grid("0.01"), Grid("0.001"), symbol="X-Y")
        for ev in events:
            writer.write(ev, "test")
        writer.close()
    assert gzip.decompress(out.read_bytes()).startswith(b'{"type":"header"')
    header: dict = {}
    assert list(read_events(out, header=header)) == events
    assert header["symbol"] == "X-Y"


@pytest.mark.parametrize(
    ("lines", "line", "reason"),
    [
        ([upd(5, "bid", "1.00", "1"), upd(4, "bid", "1.00", "2")], 3, "out-of-order timestamp"),
        ([upd(5, "bid", "1.00", "-1")], 2, "negative size"),
        ([upd(5, "buy", "1.00", "1")], 2, "unknown side 'buy'"),
        ([{"type": "trade", "ts": 1, "local_ts": 1, "side": "bid", "price": "1.00", "qty": "1"}], 2, "unknown side"),
        ([upd(5, "bid", "2.00", "1"), upd(6, "ask", "2.00", "1"), upd(7, "bid", "1.00", "1")], 3, "crossed book"),
        ([upd(5, "bid", "1.005", "1")], 2, "not a decimal string on the price grid 0.01"),
        ([upd(5, "bid", "1.00", 1)], 2, "size must be a decimal string"),
        ([{"type": "quote", "ts": 1, "local_ts": 1}], 2, "unknown type 'quote'"),
        ([{**upd(5, "bid", "1.00", "1"), "extra": 1}], 2, "unknown key 'extra'"),
        (
            [{"type": "update", "ts": "5", "local_ts": 5, "side": "bid", "price": "1.00", "qty": "1"}],
            2,
            "ts must be an integer",
        ),
        (
            [{"type": "trade", "ts": 1, "local_ts": 1, "side": "buy", "price": "1.00", "qty": "0"}],
            2,
            "size must be positive",
        ),
    ],
)
def test_bad_data_names_file_line_and_reason(tmp_path: Path, lines: list, line: int, reason: str) -> None:
    path = write_lines(tmp_path / "bad.jsonl", lines)
    with pytest.raises(RecordingError) as err:
        list(read_events(path))
    assert str(err.value).startswith(f"{path}:{line}: ")
    assert reason in str(err.value)


def test_a_crossing_within_one_timestamp_is_not_an_error(tmp_path: Path) -> None:
    # one message moves the book up: the new bid arrives before the old ask leaves
    path = write_lines(
        tmp_path / "a.jsonl",
        [
            upd(1, "bid", "1.00", "1"),
            upd(1, "ask", "2.00", "1"),
            upd(2, "bid", "2.00", "1"),
            upd(2, "ask", "2.00", "0"),
            upd(2, "ask", "3.00", "1"),
        ],
    )
    assert len(list(read_events(path))) == 5


def test_a_crossed_book_at_the_end_of_the_file_is_an_error(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "a.jsonl", [upd(1, "ask", "2.00", "1"), upd(1, "bid", "2.00", "1")])
    with pytest.raises(RecordingError, match=r"a\.jsonl:3: crossed book"):
        list(read_events(path))


def test_not_json_missing_header_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    write_lines(bad, [])
    bad.write_bytes(bad.read_bytes() + b"{oops\n")
    with pytest.raises(RecordingError, match=r"bad\.jsonl:2: not JSON"):
        list(read_events(bad))
    headless = write_lines(tmp_path / "h.jsonl", [upd(1, "bid", "1.00", "1")], header=None)
    with pytest.raises(RecordingError, match=r"h\.jsonl:1: not a cefisim market-data file"):
        list(read_events(headless))
    with pytest.raises(RecordingError, match=r"nope\.jsonl: No such file"):
        list(read_events(tmp_path / "nope.jsonl"))
    truncated = tmp_path / "t.jsonl.gz"
    truncated.write_bytes(gzip.compress(orjson.dumps(HEADER) + b"\n" + b"{}\n" * 1000)[:-20])
    with pytest.raises(RecordingError, match=r"t\.jsonl\.gz:\d+: "):
        list(read_events(truncated))


def test_the_writer_refuses_what_the_loader_would(tmp_path: Path) -> None:
    with open_output(tmp_path / "w.jsonl") as stream:
        writer = Writer(stream, Grid("1"), Grid("1"))
        writer.write((UPDATE, 5, 5, BUY, 3, 1), "in:1")
        with pytest.raises(RecordingError, match="in:2: out-of-order"):
            writer.write((UPDATE, 4, 4, BUY, 3, 1), "in:2")


_update = st.tuples(st.integers(0, 2), st.sampled_from(["bid", "ask"]), st.integers(1, 12), st.integers(0, 3))


@settings(max_examples=60, deadline=None)
@given(st.lists(_update, max_size=40))
def test_generated_recordings_are_never_crossed_after_the_loader(tmp_path_factory, steps) -> None:  # type: ignore[no-untyped-def]
    """Whatever the file holds, every instant the loader lets through ends with an uncrossed book."""
    ts = 0
    lines = []
    for dt, side, price, qty in steps:
        ts += dt
        lines.append(upd(ts, side, f"{price}.00", str(qty)))
    path = write_lines(tmp_path_factory.mktemp("gen") / "g.jsonl", lines)
    book: dict[str, dict[int, int]] = {BUY: {}, SELL: {}}
    last_ts = None

    def uncrossed() -> bool:
        bids, asks = book[BUY], book[SELL]
        return not bids or not asks or max(bids) < min(asks)

    refused: RecordingError | None = None
    try:
        for ev in read_events(path):
            if last_ts is not None and ev[1] > last_ts:
                assert uncrossed(), f"crossed at the end of instant {last_ts}"
            last_ts = ev[1]
            levels = book[ev[3]]
            if ev[5]:
                levels[ev[4]] = ev[5]
            else:
                levels.pop(ev[4], None)
    except RecordingError as exc:
        refused = exc
    if refused is not None:
        assert "crossed book" in str(refused)  # the one refusal these steps can earn
    else:
        assert uncrossed()
