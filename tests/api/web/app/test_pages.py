"""``GET /`` lists what the server serves (never a 404), and ``/docs/`` serves the documentation's pages."""

from __future__ import annotations

from pathlib import Path

from tests.api.conftest import Api, scenario_doc

ROOT = Path(__file__).resolve().parents[4]


async def test_get_slash_lists_the_live_page_the_openapi_documents_and_the_docs(api: Api) -> None:
    resp = await api.client.get("/")
    assert resp.status == 200 and resp.content_type == "text/html"
    page = await resp.text()
    for href in ("/_sim/ui/?instrument=1", "/v1/cefi/openapi.json", "/_sim/openapi.json", "/docs/", "/_sim/requests"):
        assert f'<a href="{href}">' in page, href
    for href in ("/v1/cefi/openapi.json", "/_sim/openapi.json", "/docs/"):  # every link leads somewhere
        assert (await api.client.get(href)).status == 200, href
    assert "--control-token" not in page
    assert (await api.client.head("/")).status == 200


async def test_in_production_it_lists_no_control_plane_and_with_a_token_says_how_to_open_the_page(api_factory) -> None:
    production = await (await api_factory(environment="production")).client.get("/")
    text = await production.text()
    assert production.status == 200 and "/v1/cefi/openapi.json" in text and "/docs/" in text
    assert "/_sim/" not in text
    guarded = await (await api_factory(control_token="s3cret")).client.get("/")
    text = await guarded.text()
    assert guarded.status == 200 and '<a href="/_sim/ui/?instrument=1">' in text
    assert "/_sim/ui/?instrument=1#token=&lt;token&gt;" in text and "s3cret" not in text


async def test_an_instrument_less_scenario_still_has_an_index(api_factory) -> None:
    api = await api_factory(scenario_doc(instruments=[], clients=[], events=[]))
    assert (await api.client.get("/")).status == 200


async def test_docs_lists_and_serves_every_page_and_nothing_else(api: Api) -> None:
    index = await (await api.client.get("/docs/")).text()
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert [name for name in pages if f'href="/docs/{name}"' not in index] == []
    resp = await api.client.get("/docs/limits.md")
    assert resp.status == 200 and resp.content_type == "text/plain" and resp.charset == "utf-8"
    assert await resp.text() == (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    redirect = await api.client.get("/docs", allow_redirects=False)
    assert redirect.status == 302 and redirect.headers["Location"] == "/docs/"
    for path in ("/docs/nope.md", "/docs/..%2Fpyproject.toml", "/docs/conf.py", "/docs/Index.md"):
        resp = await api.client.get(path)
        assert resp.status == 404 and resp.content_type == "application/problem+json", path
