"""The venue's state at a journal record, rebuilt by the runtime's own recovery, and told as facts.

State at record N is the state a server continuing from ``cefisim journal fork J --at N`` starts in:
the first N records are copied to a scratch journal and the runtime recovers it read-only
(``api/runtime/simulation.py`` and ``recovery.py``: the scenario regenerates its own records and checks
them, the external ones are re-applied). There is no second replayer. When N falls inside a burst of
the scenario's own records at one instant, recovery finishes that burst, as a server does.

The scenario comes from the journal: a journal of a venue made at run time (``FILE.venues/{id}.jsonl``)
from the manifest beside it, any other from the header's ``scenario`` (a shipped name, or a file: looked
up as given, then beside the journal; a path that names no file any more, as an older journal's
absolute path into another installation, falls back to the shipped scenario whose digest the header
names), or from ``--scenario``; it must be the document the header's ``scenario_sha256`` names. Only
a regular file of at most :data:`MAX_SCENARIO_BYTES` is read as a scenario.

:func:`facts` describes a venue as sorted facts — every order the venue still knows, every balance,
every book level, the fee account, the clock and the id counters — which ``state`` digests and
``diff`` compares.
"""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from cefisim.api.cli.journal_tools.reader import Journal, JournalDamage
from cefisim.api.formats.scenario import Scenario, ScenarioError, load_scenario
from cefisim.api.formats.scenario.shipped import resolve, shipped, shipped_names
from cefisim.api.runtime.journal_file import JournalError, scenario_digest
from cefisim.api.runtime.journal_seal import regular_or_absent
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.runtime.snapshot import SnapshotError
from cefisim.api.runtime.venue_files import FileStore
from cefisim.api.runtime.venue_manifest import MANIFEST, VenueManifest
from cefisim.api.runtime.venues import VenueError, VenueSpec
from cefisim.api.side_state.venue_faults import VenueFaults
from cefisim.engine.venue import Venue
from cefisim.engine.vocabulary import Side

MAX_SCENARIO_BYTES = 64 << 20  # a scenario file a journal names (the shipped ones are a few KiB)


def _venue_scenario(path: Path) -> Scenario | None:
    """The scenario of a run-time venue's journal (``FILE.venues/{id}.jsonl``), from the venue's record
    and the file copies beside it; None for any other journal."""
    folder = path.parent
    if not folder.name.endswith(".venues") or not (folder / MANIFEST).exists():
        return None
    try:
        spec = VenueSpec.from_json(VenueManifest(folder).read_record(path.stem))
    except (OSError, ValueError) as exc:
        raise VenueError("record", str(exc).splitlines()[0]) from None
    return spec.load(FileStore(folder / "files"))


def journal_scenario(journal: Journal, given: str | None = None) -> Scenario:
    """The scenario ``journal`` was written for (``given``: a file or shipped name that overrides the
    header's); :class:`JournalDamage` when it cannot be loaded or is another document."""
    path, header = journal.path, journal.header
    try:
        scenario = _venue_scenario(path) if given is None else None
        if scenario is None:
            name = given if given is not None else header.get("scenario")
            if not isinstance(name, str):
                raise JournalDamage(f"{path}: header: names no scenario; give --scenario")
            candidate = Path(name)
            if given is None and not candidate.is_absolute() and not _exists(candidate):
                beside = path.parent / candidate  # a journal moved together with its scenario
                name = str(beside) if _exists(beside) else name
            file = resolve(name)
            if given is None and not _exists(file):
                file = _shipped_by_digest(header.get("scenario_sha256")) or file
            _check_scenario_file(file)
            scenario = load_scenario(file)
    except (ScenarioError, VenueError) as exc:
        raise JournalDamage(
            f"{path}: its scenario cannot be loaded ({str(exc).splitlines()[0]}); give --scenario"
        ) from None
    except OSError as exc:
        raise JournalDamage(f"{path}: its scenario {exc.filename}: {exc.strerror or exc}; give --scenario") from None
    if scenario_digest(scenario) != header.get("scenario_sha256"):
        raise JournalDamage(
            f"{path}: written for another scenario than {scenario.source} (scenario_sha256 differs); give --scenario"
        )
    return scenario


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


def _check_scenario_file(path: Path) -> None:
    """Read as a scenario only what is a regular file of a scenario's size (``OSError`` otherwise, before
    a byte is read: a device, a FIFO or a folder is never opened); a missing file is left to the loader,
    which names it."""
    if regular_or_absent(path) and path.stat().st_size > MAX_SCENARIO_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_SCENARIO_BYTES >> 20} MiB, not a scenario", str(path))


def _shipped_by_digest(digest: object) -> Path | None:
    """The shipped scenario whose document has ``digest`` (an older journal named it by its absolute
    path in the installation that wrote it)."""
    for name in shipped_names():
        file = shipped(name)
        if file is None:
            continue
        try:
            if scenario_digest(load_scenario(file)) == digest:
                return file
        except ScenarioError:
            continue
    return None


def fork_lines(journal: Journal, at: int) -> Iterator[bytes]:
    """The header line and the first ``at`` record lines, as written; :class:`JournalDamage` when a
    record is damaged or the journal holds fewer than ``at``."""
    yield journal.header_line
    count = 0
    if at > 0:
        for record in journal.records():
            yield record.line
            count = record.number
            if count == at:
                break
    if count < at:
        raise JournalDamage(f"{journal.path}: holds {count} records, not {at}")


