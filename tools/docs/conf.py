"""Sphinx configuration of the documentation site (``make docs``): the pages of ``docs/``, in MyST Markdown.

Kept out of ``docs/`` on purpose: that folder ships in the wheel as the installed documentation
(``cefisim docs``), and a ``conf.py`` there would ship as a module. ``make docs`` runs
``sphinx-build -c tools/docs docs build/docs`` with warnings as errors, so a link to a page that does
not exist, a page in no table of contents, or a broken cross-reference fails the build.
docs/docs-site.md says why Sphinx with MyST and Furo.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

project = "cefisim"
author = "the cefisim authors"
release = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
version = release

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
# `docs/x.md` in a page's prose is a path a reader types; a link is written [x](x.md) and checked
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
# a missing link target, an orphan page, a bad heading level: all warnings, all errors (-W). Only
# Pygments' complaint about an example it cannot colour (an HTTP request line above a JSON body, a
# "..." inside JSON) is let through: the example is shown as written, uncoloured
suppress_warnings = ["misc.highlighting_failure"]

html_theme = "furo"
html_title = f"cefisim {release}"
html_show_sourcelink = False
html_copy_source = False
