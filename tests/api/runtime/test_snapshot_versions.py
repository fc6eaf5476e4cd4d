"""A snapshot written by an earlier format version still restores, to the same state.

``fixtures/snapshot_v2.json`` was written by the engine as it was before the engine's modules moved,
``fixtures/snapshot_v3.json`` by the code that introduced the per-class codec and the account split
(``fixtures/make_snapshot.py``, run on that code), each with the digests of what the commands did
before it was taken and after (``snapshot_vN.expected.json``). Today's code must do the same things
before, restore the old document, and from there do exactly what the old code did.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime import snapshot
from cefisim.api.runtime.simulation import Simulation
from tests.api.runtime import snapshot_steps as steps
from tests.engine.builders import fingerprint

FIXTURES = Path(__file__).parent / "fixtures"


def _sim() -> Simulation:
    return Simulation(parse_scenario(steps.SCENARIO, "snapshot.json"), clock="virtual")


@pytest.mark.parametrize("version", [2, 3])
def test_a_snapshot_of_each_version_restores_and_continues_as_the_old_code_did(version: int) -> None:
    expected = orjson.loads((FIXTURES / f"snapshot_v{version}.expected.json").read_bytes())
    old = orjson.loads((FIXTURES / f"snapshot_v{version}.json").read_bytes())
    assert old["format"] == expected["format"] == f"cefisim-snapshot/{version}"
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


def test_a_version_2_snapshot_upgrades_to_what_version_3_writes_of_the_same_state() -> None:
    """The upgrade splits each client into its reference record and its account, as the code of /3 did:
    restored from either document, the state snapshots to the same table."""
    docs = [orjson.loads((FIXTURES / f"snapshot_v{v}.json").read_bytes()) for v in (2, 3)]
    v2_before = orjson.dumps(docs[0])
    tables = []
    for doc in docs:
        sim = _sim()
        sim.restore(doc)
        tables.append(sim.snapshot()["objects"])
    assert tables[0] == tables[1]
    assert orjson.dumps(docs[0]) == v2_before  # the upgrade leaves the document it reads alone
    assert sum(o.get("cls") == "Account" for o in tables[0]) == 2
