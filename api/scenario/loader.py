"""Scenario files: JSON in, a validated :class:`Scenario` out, or every problem at once.

Contract:
- ``load_scenario(path)`` reads and parses a file; ``parse_scenario(doc, source)`` checks a document
  already decoded. Either returns a :class:`Scenario` or raises :class:`ScenarioError` whose
  ``problems`` lists every ``(file, json_path, reason)`` found (unknown key, wrong type, bad decimal,
  off-grid value, unknown or duplicate reference, event before ``start``, bad enum, invalid JSON with
  line and column) and whose message has one line per problem: ``file: $.path: reason``. Nothing in
  a document makes it raise anything else.
- Decimal strings become integers on their grid exactly (``engine/units.py``); a value off the grid is
  a problem, never rounded. Order prices and quantities in events are only checked for syntax: an
  off-grid order is a business rejection with a record, as on the venue, so a scenario can show one.
- The format (every key, its type and default) is ``docs/scenarios.md``; ``schema.json`` states the
  same keys as a JSON Schema, and the tests hold the two together through the key tables below.
- A :class:`Scenario` is immutable reference data: ``build_venue`` makes a fresh venue from copies
  of it every time, and ``runner`` a fresh :class:`~engine.scenario.ScenarioRunner`.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from engine.agents import AgentSpec, MarketMakerSpec, NoiseTakerSpec, PriceSeries, RandomWalk
from engine.clock import NS_PER_SECOND
from engine.commands import (
    AdvanceClock, CancelOrder, Command, ModifyOrder, PaperFunds, PlaceOrder, RequestTransfer,
    SetClientInfo, SetInstrumentStatus, SetLatency, SetSettlementDelay,
)
from engine.order import ALO, AON, BUY, GTC, IOC, LIMIT, MARKET, SELL, USE_AGGRESSIVE_PRICING
from engine.records import CRYPTO, DEPOSIT, FIAT, WITHDRAW
from engine.reference import (
    ACTIVE, ID_RE, INSTRUMENT_STATUSES, STP_NONE, STP_VALUES, SYMBOL_MAX, Asset, Client, Instrument,
)
from engine.scenario import ScenarioRunner
from engine.units import RATE_ONE, Grid, parse_decimal, parse_rate
from engine.venue import Journal, Venue, VenueConfig

from ..signing import LAYOUTS as SIGNATURE_LAYOUTS
from ..validate import UUID_RE, is_external_id

Problem = tuple[str, str, str]

# --- the format's keys: (required, optional) per object; schema.json must say the same -----------

TOP_KEYS = (
    ("seed", "start", "assets", "instruments", "clients"),
    ("$schema", "description", "end", "settings", "api_keys", "oauth_clients", "events", "agents"),
)
ASSET_KEYS = (("id", "name", "decimals"), ())
INSTRUMENT_KEYS = (
    ("id", "symbol", "base", "quote", "price_increment", "qty_increment"),
    ("min_qty", "price_band", "maker_fee", "taker_fee", "status"),
)
CLIENT_KEYS = (("id", "mnemonic"), ("key", "secret", "balances", "self_trade_prevention", "fees"))
FEE_KEYS = (("maker", "taker"), ())
SETTINGS_KEYS = (
    (), ("latency", "settlement_delay_ms", "signature_layout", "sign_reference_data", "max_open_orders"),
)
LATENCY_KEYS = ((), ("entry_ms", "modify_ms", "cancel_ms"))
API_KEY_KEYS = (
    ("key_id", "kind", "public_key"), ("user_id", "client_id", "users", "name", "revoked", "expires_at"),
)
API_KEY_USER_KEYS = (("user_id", "client_id"), ())
OAUTH_CLIENT_KEYS = (("client_id", "redirect_uris", "scopes"), ("name", "disabled"))
EVENT_COMMON = (("at", "type"), ("note",))
EVENT_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "order": (
        ("client", "instrument", "side", "order_type", "qty"),
        ("price", "tif", "flags", "exec_inst", "stp", "hold_fee_rate", "external_id", "msg_id",
         "parent_id"),
    ),
    "modify": (
        ("client", "new_qty"),
        ("order_id", "external_id", "new_price", "new_type", "msg_id", "parent_id", "prev_modify"),
    ),
    "cancel": (("client", "ref"), ()),
    "transfer": (("client", "asset", "amount", "transfer_type", "platform"), ("instructions",)),
    "instrument_status": (("instrument", "status"), ()),
    "latency": ((), ("entry_ms", "modify_ms", "cancel_ms")),
    "settlement_delay": (("delay_ms",), ()),
    "clock": ((), ()),
    "paper_funds": (("client", "asset", "amount"), ("remove",)),
    "client_info": (("client", "self_trade_prevention"), ()),
}
AGENT_COMMON = (("type", "client", "instrument"), ("name", "note", "start", "end"))
AGENT_KEYS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "market_maker": (
        ("interval", "levels", "spread", "spacing", "qty"),
        ("qty_step", "post_only", "random_walk", "prices", "prices_file", "every"),
    ),
    "noise_taker": (
        ("mean_interval", "qty_min", "qty_max"),
        ("market_fraction", "buy_fraction", "through"),
    ),
}
RANDOM_WALK_KEYS = (("start", "step"), ("vol", "floor"))

SIDES = (BUY, SELL)
ORDER_TYPES = (LIMIT, MARKET)
TIFS = (GTC, IOC)
FLAGS = (USE_AGGRESSIVE_PRICING,)
EXEC_INST = (ALO, AON)
TRANSFER_TYPES = (DEPOSIT, WITHDRAW)
PLATFORMS = (FIAT, CRYPTO)
FIAT_INSTRUCTIONS = {"fiat_account_id": "uuid", "identity_id": "uuid", "account_id": "uuid",
                     "includes_fee": "bool"}
API_KEY_KINDS = ("user", "organization")

ISO_RE = re.compile(
    r"^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(?:Z|\+00:00)$"
)
REL_RE = re.compile(r"^\+([0-9]+(?:\.[0-9]{1,9})?)$")
SECONDS_RE = re.compile(r"^[0-9]+(?:\.[0-9]{1,9})?$")
MILLIS_RE = re.compile(r"^[0-9]+(?:\.[0-9]{1,6})?$")
URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[\x21-\x22\x24-\x7e]+$")  # absolute, printable, no fragment
SCOPE_RE = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")  # RFC 6749 section 3.3
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
MAX_NS = 2**63 - 1  # journal timestamps are signed 64-bit nanoseconds (until 2262-04-11)
MAX_INT = 2**63 - 1  # integers stay within what JSON tools (orjson) read and write
MAX_LEVELS = 100
MAX_VOL = 10_000


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
        raise ValueError(f"must be an ISO 8601 UTC time or \"+seconds\", got {_kind(text)}")
    rel = REL_RE.match(text)
    if rel is not None:
        if start_ns is None:
            raise ValueError("a relative time (+seconds) needs a start")
        ns = start_ns + _seconds_ns(rel.group(1))
    else:
        m = ISO_RE.match(text)
        if m is None:
            raise ValueError(
                f"{text!r} is not an ISO 8601 UTC time (2026-11-02T09:00:00Z) or \"+seconds\""
            )
        y, mo, d, hh, mi, ss = (int(g) for g in m.groups()[:6])
        try:
            when = datetime(y, mo, d, hh, mi, ss, tzinfo=timezone.utc)
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


def _seconds_ns(text: str) -> int:
    whole, _, frac = text.partition(".")
    return int(whole) * NS_PER_SECOND + int(frac.ljust(9, "0") or "0")


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
    events: list[tuple[int, Command]]
    agents: list[AgentSpec]
    settings: dict[str, Any]
    description: str | None = None
    latency_ns: tuple[int, int, int] | None = None  # settings.latency: (entry, modify, cancel)
    settlement_delay_ns: int | None = None  # settings.settlement_delay_ms
    _names: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)

    def venue_config(self) -> VenueConfig:
        config = VenueConfig()
        if "max_open_orders" in self.settings:
            config.max_open_orders = self.settings["max_open_orders"]
        return config

    def build_venue(
        self, config: VenueConfig | None = None, journal: Journal | None = None, apply_settings: bool = True
    ) -> Venue:
        """A fresh venue at ``start_ns``: reference data, opening balances and, when
        ``apply_settings``, the latency and settlement delay of ``settings`` as journaled commands
        (leave them out when the venue is restored from a journal that already holds them)."""
        venue = Venue(self.start_ns, config or self.venue_config(), journal)
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
        if apply_settings:
            if self.latency_ns is not None:
                venue.submit(SetLatency(*self.latency_ns), at=self.start_ns)
            if self.settlement_delay_ns is not None:
                venue.submit(SetSettlementDelay(self.settlement_delay_ns), at=self.start_ns)
        return venue

    def runner(self, venue: Venue, make_rng: Callable[[int], random.Random] = random.Random) -> ScenarioRunner:
        """A runner that feeds this scenario's events and agents into ``venue``."""
        return ScenarioRunner(venue, self.events, self.agents, self.seed, make_rng)

    def shifted(self, delta_ns: int) -> "Scenario":
        """The same scenario with every time moved by ``delta_ns`` (e.g. to start at the wall clock)."""
        events = [
            (at + delta_ns, AdvanceClock(cmd.to_ns + delta_ns) if isinstance(cmd, AdvanceClock) else cmd)
            for at, cmd in self.events
        ]
        agents: list[AgentSpec] = [
            replace(a, start_ns=a.start_ns + delta_ns, end_ns=None if a.end_ns is None else a.end_ns + delta_ns)
            for a in self.agents
        ]
        return replace(
            self, start_ns=self.start_ns + delta_ns, end_ns=self.end_ns + delta_ns, events=events, agents=agents
        )

    def asset_id(self, ref: str) -> int | None:
        """An asset id from an id or a name."""
        return self._names.get("asset", {}).get(ref)

    def instrument_id(self, ref: str) -> int | None:
        """An instrument id from an id or a symbol."""
        return self._names.get("instrument", {}).get(ref)

    def client_id(self, ref: str) -> int | None:
        """A client id from an id or a mnemonic."""
        return self._names.get("client", {}).get(ref)


