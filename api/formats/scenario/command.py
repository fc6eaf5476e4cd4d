"""The start every scenario command shares (``cefisim replay``, ``cefisim backtest``): parse the
arguments, load the scenario (a file, or the name of a shipped one: ``shipped.resolve``), and turn a
usage or scenario problem into a message and exit code 2."""

from __future__ import annotations

import argparse
import sys

from cefisim.api.formats.scenario.loader import load_scenario
from cefisim.api.formats.scenario.model import Scenario, ScenarioError
from cefisim.api.formats.scenario.shipped import resolve


def parse_and_load(
    parser: argparse.ArgumentParser, argv: list[str], file_attr: str
) -> tuple[argparse.Namespace, Scenario] | int:
    """(arguments, scenario), or the exit code after printing what is wrong."""
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage problem
        return exc.code if isinstance(exc.code, int) else 2
    try:
        return args, load_scenario(resolve(getattr(args, file_attr)))
    except ScenarioError as exc:
        print(exc, file=sys.stderr)
        return 2
