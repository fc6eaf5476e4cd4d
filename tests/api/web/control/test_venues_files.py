"""Venues on a shared server: files a posted document names, restarts that never depend on them, venues
set aside, size caps, a delete racing a command, the control token before any lookup (docs/venues.md)."""

from __future__ import annotations

import asyncio
import io
import os
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime import venue_files
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.runtime.venues import Venues
from cefisim.api.web.app.application import create_app
from cefisim.api.web.control.isolated_venues import MAX_SCENARIO_BYTES, VENUES
from cefisim.api.web.server.keys import ServerOptions
from tests.api.conftest import Api, scenario_doc
from tests.api.web.control.test_venues import order_body, signed

SECRET_LINE = "root:$6$NOT-TO-BE-QUOTED:19000:0:99999:7:::"


def maker_doc(prices_file: str) -> dict[str, Any]:
    """A scenario whose market maker follows a price file."""
    agent = {
        "type": "market_maker",
        "name": "mm",
        "client": "alice",
        "instrument": "BTC-USD",
        "interval": "1",
        "levels": 1,
        "spread": "10.00",
        "spacing": "5.00",
        "qty": "1",
        "prices_file": prices_file,
        "every": "1",
    }
    return scenario_doc(agents=[agent])


async def post(client: TestClient, body: dict[str, Any]) -> tuple[int, Any]:
    resp = await client.post("/_sim/venues", json=body)
    return resp.status, await resp.json()


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """Factory: ``await server(**options)`` -> a client of a server journaling to ``tmp_path/journal.jsonl``
    (started again on the same journal by the next call; the previous one is stopped first)."""
    running: list[TestClient] = []

    async def start(**options: Any) -> TestClient:
        if running:
            await running.pop().close()
        sim = Simulation(parse_scenario(scenario_doc(), "test-scenario.json"), journal_path=tmp_path / "journal.jsonl")
        client = TestClient(TestServer(create_app(sim, ServerOptions(**options))))
        await client.start_server()
        running.append(client)
        return client

    yield start
    for client in running:
        await client.close()


# --- files a posted document names -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        (maker_doc("prices.txt"), "scenario.agents[0].prices_file"),
        (scenario_doc(recorded=[{"instrument": "BTC-USD", "file": "/etc/hostname"}]), "scenario.recorded[0].file"),
    ],
)
async def test_without_a_data_dir_a_posted_document_names_no_file(api: Api, doc: dict[str, Any], field: str) -> None:
    status, problem, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": doc})
    assert status == 400 and problem["detail"].startswith(field + ": a document posted over HTTP names no server file")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "prices.txt").write_text("30000.00\n30010.00\n30020.00\n")
    (folder / "secret-prices.txt").write_text(SECRET_LINE + "\n")
    (tmp_path / "outside.txt").write_text(SECRET_LINE + "\n")
    os.mkfifo(folder / "fifo.txt")
    (folder / "zero.txt").symlink_to("/dev/zero")
    (folder / "escape.txt").symlink_to(tmp_path / "outside.txt")
    (folder / "inside-link.txt").symlink_to("prices.txt")
    (folder / "big.txt").write_bytes(b"30000.00\n" * 200)
    return folder


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("fifo.txt", "cannot read fifo.txt: not a regular file"),
        ("zero.txt", "zero.txt: a symbolic link (files are read without following links)"),
        ("/dev/zero", "/dev/zero: outside the server's data directory (--data-dir)"),
        ("/etc/shadow", "/etc/shadow: outside the server's data directory (--data-dir)"),
        ("../outside.txt", "../outside.txt: outside the server's data directory (--data-dir)"),
        ("escape.txt", "escape.txt: a symbolic link (files are read without following links)"),
        ("inside-link.txt", "inside-link.txt: a symbolic link (files are read without following links)"),
        ("bad\0name.txt", "'bad\\x00name.txt': not a file name (it is empty or holds a NUL byte)"),
        ("missing.txt", "cannot read missing.txt: No such file or directory"),
        ("big.txt", "big.txt: larger than 0 MiB"),
        ("secret-prices.txt", "the file's content is not valid here"),
    ],
)
async def test_the_data_dir_serves_regular_files_inside_it_and_quotes_none(
    api_factory: Any, data_dir: Path, monkeypatch: pytest.MonkeyPatch, name: str, reason: str
) -> None:
    monkeypatch.setattr(venue_files, "MAX_DATA_FILE_BYTES", 1000)
    api = await api_factory(data_dir=data_dir)
    # a FIFO with no writer would block a plain open for ever: the answer must come regardless
    status, problem, _ = await asyncio.wait_for(
        api.call("POST", "/_sim/venues", client_id=None, json={"scenario": maker_doc(name)}), timeout=60
    )
    assert status == 400 and problem["detail"] == f"scenario.agents[0].prices_file: {reason}", problem
    assert "NOT-TO-BE-QUOTED" not in orjson.dumps(problem).decode()
    status, _, _ = await api.call("GET", "/_sim/health", client_id=None)
    assert status == 200
    status, venue, _ = await api.call(
        "POST", "/_sim/venues", client_id=None, json={"scenario": maker_doc("prices.txt")}
    )
    assert status == 201, venue


