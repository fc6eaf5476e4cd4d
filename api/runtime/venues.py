"""Venues made at run time (``POST /_sim/venues``): what each is made from, its keys, its journal.

A server runs its default venue (the ``--scenario`` one) and any number of venues created later, each a
:class:`~cefisim.api.runtime.simulation.Simulation` of its own: own engine, clock, clients, keys and
journal. This module is the part without HTTP (``api/control/venues.py`` serves and routes them).

Contract:

- Ids. A created venue's id is ``v1``, ``v2``, ... in creation order, never reused on a server (nor
  across restarts with the same journal), so a key or token of an ended venue never comes back to life.
  ``default`` names the default venue.
- Keys. Two venues may run the same scenario, so a created venue's credentials are derived from its id:
  each client's HMAC key (``clients[].key``) becomes ``uuid5(NAMESPACE_URL, "cefisim:venue:{id}:{key}")``
  (still a UUID), each Auth API key id (``api_keys[].key_id``) becomes ``"{key_id}@{id}"`` and each
  OAuth client id (``oauth_clients[].client_id``) ``"{client_id}@{id}"``; secrets, venue client ids,
  user ids, public keys and redirect URIs stay as the scenario gives them. :func:`venue_document` applies
  this to the scenario document, which then is the venue's scenario (its journal names that document).
- Seed. An optional ``seed`` replaces the document's.
- Journal (a server with ``--journal FILE``): created venues journal to ``FILE.venues/{id}.jsonl``
  (the format of ``docs/journal.md``), and ``FILE.venues/manifest.jsonl`` records each create (id,
  scenario, seed) and delete, one JSON line each, appended and fsync'd before the answer. On start the
  manifest is read and every venue it leaves alive is rebuilt from its scenario and its journal; a torn
  last line (a crash while writing it) is cut off, as the journal's own torn tail is.
- Limits. At most ``max_venues`` venues, the default one included (:class:`TooManyVenues`).
"""

from __future__ import annotations

import copy
import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from cefisim.api.runtime.recovery import JournalError
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.scenario import Scenario, ScenarioError, load_scenario
from cefisim.api.scenario.loader import parse_scenario
from cefisim.api.scenario.shipped import shipped

DEFAULT_ID = "default"
DEFAULT_MAX_VENUES = 64
ID_RE = re.compile(r"v[1-9][0-9]{0,8}")
MANIFEST = "manifest.jsonl"


class VenueError(ValueError):
    """A create request that cannot be served: ``field`` names what is wrong in its body."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class TooManyVenues(Exception):
    """The server already runs ``max_venues`` venues."""


def derived_key(key: str, venue_id: str) -> str:
    """The HMAC key (a UUID) a created venue's client gets for the scenario's ``key``."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"cefisim:venue:{venue_id}:{key}"))


def derived_key_id(key_id: str, venue_id: str) -> str:
    """The Auth API key id a created venue gets for the scenario's ``key_id``."""
    return f"{key_id}@{venue_id}"


def derived_oauth_client_id(client_id: str, venue_id: str) -> str:
    """The OAuth client id a created venue gets for the scenario's ``client_id``."""
    return f"{client_id}@{venue_id}"


def venue_document(doc: dict[str, Any], venue_id: str, seed: int | None) -> dict[str, Any]:
    """The scenario document of venue ``venue_id``: ``doc`` with its keys derived and its seed replaced."""
    out = copy.deepcopy(doc)
    if seed is not None:
        out["seed"] = seed
    for client in out.get("clients") or ():
        if isinstance(client, dict) and isinstance(client.get("key"), str):
            client["key"] = derived_key(client["key"], venue_id)
    for key in out.get("api_keys") or ():
        if isinstance(key, dict) and isinstance(key.get("key_id"), str):
            key["key_id"] = derived_key_id(key["key_id"], venue_id)
    for oauth_client in out.get("oauth_clients") or ():
        if isinstance(oauth_client, dict) and isinstance(oauth_client.get("client_id"), str):
            oauth_client["client_id"] = derived_oauth_client_id(oauth_client["client_id"], venue_id)
    return out


@dataclass(frozen=True)
class VenueSpec:
    """What a created venue is made from: a shipped scenario's name or a document, and a seed."""

    id: str
    scenario: str | None  # a shipped scenario's name
    document: dict[str, Any] | None  # or a whole scenario document
    seed: int | None

    def load(self) -> Scenario:
        """The venue's scenario (keys derived); :class:`VenueError` naming the body field when it is bad."""
        if self.scenario is not None:
            path = shipped(self.scenario)
            if path is None:
                raise VenueError("scenario", f"no shipped scenario {self.scenario!r} (`cefisim scenarios` lists them)")
            base = load_scenario(path)
            doc, source = base.doc, str(path)
        else:
            assert self.document is not None
            doc, source = self.document, f"venue {self.id}"
        try:
            return parse_scenario(venue_document(doc, self.id, self.seed), source)
        except ScenarioError as exc:
            first = exc.problems[0]
            raise VenueError("scenario" + first[1].removeprefix("$"), first[2]) from None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "scenario": self.scenario, "document": self.document, "seed": self.seed}