def write_fork(journal: Journal, at: int, out: Path) -> None:
    """Write the fork to ``out`` through ``out.new`` renamed over it (no torn fork is left behind)."""
    staged = out.with_name(out.name + ".new")
    try:
        with open(staged, "wb") as f:
            f.writelines(fork_lines(journal, at))
        os.replace(staged, out)
    except OSError as exc:
        staged.unlink(missing_ok=True)
        raise JournalDamage(f"{out}: {exc.strerror or exc}") from None
    except BaseException:
        staged.unlink(missing_ok=True)
        raise


def rebuild(journal: Journal, at: int, scenario: Scenario) -> Simulation:
    """The simulation a server continuing from the fork at ``at`` starts with (read-only, no file)."""
    with tempfile.TemporaryDirectory(prefix="cefisim-journal-") as scratch:
        fork = Path(scratch) / "fork.jsonl"
        write_fork(journal, at, fork)
        try:
            return Simulation(scenario, clock="virtual", journal_path=fork, read_only=True)
        except JournalError as exc:
            # the fork holds the journal's header and records as written: the same numbers and offsets
            raise JournalDamage(str(exc).replace(str(fork), str(journal.path)).removeprefix("journal ")) from None
        except (ScenarioError, SnapshotError) as exc:
            raise JournalDamage(f"{journal.path}: {str(exc).splitlines()[0]}") from None


#: a fact: (sort key, label, value); sections in the order a difference is looked for
Fact = tuple[tuple[int, ...], str, str]


def facts(venue: Venue, faults: VenueFaults | None = None) -> list[Fact]:
    """The venue's state as facts sorted by key — every order it still knows, every balance, every
    book level, the fee account, then the clock and the id counters, and last the venue faults when
    any is set (``faults``: ``docs/faults.md``) — quantities, prices and amounts in the venue's decimals."""
    out: list[Fact] = []
    orders = sorted((o for account in venue.accounts.values() for o in account.orders.values()), key=lambda o: o.id)
    for o in orders:
        inst = o.instrument
        reason = f" reason={o.cancel_reason}" if o.cancel_reason is not None else ""
        what = f"client={o.account.id} inst={inst.id} {o.side} {o.type} {o.status}"
        qty = f"qty={inst.qty_grid.format(o.qty)} executed={inst.qty_grid.format(o.executed)}"
        out.append(
            (
                (0, o.id),
                f"order {o.id}",
                f"{what} {qty} price={inst.price_grid.format(o.price)}{reason}",
            )
        )
    for account in sorted(venue.accounts.values(), key=lambda a: a.id):
        for asset_id, b in sorted(account.balances.items()):
            fmt = venue.assets[asset_id].grid.format
            fees = f"fees_hold={fmt(b.fees_hold)} unsettled_fees={fmt(b.unsettled_fees)}"
            out.append(
                (
                    (1, account.id, asset_id),
                    f"balance client={account.id} asset={asset_id}",
                    f"total={fmt(b.total)} hold={fmt(b.hold)} {fees}",
                )
            )
    for inst_id in sorted(venue.books):
        inst, book = venue.instruments[inst_id], venue.books[inst_id]
        for side_no, (side, levels) in enumerate(((Side.BUY, book.bids), (Side.SELL, book.asks))):
            for price, lots, count in book.depth(side, len(levels)):
                out.append(
                    (
                        (2, inst_id, side_no, price if side_no else -price),
                        f"level inst={inst_id} {side} {inst.price_grid.format(price)}",
                        f"qty={inst.qty_grid.format(lots)} orders={count}",
                    )
                )
    for asset_id, units in sorted(venue.fee_account.items()):
        out.append(((3, asset_id), f"fees asset={asset_id}", venue.assets[asset_id].grid.format(units)))
    out.append(((4,), "clock", str(venue.clock.now)))
    ids = f"order={venue.next_order_id} match={venue.next_match_id} transfer={venue.next_transfer_id}"
    out.append(((5,), "next ids", ids))
    if faults is not None and any(faults.values()):
        out.append(((6,), "venue faults", " ".join(f"{k}={v}" for k, v in faults.describe().items())))
    return out


def digest(state: list[Fact]) -> str:
    """``sha256:…`` over the facts, one ``label: value`` line each."""
    return "sha256:" + hashlib.sha256("".join(f"{label}: {value}\n" for _, label, value in state).encode()).hexdigest()


def first_difference(a: list[Fact], b: list[Fact]) -> tuple[str, str | None, str | None] | None:
    """The first fact (in key order) the two states disagree on, with its value in each (None: absent
    there); None when they agree."""
    va = {key: (label, value) for key, label, value in a}
    vb = {key: (label, value) for key, label, value in b}
    for key in sorted(va.keys() | vb.keys()):
        la, lb = va.get(key), vb.get(key)
        if la != lb:
            label = (la or lb or ("", ""))[0]
            return label, la[1] if la else None, lb[1] if lb else None
    return None


def snapshot_bytes(sim: Simulation) -> bytes:
    """The state as the snapshot document ``GET /_sim/snapshot`` answers (``docs/snapshot.md``)."""
    try:
        doc: dict[str, Any] = sim.snapshot()
    except SnapshotError as exc:
        raise JournalDamage(f"no snapshot: {exc}") from None
    return orjson.dumps(doc)
