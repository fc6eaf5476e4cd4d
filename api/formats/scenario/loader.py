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
  same keys as a JSON Schema, and the tests hold the two together through the key tables of
  ``format_keys.py`` (re-exported here).
- The parts: ``model.py`` (:class:`Scenario`, :class:`ScenarioError`, times), ``document.py``
  (decoding, JSON paths), ``parser.py`` (the core: scalars, grids, references), and one module per
  group of sections (plain functions of the :class:`~.parser.Parser`): ``reference_entries.py``,
  ``auth_entries.py``, ``event_entries.py``, ``agent_entries.py``, ``recorded_entries.py``. This module reads the file
  and walks the
  top level: ``settings``, the order of the sections, and the
  uniqueness of ids and names across items.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from cefisim.api.edge.signing import LAYOUTS as SIGNATURE_LAYOUTS
from cefisim.api.edge.validate import is_external_id  # noqa: F401
from cefisim.api.formats.scenario.agent_entries import agent
from cefisim.api.formats.scenario.auth_entries import api_key, oauth_client
from cefisim.api.formats.scenario.document import join_path, no_constant, object_pairs, os_reason, plain_copy
from cefisim.api.formats.scenario.event_entries import event
from cefisim.api.formats.scenario.files import FileResolver
from cefisim.api.formats.scenario.format_keys import (  # noqa: F401
    AGENT_COMMON,
    AGENT_KEYS,
    API_KEY_KEYS,
    API_KEY_KINDS,
    API_KEY_USER_KEYS,
    ASSET_KEYS,
    CLIENT_KEYS,
    EVENT_COMMON,
    EVENT_KEYS,
    EXEC_INST,
    FEE_KEYS,
    FLAGS,
    INSTRUMENT_KEYS,
    LATENCY_KEYS,
    OAUTH_CLIENT_KEYS,
    ORDER_TYPES,
    PLATFORMS,
    RANDOM_WALK_KEYS,
    RECORDED_KEYS,
    SETTINGS_KEYS,
    SIDES,
    TIFS,
    TOP_KEYS,
    TRANSFER_TYPES,
)
from cefisim.api.formats.scenario.model import Scenario, ScenarioError, format_time, parse_time
from cefisim.api.formats.scenario.parser import Parser
from cefisim.api.formats.scenario.recorded_entries import recorded_latency, recorded_source
from cefisim.api.formats.scenario.reference_entries import asset, client, instrument
from cefisim.api.formats.scenario.shipped import shipped_names

# The format's tables and enums (``format_keys.py`` and the engine's and API's own) are also read from this
# module: tests/api/formats/scenario/test_scenario_schema.py holds schema.json to them through it. Hence the
# names imported but not used here (noqa: F401).
from cefisim.engine.vocabulary import InstrumentStatus, SelfTradePrevention

INSTRUMENT_STATUSES = tuple(InstrumentStatus)
STP_VALUES = tuple(SelfTradePrevention)

