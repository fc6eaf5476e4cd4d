"""The CLI's help as data, for the tests of help texts and of the commands the docs show.

``help_text(path)`` is ``cefisim PATH... --help`` as a user reads it (in-process, through the
``cefisim`` command's own ``main``); ``entries(text)`` splits it into (what, description) pairs;
``subcommands(path)`` lists the commands below a path; ``options(path)`` the flags a command takes.
``command_path(words)`` finds how many words of a command line name its (sub)command.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re

from cefisim.api.cli.main import main

#: an entry of an argparse help: two spaces, then an option or a positional, then maybe its description
_ENTRY = re.compile(r"^  (\S.*?)(?:\s{2,}(\S.*))?$")
_ENV_NOTE = re.compile(r"\s*\[env CEFISIM_[A-Z_]+\]\s*")


@functools.cache
def help_text(path: tuple[str, ...]) -> str:
    """``cefisim *path --help``: what it prints (it must exit 0)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            code = main([*path, "--help"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    assert code == 0, f"cefisim {' '.join(path)} --help exited {code}"
    return out.getvalue()


def sections(text: str) -> dict[str, list[str]]:
    """A help's sections (``options``, ``positional arguments``, ``examples``, a group's title) -> lines."""
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = line[:-1]
            found[current] = []
        elif current is not None and line.strip():
            found[current].append(line)
        elif not line.strip():
            current = None if current == "examples" else current
    return found


def entries(text: str) -> list[tuple[str, str]]:
    """(option or positional, its description without the ``[env ...]`` note) for every entry of every
    section but the examples; a description may continue on the lines below."""
    out: list[tuple[str, str]] = []
    for title, lines in sections(text).items():
        if title == "examples" or title.startswith("usage"):
            continue
        for line in lines:
            if line.startswith("  ") and not line.startswith("   "):
                m = _ENTRY.match(line)
                assert m, line
                out.append((m.group(1).strip(), m.group(2) or ""))
            elif out:
                what, desc = out[-1]
                out[-1] = (what, f"{desc} {line.strip()}".strip())
    return [(what, _ENV_NOTE.sub(" ", desc).strip()) for what, desc in out]


def subcommands(path: tuple[str, ...]) -> list[str]:
    """The commands below ``cefisim *path`` (the ``{a,b,...}`` choice of its help), in order."""
    m = re.search(r"^  \{([a-z,-]+)\}", help_text(path), flags=re.MULTILINE)
    return m.group(1).split(",") if m else []


def all_commands() -> list[tuple[str, ...]]:
    """Every command path: ``()`` (cefisim itself), ``("serve",)``, ..., ``("journal", "show")``, ..."""
    out: list[tuple[str, ...]] = [()]
    for name in subcommands(()):
        out.append((name,))
        out += [(name, sub) for sub in subcommands((name,))]
    return out


def options(path: tuple[str, ...]) -> set[str]:
    """The flags ``cefisim *path`` takes (``--port``, ``-h``, ...)."""
    flags = set()
    for what, _ in entries(help_text(path)):
        if what.startswith("-"):
            flags |= {f.split()[0] for f in what.split(", ")}
    return flags


def command_path(words: list[str], known: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The longest known command path ``words`` (after ``cefisim``) starts with."""
    best: tuple[str, ...] = ()
    for path in known:
        if tuple(words[: len(path)]) == path and len(path) > len(best):
            best = path
    return best
