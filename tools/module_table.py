"""Write the module table of docs/architecture.md: every module of the product and its one-line job.

The job is the first sentence of the module's docstring, so the table is as true as the docstrings.
The modules are the ``.py`` files under each folder of ``[tool.setuptools] package-dir`` in
pyproject.toml (the package root cefisim/, engine/, api/, scenarios/), one table per folder. The table
sits between the two ``module-table`` markers of docs/architecture.md; nothing else there changes.

    python tools/module_table.py           # rewrite the table
    python tools/module_table.py --check   # exit 1 if the table is stale (nothing written)

Standard library only; reads files, imports nothing of cefisim. tests/test_architecture.py checks that
the table lists every module and nothing else.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
START = "<!-- module-table: written by `python tools/module_table.py`; edit the docstrings, not this table -->"
END = "<!-- /module-table -->"


def folders(root: Path = ROOT) -> list[str]:
    """The repo folders that install as cefisim's packages, in package-dir order."""
    setuptools = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    return list(dict.fromkeys(setuptools["package-dir"].values()))


def job(path: Path) -> str:
    """The first sentence of the module docstring, on one line (``|`` escaped for the table)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    if not doc:
        return "(no docstring)"
    paragraph = " ".join(doc.split("\n\n")[0].split())
    sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z`(:])", paragraph, maxsplit=1)[0]
    return sentence.replace("|", "\\|")


def table(root: Path = ROOT) -> str:
    """The generated block, markers included."""
    lines = [START]
    for folder in folders(root):
        paths = sorted((root / folder).rglob("*.py"))
        if not paths:
            continue
        lines += ["", f"**{folder}/**", "", "| Module | Its job |", "|---|---|"]
        lines += [f"| `{p.relative_to(root).as_posix()}` | {job(p)} |" for p in paths]
    return "\n".join([*lines, "", END])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is stale; write nothing")
    args = parser.parse_args(argv)
    text = DOC.read_text(encoding="utf-8")
    if START not in text or END not in text:
        print(f"{DOC.relative_to(ROOT)}: the module-table markers are missing", file=sys.stderr)
        return 1
    head, rest = text.split(START, 1)
    new = head + table() + rest.split(END, 1)[1]
    if args.check:
        if new != text:
            print(
                f"{DOC.relative_to(ROOT)}: the module table is stale; run python tools/module_table.py", file=sys.stderr
            )
            return 1
        return 0
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
