"""The documentation a newcomer reads first holds: the README's module names import, docs/control.md
covers every route of the served control plane, the changelog's newest entry is the package's version,
and the docs stand on their own (no citation of a file the repository does not have)."""

from __future__ import annotations

import importlib
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

import cefisim
from cefisim.api.cli.main import main
from cefisim.api.web.control.isolated_venues import VENUE_PREFIX
from cefisim.api.web.control.openapi import control_document

ROOT = Path(__file__).resolve().parents[1]


def _resolves(dotted: str) -> bool:
    """``cefisim.a.b`` is a module, or an attribute of the longest module prefix."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


@pytest.mark.parametrize("page", ["README.md", "docs/pytest.md", "docs/client.md", "CONTRIBUTING.md"])
def test_every_cefisim_name_the_page_gives_imports(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    names = sorted(set(re.findall(r"\bcefisim(?:\.[A-Za-z_]\w*)+", text)))
    assert names, f"{page} names no cefisim module"
    assert [n for n in names if not _resolves(n)] == []


def test_the_readme_names_the_signers_where_they_are() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "cefisim.api.client.signing_clients" in text and "CefiHttpxAuth" in text


def _documented() -> set[tuple[str, str]]:
    """(method, path) of every ``### METHOD /path, METHOD /path`` heading of docs/control.md."""
    out = set()
    for line in (ROOT / "docs" / "control.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            for item in line[4:].split(", "):
                method, _, path = item.partition(" ")
                out.add((method, path))
    return out


def test_control_md_documents_every_route_of_the_served_control_plane() -> None:
    served = {
        (method.upper(), path)
        for path, ops in control_document("http://127.0.0.1:8080")["paths"].items()
        for method in ops
    }
    # a venue's routes are the same routes under its prefix: the page says so once, in one section
    plain = {(m, p) for m, p in served if not p.startswith(VENUE_PREFIX + "/")}
    scoped = {(m, "/_sim" + p.removeprefix(VENUE_PREFIX)) for m, p in served if p.startswith(VENUE_PREFIX + "/")}
    assert scoped <= plain
    assert _documented() == plain
    assert f"`{VENUE_PREFIX}/`" in (ROOT / "docs" / "control.md").read_text(encoding="utf-8")


def test_the_changelogs_newest_entry_is_the_packages_version(capsys: pytest.CaptureFixture[str]) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    versions = re.findall(r"^## (\d+\.\d+\.\d+)\s*$", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.MULTILINE)
    assert versions and versions[0] == project == cefisim.__version__
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() in (f"cefisim {project} (pure)", f"cefisim {project} (compiled)")


def test_the_docs_cite_no_file_the_repository_does_not_have() -> None:
    """The project's files stand on their own: no citation of working notes kept outside it."""
    outside = ["design" + ".md", "style" + ".md", "perf-" + "notes", "../" + "shared"]
    tracked = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    )
    found = []
    for name in tracked:
        path = ROOT / name
        if not name or path.suffix not in {".md", ".py", ".toml", ".json", ".js", ".html", ".txt", ""}:
            continue
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{name}: {word}" for word in outside if word in text]
    assert found == []


def _toctree(index: str) -> list[str]:
    """The pages the ``{toctree}`` block of docs/index.md lists."""
    block = re.search(r"```\{toctree\}\n(.*?)```", index, flags=re.DOTALL)
    assert block, "docs/index.md has no toctree"
    return [line.strip() for line in block.group(1).splitlines() if line.strip() and not line.startswith(":")]


def test_every_page_is_in_the_sites_table_of_contents_and_its_index_table() -> None:
    """The site's build fails on an orphan page (make docs); this says so in the suite, in a second."""
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    pages = sorted(p.stem for p in (ROOT / "docs").glob("*.md") if p.name != "index.md")
    assert sorted(_toctree(index)) == pages
    assert sorted(re.findall(r"^\| \[[^]]+\]\(([a-z0-9_-]+)\.md\) \|", index, flags=re.MULTILINE)) == pages


def test_every_docs_page_the_code_cites_is_a_page_users_have() -> None:
    """A message, help text or docstring that cites ``docs/x.md`` names a page the wheel ships (as
    ``cefisim.docs``, ``cefisim docs`` prints where) and every server serves at ``/docs/x.md``."""
    cited = set()
    for folder in ("api", "engine", "cefisim", "scenarios"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".js", ".html", ".json"}:
                cited |= set(re.findall(r"docs/([a-z0-9_-]+\.md)", path.read_text(encoding="utf-8")))
    assert cited, "the code cites no docs page"
    assert sorted(name for name in cited if not (ROOT / "docs" / name).is_file()) == []
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert setuptools["package-dir"]["cefisim.docs"] == "docs"
    assert setuptools["package-data"]["cefisim.docs"] == ["*.md"] and "cefisim.docs" in setuptools["packages"]


def test_the_readme_points_at_the_documentation() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "[docs/index.md](docs/index.md)" in readme and "cefisim docs" in readme and "make docs" in readme
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert list(urls.values()) == ["http://127.0.0.1:8080/docs/"]