MAX_INT = 2**63 - 1  # integers stay within what JSON tools (orjson) read and write
#: the fields that must be unique across the items of each list section
UNIQUE_FIELDS = {
    "assets": ("id", "name"),
    "instruments": ("id", "symbol"),
    "clients": ("id", "mnemonic", "key"),
    "api_keys": ("key_id",),
    "oauth_clients": ("client_id",),
}


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file; raises :class:`ScenarioError` listing every problem."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        if Path(path).parent == Path("."):  # a bare name, as `--scenario demoo`: a mistyped shipped name?
            shipped = ", ".join(shipped_names())
            raise ScenarioError(
                [(source, "$", f"neither a file nor a shipped scenario (shipped: {shipped})")]
            ) from None
        raise ScenarioError([(source, "$", f"cannot read the file: {os_reason(exc)}")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError([(source, "$", f"cannot read the file: {os_reason(exc)}")]) from None
    try:
        doc = json.loads(text, object_pairs_hook=object_pairs, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            [(source, "$", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")]
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ScenarioError([(source, "$", f"invalid JSON: {exc}")]) from None
    return parse_scenario(doc, source)


def parse_scenario(doc: object, source: str, files: FileResolver | None = None) -> Scenario:
    """Check a decoded document; ``source`` names it in problems; ``files`` resolves the file names it
    gives (``files.py``; by default relative to ``source``'s folder)."""
    return _scenario(Parser(source, files), doc)


def _scenario(parser: Parser, doc: object) -> Scenario:
    """One pass over a document, collecting every problem; the parsed parts go into a Scenario."""
    top = parser.obj(doc, "$", TOP_KEYS)
    if top is None:
        raise ScenarioError(parser.problems)
    seed = parser.get(top, "seed", "$", lambda v, p: parser.integer(v, p, 0, MAX_INT))
    parser.start_ns = parser.get(top, "start", "$", parser.start_time)
    description = parser.get(top, "description", "$", parser.string)
    parser.get(top, "$schema", "$", parser.string)
    # a duplicated item is dropped and later sections may still name it: its problem must be on
    # the list before they are read, so they see a refused document rather than a missing item
    _section(parser, top, "assets", partial(asset, parser), "asset")
    _check_unique(parser, top, "assets")
    _section(parser, top, "instruments", partial(instrument, parser), "instrument")
    _check_unique(parser, top, "instruments")
    balances: dict[int, dict[int, int]] = {}
    hmac_keys: dict[str, tuple[int, str]] = {}
    _section(parser, top, "clients", lambda v, p: client(parser, v, p, balances, hmac_keys), "client")
    _check_unique(parser, top, "clients")
    settings, latency, delay = _settings(parser, top.get("settings", {}), "$.settings")
    api_keys = _section(parser, top, "api_keys", partial(api_key, parser))
    oauth_clients = _section(parser, top, "oauth_clients", partial(oauth_client, parser))
    events = [e for e in _section(parser, top, "events", partial(event, parser)) if e is not None]
    events.sort(key=lambda e: e[0])
    groups = itertools.count()  # an entry's index keys the state its population shares
    entries = _section(parser, top, "agents", lambda v, p: agent(parser, v, p, next(groups), balances, hmac_keys))
    agents = [a for specs in entries for a in specs]
    agent_entries = [k for k, specs in enumerate(entries) for _ in specs]
    end_ns = parser.get(top, "end", "$", parser.time)
    recorded = [r for r in _section(parser, top, "recorded", partial(recorded_source, parser)) if r is not None]
    latency = recorded_latency(parser, recorded, latency)
    _check_unique(parser, top, "api_keys")
    _check_unique(parser, top, "oauth_clients")
    if parser.problems:
        raise ScenarioError(parser.problems)
    assert seed is not None and parser.start_ns is not None
    if end_ns is None:
        times = [parser.start_ns] + [at for at, _ in events]
        times += [a.end_ns for a in agents if a.end_ns is not None]
        times += [r.engine_ns(parser.start_ns, r.last_ts) for r in recorded]
        end_ns = max(times)
    names = {
        "asset": {**{a.name: a.id for a in parser.assets.values()}, **{str(i): i for i in parser.assets}},
        "instrument": {
            **{s.symbol: s.id for s in parser.instruments.values()},
            **{str(i): i for i in parser.instruments},
        },
        "client": {**{c.mnemonic: c.id for c in parser.clients.values()}, **{str(i): i for i in parser.clients}},
    }
    return Scenario(
        source=parser.source,
        seed=seed,
        start_ns=parser.start_ns,
        end_ns=end_ns,
        doc=plain_copy(top),
        assets=parser.assets,
        instruments=parser.instruments,
        clients=parser.clients,
        balances=balances,
        hmac_keys=hmac_keys,
        api_keys=plain_copy(api_keys),
        oauth_clients=plain_copy(oauth_clients),
        events=events,
        agents=agents,
        agent_entries=agent_entries,
        settings=settings,
        description=description,
        latency_ns=latency,
        settlement_delay_ns=delay,
        _names=names,
        recorded=recorded,
    )


def _section(parser: Parser, top: dict, key: str, parse: Callable[[Any, str], Any], kind: str = "") -> list:
    if key not in top:
        return []
    path = join_path("$", key)
    if kind and not isinstance(top[key], list):
        parser.mark_broken(kind, None, "id")
    return [parse(item, join_path(path, i)) for i, item in enumerate(parser.array(top[key], path))]


def _check_unique(parser: Parser, top: dict, key: str) -> None:
    """Duplicate ids and names across the items of one section (each was checked on its own already)."""
    items = top.get(key)
    if isinstance(items, list):
        for name in UNIQUE_FIELDS[key]:
            first: dict[Any, int] = {}
            for i, item in enumerate(items):
                if not isinstance(item, dict) or not isinstance(item.get(name), str):
                    continue
                value = item[name]
                if value in first:
                    parser.err(f"$.{key}[{i}].{name}", f"duplicate {name} {value!r} (also {key}[{first[value]}])")
                else:
                    first[value] = i


def _settings(
    parser: Parser, value: object, path: str
) -> tuple[dict[str, Any], tuple[int, int, int] | None, int | None]:
    d = parser.obj(value, path, SETTINGS_KEYS)
    if d is None:
        return {}, None, None
    latency = None
    if "latency" in d:
        lp = join_path(path, "latency")
        ld = parser.obj(d["latency"], lp, LATENCY_KEYS)
        if ld is not None:
            parts = [parser.get(ld, k, lp, parser.millis, default=0) for k in LATENCY_KEYS[1]]
            if all(x is not None for x in parts):
                latency = (parts[0], parts[1], parts[2])
    delay = parser.get(d, "settlement_delay_ms", path, parser.millis)
    parser.get(d, "signature_layout", path, lambda v, p: parser.enum(v, p, SIGNATURE_LAYOUTS))
    parser.get(d, "sign_reference_data", path, parser.boolean)
    if d.get("max_open_orders") is not None:
        parser.get(d, "max_open_orders", path, lambda v, p: parser.integer(v, p, 1, MAX_INT))
    parser.get(d, "status_retention", path, parser.status_retention)
    return plain_copy(d), latency, delay


__all__ = ["Scenario", "ScenarioError", "format_time", "load_scenario", "parse_scenario", "parse_time"]
