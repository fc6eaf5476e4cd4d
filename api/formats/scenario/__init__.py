"""Scenario files: the loader (``loader.py``, whose docstring maps its other modules), its JSON Schema
(``schema.json``) and the format's documentation (``docs/scenarios.md``). The runner and the agents
are pure and live in ``engine/``."""

from cefisim.api.formats.scenario.loader import (
    Scenario,
    ScenarioError,
    format_time,
    load_scenario,
    parse_scenario,
    parse_time,
)

__all__ = ["Scenario", "ScenarioError", "format_time", "load_scenario", "parse_scenario", "parse_time"]
