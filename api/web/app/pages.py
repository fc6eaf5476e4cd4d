"""The server's own pages outside the interfaces: the index at ``GET /`` and the documentation.

- ``GET /``: a small HTML page that lists what this server serves: the live page (one link per
  instrument), the OpenAPI documents, the health route, the last requests and the documentation.
  In ``--environment production`` there is no control plane, so only the CeFi document and the
  documentation are listed; with ``--control-token`` the ``/_sim/`` entries say how to open them.
- ``GET /docs/``: the documentation's pages (the project's ``docs/*.md``, shipped in the wheel as
  package data), each with its title; ``GET /docs/{page}.md``: one page as UTF-8 text (Markdown
  reads as it is; the built site is ``make docs``, in a checkout). Any other name is a 404 problem.

Neither sits behind the control plane's guard: they hold nothing but what the wheel ships and the
names of the instruments. :func:`docs_folder` is where the pages are (``cefisim docs`` prints it).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from aiohttp import web

import cefisim
from cefisim.api.edge.problems import Problem
from cefisim.api.web.control.isolated_venues import VENUES
from cefisim.api.web.server.keys import OPTIONS

__all__ = ["DOCS_PREFIX", "docs_folder", "page_titles", "pages_routes"]

DOCS_PREFIX = "/docs/"
_PAGE = re.compile(r"^[a-z0-9][a-z0-9_-]*\.md$")
_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
}


def docs_folder() -> Path | None:
    """The folder of the documentation's pages: ``cefisim/docs/`` where the wheel installed them, or
    the checkout's ``docs/`` beside ``cefisim/`` (an editable install runs the checkout); None when
    neither holds the pages."""
    package = Path(cefisim.__file__).resolve().parent
    for folder in (package / "docs", package.parent / "docs"):
        if (folder / "index.md").is_file():
            return folder
    return None


def page_titles(folder: Path) -> dict[str, str]:
    """Each page's file name -> its first heading, the index first, then by name."""
    pages = sorted(folder.glob("*.md"), key=lambda p: (p.name != "index.md", p.name))
    out = {}
    for page in pages:
        first = next((line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("# ")), "")
        out[page.name] = first[2:].strip() or page.stem
    return out


def _html(title: str, body: str) -> web.Response:
    doc = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        "<style>body{font:15px/1.5 system-ui,sans-serif;max-width:46em;margin:2em auto;padding:0 1em}"
        "code{background:#f3f3f3;padding:0 .2em}</style></head>"
        f"<body><h1>{html.escape(title)}</h1>\n{body}</body></html>\n"
    )
    return web.Response(text=doc, content_type="text/html", headers=_HEADERS)


def _link(href: str, text: str, note: str = "") -> str:
    tail = f" — {html.escape(note)}" if note else ""
    return f'<li><a href="{html.escape(href)}">{html.escape(text)}</a>{tail}</li>'


async def index(request: web.Request) -> web.Response:
    """``GET /``: what this server serves (its default venue, ``--scenario``), as links."""
    sim, options = request.app[VENUES].default.sim, request.app[OPTIONS]
    items = []
    control = options.environment != "production"
    if control:
        for inst_id, inst in sim.scenario.instruments.items():
            items.append(_link(f"/_sim/ui/?instrument={inst_id}", f"Live page: {inst.symbol}", "book, trades, orders"))
    items.append(_link("/v1/cefi/openapi.json", "OpenAPI document of the venue (CeFi and Auth)"))
    if control:
        items.append(_link("/_sim/openapi.json", "OpenAPI document of the control plane (/_sim/)"))
        items.append(_link("/_sim/health", "Health", "scenario, clock, counters"))
        items.append(_link("/_sim/requests", "The last requests served", "with each failure's problem document"))
    items.append(_link(DOCS_PREFIX, "Documentation"))
    note = ""
    if control and options.control_token is not None:
        note = (
            "<p>This server runs with <code>--control-token</code>: the <code>/_sim/</code> routes need "
            "<code>Authorization: Bearer &lt;token&gt;</code>. A browser opens the live page with the token "
            "after a <code>#</code>: <code>/_sim/ui/?instrument=1#token=&lt;token&gt;</code> (the part after "
            "<code>#</code> never leaves the browser; the page sends the token itself).</p>\n"
        )
    mode = "production" if not control else f"{sim.clock_mode} clock"
    body = (
        f"<p>cefisim {html.escape(cefisim.__version__)} serving <code>{html.escape(Path(sim.scenario.source).name)}"
        f"</code> ({html.escape(mode)}).</p>\n{note}<ul>\n" + "\n".join(items) + "\n</ul>\n"
    )
    return _html("cefisim", body)


async def docs_index(request: web.Request) -> web.Response:
    """``GET /docs/``: the pages, each with its title."""
    folder = docs_folder()
    if folder is None:
        raise Problem(404, "not-found", "this installation carries no documentation pages")
    items = [_link(DOCS_PREFIX + name, title, name) for name, title in page_titles(folder).items()]
    body = (
        "<p>The pages as Markdown text; in a checkout, <code>make docs</code> builds them as a site.</p>\n"
        "<ul>\n" + "\n".join(items) + "\n</ul>\n"
    )
    return _html("cefisim documentation", body)


async def docs_page(request: web.Request) -> web.Response:
    """``GET /docs/{page}.md``: one page as UTF-8 text."""
    name = request.match_info["page"]
    folder = docs_folder()
    if folder is None or not _PAGE.match(name) or not (folder / name).is_file():
        raise Problem(404, "not-found", f"no such page: {request.path} (GET {DOCS_PREFIX} lists them)")
    return web.Response(text=(folder / name).read_text(encoding="utf-8"), content_type="text/plain", headers=_HEADERS)


def pages_routes() -> list[web.RouteDef]:
    """The index and the documentation."""
    return [
        web.get("/", index),
        web.get("/docs", docs_redirect),
        web.get(DOCS_PREFIX, docs_index),
        web.get(DOCS_PREFIX + "{page}", docs_page),
    ]


async def docs_redirect(request: web.Request) -> web.Response:
    """``GET /docs`` -> ``/docs/`` (the pages' links are relative to it)."""
    raise web.HTTPFound(DOCS_PREFIX)
