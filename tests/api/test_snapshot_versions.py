"""A snapshot written by the previous format version still restores, to the same state.

``fixtures/snapshot_v2.json`` was written by the engine as it was before the engine's modules moved
(``fixtures/make_snapshot.py``, run on that code), with the digests of what the commands did before
it was taken and after (``snapshot_v2.expected.json``). Today's code must do the same things before,
restore the old document, and from there do exactly what the old code did.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from cefisim.api.runtime import snapshot
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.scenario import parse_scenario
from tests.api import snapshot_steps as steps
from tests.engine.builders import fingerprint

FIXTURES = Path(__file__).parent / "fixtures"


def _sim() -> Simulation:
    return Simulation(parse_scenario(steps.SCENARIO, "snapshot.json"), clock="virtual")


def test_a_version_2_snapshot_restores_and_continues_as_the_old_code_did() -> None:
    expected = orjson.loads((FIXTURES / "snapshot_v2.expected.json").read_bytes())
    old = orjson.loads((FIXTURES / "snapshot_v2.json").read_bytes())
    assert old["format"] == expected["format"] == "cefisim-snapshot/2"
    live = _sim()
    assert steps.digest(steps.before(live)) == expected["before"]  # today's code got to the same state
    restored = _sim()
    restored.restore(old)
    restored.venue.check_invariants()
    # the restored state is the live one: everything the venue holds, its counters and what falls due
    for sim in (live, restored):
        sim.venue.next_due()  # (drops ended orders from the expiry queue, as the live venue's clock did)
    assert fingerprint(restored.venue) == fingerprint(live.venue)
    assert restored.venue.next_order_id == live.venue.next_order_id
    assert restored.venue.next_due() == live.venue.next_due()
    assert steps.digest(steps.after(restored)) == expected["after"]
    assert steps.digest(steps.after(live)) == expected["after"]
    restored.venue.check_invariants()


def test_a_snapshot_of_an_unknown_format_is_refused() -> None:
    doc = orjson.loads((FIXTURES / "snapshot_v2.json").read_bytes())
    doc["format"] = "cefisim-snapshot/1"
    with pytest.raises(snapshot.SnapshotError, match="not a cefisim-snapshot"):
        _sim().restore(doc)
