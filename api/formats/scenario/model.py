"""The result of loading a scenario, the error that lists every problem, and scenario times.

Contract: a :class:`Scenario` is immutable reference data: ``build_venue`` makes a fresh venue from
copies of it every time, and ``runner`` a fresh :class:`~engine.simulation.scenario.ScenarioRunner`.
:class:`ScenarioError` carries every ``(file, json_path, reason)`` and prints one line per problem.
``parse_time`` reads ISO 8601 UTC (``Z`` or ``+00:00``, up to 9 decimals) or ``"+seconds"`` after a
start into nanoseconds since the epoch, exactly, within 1970 .. 2262-04-11 (signed 64-bit ns), and
raises ValueError with the reason otherwise; ``format_time`` is its inverse for absolute times.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from cefisim.api.formats.recorded.source import RecordedSpec, attach
from cefisim.api.formats.scenario.document import kind_of
from cefisim.api.side_state.side_states import SideStateRecord
from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.commands import AdvanceClock, Command, SetLatency, SetSettlementDelay
from cefisim.engine.reference import Asset, Client, Instrument
from cefisim.engine.retention import MAX_STATUS_RETENTION_NS, MIN_STATUS_RETENTION_NS
from cefisim.engine.simulation.population import AnySpec
from cefisim.engine.simulation.scenario import ScenarioRunner
from cefisim.engine.venue import Venue, VenueConfig

Problem = tuple[str, str, str]

ISO_RE = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(?:Z|\+00:00)$"
)
REL_RE = re.compile(r"^\+([0-9]+(?:\.[0-9]{1,9})?)$")
SECONDS_TEXT_RE = re.compile(r"^[0-9]+(?:\.[0-9]{1,9})?$")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_NS = 2**63 - 1  # journal timestamps are signed 64-bit nanoseconds (until 2262-04-11)


class ScenarioError(ValueError):
    """A scenario file that cannot be used; ``problems`` lists every (file, json_path, reason)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(f"{f}: {p}: {r}" for f, p, r in self.problems))


# --- times -------------------------------------------------------------------------------------


def parse_time(text: object, start_ns: int | None = None) -> int:
    """``"2026-11-02T09:00:00.5Z"`` or, relative to ``start_ns``, ``"+1.5"`` -> nanoseconds.

    Raises ValueError with the reason when ``text`` is neither.
    """
    if not isinstance(text, str):
        raise ValueError(f'must be an ISO 8601 UTC time or "+seconds", got {kind_of(text)}')
    rel = REL_RE.match(text)
    if rel is not None:
        if start_ns is None:
            raise ValueError("a relative time (+seconds) needs a start")
        ns = start_ns + seconds_ns(rel.group(1))
    else:
        m = ISO_RE.match(text)
        if m is None:
            raise ValueError(f'{text!r} is not an ISO 8601 UTC time (2026-11-02T09:00:00Z) or "+seconds"')
        y, mo, d, hh, mi, ss = (int(g) for g in m.groups()[:6])
        try:
            when = datetime(y, mo, d, hh, mi, ss, tzinfo=UTC)
        except ValueError as exc:
            raise ValueError(f"{text!r}: {exc}") from None
        if when < EPOCH:
            raise ValueError(f"{text!r} is before 1970-01-01")
        frac = (m.group(7) or "").ljust(9, "0")
        ns = (when - EPOCH) // timedelta(seconds=1) * NS_PER_SECOND + int(frac or "0")
    if ns > MAX_NS:
        raise ValueError(f"{text!r} is after 2262-04-11 (beyond 64-bit nanoseconds)")
    return ns


def format_time(ns: int) -> str:
    """Nanoseconds since the epoch as ISO 8601 UTC (``2026-11-02T09:00:00.5Z``)."""
    secs, frac = divmod(ns, NS_PER_SECOND)
    text = (EPOCH + timedelta(seconds=secs)).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return text + "Z"


def seconds_ns(text: str) -> int:
    whole, _, frac = text.partition(".")
    return int(whole) * NS_PER_SECOND + int(frac.ljust(9, "0") or "0")


STATUS_RETENTION_RULE = (
    f"must be seconds from {MIN_STATUS_RETENTION_NS // NS_PER_SECOND} to "
    f"{MAX_STATUS_RETENTION_NS // NS_PER_SECOND} (30 days): an integer or a decimal string"
)


def status_retention_ns(value: object) -> int | None:
    """An order status retention in seconds (an integer, or a decimal string to the nanosecond) as
    nanoseconds, when it lies within the bounds (``STATUS_RETENTION_RULE``); else None. The scenario's
    ``settings.status_retention``, ``cefisim serve --status-retention`` and ``/_sim/retention`` share it."""
    if isinstance(value, int) and not isinstance(value, bool):
        ns = value * NS_PER_SECOND if 0 <= value <= MAX_STATUS_RETENTION_NS else -1
    elif isinstance(value, str) and len(value) <= 24 and SECONDS_TEXT_RE.match(value):
        ns = seconds_ns(value)
    else:
        return None
    return ns if MIN_STATUS_RETENTION_NS <= ns <= MAX_STATUS_RETENTION_NS else None


# --- the scenario ------------------------------------------------------------------------------


