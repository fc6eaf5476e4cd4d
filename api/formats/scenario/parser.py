"""The parser's core: one pass over a document that collects every problem instead of raising.

Contract: ``err`` records a problem and parsing goes on; every converter returns the parsed value,
or None after recording why it could not (so a caller never reports the same value twice), and
``get`` returns ``default`` for an absent key. Decimal strings become integers on their grid
exactly (the loader's rule; see ``loader.py``). References to assets, instruments and
clients resolve an id first, then a name; a reference to an item that was itself broken is not
reported again (``broken``). The sections of the format are functions of their own modules
(``reference_entries.py``, ``auth_entries.py``, ``event_entries.py``, ``agent_entries.py``, ``recorded_entries.py``)
taking the
:class:`Parser`; ``loader.py`` runs them in order.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cefisim.api.formats.scenario.document import is_int, join_path, kind_of
from cefisim.api.formats.scenario.files import FileRefused, FileResolver, beside
from cefisim.api.formats.scenario.model import (
    MAX_NS,
    REL_RE,
    SECONDS_TEXT_RE,
    STATUS_RETENTION_RULE,
    Problem,
    format_time,
    parse_time,
    seconds_ns,
    status_retention_ns,
)
from cefisim.engine.clock import NS_PER_SECOND
from cefisim.engine.reference import ID_RE, Asset, Client, Instrument
from cefisim.engine.units import RATE_ONE, Grid, parse_decimal, parse_rate

SECONDS_RE = SECONDS_TEXT_RE
MILLIS_RE = re.compile(r"^[0-9]+(?:\.[0-9]{1,6})?$")


class Parser:
    """The state of one pass (problems, start, what is registered, what is broken) and the
    converters every section uses. The sections are plain functions that take it as their first
    argument (``reference_entries.py``, ``auth_entries.py``, ``event_entries.py``, ``agent_entries.py``,
    ``recorded_entries.py``)."""

    def __init__(self, source: str, files: FileResolver | None = None) -> None:
        self.source = source
        self._files = files or beside(source)
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
        self.recorded_seen = -1  # index of the last ``recorded`` item read (it names its counterparty)
        self.recorded_instruments: set[int] = set()  # instruments a ``recorded`` item already drives

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

    def file(self, name: str, path: str) -> Path | None:
        """The path to read for the file ``name`` the document gives at ``path`` (``files.py``), or
        None after reporting why it may not be read."""
        try:
            return self._files(name)
        except FileRefused as exc:
            self.err(path, exc.reason)
            return None

    # --- structure --------------------------------------------------------------------------

    def obj(self, value: object, path: str, keys: tuple[tuple[str, ...], tuple[str, ...]]) -> dict | None:
        """``value`` as an object with exactly the allowed keys (problems for unknown and missing)."""
        if not isinstance(value, dict):
            self.err(path, f"must be an object, got {kind_of(value)}")
            return None
        required, optional = keys
        for key in getattr(value, "duplicates", ()):
            self.err(join_path(path, key), "duplicate key")
        for key in value:
            if key not in required and key not in optional:
                self.err(join_path(path, key), "unknown key")
        for key in required:
            if key not in value:
                self.err(join_path(path, key), "missing required key")
        return value

    def array(self, value: object, path: str) -> list:
        if not isinstance(value, list):
            self.err(path, f"must be an array, got {kind_of(value)}")
            return []
        return value

    def get(self, d: dict, key: str, path: str, conv: Callable[[Any, str], Any], default: Any = None) -> Any:
        """``conv`` of ``d[key]`` (None after reporting a problem); ``default`` when absent."""
        if key not in d:
            return default
        return conv(d[key], join_path(path, key))

    # --- scalar converters: return the value or None after reporting -------------------------

    def string(self, value: object, path: str) -> str | None:
        if not isinstance(value, str):
            self.err(path, f"must be a string, got {kind_of(value)}")
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
            self.err(path, f"must be true or false, got {kind_of(value)}")
            return None
        return value

    def integer(self, value: object, path: str, lo: int, hi: int | None = None) -> int | None:
        if not is_int(value):
            self.err(path, f"must be an integer, got {kind_of(value)}")
            return None
        assert isinstance(value, int)
        if value < lo or (hi is not None and value > hi):
            self.err(path, f"must be between {lo} and {hi}" if hi is not None else f"must be at least {lo}")
            return None
        return value

    def enum(self, value: object, path: str, allowed: tuple[str, ...]) -> str | None:
        if not isinstance(value, str) or value not in allowed:
            shown = repr(value) if isinstance(value, str) else kind_of(value)
            self.err(path, f"{shown} is not one of {', '.join(allowed)}")
            return None
        return value

    def id_(self, value: object, path: str) -> int | None:
        if not isinstance(value, str) or not ID_RE.match(value) or len(value) > 18:
            shown = repr(value) if isinstance(value, str) else kind_of(value)
            self.err(path, f"{shown} is not an id string (digits matching ^[1-9][0-9]*$, at most 18)")
            return None
        return int(value)

    def decimal(self, value: object, path: str) -> str | None:
        if not isinstance(value, str) or parse_decimal(value) is None:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.err(path, f'not a decimal string (write numbers as strings, e.g. "{value}")')
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
        if is_int(value) and value >= 0:
            ns = value * NS_PER_SECOND
        elif isinstance(value, str) and SECONDS_RE.match(value):
            ns = seconds_ns(value)
        else:
            self.err(path, 'must be a number of seconds: an integer or a decimal string like "0.5"')
            return None
        if positive and ns <= 0:
            self.err(path, "must be greater than zero")
            return None
        if ns > MAX_NS:
            self.err(path, "is too long")
            return None
        return ns

    def status_retention(self, value: object, path: str) -> int | None:
        ns = status_retention_ns(value)
        if ns is None:
            self.err(path, STATUS_RETENTION_RULE)
        return ns

    def millis(self, value: object, path: str) -> int | None:
        """A delay in milliseconds (an integer or a decimal string, at most 6 decimals) in ns."""
        if is_int(value) and 0 <= value <= MAX_NS // 1_000_000:
            return value * 1_000_000
        if isinstance(value, str) and MILLIS_RE.match(value) and len(value) <= 24:
            whole, _, frac = value.partition(".")
            ns = int(whole) * 1_000_000 + int(frac.ljust(6, "0") or "0")
            if ns <= MAX_NS:
                return ns
        self.err(path, 'must be milliseconds: a non-negative integer or a decimal string like "0.5"')
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

    def unique_strings(
        self, value: object, path: str, allowed: tuple[str, ...] | None = None
    ) -> tuple[str, ...] | None:
        items = self.array(value, path) if value is not None else []
        if value is not None and not isinstance(value, list):
            return None
        out: list[str] = []
        ok = True
        for i, item in enumerate(items):
            p = join_path(path, i)
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
            self.err(path, f"must be an asset id or name, got {kind_of(value)}")
            return None
        asset = self.assets.get(int(value)) if ID_RE.match(value) and len(value) <= 18 else None
        asset = asset or self.asset_names.get(value)
        if asset is None:
            self.unknown("asset", value, path)
        return asset

    def instrument_ref(self, value: object, path: str) -> Instrument | None:
        if not isinstance(value, str):
            self.err(path, f"must be an instrument id or symbol, got {kind_of(value)}")
            return None
        inst = self.instruments.get(int(value)) if ID_RE.match(value) and len(value) <= 18 else None
        inst = inst or self.symbols.get(value)
        if inst is None:
            self.unknown("instrument", value, path)
        return inst

    def client_ref(self, value: object, path: str) -> Client | None:
        if not isinstance(value, str):
            self.err(path, f"must be a client id or mnemonic, got {kind_of(value)}")
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