# --- entry points ------------------------------------------------------------------------------

class _Obj(dict):  # type: ignore[type-arg]
    """A JSON object that remembers keys it saw more than once (json keeps the last one)."""

    duplicates: list[str]


def _pairs(pairs: list[tuple[str, Any]]) -> _Obj:
    obj = _Obj()
    obj.duplicates = []
    for key, value in pairs:
        if key in obj and key not in obj.duplicates:
            obj.duplicates.append(key)
        obj[key] = value
    return obj


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file; raises :class:`ScenarioError` listing every problem."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError([(source, "$", f"cannot read the file: {_os_reason(exc)}")]) from None
    try:
        doc = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            [(source, "$", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")]
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ScenarioError([(source, "$", f"invalid JSON: {exc}")]) from None
    return parse_scenario(doc, source)


def parse_scenario(doc: object, source: str) -> Scenario:
    """Check a decoded document; ``source`` names it in problems and anchors relative file paths."""
    return _Parser(source).scenario(doc)


def _os_reason(exc: BaseException) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


# --- helpers -----------------------------------------------------------------------------------

_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _plain(value: Any) -> Any:
    """A decoded document with plain dicts (no duplicate-key bookkeeping) and fresh lists."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if _IDENT_RE.match(key) else f"{path}[{json.dumps(key)}]"


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Parser:
    """One pass over a document, collecting every problem; the parsed parts go into a Scenario."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []
        self.start_ns: int | None = None
        self.assets: dict[int, Asset] = {}
        self.asset_names: dict[str, Asset] = {}
        self.instruments: dict[int, Instrument] = {}
        self.symbols: dict[str, Instrument] = {}
        self.clients: dict[int, Client] = {}
        self.mnemonics: dict[str, Client] = {}
        self.client_ids_seen: set[int] = set()
        self.user_clients: dict[str, str] = {}  # api_keys: a user trades as one client
        # ids and names of broken items: a reference to one is not reported again; "*" stands for
        # a broken item without a usable id or name, and then no reference of its kind is reported
        self.broken: dict[str, set[str]] = {"asset": set(), "instrument": set(), "client": set()}

    def err(self, path: str, reason: str) -> None:
        self.problems.append((self.source, path, reason))

    def mark_broken(self, kind: str, d: dict | None, *keys: str) -> None:
        names = self.broken[kind]
        for key in keys:
            value = d.get(key) if d is not None else None
            names.add(value if isinstance(value, str) else "*")

    def unknown(self, kind: str, value: str, path: str) -> None:
        names = self.broken[kind]
        if value not in names and "*" not in names:
            self.err(path, f"unknown {kind} {value!r}")

    # --- structure --------------------------------------------------------------------------

    def obj(self, value: object, path: str, keys: tuple[tuple[str, ...], tuple[str, ...]]) -> dict | None:
        """``value`` as an object with exactly the allowed keys (problems for unknown and missing)."""
        if not isinstance(value, dict):
            self.err(path, f"must be an object, got {_kind(value)}")
            return None
        required, optional = keys
        for key in getattr(value, "duplicates", ()):
            self.err(_join(path, key), "duplicate key")
        for key in value:
            if key not in required and key not in optional:
                self.err(_join(path, key), "unknown key")
        for key in required:
            if key not in value:
                self.err(_join(path, key), "missing required key")
        return value

    def array(self, value: object, path: str) -> list:
        if not isinstance(value, list):
            self.err(path, f"must be an array, got {_kind(value)}")
            return []
        return value

    def get(self, d: dict, key: str, path: str, conv: Callable[[Any, str], Any], default: Any = None) -> Any:
        """``conv`` of ``d[key]`` (None after reporting a problem); ``default`` when absent."""
        if key not in d:
            return default
        return conv(d[key], _join(path, key))

    # --- scalar converters: return the value or None after reporting -------------------------

    def string(self, value: object, path: str) -> str | None:
        if not isinstance(value, str):
            self.err(path, f"must be a string, got {_kind(value)}")
            return None
        if not value:
            self.err(path, "must not be empty")
            return None
        return value

    def name(self, value: object, path: str) -> str | None:
        """A name other things refer to: a non-empty string that is not all digits (ids are)."""
        text = self.string(value, path)
        if text is not None and text.isdigit():
            self.err(path, f"{text!r} must not be all digits (references try ids first)")
            return None
        return text

    def boolean(self, value: object, path: str) -> bool | None:
        if not isinstance(value, bool):
            self.err(path, f"must be true or false, got {_kind(value)}")
            return None
        return value

    def integer(self, value: object, path: str, lo: int, hi: int | None = None) -> int | None:
        if not _is_int(value):
            self.err(path, f"must be an integer, got {_kind(value)}")
            return None
        assert isinstance(value, int)
        if value < lo or (hi is not None and value > hi):
            self.err(path, f"must be between {lo} and {hi}" if hi is not None else f"must be at least {lo}")
            return None
        return value

    def enum(self, value: object, path: str, allowed: tuple[str, ...]) -> str | None:
        if not isinstance(value, str) or value not in allowed:
            shown = repr(value) if isinstance(value, str) else _kind(value)
            self.err(path, f"{shown} is not one of {', '.join(allowed)}")
            return None
        return value

    def id_(self, value: object, path: str) -> int | None:
        if not isinstance(value, str) or not ID_RE.match(value) or len(value) > 18:
            shown = repr(value) if isinstance(value, str) else _kind(value)
            self.err(path, f"{shown} is not an id string (digits matching ^[1-9][0-9]*$, at most 18)")
            return None
        return int(value)

    def decimal(self, value: object, path: str) -> str | None:
        if not isinstance(value, str) or parse_decimal(value) is None:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.err(path, f"not a decimal string (write numbers as strings, e.g. \"{value}\")")
            else:
                self.err(path, "not a decimal string")
            return None
        return value

    def units(self, value: object, path: str, grid: Grid | None, what: str) -> int | None:
        """A decimal string as a whole number of ``grid`` increments (None when off the grid)."""
        text = self.decimal(value, path)
        if text is None or grid is None:
            return None
        units = grid.to_units(text)
        if units is None:
            self.err(path, f"{text} is off the grid: {what}")
        return units

    def positive_units(self, value: object, path: str, grid: Grid | None, what: str) -> int | None:
        units = self.units(value, path, grid, what)
        if units is not None and units <= 0:
            self.err(path, "must be greater than zero")
            return None
        return units

    def increment(self, value: object, path: str) -> Grid | None:
        text = self.decimal(value, path)
        if text is None:
            return None
        parsed = parse_decimal(text)
        if parsed is None or parsed[0] == 0:
            self.err(path, "must be greater than zero")
            return None
        return Grid(text)

    def rate(self, value: object, path: str, lo_open: bool = False, hi_open: bool = False) -> int | None:
        """A fraction between 0 and 1 (each bound excluded when asked) in units of 1e-9."""
        text = self.decimal(value, path)
        if text is None:
            return None
        rate = parse_rate(text)
        if rate is None:
            self.err(path, f"{text} has more than 9 decimals")
            return None
        if (rate <= 0 if lo_open else rate < 0) or (rate >= RATE_ONE if hi_open else rate > RATE_ONE):
            lo = "greater than 0" if lo_open else "at least 0"
            hi = "less than 1" if hi_open else "at most 1"
            self.err(path, f"must be a fraction {lo} and {hi}")
            return None
        return rate

    def seconds(self, value: object, path: str, positive: bool = True) -> int | None:
        """A duration in seconds (an integer or a decimal string, at most 9 decimals) in ns."""
        if _is_int(value) and value >= 0:  # type: ignore[operator]
            ns = value * NS_PER_SECOND  # type: ignore[operator]
        elif isinstance(value, str) and SECONDS_RE.match(value):
            ns = _seconds_ns(value)
        else:
            self.err(path, "must be a number of seconds: an integer or a decimal string like \"0.5\"")
            return None
        if positive and ns <= 0:
            self.err(path, "must be greater than zero")
            return None
        if ns > MAX_NS:
            self.err(path, "is too long")
            return None
        return ns  # type: ignore[no-any-return]

    def millis(self, value: object, path: str) -> int | None:
        """A delay in milliseconds (an integer or a decimal string, at most 6 decimals) in ns."""
        if _is_int(value) and 0 <= value <= MAX_NS // 1_000_000:  # type: ignore[operator]
            return value * 1_000_000  # type: ignore[operator,no-any-return]
        if isinstance(value, str) and MILLIS_RE.match(value) and len(value) <= 24:
            whole, _, frac = value.partition(".")
            ns = int(whole) * 1_000_000 + int(frac.ljust(6, "0") or "0")
            if ns <= MAX_NS:
                return ns
        self.err(path, "must be milliseconds: a non-negative integer or a decimal string like \"0.5\"")
        return None

    def start_time(self, value: object, path: str) -> int | None:
        if isinstance(value, str) and REL_RE.match(value):
            self.err(path, "must be an ISO 8601 UTC time such as 2026-11-02T09:00:00Z")
            return None
        try:
            return parse_time(value)
        except ValueError as exc:
            self.err(path, str(exc))
            return None

    def time(self, value: object, path: str) -> int | None:
        """An ISO 8601 UTC time or +seconds after start, not before start."""
        if self.start_ns is None and isinstance(value, str) and REL_RE.match(value):
            return None  # the start itself is broken, and that is reported
        try:
            ns = parse_time(value, self.start_ns)
        except ValueError as exc:
            self.err(path, str(exc))
            return None
        if self.start_ns is not None and ns < self.start_ns:
            self.err(path, f"{value} is before start ({format_time(self.start_ns)})")
            return None
        return ns

    def unique_strings(self, value: object, path: str, allowed: tuple[str, ...] | None = None) -> tuple[str, ...] | None:
        items = self.array(value, path) if value is not None else []
        if value is not None and not isinstance(value, list):
            return None
        out: list[str] = []
        ok = True
        for i, item in enumerate(items):
            p = _join(path, i)
            got = self.enum(item, p, allowed) if allowed is not None else self.string(item, p)
            if got is None:
                ok = False
            elif got in out:
                self.err(p, f"{got!r} is listed twice")
                ok = False
            else:
                out.append(got)
        return tuple(out) if ok else None

    # --- references -------------------------------------------------------------------------

    def asset_ref(self, value: object, path: str) -> Asset | None:
        if not isinstance(value, str):
            self.err(path, f"must be an asset id or name, got {_kind(value)}")
            return None
        asset = self.assets.get(int(value)) if ID_RE.match(value) and len(value) <= 18 else None
        asset = asset or self.asset_names.get(value)
        if asset is None:
            self.unknown("asset", value, path)
        return asset

    def instrument_ref(self, value: object, path: str) -> Instrument | None:
        if not isinstance(value, str):
            self.err(path, f"must be an instrument id or symbol, got {_kind(value)}")
            return None
        inst = self.instruments.get(int(value)) if ID_RE.match(value) and len(value) <= 18 else None
        inst = inst or self.symbols.get(value)
        if inst is None:
            self.unknown("instrument", value, path)
        return inst

    def client_ref(self, value: object, path: str) -> Client | None:
        if not isinstance(value, str):
            self.err(path, f"must be a client id or mnemonic, got {_kind(value)}")
            return None
        client = self.clients.get(int(value)) if ID_RE.match(value) and len(value) <= 18 else None
        client = client or self.mnemonics.get(value)
        if client is None:
            self.unknown("client", value, path)
        return client

    def client_id_ref(self, value: object, path: str) -> int | None:
        """A client id string (not a mnemonic) of a client in the scenario (api_keys)."""
        cid = self.id_(value, path)
        if cid is not None and cid not in self.client_ids_seen:
            self.unknown("client", str(value), path)
            return None
        return cid

    # --- sections ---------------------------------------------------------------------------

    def scenario(self, doc: object) -> Scenario:
        top = self.obj(doc, "$", TOP_KEYS)
        if top is None:
            raise ScenarioError(self.problems)
        seed = self.get(top, "seed", "$", lambda v, p: self.integer(v, p, 0, MAX_INT))
        self.start_ns = self.get(top, "start", "$", self.start_time)
        description = self.get(top, "description", "$", self.string)
        self.get(top, "$schema", "$", self.string)
        self.section(top, "assets", self.asset, "asset")
        self.section(top, "instruments", self.instrument, "instrument")
        balances: dict[int, dict[int, int]] = {}
        hmac_keys: dict[str, tuple[int, str]] = {}
        self.section(top, "clients", lambda v, p: self.client(v, p, balances, hmac_keys), "client")
        settings, latency, delay = self.settings(top.get("settings", {}), "$.settings")
        api_keys = self.section(top, "api_keys", self.api_key)
        oauth_clients = self.section(top, "oauth_clients", self.oauth_client)
        events = [e for e in self.section(top, "events", self.event) if e is not None]
        events.sort(key=lambda e: e[0])
        agents = [a for a in self.section(top, "agents", self.agent) if a is not None]
        end_ns = self.get(top, "end", "$", self.time)
        self.check_unique(top)
        if self.problems:
            raise ScenarioError(self.problems)
        assert seed is not None and self.start_ns is not None
        if end_ns is None:
            times = [self.start_ns] + [at for at, _ in events]
            times += [a.end_ns for a in agents if a.end_ns is not None]
            end_ns = max(times)
        names = {
            "asset": {**{a.name: a.id for a in self.assets.values()}, **{str(i): i for i in self.assets}},
            "instrument": {**{s.symbol: s.id for s in self.instruments.values()},
                           **{str(i): i for i in self.instruments}},
            "client": {**{c.mnemonic: c.id for c in self.clients.values()}, **{str(i): i for i in self.clients}},
        }
        return Scenario(
            source=self.source, seed=seed, start_ns=self.start_ns, end_ns=end_ns, doc=_plain(top),
            assets=self.assets, instruments=self.instruments, clients=self.clients, balances=balances,
            hmac_keys=hmac_keys, api_keys=_plain(api_keys), oauth_clients=_plain(oauth_clients),
            events=events, agents=agents, settings=settings, description=description,
            latency_ns=latency, settlement_delay_ns=delay, _names=names,
        )

    def section(self, top: dict, key: str, parse: Callable[[Any, str], Any], kind: str = "") -> list:
        if key not in top:
            return []
        path = _join("$", key)
        if kind and not isinstance(top[key], list):
            self.mark_broken(kind, None, "id")
        return [parse(item, _join(path, i)) for i, item in enumerate(self.array(top[key], path))]

    def check_unique(self, top: dict) -> None:
        """Duplicate ids and names across list items (each item was checked on its own already)."""
        for key, fields in (
            ("assets", ("id", "name")), ("instruments", ("id", "symbol")),
            ("clients", ("id", "mnemonic", "key")), ("api_keys", ("key_id",)), ("oauth_clients", ("client_id",)),
        ):
            items = top.get(key)
            if not isinstance(items, list):
                continue
            for name in fields:
                first: dict[Any, int] = {}
                for i, item in enumerate(items):
                    if not isinstance(item, dict) or not isinstance(item.get(name), str):
                        continue
                    value = item[name]
                    if value in first:
                        self.err(f"$.{key}[{i}].{name}", f"duplicate {name} {value!r} (also {key}[{first[value]}])")
                    else:
                        first[value] = i

    def asset(self, value: object, path: str) -> None:
        d = self.obj(value, path, ASSET_KEYS)
        if d is None:
            self.mark_broken("asset", None, "id")
            return
        aid = self.get(d, "id", path, self.id_)
        name = self.get(d, "name", path, self.name)
        decimals = self.get(d, "decimals", path, lambda v, p: self.integer(v, p, 0, 18))
        if aid is None or name is None or decimals is None:
            self.mark_broken("asset", d, "id", "name")
            return
        if aid in self.assets or name in self.asset_names:
            self.mark_broken("asset", d, "id", "name")
            return  # reported by check_unique
        asset = Asset(aid, name, decimals)
        self.assets[aid] = asset
        self.asset_names[name] = asset

    def instrument(self, value: object, path: str) -> None:
        d = self.obj(value, path, INSTRUMENT_KEYS)
        if d is None:
            self.mark_broken("instrument", None, "id")
            return
        iid = self.get(d, "id", path, self.id_)
        symbol = self.get(d, "symbol", path, self.name)
        if symbol is not None and len(symbol) > SYMBOL_MAX:
            self.err(_join(path, "symbol"), f"longer than {SYMBOL_MAX} characters")
            symbol = None
        base = self.get(d, "base", path, self.asset_ref)
        quote = self.get(d, "quote", path, self.asset_ref)
        if base is not None and base is quote:
            self.err(_join(path, "quote"), "must differ from base")
        price_grid = self.get(d, "price_increment", path, self.increment)
        qty_grid = self.get(d, "qty_increment", path, self.increment)
        if qty_grid is not None and base is not None and qty_grid.coef * 10**base.decimals % 10**qty_grid.scale:
            self.err(_join(path, "qty_increment"),
                     f"{qty_grid.text} is finer than {base.name}'s {base.decimals} decimals")
            qty_grid = None
        min_qty = self.get(
            d, "min_qty", path,
            lambda v, p: self.positive_units(v, p, qty_grid, f"not a multiple of qty_increment {qty_grid.text}"
                                             if qty_grid else ""),
            default=1,
        )
        band = self.get(d, "price_band", path, lambda v, p: self.rate(v, p, True, True), default=50_000_000)
        maker = self.get(d, "maker_fee", path, self.rate, default=0)
        taker = self.get(d, "taker_fee", path, self.rate, default=0)
        status = self.get(d, "status", path, lambda v, p: self.enum(v, p, INSTRUMENT_STATUSES), default=ACTIVE)
        parts = (iid, symbol, base, quote, price_grid, qty_grid, min_qty, band, maker, taker, status)
        if any(x is None for x in parts) or base is quote:
            self.mark_broken("instrument", d, "id", "symbol")
            return
        if iid in self.instruments or symbol in self.symbols:
            self.mark_broken("instrument", d, "id", "symbol")
            return  # reported by check_unique
        try:
            inst = Instrument(iid, symbol, base, quote, price_grid, qty_grid, min_qty, band, maker, taker, status)
        except ValueError as exc:  # pragma: no cover - every rule is checked above
            self.err(path, str(exc))
            return
        self.instruments[iid] = inst
        self.symbols[symbol] = inst

    def client(
        self, value: object, path: str, balances: dict[int, dict[int, int]], hmac_keys: dict[str, tuple[int, str]]
    ) -> None:
        d = self.obj(value, path, CLIENT_KEYS)
        if d is None:
            self.mark_broken("client", None, "id")
            return
        cid = self.get(d, "id", path, self.id_)
        mnemonic = self.get(d, "mnemonic", path, self.name)
        key = self.get(d, "key", path, self.key_uuid)
        secret = self.get(d, "secret", path, self.string)
        if ("key" in d) != ("secret" in d):
            self.err(_join(path, "secret" if "key" in d else "key"), "key and secret go together")
        stp = self.get(d, "self_trade_prevention", path, lambda v, p: self.enum(v, p, STP_VALUES), default=STP_NONE)
        amounts: dict[int, int] = {}
        bal_path = _join(path, "balances")
        bal_doc = d.get("balances", {})
        if not isinstance(bal_doc, dict):
            self.err(bal_path, f"must be an object of asset name -> decimal string, got {_kind(bal_doc)}")
            bal_doc = {}
        for dup in getattr(bal_doc, "duplicates", ()):
            self.err(_join(bal_path, dup), "duplicate key")
        for ref, amount in bal_doc.items():
            p = _join(bal_path, ref)
            asset = self.asset_ref(ref, p)
            if asset is None:
                continue
            units = self.units(amount, p, asset.grid, f"finer than {asset.name}'s {asset.decimals} decimals")
            if units is None:
                continue
            if asset.id in amounts:
                self.err(p, f"asset {asset.name} is given twice")
                continue
            amounts[asset.id] = units
        overrides = self.fees(d.get("fees", {}), _join(path, "fees"))
        if cid is not None:
            self.client_ids_seen.add(cid)
        if cid is None or mnemonic is None or stp is None or overrides is None:
            self.mark_broken("client", d, "id", "mnemonic")
            return
        if cid in self.clients or mnemonic in self.mnemonics:
            self.mark_broken("client", d, "id", "mnemonic")
            return  # reported by check_unique
        client = Client(cid, mnemonic, stp, fee_overrides=overrides)
        self.clients[cid] = client
        self.mnemonics[mnemonic] = client
        balances[cid] = amounts
        if key is not None and secret is not None and key not in hmac_keys:
            hmac_keys[key] = (cid, secret)

    def key_uuid(self, value: object, path: str) -> str | None:
        text = self.string(value, path)
        if text is not None and not UUID_RE.match(text):
            self.err(path, f"{text!r} is not a UUID (8-4-4-4-12 hex digits)")
            return None
        return text

    def fees(self, value: object, path: str) -> dict[int, tuple[int, int]] | None:
        if not isinstance(value, dict):
            self.err(path, f"must be an object of instrument -> {{maker, taker}}, got {_kind(value)}")
            return None
        for dup in getattr(value, "duplicates", ()):
            self.err(_join(path, dup), "duplicate key")
        out: dict[int, tuple[int, int]] = {}
        ok = True
        for ref, rates in value.items():
            p = _join(path, ref)
            inst = self.instrument_ref(ref, p)
            d = self.obj(rates, p, FEE_KEYS)
            if d is None:
                ok = False
                continue
            maker = self.get(d, "maker", p, self.rate)
            taker = self.get(d, "taker", p, self.rate)
            if inst is None or maker is None or taker is None:
                ok = False
                continue
            if inst.id in out:
                self.err(p, f"instrument {inst.symbol} is given twice")
                ok = False
                continue
            out[inst.id] = (maker, taker)
        return out if ok else None

    def settings(self, value: object, path: str) -> tuple[dict[str, Any], tuple[int, int, int] | None, int | None]:
        d = self.obj(value, path, SETTINGS_KEYS)
        if d is None:
            return {}, None, None
        latency = None
        if "latency" in d:
            lp = _join(path, "latency")
            ld = self.obj(d["latency"], lp, LATENCY_KEYS)
            if ld is not None:
                parts = [self.get(ld, k, lp, self.millis, default=0) for k in LATENCY_KEYS[1]]
                if all(x is not None for x in parts):
                    latency = (parts[0], parts[1], parts[2])
        delay = self.get(d, "settlement_delay_ms", path, self.millis)
        self.get(d, "signature_layout", path, lambda v, p: self.enum(v, p, SIGNATURE_LAYOUTS))
        self.get(d, "sign_reference_data", path, self.boolean)
        if d.get("max_open_orders") is not None:
            self.get(d, "max_open_orders", path, lambda v, p: self.integer(v, p, 1, MAX_INT))
        return _plain(d), latency, delay

    def api_key(self, value: object, path: str) -> dict:
        """An Auth key, checked for shape (the Auth store checks the PEM itself)."""
        d = self.obj(value, path, API_KEY_KEYS)
        if d is None:
            return {}
        self.get(d, "key_id", path, self.string)
        kind = self.get(d, "kind", path, lambda v, p: self.enum(v, p, API_KEY_KINDS))
        self.get(d, "public_key", path, self.string)
        self.get(d, "name", path, self.string)
        self.get(d, "revoked", path, self.boolean)
        self.get(d, "expires_at", path, self.zoned_time)
        if kind == "user" or "user_id" in d or "client_id" in d:
            for key in ("user_id", "client_id"):
                if key not in d:
                    self.err(_join(path, key), "a user key (or an organization key's own user) needs user_id and client_id")
            self.key_user(d, path)
        if "users" in d:
            up = _join(path, "users")
            if kind == "user":
                self.err(up, "only an organization key lists users")
            seen: set[str] = set()
            for i, item in enumerate(self.array(d["users"], up)):
                ip = _join(up, i)
                u = self.obj(item, ip, API_KEY_USER_KEYS)
                if u is None:
                    continue
                uid = self.key_user(u, ip)
                if uid is not None and uid in seen:
                    self.err(_join(ip, "user_id"), f"user {uid!r} is listed twice")
                seen.add(uid or "")
        return d

    def key_user(self, d: dict, path: str) -> str | None:
        """The user_id and client_id of a key or of a key's user: one user trades as one client."""
        uid = self.get(d, "user_id", path, self.string)
        cid = self.get(d, "client_id", path, self.client_id_ref)
        if uid is not None and cid is not None:
            other = self.user_clients.setdefault(uid, d["client_id"])
            if other != d["client_id"]:
                self.err(_join(path, "client_id"), f"user {uid!r} is client {other} elsewhere")
        return uid  # type: ignore[no-any-return]

    def zoned_time(self, value: object, path: str) -> str | None:
        """An ISO 8601 time with a zone (``expires_at`` of a key, read by the Auth store)."""
        try:
            when = datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            when = None
        if when is None or when.utcoffset() is None:
            self.err(path, "must be an ISO 8601 time with a zone, like 2026-11-02T10:00:00Z")
            return None
        return value  # type: ignore[return-value]

    def oauth_client(self, value: object, path: str) -> dict:
        d = self.obj(value, path, OAUTH_CLIENT_KEYS)
        if d is None:
            return {}
        self.get(d, "client_id", path, self.string)
        self.get(d, "name", path, self.string)
        self.get(d, "disabled", path, self.boolean)
        for key, pattern, what in (
            ("redirect_uris", URI_RE, "not an absolute URI (printable ASCII, no spaces, no fragment)"),
            ("scopes", SCOPE_RE, "not a scope token (RFC 6749 section 3.3: printable ASCII, no spaces)"),
        ):
            if key not in d:
                continue
            kp = _join(path, key)
            items = self.unique_strings(d[key], kp)
            if items is not None and not items:
                self.err(kp, "must list at least one")
            for i, item in enumerate(items or ()):
                if not pattern.match(item):
                    self.err(_join(kp, i), f"{item!r} is {what}")
        return d

    # --- events -----------------------------------------------------------------------------

    def event(self, value: object, path: str) -> tuple[int, Command] | None:
        """One timed event as (at, command); None once the document has a problem (it is refused)."""
        if not isinstance(value, dict):
            self.err(path, f"must be an object, got {_kind(value)}")
            return None
        etype = value.get("type")
        if not isinstance(etype, str) or etype not in EVENT_KEYS:
            self.obj(value, path, (EVENT_COMMON[0], tuple(value)))
            if "type" in value:
                self.enum(etype, _join(path, "type"), tuple(EVENT_KEYS))
            return None
        required, optional = EVENT_KEYS[etype]
        d = self.obj(value, path, (EVENT_COMMON[0] + required, EVENT_COMMON[1] + optional))
        assert d is not None
        at = self.get(d, "at", path, self.time)
        self.get(d, "note", path, self.string)
        # each ev_ checks every field it reads, then builds its command only while nothing is wrong:
        # a document with any problem is refused as a whole, so a partial command is never needed
        cmd = getattr(self, "ev_" + etype)(d, path, at)
        return None if self.problems else (at, cmd)

    def ev_order(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        inst = self.get(d, "instrument", path, self.instrument_ref)
        side = self.get(d, "side", path, lambda v, p: self.enum(v, p, SIDES))
        otype = self.get(d, "order_type", path, lambda v, p: self.enum(v, p, ORDER_TYPES))
        qty = self.get(d, "qty", path, self.decimal)
        price = self.get(d, "price", path, self.decimal)
        if otype == LIMIT and "price" not in d:
            self.err(_join(path, "price"), "a LIMIT order needs a price")
        tif = self.get(d, "tif", path, lambda v, p: self.enum(v, p, TIFS), default=GTC)
        flags = self.get(d, "flags", path, lambda v, p: self.unique_strings(v, p, FLAGS), default=())
        exec_inst = self.get(d, "exec_inst", path, lambda v, p: self.unique_strings(v, p, EXEC_INST), default=())
        stp = self.get(d, "stp", path, lambda v, p: self.enum(v, p, STP_VALUES))
        self.get(d, "hold_fee_rate", path, self.rate)
        ext = self.get(d, "external_id", path, self.external_id)
        msg_id = self.get(d, "msg_id", path, self.string)
        parent_id = self.get(d, "parent_id", path, self.string)
        if self.problems:
            return None
        return PlaceOrder(
            client_id=client.id, instrument_id=inst.id, side=side, type=otype, qty=qty, price=price, tif=tif,
            flags=flags, exec_inst=exec_inst, stp=stp, hold_fee_rate=d.get("hold_fee_rate"), external_id=ext,
            msg_id=msg_id, parent_id=parent_id,
        )

    def external_id(self, value: object, path: str) -> str | None:
        if not isinstance(value, str) or not is_external_id(value):
            self.err(path, "not an external id (a lowercase UUID v4, or at most 18 of A-Z a-z 0-9 - _ . ~)")
            return None
        return value

    def ev_modify(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        order_id = self.get(d, "order_id", path, self.id_)
        ext = self.get(d, "external_id", path, self.external_id)
        if "order_id" not in d and "external_id" not in d:
            self.err(path, "a modify names its order: order_id or external_id")
        new_qty = self.get(d, "new_qty", path, self.decimal)
        new_price = self.get(d, "new_price", path, self.decimal)
        new_type = self.get(d, "new_type", path, lambda v, p: self.enum(v, p, (MARKET,)))
        texts = {k: self.get(d, k, path, self.string) for k in ("msg_id", "parent_id", "prev_modify")}
        if self.problems:
            return None
        return ModifyOrder(client.id, order_id, ext, new_qty, new_price, new_type, **texts)

    def ev_cancel(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        ref = d.get("ref")
        if "ref" in d and (not isinstance(ref, str) or not (ID_RE.match(ref) or is_external_id(ref))):
            self.err(_join(path, "ref"), "must be an exchange order id or an external id")
        return None if self.problems else CancelOrder(client.id, ref)

    def ev_transfer(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        asset = self.get(d, "asset", path, self.asset_ref)
        ttype = self.get(d, "transfer_type", path, lambda v, p: self.enum(v, p, TRANSFER_TYPES))
        platform = self.get(d, "platform", path, lambda v, p: self.enum(v, p, PLATFORMS))
        amount = self.get(d, "amount", path, lambda v, p: self.amount(v, p, asset))
        instructions = self.get(d, "instructions", path, lambda v, p: self.instructions(v, p, platform), default=())
        if self.problems:
            return None
        return RequestTransfer(client.id, asset.id, amount, ttype, platform, instructions)

    def amount(self, value: object, path: str, asset: Asset | None) -> str | None:
        what = f"finer than {asset.name}'s {asset.decimals} decimals" if asset else ""
        units = self.positive_units(value, path, asset.grid if asset else None, what)
        return value if units is not None else None  # type: ignore[return-value]

    def instructions(self, value: object, path: str, platform: str | None) -> tuple[tuple[str, object], ...] | None:
        if not isinstance(value, dict):
            self.err(path, f"must be an object, got {_kind(value)}")
            return None
        for key in getattr(value, "duplicates", ()):
            self.err(_join(path, key), "duplicate key")
        for key, item in value.items():
            p = _join(path, key)
            if platform == FIAT:
                want = FIAT_INSTRUCTIONS.get(key)
                if want is None:
                    self.err(p, f"unknown key (FIAT instructions: {', '.join(FIAT_INSTRUCTIONS)})")
                elif want == "bool" and not isinstance(item, bool):
                    self.err(p, f"must be true or false, got {_kind(item)}")
                elif want == "uuid" and not (isinstance(item, str) and UUID_RE.match(item)):
                    self.err(p, "must be a UUID string")
            elif not isinstance(item, (str, bool)):
                self.err(p, f"must be a string or a boolean, got {_kind(item)}")
        return tuple(sorted(value.items()))

    def ev_instrument_status(self, d: dict, path: str, at: int) -> Command | None:
        inst = self.get(d, "instrument", path, self.instrument_ref)
        status = self.get(d, "status", path, lambda v, p: self.enum(v, p, INSTRUMENT_STATUSES))
        return None if self.problems else SetInstrumentStatus(inst.id, status)

    def ev_latency(self, d: dict, path: str, at: int) -> Command | None:
        entry, modify, cancel = (self.get(d, k, path, self.millis, default=0) for k in LATENCY_KEYS[1])
        return None if self.problems else SetLatency(entry, modify, cancel)

    def ev_settlement_delay(self, d: dict, path: str, at: int) -> Command | None:
        delay = self.get(d, "delay_ms", path, self.millis)
        return None if self.problems else SetSettlementDelay(delay)

    def ev_clock(self, d: dict, path: str, at: int) -> Command | None:
        return None if self.problems else AdvanceClock(at)

    def ev_paper_funds(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        asset = self.get(d, "asset", path, self.asset_ref)
        amount = self.get(d, "amount", path, lambda v, p: self.amount(v, p, asset))
        remove = self.get(d, "remove", path, self.boolean, default=False)
        return None if self.problems else PaperFunds(client.id, asset.id, amount, remove)

    def ev_client_info(self, d: dict, path: str, at: int) -> Command | None:
        client = self.get(d, "client", path, self.client_ref)
        stp = self.get(d, "self_trade_prevention", path, lambda v, p: self.enum(v, p, STP_VALUES))
        return None if self.problems else SetClientInfo(client.id, stp)

    # --- agents -----------------------------------------------------------------------------

    def agent(self, value: object, path: str) -> AgentSpec | None:
        if not isinstance(value, dict):
            self.err(path, f"must be an object, got {_kind(value)}")
            return None
        atype = value.get("type")
        if not isinstance(atype, str) or atype not in AGENT_KEYS:
            self.obj(value, path, (AGENT_COMMON[0], tuple(value)))
            if "type" in value:
                self.enum(atype, _join(path, "type"), tuple(AGENT_KEYS))
            return None
        required, optional = AGENT_KEYS[atype]
        d = self.obj(value, path, (AGENT_COMMON[0] + required, AGENT_COMMON[1] + optional))
        assert d is not None
        client = self.get(d, "client", path, self.client_ref)
        inst = self.get(d, "instrument", path, self.instrument_ref)
        name = self.get(d, "name", path, self.string, default="")
        self.get(d, "note", path, self.string)
        start = self.get(d, "start", path, self.time, default=self.start_ns)
        end = self.get(d, "end", path, self.time)
        if start is not None and end is not None and end < start:
            self.err(_join(path, "end"), "is before the agent's start")
        spec = self.market_maker(d, path, inst) if atype == "market_maker" else self.noise_taker(d, path, inst)
        if spec is None or self.problems:  # the document is refused: no spec needed
            return None
        return replace(spec, client_id=client.id, instrument_id=inst.id, start_ns=start, end_ns=end, name=name)

    def market_maker(self, d: dict, path: str, inst: Instrument | None) -> MarketMakerSpec | None:
        pg = inst.price_grid if inst else None
        qg = inst.qty_grid if inst else None
        on_price = f"not a multiple of price_increment {pg.text}" if pg else ""
        on_qty = f"not a multiple of qty_increment {qg.text}" if qg else ""
        interval = self.get(d, "interval", path, self.seconds)
        levels = self.get(d, "levels", path, lambda v, p: self.integer(v, p, 1, MAX_LEVELS))
        spread = self.get(d, "spread", path, lambda v, p: self.positive_units(v, p, pg, on_price))
        spacing = self.get(d, "spacing", path, lambda v, p: self.positive_units(v, p, pg, on_price))
        qty = self.get(d, "qty", path, lambda v, p: self.positive_units(v, p, qg, on_qty))
        if qty is not None and inst is not None and qty < inst.min_qty:
            self.err(_join(path, "qty"), f"below the instrument's min_qty {qg.format(inst.min_qty)}")  # type: ignore[union-attr]
            qty = None
        qty_step = self.get(d, "qty_step", path, lambda v, p: self.units(v, p, qg, on_qty), default=0)
        post_only = self.get(d, "post_only", path, self.boolean, default=False)
        path_keys = [k for k in ("random_walk", "prices", "prices_file") if k in d]
        price_path: RandomWalk | PriceSeries | None = None
        if len(path_keys) != 1:
            self.err(path, "give exactly one price path: random_walk, prices or prices_file")
        elif path_keys[0] == "random_walk":
            if "every" in d:
                self.err(_join(path, "every"), "only with prices or prices_file (a walk moves every interval)")
            price_path = self.random_walk(d["random_walk"], _join(path, "random_walk"), pg, on_price)
        else:
            every = self.get(d, "every", path, self.seconds)
            if "every" not in d:
                self.err(_join(path, "every"), "missing: the time between two prices of the series")
            key = path_keys[0]
            kp = _join(path, key)
            texts = self.read_prices(d[key], kp) if key == "prices_file" else self.array(d[key], kp)
            if texts is None:
                return None
            ticks = []
            for i, text in enumerate(texts):
                where = kp if key == "prices_file" else _join(kp, i)
                what = on_price if key == "prices" else f"price {i + 1} of the file is {on_price}"
                t = self.positive_units(text, where, pg, what)
                ticks.append(t)
            if not texts and isinstance(d[key], (list, str)):  # an empty array or file
                self.err(kp, "the series has no prices")
            elif every is not None and ticks and None not in ticks:
                price_path = PriceSeries(tuple(ticks), every)
        if self.problems:
            return None
        return MarketMakerSpec(0, 0, price_path, interval, levels, spread, spacing, qty, qty_step, post_only)

    def random_walk(self, value: object, path: str, pg: Grid | None, on_price: str) -> RandomWalk | None:
        d = self.obj(value, path, RANDOM_WALK_KEYS)
        if d is None:
            return None
        start = self.get(d, "start", path, lambda v, p: self.positive_units(v, p, pg, on_price))
        step = self.get(d, "step", path, lambda v, p: self.positive_units(v, p, pg, on_price))
        vol = self.get(d, "vol", path, lambda v, p: self.integer(v, p, 1, MAX_VOL), default=1)
        floor = self.get(d, "floor", path, lambda v, p: self.positive_units(v, p, pg, on_price), default=1)
        if self.problems:
            return None
        return RandomWalk(start, step, vol, floor)

    def read_prices(self, value: object, path: str) -> list | None:
        """A series file next to the scenario: a JSON array of decimal strings, or one per line."""
        name = self.string(value, path)
        if name is None:
            return None
        file = Path(self.source).parent / name
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.err(path, f"cannot read {name}: {_os_reason(exc)}")
            return None
        if file.suffix == ".json":
            try:
                data = json.loads(text, parse_constant=_no_constant)
            except (ValueError, RecursionError) as exc:
                where = f" at line {exc.lineno}, column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
                self.err(path, f"{name}: invalid JSON{where}: {getattr(exc, 'msg', exc)}")
                return None
            if not isinstance(data, list):
                self.err(path, f"{name}: must hold a JSON array of decimal strings")
                return None
            return data
        return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]

    def noise_taker(self, d: dict, path: str, inst: Instrument | None) -> NoiseTakerSpec | None:
        pg = inst.price_grid if inst else None
        qg = inst.qty_grid if inst else None
        on_qty = f"not a multiple of qty_increment {qg.text}" if qg else ""
        mean = self.get(d, "mean_interval", path, self.seconds)
        qmin = self.get(d, "qty_min", path, lambda v, p: self.positive_units(v, p, qg, on_qty))
        qmax = self.get(d, "qty_max", path, lambda v, p: self.positive_units(v, p, qg, on_qty))
        if qmin is not None and qmax is not None and qmax < qmin:
            self.err(_join(path, "qty_max"), "is below qty_min")
            qmax = None
        market = self.get(d, "market_fraction", path, self.rate, default=RATE_ONE)
        buy = self.get(d, "buy_fraction", path, self.rate, default=RATE_ONE // 2)
        on_price = f"not a multiple of price_increment {pg.text}" if pg else ""
        through = self.get(d, "through", path, lambda v, p: self.units(v, p, pg, on_price), default=0)
        if self.problems:
            return None
        return NoiseTakerSpec(0, 0, mean, qmin, qmax, market, buy, through)


__all__ = ["Scenario", "ScenarioError", "format_time", "load_scenario", "parse_scenario", "parse_time"]
