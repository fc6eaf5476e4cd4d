"""Every ``cefisim ...`` command in a shell block of README.md or docs/ runs, so a wrong flag in the docs
fails the suite.

A command line (a line of a ```sh/bash/console/text or unlabelled fenced block that starts with
``cefisim`` or ``$ cefisim``, with its ``\\`` continuations) is one of two kinds:

- a synopsis (it has ``[``, ``|``, ``...`` or a placeholder in capitals): its (sub)command must exist
  and every flag it names must be one that command's ``--help`` lists;
- a command: it runs, as ``python -m cefisim ...`` in an empty folder that sees the checkout's
  ``scenarios/``, and must exit 0. What would run long is cut short the way a reader would try it
  (``--until`` at most 30 s of engine time, one seed, one latency, ``--workers 0``); a ``serve`` runs
  until it accepts connections, then stops. The few that need what a test cannot have (a Dask
  scheduler on another host) are listed in :data:`NOT_RUN` with the reason, and get the synopsis check.

The jobs of docs/ci.md are YAML, run by ``tests/test_ci_docs.py``.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.api.served import wait_for_ready_file
from tests.cli_commands import all_commands, command_path, options

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCKS = {"", "sh", "bash", "shell", "console", "text"}
#: commands that need what a test cannot have, by a piece of their text: flags checked, not run
NOT_RUN = {"--dask tcp://scheduler-host:8786": "a Dask scheduler on another host"}
_PLACEHOLDER = re.compile(r"[A-Z][A-Z_]*(\.\.\.)?")  # FILE, J, IN..., KEY (of KEY=VALUE)
_COMMAND = re.compile(r"^(?:\$ )?(?:[A-Z_]+=\S+ )*cefisim(?: |$)")


def doc_commands() -> list[tuple[str, str]]:
    """(where, command line) for every cefisim command line of a shell block of the docs."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"^ *```([a-z]*)\n(.*?)^ *```", text, flags=re.DOTALL | re.MULTILINE):
            if m.group(1) not in SHELL_BLOCKS:
                continue
            body = re.sub(r"\\\n\s*", " ", m.group(2))
            line_no = text[: m.start()].count("\n") + 2
            for k, line in enumerate(body.splitlines()):
                if _COMMAND.match(line.strip()):
                    found.append((f"{page.relative_to(ROOT)}:{line_no + k}", line.strip().removeprefix("$ ")))
    return found


COMMANDS = doc_commands()
KNOWN = all_commands()


def words_of(line: str) -> tuple[dict[str, str], list[str]]:
    """(environment assignments, the words after ``cefisim``) of a command line, its comment dropped."""
    words = shlex.split(line, comments=True)
    env = {}
    while words and words[0] != "cefisim":
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    return env, words[1:]


def is_synopsis(line: str) -> bool:
    """A line that shows a command's form rather than one to run (or one :data:`NOT_RUN` lists)."""
    if any(piece in line for piece in NOT_RUN):
        return True
    _, words = words_of(line)
    for word in words:
        if any(mark in word for mark in ("[", "]", "|", "...", "…")):
            return True
        if any(_PLACEHOLDER.fullmatch(part) for part in word.split("=")):
            return True
    return False


def test_the_docs_show_commands_of_both_kinds() -> None:
    assert len(COMMANDS) >= 15
    kinds = {is_synopsis(line) for _, line in COMMANDS}
    assert kinds == {True, False}


@pytest.mark.parametrize(("where", "line"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_every_flag_a_doc_command_names_exists(where: str, line: str) -> None:
    _, words = words_of(line)
    target = command_path(words, KNOWN)
    assert target or not words or words[0].startswith("-"), f"{where}: {line}: no such cefisim command"
    given = {w.split("=")[0] for w in re.findall(r"(?<![\w-])--?[a-z][a-z-]*", line.split("#", 1)[0])}
    unknown = given - options(target)
    assert not unknown, f"{where}: {line}: cefisim {' '.join(target)} has no {sorted(unknown)}"


def shortened(words: list[str]) -> list[str]:
    """The command as a quick try of it: at most 30 s of engine time, one seed and latency, no pool."""
    out, k = [], 0
    while k < len(words):
        word = words[k]
        value = words[k + 1] if k + 1 < len(words) else ""
        if word == "--until" and value.startswith("+"):
            out += [word, f"+{min(int(value[1:]), 30)}"]
            k += 2
            continue
        if word in ("--seeds", "--latency-ms"):
            out += [word, re.split(r"[-,]", value)[0]]
            k += 2
            continue
        if word == "--workers":
            k += 2
            continue
        out.append(word)
        k += 1
    if words[:1] in (["backtest"], ["sweep"]) and "--until" not in out:
        out += ["--until", "+30"]
    if words[:1] == ["sweep"]:
        out += ["--workers", "0"]
    return out


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CEFISIM_", "PYTEST_"))}
    env.update(extra)
    return env


RUN = [c for c in COMMANDS if not is_synopsis(c[1])]


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(("where", "line"), RUN, ids=[w for w, _ in RUN])
def test_every_doc_command_runs(where: str, line: str, tmp_path: Path) -> None:
    env, words = words_of(line)
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")  # the docs' relative paths, read-only
    argv = [sys.executable, "-m", "cefisim", *shortened(words)]
    if words[:1] == ["serve"]:
        ready = tmp_path / "ready.json"
        argv += ["--port", "0", "--ready-file", str(ready)]
        pipe = subprocess.PIPE
        proc = subprocess.Popen(argv, cwd=tmp_path, env=_env(env), stdout=pipe, stderr=pipe, text=True)
        try:
            wait_for_ready_file(ready, proc, 120)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=60)
        return
    done = subprocess.run(argv, cwd=tmp_path, env=_env(env), capture_output=True, text=True, timeout=540, check=False)
    assert done.returncode == 0, f"{where}: {' '.join(argv[3:])}: exit {done.returncode}\n{done.stderr[-3000:]}"


def inline_commands() -> list[tuple[str, str]]:
    """(where, command) for every `cefisim ...` in the prose of README.md and docs/ (inline code)."""
    found = []
    for page in PAGES:
        text = re.sub(r"^ *```.*?^ *```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)
        for m in re.finditer(r"`((?:[A-Z_]+=\S+ )*cefisim [^`]+)`", text):
            if m.group(1).split("cefisim ", 1)[1].startswith(("0", "1", "2", "3")):
                continue  # what `cefisim --version` prints, not a command
            found.append((f"{page.relative_to(ROOT)}:{text[: m.start()].count(chr(10)) + 1}", m.group(1)))
    return found


INLINE = inline_commands()


@pytest.mark.parametrize(("where", "line"), INLINE, ids=[w for w, _ in INLINE])
def test_every_flag_a_command_in_the_prose_names_exists(where: str, line: str) -> None:
    """`cefisim backtest --scenario population` in a sentence is as wrong as in a block."""
    test_every_flag_a_doc_command_names_exists(where, line)