@dataclass
class Scenario:
    """A validated scenario. Reference data objects are templates: ``build_venue`` copies them."""

    source: str
    seed: int
    start_ns: int
    end_ns: int  # where ``cefisim replay`` stops unless told otherwise
    doc: dict[str, Any]
    assets: dict[int, Asset]
    instruments: dict[int, Instrument]
    clients: dict[int, Client]
    balances: dict[int, dict[int, int]]  # client id -> asset id -> smallest units
    hmac_keys: dict[str, tuple[int, str]]  # key uuid -> (client id, secret)
    api_keys: list[dict[str, Any]]
    oauth_clients: list[dict[str, Any]]
    #: timed commands, and (``venue_faults``) records of state kept beside the engine
    events: list[tuple[int, Command | SideStateRecord]]
    agents: list[AnySpec]
    settings: dict[str, Any]
    description: str | None = None
    latency_ns: tuple[int, int, int] | None = None  # settings.latency: (entry, modify, cancel)
    settlement_delay_ns: int | None = None  # settings.settlement_delay_ms
    recorded: list[RecordedSpec] = field(default_factory=list)  # instruments whose market is a recording
    agent_entries: list[int] = field(default_factory=list)  # per agent, its entry in the file's ``agents``
    _names: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)

    def venue_config(self) -> VenueConfig:
        config = VenueConfig()
        if "max_open_orders" in self.settings:
            config.max_open_orders = self.settings["max_open_orders"]
        retention = status_retention_ns(self.settings.get("status_retention"))
        if retention is not None:
            config.status_retention_ns = retention
        return config

    def setting_commands(self) -> list[tuple[int, Command]]:
        """The latency and settlement delay of ``settings`` as commands at ``start_ns``, in that order."""
        commands: list[tuple[int, Command]] = []
        if self.latency_ns is not None:
            commands.append((self.start_ns, SetLatency(*self.latency_ns)))
        if self.settlement_delay_ns is not None:
            commands.append((self.start_ns, SetSettlementDelay(self.settlement_delay_ns)))
        return commands

    def build_venue(self, config: VenueConfig | None = None) -> Venue:
        """A fresh venue at ``start_ns``: reference data, opening balances and the
        :meth:`setting_commands` submitted. They are part of the venue the scenario builds, so no
        journal holds them (``docs/journal.md``)."""
        venue = Venue(self.start_ns, config or self.venue_config())
        assets, instruments, clients = copy.deepcopy((self.assets, self.instruments, self.clients))
        for asset in assets.values():
            venue.add_asset(asset)
        for inst in instruments.values():
            venue.add_instrument(inst)
        for client in clients.values():
            venue.add_client(client)
        for client_id, amounts in self.balances.items():
            for asset_id, units in amounts.items():
                venue.credit(client_id, asset_id, units)
        for spec in self.recorded:
            attach(venue, spec, self.start_ns)
        for at, cmd in self.setting_commands():
            venue.submit(cmd, at)
        return venue

    def runner(
        self, venue: Venue, make_rng: Callable[[int], random.Random] = random.Random, side_states: bool = False
    ) -> ScenarioRunner:
        """A runner that feeds this scenario's events and agents into ``venue``. Events that set state
        beside the engine (``venue_faults``) are left out unless ``side_states``: the runner then hands them to
        its submit in a command's place, which must take them (``api/runtime/simulation.py`` applies
        them, ``cefisim replay`` journals them)."""
        events = self.events if side_states else [(at, e) for at, e in self.events if type(e) is not SideStateRecord]
        return ScenarioRunner(venue, events, self.agents, self.seed, make_rng)  # type: ignore[arg-type]  # side-state records in a command's place: the submit takes them

    def has_side_state_events(self) -> bool:
        """Whether an event sets state beside the engine (``venue_faults``): its runner's submit must
        take such records too (a scenario without them pays nothing per command for that)."""
        return any(type(e) is SideStateRecord for _, e in self.events)

    def shifted(self, delta_ns: int) -> Scenario:
        """The same scenario with every time moved by ``delta_ns`` (e.g. to start at the wall clock)."""
        events = [
            (at + delta_ns, AdvanceClock(cmd.to_ns + delta_ns) if isinstance(cmd, AdvanceClock) else cmd)
            for at, cmd in self.events
        ]
        agents: list[AnySpec] = [
            replace(a, start_ns=a.start_ns + delta_ns, end_ns=None if a.end_ns is None else a.end_ns + delta_ns)
            for a in self.agents
        ]
        return replace(
            self, start_ns=self.start_ns + delta_ns, end_ns=self.end_ns + delta_ns, events=events, agents=agents
        )

    def agent_path(self, i: int) -> str:
        """The JSON path of agent ``i``'s entry (a population entry holds many agents)."""
        return f"$.agents[{self.agent_entries[i] if i < len(self.agent_entries) else i}]"

    def order_latency_range(self) -> tuple[int, int] | None:
        """A recorded source's order latency drawn per command, (lo, hi) ns; None when constant."""
        for spec in self.recorded:
            if spec.order_latency is not None and spec.order_latency[0] < spec.order_latency[1]:
                return spec.order_latency
        return None

    def asset_id(self, ref: str) -> int | None:
        """An asset id from an id or a name."""
        return self._names.get("asset", {}).get(ref)

    def instrument_id(self, ref: str) -> int | None:
        """An instrument id from an id or a symbol."""
        return self._names.get("instrument", {}).get(ref)

    def client_id(self, ref: str) -> int | None:
        """A client id from an id or a mnemonic."""
        return self._names.get("client", {}).get(ref)
