"""The scenario files shipped with cefisim: package data of ``cefisim.scenarios``.

Contract: :func:`shipped_dir` is the directory the installed package keeps them in, found with
``importlib.resources`` (so a wheel install, an editable install and a source checkout all work);
the files there are used in place, so a scenario's sibling files (``paths/flash_crash.txt``,
``keys/alice-es256.pem``) resolve next to it as they do in the repository. :func:`resolve` turns
what a user typed (``--scenario``, the pytest marker) into a path: an existing file wins, else a
shipped name (``demo`` or ``demo.json``), else the path as given, so reading it reports the missing
file. ``DEFAULT`` is what ``cefisim serve`` and the pytest plugin load when told nothing.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

PACKAGE = "cefisim.scenarios"
DEFAULT = "demo"


def shipped_dir() -> Path:
    """The directory of the shipped scenarios (a regular package on disk: cefisim is not zip-safe)."""
    root = files(PACKAGE)
    if not isinstance(root, Path):  # pragma: no cover - only a zip import gives anything else
        raise RuntimeError(f"{PACKAGE} is not on the file system ({root!r}): install cefisim unzipped")
    return root


def shipped_names() -> list[str]:
    """Names of the shipped scenarios (file stems), sorted."""
    return sorted(p.stem for p in shipped_dir().glob("*.json"))


def shipped(name: str) -> Path | None:
    """The shipped scenario called ``name`` (with or without ``.json``), or None."""
    stem = name.removesuffix(".json")
    if stem not in shipped_names():
        return None
    return shipped_dir() / f"{stem}.json"


def resolve(spec: str | Path | None) -> Path:
    """The file a scenario argument names: an existing path, else a shipped name, else the path."""
    if spec is None:
        path = shipped(DEFAULT)
        assert path is not None, "the package ships its default scenario"
        return path
    path = Path(spec)
    if path.exists() or path.parent != Path("."):
        return path
    return shipped(str(spec)) or path


def describe(name: str) -> str:
    """The first sentence of a shipped scenario's ``description`` (empty when it has none)."""
    path = shipped(name)
    try:
        doc = json.loads(path.read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return ""
    text = doc.get("description", "") if isinstance(doc, dict) else ""
    if not isinstance(text, str):
        return ""
    head, dot, _ = text.partition(". ")
    return head + ("." if dot else "")
