"""Journals the way a user meets them: the ``cefisim`` command in a subprocess, in a folder of its own.

- a journal of a shipped scenario names it by its name, so it restores in another folder (or on
  another machine); an older journal naming an absolute path into an installation that is gone still
  restores, by the shipped scenario whose digest its header names;
- ``journal diff`` of two journals whose records part but whose states do not says exactly that;
- serving a fork cut in the middle of a burst of the scenario's records (an expected thing: a fork at
  any record) says so plainly, as information, not as a warning;
- a journal in a folder that does not exist is named as the user gave it (not ``FILE.new``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.api.runtime.journal_lines import resealed
from tests.api.served import wait_for_ready_file


def cefisim(cwd: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cefisim", *argv], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def _header(path: Path) -> dict:
    return orjson.loads(path.read_bytes().split(b"\n", 1)[0])


def test_a_journal_of_a_shipped_scenario_restores_in_another_folder(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    done = cefisim(here, "replay", "demo", "--until", "+20", "--journal", "j.jsonl", "--quiet")
    assert done.returncode == 0, done.stderr
    assert _header(here / "j.jsonl")["scenario"] == "demo"  # no path of this installation
    (here / "j.jsonl").rename(there / "j.jsonl")
    state = cefisim(there, "journal", "state", "j.jsonl")
    assert state.returncode == 0 and state.stdout.startswith("record "), state.stderr
    # an older journal: the absolute path of an installation that is no more
    header, *lines = (there / "j.jsonl").read_bytes().splitlines()
    gone = "/opt/old-venv/lib/python3.11/site-packages/cefisim/scenarios/demo.json"
    (there / "old.jsonl").write_bytes(resealed({**orjson.loads(header), "scenario": gone}, list(lines)))
    old = cefisim(there, "journal", "state", "old.jsonl")
    assert old.returncode == 0 and old.stdout == state.stdout, old.stderr


def test_diff_says_the_records_part_but_the_states_do_not(tmp_path: Path) -> None:
    """B holds one more record than A, a cancel of an order that does not exist: it changes nothing."""
    done = cefisim(tmp_path, "replay", "demo", "--until", "+10", "--journal", "a.jsonl", "--quiet")
    assert done.returncode == 0, done.stderr
    header, *lines = (tmp_path / "a.jsonl").read_bytes().splitlines()
    records = [orjson.loads(line)[:4] for line in lines]
    at = records[-1][0]
    (tmp_path / "b.jsonl").write_bytes(resealed(header, [*records, [at, "ext", "cancel", [100, "no-such-order"]]]))
    diff = cefisim(tmp_path, "journal", "diff", "a.jsonl", "b.jsonl")
    assert diff.returncode == 1, diff.stderr
    out = diff.stdout.splitlines()
    number = len(records) + 1
    assert out[0] == f"the journals part at record {number} of each: their records differ from there on"
    assert out[1] == f"  A: (ends after record {number - 1})" and "cancel" in out[2]
    assert out[3] == (
        f"the venue states after record {number} are the same nonetheless: the records differ, the state they "
        "lead to does not"
    )


def test_serving_a_fork_cut_mid_burst_says_so_as_information(tmp_path: Path) -> None:
    done = cefisim(tmp_path, "replay", "demo", "--until", "+20", "--journal", "j.jsonl", "--quiet")
    assert done.returncode == 0, done.stderr
    times = [orjson.loads(line)[0] for line in (tmp_path / "j.jsonl").read_bytes().splitlines()[1:]]
    start = max(range(len(times)), key=lambda i: times.count(times[i]) if i == 0 or times[i - 1] != times[i] else 0)
    assert times.count(times[start]) >= 6
    cut = start + 3  # three records into the burst (records count from 1)
    fork = cefisim(tmp_path, "journal", "fork", "j.jsonl", "--at", str(cut), "--out", "k.jsonl")
    assert fork.returncode == 0, fork.stderr
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cefisim",
            "serve",
            "--scenario",
            "demo",
            "--journal",
            "k.jsonl",
            "--clock",
            "virtual",
            "--port",
            "0",
            "--ready-file",
            str(ready),
            "--quiet",
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for_ready_file(ready, proc, 120)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=60)
    assert "WARNING" not in err, err
    info = [line for line in err.splitlines() if "regenerated" in line]
    assert len(info) == 1 and " INFO " in info[0] and "ends inside the scenario's burst" in info[0], err


def test_a_journal_in_a_folder_that_does_not_exist_is_named_as_given(tmp_path: Path) -> None:
    done = cefisim(tmp_path, "serve", "--journal", "no/such/dir/j.jsonl", "--port", "0")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "--journal no/such/dir/j.jsonl: no folder no/such/dir" in lines[0] and ".new" not in lines[0]
    assert not os.path.exists(tmp_path / "no")