# --- restarts never depend on those files; a venue that cannot be rebuilt is set aside ---------------------


async def test_a_restart_never_depends_on_a_file_the_document_named(
    server: Any, data_dir: Path, tmp_path: Path
) -> None:
    client = await server(data_dir=data_dir)
    status, venue = await post(client, {"scenario": maker_doc("prices.txt")})
    assert status == 201, venue
    await client.post("/_sim/venues/v1/clock/advance", json={"seconds": "2"})
    before = await (await client.get("/_sim/venues/v1/book/1")).json()
    assert before["asks"]
    (data_dir / "prices.txt").write_text("1.00\n")  # edited, then removed: the venue read a copy
    (data_dir / "prices.txt").unlink()
    client = await server(data_dir=data_dir)
    listed = await (await client.get("/_sim/venues")).json()
    assert [(v["id"], v["state"]) for v in listed] == [("default", "live"), ("v1", "live")]
    assert await (await client.get("/_sim/venues/v1/book/1")).json() == before
    copies = list((tmp_path / "journal.jsonl.venues" / "files").iterdir())
    assert [p.read_text() for p in copies] == ["30000.00\n30010.00\n30020.00\n"] and len(copies[0].name) == 64
    assert (await client.delete("/_sim/venues/v1")).status == 200
    assert not list((tmp_path / "journal.jsonl.venues" / "files").iterdir())  # the copy went with its venue


async def test_a_venue_that_cannot_be_rebuilt_is_set_aside_and_every_other_serves(server: Any, tmp_path: Path) -> None:
    client = await server()
    venues = [await post(client, {"scenario": scenario_doc()}) for _ in range(2)]
    for _, venue in venues:
        _, rec, _ = await signed(_Api(client), venue, "POST", "/v1/cefi/orders", json=order_body())
        assert rec["status"] == "ACTIVE"
    journal = tmp_path / "journal.jsonl.venues" / "v1.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    damaged = b"".join([*lines[:-1], b'{"not": "a record"}\n', lines[-1]])
    journal.write_bytes(damaged)
    client = await server()
    listed = await (await client.get("/_sim/venues")).json()
    assert [(v["id"], v["state"]) for v in listed] == [("default", "live"), ("v2", "live"), ("v1", "set-aside")]
    assert listed[2]["reason"]
    assert (await client.get("/_sim/venues/v1")).status == 200
    assert (await client.get("/_sim/venues/v1/book/1")).status == 404
    assert journal.read_bytes() == damaged  # kept as it was, for whoever mends it
    _, page, _ = await signed(_Api(client), venues[1][1], "GET", "/v1/cefi/orders/all")
    assert len(page["data"]) == 1
    assert (await client.get("/_sim/health")).status == 200
    assert (await client.delete("/_sim/venues/v1")).status == 200 and not journal.exists()


