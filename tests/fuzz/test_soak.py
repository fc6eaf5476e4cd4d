"""A short soak (benchmarks/soak.py): 8 s of mixed signed traffic from 2 client processes; no errors,
memory flat after the warm-up (loosely: 25 %), invariants hold. ``make soak`` runs ten minutes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_short_soak_passes_its_checks() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "soak.py"),
            "--seconds",
            "8",
            "--warmup",
            "3",
            "--processes",
            "2",
            "--connections",
            "3",
            "--rss-tolerance",
            "0.25",
            "--json",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.stdout, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["checks"] == {
        "no_errors": True,
        "rss_within_tolerance": True,
        "invariants_hold": True,
        "traffic": True,
    }, (result["errors"], result["error_samples"], result["rss_kib"])
    assert proc.returncode == 0
    # throughput thresholds live in the benchmark (`make soak`); here traffic only has to flow
    assert result["requests"] > 0 and result["orders"] > 0
    assert result["clock_advances"] >= 20  # the engine clock moved: records are forgotten


def test_settled_transfers_are_forgotten_after_the_listing_window_like_fills() -> None:
    from cefisim.api.formats.scenario import parse_scenario
    from cefisim.api.runtime.simulation import Simulation
    from cefisim.engine.commands import PaperFunds, RequestTransfer
    from tests.fuzz.support import fuzz_doc

    sim = Simulation(parse_scenario(fuzz_doc(), "memory.json"), clock="virtual")
    uuid = "0f8fad5b-d9cb-469f-a165-70867728950e"
    instructions = (("account_id", uuid), ("fiat_account_id", uuid), ("identity_id", uuid), ("includes_fee", False))
    for _ in range(50):
        sim.submit(RequestTransfer(100, 2, "1.00", "DEPOSIT", "FIAT", instructions))
        sim.submit(PaperFunds(100, 2, "1.00", False))
    sim.advance(sim.venue.clock.now + 48 * 3600 * 10**9)  # two listing windows later
    account = sim.venue.accounts[100]
    assert len(account.transfers) == 0 and len(account.funds_log) == 0
