"""The files beside a server's journal are checked like the journal: a damaged manifest line, venue
record or file copy sets aside the venue it concerns (listed with the reason, naming the file and
line), and the default venue and every other venue serve. Nothing damaged is deleted or rewritten.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pytest

from cefisim.api.runtime.venue_manifest import MANIFEST
from cefisim.api.runtime.venues import Venues
from tests.api.conftest import scenario_doc
from tests.api.runtime.test_venues_journal import create, make
from tests.api.served import wait_for_ready_file
from tests.api.web.control.test_venues_files import maker_doc


def _three(tmp_path: Path, data_dir: Path | None = None) -> Path:
    """A server's venue folder with v1, v2, v3 (v2 reads a prices file when ``data_dir`` is given)."""
    venues = Venues(make, journal=tmp_path / "j.jsonl", data_dir=data_dir)
    venues.recover()
    try:
        create(venues, {"scenario": scenario_doc()})
        create(venues, {"scenario": maker_doc("prices.txt") if data_dir else scenario_doc()})
        create(venues, {"scenario": scenario_doc()})
    finally:
        venues.close()
    return tmp_path / "j.jsonl.venues"


def _restart(tmp_path: Path, data_dir: Path | None = None) -> Venues:
    venues = Venues(make, journal=tmp_path / "j.jsonl", data_dir=data_dir)
    venues.recover()
    return venues


def _edit_line(folder: Path, number: int, edit: Any) -> bytes:
    manifest = folder / MANIFEST
    lines = manifest.read_bytes().splitlines(keepends=True)
    lines[number - 1] = edit(lines[number - 1])
    manifest.write_bytes(b"".join(lines))
    return lines[number - 1]


@pytest.mark.parametrize(
    "damage",
    [
        lambda line: line.replace(b'"record":2', b'"record":2,'),  # not JSON
        lambda line: line.replace(b'"op":"create",', b""),  # no op (a KeyError once)
        lambda line: line.replace(b'"create"', b'"crEate"'),  # a flipped letter: its checksum fails
        lambda line: line[:-4] + (b"1" if line[-4:-3] == b"0" else b"0") + line[-3:],  # its checksum
    ],
    ids=["not-json", "no-op", "flipped", "checksum"],
)
def test_a_damaged_manifest_line_sets_its_venue_aside_and_the_others_serve(
    tmp_path: Path, damage: Any, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _three(tmp_path)
    manifest_before = _edit_line(folder, 2, damage)
    whole = (folder / MANIFEST).read_bytes()
    caplog.set_level(logging.ERROR)
    venues = _restart(tmp_path)
    try:
        assert sorted(venues.live) == ["v1", "v3"] and list(venues.set_aside) == ["v2"]
        reason = venues.set_aside["v2"].reason
        assert reason.startswith(f"{folder / MANIFEST} line 2: "), reason
        assert "demo.json" not in caplog.text and "Traceback" not in caplog.text
        assert (folder / "v2.jsonl").exists() and (folder / "v2.venue.json").exists()  # nothing deleted
        assert manifest_before in (folder / MANIFEST).read_bytes().splitlines(keepends=True)  # kept as it was
        assert create(venues, {"scenario": scenario_doc()}) == "v4"
    finally:
        venues.close()
    again = _restart(tmp_path)  # the same again: the damaged line is still there for whoever mends it
    try:
        assert sorted(again.live) == ["v1", "v3", "v4"] and list(again.set_aside) == ["v2"]
        again.delete("v2")  # ends it: its line, record and journal go
        assert not (folder / "v2.venue.json").exists() and b'"v2"' not in (folder / MANIFEST).read_bytes()
    finally:
        again.close()
    assert whole != (folder / MANIFEST).read_bytes()


def test_a_manifest_line_that_names_no_venue_keeps_every_unlisted_record(tmp_path: Path) -> None:
    """A line damaged beyond naming a venue: a record the manifest does not list may be that line's
    venue, so it is set aside, never taken for a create that was not answered and deleted."""
    folder = _three(tmp_path)
    _edit_line(folder, 3, lambda line: b"\x00" * (len(line) - 1) + b"\n")
    venues = _restart(tmp_path)
    try:
        assert sorted(venues.live) == ["v1", "v2"] and list(venues.set_aside) == ["v3"]
        assert f"{folder / MANIFEST} line 3" in venues.set_aside["v3"].reason
        assert (folder / "v3.venue.json").exists()
    finally:
        venues.close()


def test_a_damaged_venue_record_sets_its_venue_aside(tmp_path: Path) -> None:
    folder = _three(tmp_path)
    record = folder / "v1.venue.json"
    record.write_bytes(record.read_bytes().replace(b'"seed":7', b'"seed":8'))
    venues = _restart(tmp_path)
    try:
        assert sorted(venues.live) == ["v2", "v3"] and list(venues.set_aside) == ["v1"]
        assert "v1.venue.json's checksum does not match" in venues.set_aside["v1"].reason
    finally:
        venues.close()


def test_a_file_copy_whose_bytes_no_longer_match_its_digest_sets_its_venue_aside(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "prices.txt").write_text("30000.00\n30010.00\n30020.00\n")
    folder = _three(tmp_path, data_dir)
    (copy,) = (folder / "files").iterdir()
    copy.write_text("1.00\n1.00\n1.00\n")
    venues = _restart(tmp_path, data_dir)
    try:
        assert sorted(venues.live) == ["v1", "v3"] and list(venues.set_aside) == ["v2"]
        assert f"its copy {copy.name} no longer matches its digest" in venues.set_aside["v2"].reason
        assert copy.exists()  # kept: the set-aside venue's copies are not pruned
    finally:
        venues.close()


def test_a_server_with_a_damaged_manifest_serves_its_default_venue(tmp_path: Path) -> None:
    """The way a user meets it: `cefisim serve` on the journal starts, names the manifest's line, and
    lists the set-aside venue with its reason."""
    scenario = tmp_path / "s.json"
    scenario.write_bytes(orjson.dumps(scenario_doc()))
    folder = _three(tmp_path)
    (tmp_path / "j.jsonl").unlink(missing_ok=True)  # the default venue's journal starts anew
    _edit_line(folder, 1, lambda line: line[:10] + b"\xff" + line[11:])
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cefisim",
            "serve",
            "--scenario",
            str(scenario),
            "--journal",
            str(tmp_path / "j.jsonl"),
            "--port",
            "0",
            "--ready-file",
            str(ready),
            "--clock",
            "virtual",
            "--quiet",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = wait_for_ready_file(ready, proc, 120)["url"]
        with urllib.request.urlopen(url + "/_sim/venues") as resp:
            listed = orjson.loads(resp.read())
        assert [(v["id"], v["state"]) for v in listed] == [
            ("default", "live"),
            ("v2", "live"),
            ("v3", "live"),
            ("v1", "set-aside"),
        ]
        assert listed[3]["reason"].startswith(f"{folder / MANIFEST} line 1: ")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert f"{folder / MANIFEST} line 1" in err and str(scenario) not in err and "Traceback" not in err
