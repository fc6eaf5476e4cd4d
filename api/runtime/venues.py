"""Venues made at run time (``POST /_sim/venues``): what each is made from, its credentials, its files, its journal.

A server runs its default venue (the ``--scenario`` one) and any number of venues created later, each a
:class:`~cefisim.api.runtime.simulation.Simulation` of its own: own engine, clock, clients, keys and
journal. This module is the part without HTTP (``api/web/control/isolated_venues.py`` serves and routes them).

Contract:

- Ids. A created venue's id is ``v1``, ``v2``, ... in creation order, never reused on a server (nor
  across restarts with the same journal), so a key or token of an ended venue never comes back to life.
  ``default`` names the default venue.
- Credentials. Minted at random when the venue is made (``venue_keys.py``) unless the create body says
  ``"credentials": "document"``: then the document's own, refused (:class:`VenueError`, 409) when a
  key, key id or OAuth client id is already another venue's. The venue's scenario is the document with
  its credentials and its ``seed`` replaced by the body's.
- Files. What the document names is read through ``venue_files.py`` (nothing without ``--data-dir``)
  and kept as a copy named by its digest; the venue reads the copy.
- Journal (a server with ``--journal FILE``): created venues journal to ``FILE.venues/{id}.jsonl``
  (``docs/journal.md``), their records and manifest beside it (``venue_manifest.py``). On start every
  venue the manifest leaves alive is rebuilt from its record and its journal; one that cannot be (its
  record unreadable or damaged, its journal not replaying, a file copy whose bytes no longer match its
  digest, its manifest line damaged, a venue of an earlier cefisim) is set aside
  (:attr:`Venues.set_aside`, with the reason), its files untouched, and every other venue serves. When
  a manifest line is damaged beyond naming a venue, a venue record the manifest does not list is set
  aside too (its line may be the damaged one) instead of being taken for a create never answered.
- Writes: a create is journaled (the venue's journal, its record, then its manifest line) before it is
  answered, and a delete is recorded (the manifest rewritten) before the venue ends; one the disk
  cannot take raises :class:`~cefisim.api.runtime.journal_file.JournalWriteError` (a 503) and changes
  nothing: no venue made or ended, nothing left behind.
- Limits. At most ``max_venues`` live venues, the default one included (:class:`TooManyVenues`);
  creates under way count.
- Creates at the same time: :meth:`Venues.reserve` gives each its id at once (on the event loop), so
  that creates of different venues are made side by side, each in a thread; each is recorded
  (:meth:`Venues.commit`, on the loop) when its make is done, so the manifest lists venues in the
  order their creates finished (a restart rebuilds each from its own record and journal: the order
  changes nothing but the order ``GET /_sim/venues`` lists them in, before and after the restart
  alike). An id whose create fails is given again only when no later id was reserved meanwhile. File
  copies no venue reads are removed only while no create is under way (its copies are not recorded
  yet): a removal due meanwhile runs when the last create under way ends.

Blocking: :meth:`Venues.make` parses, reads files and builds (seconds for a big document); the server
calls it off the event loop, in a thread of its own per create. Everything else runs on the loop.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cefisim.api.formats.scenario import Scenario, ScenarioError, load_scenario
from cefisim.api.formats.scenario.loader import parse_scenario
from cefisim.api.formats.scenario.shipped import shipped
from cefisim.api.runtime.journal_file import JournalWriteError
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.runtime.venue_files import FileStore, VenueFiles, stored
from cefisim.api.runtime.venue_keys import mint
from cefisim.api.runtime.venue_manifest import Entry, Read, VenueManifest

log = logging.getLogger("cefisim.venues")

DEFAULT_ID = "default"
DEFAULT_MAX_VENUES = 64
ID_RE = re.compile(r"v[1-9][0-9]{0,8}")
CREDENTIALS = ("minted", "document")
LEGACY = "made by an earlier cefisim, whose venue credentials anyone could compute; delete it to drop it"
_FILE_FIELD = re.compile(r"\.(?:prices_file|file)(?:\[[0-9]+\])?$")
_LINE = re.compile(r"(?:line |:)([0-9]+)(?=[:,]|$)")


class VenueError(ValueError):
    """A create request that cannot be served: ``field`` names what is wrong in its body."""

    def __init__(self, field: str, reason: str, status: int = 400) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason
        self.status = status


class TooManyVenues(Exception):
    """The server already runs ``max_venues`` venues."""


@dataclass(frozen=True)
class VenueSpec:
    """What a created venue is made of: its scenario document (credentials in it), the shipped scenario
    it came from (None: a posted document), and the digest of the copy of each file it names."""

    id: str
    scenario: str | None
    document: dict[str, Any]
    files: dict[str, str]

    @property
    def source(self) -> str:
        """What its problems and journal name it by."""
        path = shipped(self.scenario) if self.scenario is not None else None
        return str(path) if path is not None else f"venue {self.id}"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "scenario": self.scenario, "document": self.document, "files": self.files}

    def load(self, store: FileStore, refusals: set[str] | None = None) -> Scenario:
        """The venue's scenario, its files read from the copies in ``store`` (each checked against its
        digest; the reasons of those refused added to ``refusals``); :class:`ScenarioError`."""
        return parse_scenario(self.document, self.source, stored(store, self.files, refusals))

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> VenueSpec:
        scenario, document, files = record.get("scenario"), record.get("document"), record.get("files")
        if not isinstance(document, dict) or not isinstance(files, dict) or not isinstance(scenario, str | None):
            raise ValueError(f"venue {record.get('id')}: its record is damaged")
        return cls(str(record["id"]), scenario, document, files)


@dataclass
class Made:
    """A venue built by :meth:`Venues.make`, not yet recorded: ``commit`` or ``discard`` it."""

    spec: VenueSpec
    sim: Simulation
    private_keys: dict[str, str]  # Auth key id -> private key PEM, returned once


@dataclass(frozen=True)
class SetAside:
    """A venue the manifest names that could not be rebuilt: why, and the files it keeps."""

    id: str
    reason: str
    entry: Entry
    files: frozenset[str] | None = field(default=None)  # digests of its copies; None: unknown


def scenario_problem(exc: ScenarioError, own: frozenset[str] = frozenset()) -> tuple[str, str]:
    """The first problem of ``exc`` as (JSON path, reason). A problem with a file's content is told
    without quoting it (only its line): ``own`` are the reasons that quote nothing of a file."""
    _, path, reason = exc.problems[0]
    if _FILE_FIELD.search(path) and reason not in own:
        line = _LINE.search(reason)
        reason = "the file's content is not valid here" + (f" (line {line[1]})" if line else "")
    return path, reason


def parse_body(body: dict[str, Any]) -> tuple[str | dict[str, Any], int | None, str]:
    """A create body ``{"scenario": NAME | DOCUMENT, "seed": N, "credentials": "minted" | "document"}``."""
    unknown = [k for k in body if k not in ("scenario", "seed", "credentials")]
    if unknown:
        raise VenueError(unknown[0], "unknown field")
    scenario, seed = body.get("scenario"), body.get("seed")
    credentials = body.get("credentials", "minted")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63):
        raise VenueError("seed", "must be a whole number from 0 to 2**63-1")
    if credentials not in CREDENTIALS:
        raise VenueError("credentials", 'must be "minted" (the default) or "document" (the document\'s own)')
    if not isinstance(scenario, str | dict):
        raise VenueError("scenario", "required: a shipped scenario's name or a scenario document")
    return scenario, seed, credentials


class Venues:
    """The created venues of one server (the default one is not among them), their files and records.

    ``make`` builds a venue's simulation from its scenario and its journal path (None: no journal);
    ``data_dir`` is the folder posted documents may name files in (None: none)."""

    def __init__(
        self,
        make: Callable[[Scenario, Path | None], Simulation],
        max_venues: int = DEFAULT_MAX_VENUES,
        journal: Path | None = None,
        data_dir: Path | None = None,
    ) -> None:
        self._make = make
        self.max_venues = max_venues
        self.data_dir = data_dir
        self.dir = Path(str(journal) + ".venues") if journal is not None else None
        self._manifest = VenueManifest(self.dir) if self.dir is not None else None
        self.store = FileStore(self.dir / "files" if self.dir is not None else None)
        self.live: dict[str, tuple[VenueSpec, Simulation]] = {}
        self.set_aside: dict[str, SetAside] = {}
        self._entries: dict[str, Entry] = {}  # the manifest's lines: live and set-aside venues
        self._unnamed: list[Entry] = []  # damaged manifest lines that name no venue: kept as they are
        self._highest = 0
        self._reserved: set[str] = set()  # ids of creates under way (reserve, release)
        self._prune_due = False  # a removal of unread copies waits for the creates under way

    # --- start ------------------------------------------------------------------------------------

    def recover(self) -> None:
        """Rebuild every venue the manifest leaves alive; set aside those that cannot be (and those its
        damaged lines name); compact it."""
        manifest = self._manifest
        if manifest is None:
            return
        try:
            found = manifest.read()
        except OSError as exc:  # not even readable: every venue recorded beside it is set aside
            reason = f"{manifest.path}: {exc.strerror or exc}"
            log.error("venue manifest %s; the venues recorded beside it are set aside", reason)
            found = Read(damaged=[(0, Entry("", None, reason))])
        records = set(manifest.records())
        ids = [int(v[1:]) for v in (*records, *manifest.journals())]
        self._highest = max(found.highest, *ids, 0)
        named = {entry.id for _, entry in found.damaged}
        for entry in found.entries:
            if entry.id in named:
                continue  # a damaged line names it too: set aside below
            self._entries[entry.id] = entry
            if entry.legacy is not None:
                self.set_aside[entry.id] = SetAside(entry.id, LEGACY, entry)
                continue
            self._rebuild(entry)
        unnamed = ""
        for _, entry in found.damaged:
            if not entry.id:
                unnamed = unnamed or str(entry.damaged)
                log.error("venue manifest: %s; it names no venue", entry.damaged)
                if entry.legacy is not None:
                    self._unnamed.append(entry)
            elif entry.id in records:
                self._set_aside(entry, str(entry.damaged))
            else:
                log.error("venue manifest: %s; venue %s has no record: nothing to serve", entry.damaged, entry.id)
        for venue_id in sorted(records - self._entries.keys(), key=lambda v: int(v[1:])):
            if unnamed:  # its line may be the damaged one: kept, never taken for a create not answered
                why = f"not in the manifest, whose {unnamed}"
                self._set_aside(Entry(venue_id, damaged=why), why)
            else:  # a create never answered
                manifest.remove_record(venue_id)
        if not (found.damaged and found.damaged[0][0] == 0):
            manifest.rewrite([*self._entries.values(), *self._unnamed], self._highest)
        self._prune()

    def _rebuild(self, entry: Entry) -> None:
        """Rebuild a live venue from its record and journal, or set it aside saying why."""
        assert self._manifest is not None
        spec: VenueSpec | None = None
        refusals: set[str] = set()
        try:
            spec = VenueSpec.from_json(self._manifest.read_record(entry.id))
            scenario = spec.load(self.store, refusals)
            self.live[entry.id] = (spec, self._make(scenario, self._journal_path(entry.id)))
        except Exception as exc:  # one venue never keeps the others (and the default one) from serving
            if isinstance(exc, ScenarioError):
                path, reason = scenario_problem(exc, frozenset(refusals))
                why = f"{path}: {reason}"
            else:
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.error("venue %s set aside: %s", entry.id, why, exc_info=not isinstance(exc, ValueError | OSError))
            files = frozenset(spec.files.values()) if spec is not None else None
            self.set_aside[entry.id] = SetAside(entry.id, why, entry, files)

    def _set_aside(self, entry: Entry, why: str) -> None:
        """Set a venue aside without rebuilding it (its manifest line is damaged or missing)."""
        assert self._manifest is not None
        files: frozenset[str] | None = None  # its copies unknown: every copy is kept
        with contextlib.suppress(OSError, ValueError):
            files = frozenset(VenueSpec.from_json(self._manifest.read_record(entry.id)).files.values())
        log.error("venue %s set aside: %s", entry.id, why)
        self._entries[entry.id] = entry
        self.set_aside[entry.id] = SetAside(entry.id, why, entry, files)

    # --- create -----------------------------------------------------------------------------------

    def next_id(self) -> str:
        """The id the next create gets; :class:`TooManyVenues` when the server is full (creates under
        way included)."""
        if len(self.live) + len(self._reserved) + 1 >= self.max_venues:
            raise TooManyVenues()
        return f"v{max([self._highest, *(int(v[1:]) for v in self._reserved)]) + 1}"

    def reserve(self) -> str:
        """The id of a create starting now, kept from every other create until :meth:`release`;
        :class:`TooManyVenues` when the server is full."""
        venue_id = self.next_id()
        self._reserved.add(venue_id)
        return venue_id

    def release(self, venue_id: str) -> None:
        """The create of ``venue_id`` ended (committed or not); the copies no venue reads go once no
        create is under way."""
        self._reserved.discard(venue_id)
        if self._prune_due and not self._reserved:
            self._prune()

    def make(self, venue_id: str, body: dict[str, Any]) -> Made:
        """Build venue ``venue_id`` from a create body, unrecorded (blocking: off the event loop).
        :class:`VenueError` naming the body's field, and nothing is left behind."""
        scenario, seed, credentials = parse_body(body)
        root: Path | None = self.data_dir
        name: str | None = None
        if isinstance(scenario, str):
            path = shipped(scenario)
            if path is None:
                raise VenueError("scenario", f"no shipped scenario {scenario!r} (`cefisim scenarios` lists them)")
            doc, name, root = load_scenario(path).doc, scenario, path.parent
        else:
            doc = scenario
        if seed is not None:
            doc = {**doc, "seed": seed}
        private_keys: dict[str, str] = {}
        if credentials == "minted":
            doc, private_keys = mint(doc, venue_id)
        files = VenueFiles(self.store, root)
        spec = VenueSpec(venue_id, name, doc, files.kept)
        journal = self._journal_path(venue_id)
        try:
            parsed = parse_scenario(doc, spec.source, files)
            if journal is not None:
                journal.parent.mkdir(mode=0o700, exist_ok=True)
                journal.unlink(missing_ok=True)  # left by a create that never reached the manifest
            sim = self._make(parsed, journal)
        except ScenarioError as exc:  # the document's problems, or agents too fast for the wall clock
            self._prune()
            where, reason = scenario_problem(exc, frozenset(files.refusals))
            raise VenueError("scenario" + where.removeprefix("$"), reason) from None
        except (OSError, JournalWriteError) as exc:  # its journal or a file copy cannot be written
            if journal is not None:
                journal.unlink(missing_ok=True)
            self._prune()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise JournalWriteError(f"venue {venue_id} cannot be journaled: {reason}; nothing was made") from None
        return Made(spec, sim, private_keys)

    def commit(self, made: Made) -> None:
        """Record a made venue (its record, then its manifest line, each fsync'd) and make it live;
        :class:`JournalWriteError` when they cannot be written, and then the made venue is discarded and
        nothing is left of it."""
        spec = made.spec
        if self._manifest is not None:
            try:
                self._manifest.write_record(spec.id, spec.to_json())
                self._manifest.append(spec.id)
            except OSError as exc:
                self._manifest.remove_record(spec.id)
                self.discard(made)
                raise JournalWriteError(
                    f"venue {spec.id} cannot be recorded: {exc.strerror or exc}; nothing was made"
                ) from None
        self._entries[spec.id] = Entry(spec.id)
        self._highest = max(self._highest, int(spec.id[1:]))  # creates may finish out of order
        self.live[spec.id] = (spec, made.sim)

    def discard(self, made: Made) -> None:
        """Drop a made venue that will not be served (its journal and unshared copies go)."""
        made.sim.end()
        journal = self._journal_path(made.spec.id)
        if journal is not None:
            journal.unlink(missing_ok=True)
        self._prune()

    # --- end --------------------------------------------------------------------------------------

    def delete(self, venue_id: str) -> None:
        """End a live or set-aside venue: the manifest rewritten without it first
        (:class:`JournalWriteError` when it cannot be, and then the venue goes on as it was), then the
        venue ended and its journal, record and unshared copies removed. A command still in flight for
        it is refused (``Simulation.end``)."""
        if self._manifest is not None:
            rest = [e for venue, e in self._entries.items() if venue != venue_id]
            try:
                self._manifest.rewrite([*rest, *self._unnamed], self._highest)
            except OSError as exc:
                raise JournalWriteError(
                    f"venue {venue_id}: its delete cannot be recorded: {exc.strerror or exc}; nothing was changed"
                ) from None
        if venue_id in self.live:
            self.live.pop(venue_id)[1].end()
        else:
            self.set_aside.pop(venue_id)
        del self._entries[venue_id]
        if self._manifest is not None:
            self._manifest.remove_record(venue_id)
        journal = self._journal_path(venue_id)
        if journal is not None:
            journal.unlink(missing_ok=True)
        self._prune()

    def close(self) -> None:
        for _, sim in self.live.values():
            sim.close()
        if self._manifest is not None:
            self._manifest.close()
        self.store.close()

    def _prune(self) -> None:
        """Remove the copies no live or set-aside venue reads (none when a set-aside one's are unknown);
        while a create is under way, once it ends (:meth:`release`): its copies are not recorded yet."""
        if self._reserved:
            self._prune_due = True
            return
        self._prune_due = False
        keep: set[str] = set()
        for spec, _ in self.live.values():
            keep.update(spec.files.values())
        for aside in self.set_aside.values():
            if aside.files is None and aside.reason != LEGACY:
                return  # a set-aside venue whose copies are unknown: every copy is kept
            keep.update(aside.files or ())
        self.store.prune(keep)

    def _journal_path(self, venue_id: str) -> Path | None:
        return self.dir / f"{venue_id}.jsonl" if self.dir is not None else None
