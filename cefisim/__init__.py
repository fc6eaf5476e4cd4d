"""cefisim: a deterministic exchange simulator and sandbox emulator of a CeFi trading venue.

The public surface for in-process use (each name is imported on first access, so ``import cefisim``
stays cheap and pulls in neither aiohttp nor the engine until asked):

- ``cefisim.__version__``: the installed distribution's version.
- ``CefiClient``, ``ProblemError``: the async HTTP client (``cefisim.api.client``).
- ``load_scenario``, ``parse_scenario``, ``Scenario``, ``ScenarioError``: the scenario loader.
- ``Venue``, ``VenueConfig``, ``Result``: the venue core (``cefisim.engine.venue``), one command at a
  time through ``Venue.submit(command, at=ns)``.
- ``PlaceOrder``, ``ModifyOrder``, ``CancelOrder``, ``SetClientInfo``, ``RequestTransfer``,
  ``PaperFunds``, ``SetInstrumentStatus``, ``SetLatency``, ``SetSettlementDelay``, ``AdvanceClock``:
  the commands it accepts (``cefisim.engine.commands``).
- ``Simulation``: a loaded scenario's venue with its clock, agents and journal (``cefisim.api.runtime.simulation``).

The installed packages are ``cefisim.engine`` (the pure venue core), ``cefisim.api`` (HTTP surface,
CLI, client, pytest plugin) and ``cefisim.scenarios`` (the shipped scenario files, as package data).
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

try:
    __version__: str = metadata.version("cefisim")
except metadata.PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"

_PUBLIC: dict[str, str] = {
    "CefiClient": "cefisim.api.client",
    "ProblemError": "cefisim.api.client",
    "load_scenario": "cefisim.api.formats.scenario",
    "parse_scenario": "cefisim.api.formats.scenario",
    "Scenario": "cefisim.api.formats.scenario",
    "ScenarioError": "cefisim.api.formats.scenario",
    "Simulation": "cefisim.api.runtime.simulation",
    "Venue": "cefisim.engine.venue",
    "VenueConfig": "cefisim.engine.venue",
    "Result": "cefisim.engine.venue",
    **dict.fromkeys(
        (
            "PlaceOrder",
            "ModifyOrder",
            "CancelOrder",
            "SetClientInfo",
            "RequestTransfer",
            "PaperFunds",
            "SetInstrumentStatus",
            "SetLatency",
            "SetSettlementDelay",
            "AdvanceClock",
        ),
        "cefisim.engine.commands",
    ),
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'cefisim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