class _Api(Api):
    """``signed`` on a bare client."""

    def __init__(self, client: TestClient) -> None:
        super().__init__(client, None, "concat")  # type: ignore[arg-type]


# --- documents: a size cap, parsed off the event loop -------------------------------------------------------


async def test_a_create_body_over_the_cap_is_a_413_saying_so(api: Api) -> None:
    resp = await api.client.post(
        "/_sim/venues", data=io.BytesIO(b" " * (MAX_SCENARIO_BYTES + 1)), headers={"Content-Type": "application/json"}
    )
    status, problem = resp.status, await resp.json()
    assert status == 413 and problem["detail"].startswith("body: a create body") and "16 MiB" in problem["detail"]


async def test_a_create_parses_and_builds_off_the_event_loop(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[int] = []
    make = Venues.make

    def spy(self: Venues, venue_id: str, body: dict[str, Any]) -> Any:
        threads.append(threading.get_ident())
        return make(self, venue_id, body)

    monkeypatch.setattr(Venues, "make", spy)
    status, _, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": scenario_doc()})
    assert status == 201 and threads and threads[0] != threading.get_ident()


# --- a command racing its venue's delete ---------------------------------------------------------------------


async def test_an_order_whose_body_arrives_after_its_venue_is_deleted_is_refused(api: Api) -> None:
    _, venue, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": scenario_doc()})
    hub = api.client.server.app[VENUES]  # type: ignore[union-attr]
    sim = hub.created["v1"].sim
    routed = asyncio.Event()
    route = hub.route

    def spy(request: Any) -> bool:
        answer = route(request)
        if request.path == "/v1/cefi/orders":
            routed.set()
        return answer

    hub.route = spy  # type: ignore[method-assign]
    raw = orjson.dumps(order_body())
    entry = venue["clients"][0]
    headers = api.headers(100, "POST", "/v1/cefi/orders", raw, key=entry["key"], secret=entry["secret"])
    reader, writer = await asyncio.open_connection(api.client.host, api.client.port)
    head = "".join(f"{k}: {v}\r\n" for k, v in {**headers, "Content-Length": str(len(raw))}.items())
    writer.write(f"POST /v1/cefi/orders HTTP/1.1\r\nHost: x\r\n{head}\r\n".encode())
    await writer.drain()
    await asyncio.wait_for(routed.wait(), timeout=60)  # routed to v1, waiting for its body
    status, _, _ = await api.call("DELETE", "/_sim/venues/v1", client_id=None)
    assert status == 200
    writer.write(raw)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(4096), timeout=60)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 404 ") and b"/unknown-venue" in answer, answer
    assert sim.journal_path is None and not list(api.client.server.app[VENUES].created)  # type: ignore[union-attr]


# --- the control token before any lookup; default-venue routes stay on the default venue --------------------


async def test_without_the_token_an_unknown_venue_is_a_401_not_a_404(api_factory: Any) -> None:
    api = await api_factory(control_token="t0ken")
    token = {"Authorization": "Bearer t0ken"}
    for path in ("/_sim/venues/v9/book/1", "/_sim/venues/v9", "/_sim/stream?venue=v9&instrument=1"):
        status, _, _ = await api.call("GET", path, client_id=None)
        assert status == 401, path
        status, _, _ = await api.call("GET", path, client_id=None, headers=token)
        assert status == 404, path


async def test_default_venue_control_routes_never_follow_a_key_header(api: Api) -> None:
    _, venue, _ = await api.call("POST", "/_sim/venues", client_id=None, json={"scenario": scenario_doc()})
    await signed(api, venue, "POST", "/v1/cefi/orders", json=order_body())
    key = {"x-svc-auth-token": venue["clients"][0]["key"]}
    status, _, _ = await api.call("POST", "/_sim/reset", client_id=None, headers=key)
    assert status == 200
    _, book, _ = await api.call("GET", "/_sim/venues/v1/book/1", client_id=None)
    assert book["bids"], "POST /_sim/reset with v1's key reset v1"
    _, default_book, _ = await api.call("GET", "/_sim/book/1", client_id=None, headers=key)
    assert default_book["bids"] == []


