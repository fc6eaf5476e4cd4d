"""Every command's ``--help`` explains every option and argument and ends with examples whose flags exist.

Walks ``cefisim --help``, each subcommand's and each of their subcommands' (``data convert``,
``journal show``, ...), as a user reads them.
"""

from __future__ import annotations

import shlex

import pytest

from tests.cli_commands import all_commands, command_path, entries, help_text, options, sections

COMMANDS = all_commands()


def test_the_walk_finds_every_command() -> None:
    names = {" ".join(p) for p in COMMANDS}
    assert {"serve", "scenarios", "docs", "replay", "backtest", "sweep", "data convert", "data record"} <= names
    assert {"journal show", "journal diff", "journal fork", "journal state"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "cefisim")
def test_every_option_and_argument_has_a_description(path: tuple[str, ...]) -> None:
    text = help_text(path)
    found = entries(text)
    assert found, text
    assert [what for what, desc in found if not desc] == [], f"cefisim {' '.join(path)} --help:\n{text}"


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "cefisim")
def test_every_help_ends_with_examples_whose_flags_the_command_takes(path: tuple[str, ...]) -> None:
    examples = sections(help_text(path)).get("examples", [])
    assert examples, f"cefisim {' '.join(path)} --help shows no example"
    for line in examples:
        words = shlex.split(line.strip(), comments=True)
        if words[:1] != ["cefisim"]:
            continue  # a shell line around a cefisim command (`less "$(cefisim docs --path)/..."`)
        target = command_path(words[1:], COMMANDS)
        given = {w.split("=")[0] for w in words if w.startswith("-")}
        assert given <= options(target), f"{line.strip()}: cefisim {' '.join(target)} has no {given - options(target)}"


def test_the_flags_the_issue_named_are_described() -> None:
    serve = dict(entries(help_text(("serve",))))
    assert serve["--clock {wall,virtual}"].startswith("wall: engine time is real time")
    assert serve["--environment {sandbox,production}"].startswith("production:")
    assert "DEBUG, INFO" in serve["--log-level {DEBUG,INFO,WARNING,ERROR,CRITICAL}"]
    convert = dict(entries(help_text(("data", "convert"))))
    assert convert["--from {binance,tardis}"].startswith("the input's format")
    assert dict(entries(help_text(("journal", "diff"))))["A"].startswith("the first journal")
