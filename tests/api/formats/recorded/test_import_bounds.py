"""``cefisim data convert`` holds a line, not a file: a line-length cap, a decompressed size limit,
each a one-line error and exit 2, and a gzip bomb converted under an address-space limit."""

from __future__ import annotations

import gzip
import resource
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from cefisim.api.cli.main import main
from cefisim.api.formats.recorded import format as recording_format
from tests.api.formats.recorded.test_import import BINANCE

ADDRESS_SPACE = 512 << 20  # the converting process may map this much, interpreter included
BOMB_BYTES = 768 << 20  # zeros without a newline: one line bigger than the whole address space


def _bomb(path: Path) -> None:
    """A gzip file of ``BOMB_BYTES`` zeros (about 750 KiB on disk), written a MiB at a time."""
    chunk = bytes(1 << 20)
    with gzip.open(path, "wb", compresslevel=1) as f:
        for _ in range(BOMB_BYTES >> 20):
            f.write(chunk)


def _limit_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


@pytest.mark.parametrize("fmt", ["binance", "tardis"])
def test_a_gzip_bomb_is_refused_in_bounded_memory(tmp_path: Path, fmt: str) -> None:
    src = tmp_path / "bomb.gz"
    _bomb(src)
    done = subprocess.run(
        [sys.executable, "-m", "cefisim", "data", "convert", str(src), "--from", fmt, "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        preexec_fn=_limit_address_space,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert done.stderr.count("\n") == 1 and "bomb.gz:1: a line longer than" in done.stderr, done.stderr


def test_a_line_of_forty_thousand_columns_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = tmp_path / "book.csv"
    src.write_text("timestamp,local_timestamp,is_snapshot,side,price,amount\n" + ",".join(["1"] * 40_000) + "\n")
    assert main(["data", "convert", str(src), "--from", "tardis", "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "book.csv:2: a line longer than 64 KiB" in err and err.count("\n") == 1


def test_more_than_the_decompressed_limit_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recording_format, "MAX_DECOMPRESSED_BYTES", 4096)
    src = tmp_path / "messages.gz"
    src.write_bytes(gzip.compress((BINANCE + "\n" * 8192).encode()))
    assert zlib.decompress(src.read_bytes(), wbits=31).count(b"\n") > 8192
    assert main(["data", "convert", str(src), "--from", "binance", "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "messages.gz: more than 4 KiB once decompressed" in err and err.count("\n") == 1, err