def parse_spec(venue_id: str, body: dict[str, Any]) -> VenueSpec:
    """A create body ``{"scenario": NAME | DOCUMENT, "seed": N}`` (checked: ``VenueError`` naming the field)."""
    unknown = [k for k in body if k not in ("scenario", "seed")]
    if unknown:
        raise VenueError(unknown[0], "unknown field")
    scenario = body.get("scenario")
    seed = body.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63):
        raise VenueError("seed", "must be a whole number from 0 to 2**63-1")
    if isinstance(scenario, str):
        return VenueSpec(venue_id, scenario, None, seed)
    if isinstance(scenario, dict):
        return VenueSpec(venue_id, None, scenario, seed)
    raise VenueError("scenario", "required: a shipped scenario's name or a scenario document")


class Venues:
    """The created venues of one server (the default one is not among them) and their manifest.

    ``make`` builds a venue's simulation from its scenario and its journal path (None: no journal)."""

    def __init__(
        self,
        make: Callable[[Scenario, Path | None], Simulation],
        max_venues: int = DEFAULT_MAX_VENUES,
        journal: Path | None = None,
    ) -> None:
        self._make = make
        self.max_venues = max_venues
        self.dir = Path(str(journal) + ".venues") if journal is not None else None
        self.live: dict[str, tuple[VenueSpec, Simulation]] = {}
        self._next = 1
        self._manifest: IO[bytes] | None = None

    def recover(self) -> None:
        """Rebuild every venue the manifest leaves alive, each from its scenario and journal."""
        path = self._manifest_path()
        if path is None or not path.exists():
            return
        data = path.read_bytes()
        complete = data[: data.rfind(b"\n") + 1]
        if len(complete) < len(data):  # a torn last line: that create or delete was never answered
            with open(path, "r+b") as f:
                f.truncate(len(complete))
                os.fsync(f.fileno())
        specs: dict[str, VenueSpec] = {}
        for line in complete.splitlines():
            record = orjson.loads(line)
            self._next = max(self._next, int(record["id"][1:]) + 1)
            if record["op"] == "create":
                specs[record["id"]] = VenueSpec(record["id"], record["scenario"], record["document"], record["seed"])
            else:
                specs.pop(record["id"], None)
        for spec in specs.values():
            try:
                scenario = spec.load()
            except VenueError as exc:  # e.g. a shipped scenario this version no longer has
                raise JournalError(f"{path}: venue {spec.id}: {exc}") from None
            self.live[spec.id] = (spec, self._make(scenario, self._journal_path(spec.id)))

    def create(self, body: dict[str, Any]) -> tuple[VenueSpec, Simulation]:
        """A new venue from a create body; ``TooManyVenues`` or ``VenueError`` and nothing changes."""
        if len(self.live) + 1 >= self.max_venues:
            raise TooManyVenues()
        spec = parse_spec(f"v{self._next}", body)
        scenario = spec.load()
        path = self._journal_path(spec.id)
        if path is not None:
            path.parent.mkdir(exist_ok=True)
            path.unlink(missing_ok=True)  # left by a create that never reached the manifest
        try:
            sim = self._make(scenario, path)
        except ScenarioError as exc:  # e.g. agents too fast for the wall clock
            first = exc.problems[0]
            raise VenueError("scenario" + first[1].removeprefix("$"), first[2]) from None
        self._record({"op": "create", **spec.to_json()})
        self._next += 1
        self.live[spec.id] = (spec, sim)
        return spec, sim

    def delete(self, venue_id: str) -> Simulation:
        """End a venue: recorded, its journal closed and removed; the caller drops its last references."""
        _, sim = self.live.pop(venue_id)
        self._record({"op": "delete", "id": venue_id})
        sim.close()
        path = self._journal_path(venue_id)
        if path is not None:
            path.unlink(missing_ok=True)
        return sim

    def close(self) -> None:
        for _, sim in self.live.values():
            sim.close()
        if self._manifest is not None:
            self._manifest.close()
            self._manifest = None

    def _journal_path(self, venue_id: str) -> Path | None:
        return self.dir / f"{venue_id}.jsonl" if self.dir is not None else None

    def _manifest_path(self) -> Path | None:
        return self.dir / MANIFEST if self.dir is not None else None

    def _record(self, record: dict[str, Any]) -> None:
        """Append a manifest line and fsync it (the directory and file made at the first one)."""
        if self.dir is None:
            return
        if self._manifest is None:
            self.dir.mkdir(exist_ok=True)
            self._manifest = open(self.dir / MANIFEST, "ab", buffering=0)  # noqa: SIM115 - closed in close()
        self._manifest.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))
        os.fsync(self._manifest.fileno())