def test_data_dir_flag_and_its_variable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from cefisim.api.cli.common.cli_env import env_defaults
    from cefisim.api.cli.main import _serve_parser
    from cefisim.api.web.server.limit_flags import limit_options

    sub = argparse.ArgumentParser().add_subparsers()
    serve = _serve_parser(sub)
    assert ServerOptions(**limit_options(serve.parse_args([]))).data_dir is None
    env_defaults(serve, {"CEFISIM_DATA_DIR": str(tmp_path)})
    assert ServerOptions(**limit_options(serve.parse_args([]))).data_dir == tmp_path.resolve()
    with pytest.raises(SystemExit) as exited:
        serve.parse_args(["--data-dir", str(tmp_path / "nowhere")])
    assert exited.value.code == 2 and "nowhere: not a folder" in capsys.readouterr().err


async def test_venue_answers_match_the_control_document(server: Any, tmp_path: Path) -> None:
    """Create (secrets), GET one (identifiers), the list with a set-aside venue: as /_sim/openapi.json says."""
    import jsonschema

    client = await server()
    status, created = await post(client, {"scenario": "demo"})
    assert status == 201
    one = await (await client.get("/_sim/venues/v1")).json()
    await post(client, {"scenario": scenario_doc()})
    (tmp_path / "journal.jsonl.venues" / "v2.venue.json").write_bytes(b"{damaged")
    client = await server()
    listed = await (await client.get("/_sim/venues")).json()
    assert [v["state"] for v in listed] == ["live", "live", "set-aside"]
    document = await (await client.get("/_sim/openapi.json")).json()

    def check(value: Any, schema: str) -> None:
        jsonschema.validate(value, {"$ref": f"#/components/schemas/{schema}", "components": document["components"]})

    check(created, "Venue")
    check(one, "AnyVenue")
    check(listed, "Venues")
    assert "secret" in created["clients"][0] and "private_key" in created["api_keys"][0]


# --- creates side by side ------------------------------------------------------------------------------------


async def test_a_slow_create_holds_no_other_create_and_keeps_its_copies(
    server: Any, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/venues.md: creates of different venues are made side by side. v1's make is held (an event,
    once its file copy is kept) while v2 is created and deleted and a create fails: each is answered,
    none removes v1's copy (not recorded yet), and a restart brings v1 back from it."""
    made, go = threading.Event(), threading.Event()
    make = Venues.make

    def held(self: Venues, venue_id: str, body: dict[str, Any]) -> Any:
        out = make(self, venue_id, body)
        if venue_id == "v1":
            made.set()
            assert go.wait(60)
        return out

    monkeypatch.setattr(Venues, "make", held)
    client = await server(data_dir=data_dir)
    first = asyncio.ensure_future(post(client, {"scenario": maker_doc("prices.txt")}))
    try:
        assert await asyncio.to_thread(made.wait, 60)
        status, second = await asyncio.wait_for(post(client, {"scenario": scenario_doc()}), timeout=60)
        assert status == 201 and second["id"] == "v2"
        status, problem = await post(client, {"scenario": maker_doc("missing.txt")})
        assert status == 400 and problem["detail"].startswith("scenario.agents[0].prices_file")
        assert (await client.delete("/_sim/venues/v2")).status == 200
        assert not first.done()
    finally:
        go.set()
    status, venue = await first
    assert status == 201 and venue["id"] == "v1"
    manifest = (tmp_path / "journal.jsonl.venues" / "manifest.jsonl").read_bytes().splitlines()
    # v2's delete rewrote it (the highest id kept) before v1's create line, appended as v1 finished
    assert [(orjson.loads(line)["op"], orjson.loads(line)["id"]) for line in manifest] == [
        ("delete", "v2"),
        ("create", "v1"),
    ]
    client = await server(data_dir=data_dir)
    listed = await (await client.get("/_sim/venues")).json()
    assert [(v["id"], v["state"]) for v in listed] == [("default", "live"), ("v1", "live")]
    status, third = await post(client, {"scenario": scenario_doc()})
    assert status == 201 and third["id"] == "v3"
