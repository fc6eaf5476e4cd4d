"""GET /_sim/stream over real HTTP (server-sent events) and GET /_sim/ui/: snapshot first, trades and
coalesced depth after a crossing order, client-scoped order events, Last-Event-ID resume, a slow
client dropped, the cap on open streams, reset, the scenario's own trades, the guard and bad input."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from aiohttp import ClientResponse

from cefisim.api.web.control.isolated_venues import VENUES
from cefisim.api.web.server.stream_hub import StreamHub, StreamSettings, parse_id
from cefisim.engine.commands import CancelOrder, PlaceOrder
from tests.api.conftest import Api

DEMO = Path(__file__).resolve().parents[4] / "scenarios" / "demo.json"


class Sse:
    """A server-sent event stream read line by line: ``next()`` -> (id, event, data)."""

    def __init__(self, resp: ClientResponse) -> None:
        self.resp = resp

    async def next(self, timeout: float = 5.0) -> tuple[str | None, str, Any]:
        event_id, kind, data = None, "message", []
        async with asyncio.timeout(timeout):
            while True:
                line = (await self.resp.content.readline()).decode()
                assert line, "the stream ended"
                line = line.rstrip("\n")
                if not line:
                    if data:
                        return event_id, kind, orjson.loads("\n".join(data))
                    continue
                name, _, value = line.partition(": ")
                if name == "id":
                    event_id = value
                elif name == "event":
                    kind = value
                elif name == "data":
                    data.append(value)

    async def take(self, count: int) -> list[tuple[str | None, str, Any]]:
        return [await self.next() for _ in range(count)]

    async def quiet(self, seconds: float = 0.3) -> bool:
        """True when nothing arrives for ``seconds``."""
        try:
            await self.next(seconds)
        except TimeoutError:
            return True
        return False


async def open_stream(api: Api, headers: dict[str, str] | None = None, **params: str) -> Sse:
    resp = await api.client.get("/_sim/stream", params=params, headers=headers or {})
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"] == "text/event-stream"
    return Sse(resp)


def hub_of(api: Api) -> StreamHub:
    return api.client.app[VENUES].default.stream_hub


async def cross(api: Api) -> None:
    """Bob rests two asks, Alice buys through both: two trades in one command."""
    await api.order(101, side="SELL", qty="1", price="50000.00")
    await api.order(101, side="SELL", qty="1", price="50001.00")
    await api.order(100, side="BUY", qty="1.5", price="50001.00")


async def test_snapshot_first_then_trades_order_events_and_one_depth_per_command(api: Api) -> None:
    resting = await api.order(100, side="BUY", qty="0.1", price="49000.00")
    sse = await open_stream(api, instrument="1", client="100")
    event_id, kind, snap = await sse.next()
    assert kind == "snapshot" and snap["reason"] == "connect" and snap["venue"] == "default"
    assert event_id is not None and parse_id(event_id) is not None and "-" not in event_id
    assert snap["depth"]["bids"] == [{"price": "49000.00", "qty": "0.1000", "orders": 1}]
    assert [o["id"] for o in snap["orders"]] == [resting["id"]]

    await cross(api)
    # Bob's two asks: a depth event each (his order events are not on Alice's stream)
    (_, k1, _), (_, k2, d2) = await sse.take(2)
    assert (k1, k2) == ("depth", "depth") and len(d2["asks"]) == 2
    events = await sse.take(4)
    assert [kind for _, kind, _ in events] == ["trade", "trade", "order", "depth"]
    ids = [parse_id(i) for i, _, _ in events]
    assert len({event_id[0] for event_id in ids if event_id}) == 1, "one command: one n, one depth event"
    assert [event_id[1] for event_id in ids if event_id] == [0, 1, 2, 5]  # 3 and 4: Bob's two orders
    trades = [data for _, kind, data in events if kind == "trade"]
    assert [(t["price"], t["qty"], t["taker_side"], t["match_id"]) for t in trades] == [
        ("50000.00", "1.0000", "BUY", "1"),
        ("50001.00", "0.5000", "BUY", "2"),
    ]
    buy = events[2][2]
    assert buy["client_id"] == "100" and buy["order"]["status"] == "FILLED" and buy["order"]["leaves_qty"] == "0.0000"
    assert [c.get("status") or c["trade"]["match_id"] for c in buy["changes"]] == ["ACTIVE", "1", "2", "FILLED"]
    depth = events[3][2]
    assert depth["asks"] == [{"price": "50001.00", "qty": "0.5000", "orders": 1}] and depth["last_price"] == "50001.00"
    assert await sse.quiet()


async def test_public_stream_has_no_order_events_and_a_client_stream_only_its_own(api: Api) -> None:
    public = await open_stream(api, instrument="1")
    bob = await open_stream(api, instrument="1", client="101")
    _, _, snap = await public.next()
    assert "orders" not in snap and "client_id" not in snap
    assert (await bob.next())[2]["orders"] == []
    await cross(api)
    assert [kind for _, kind, _ in await public.take(5)] == ["depth", "depth", "trade", "trade", "depth"]
    seen = await bob.take(9)
    assert [kind for _, kind, _ in seen] == [
        "order",
        "depth",
        "order",
        "depth",
        "trade",
        "trade",
        "order",
        "order",
        "depth",
    ]
    makers = [data for _, kind, data in seen[6:8]]
    assert [(m["order"]["status"], m["changes"][0]["trade"]["liq_flag"]) for m in makers] == [
        ("FILLED", "MAKER"),
        ("ACTIVE", "MAKER"),
    ]
    assert makers[1]["order"]["leaves_qty"] == "0.5000"
    assert await public.quiet(0.1) and await bob.quiet(0.1)


async def test_ids_come_from_the_engine_sequence_not_from_when_a_stream_opened(api_factory) -> None:
    early, late = await api_factory(), await api_factory()
    early_stream = await open_stream(early, instrument="1")
    await early_stream.next()
    for api in (early, late):
        await api.order(101, side="SELL", qty="1", price="50000.00")
    late_stream = await open_stream(late, instrument="1")
    await late_stream.next()
    for api in (early, late):
        await api.order(100, side="BUY", qty="0.4", price="50000.00")
    await early_stream.next()  # the ask's depth event: before the late stream opened
    crossing = await early_stream.take(2)
    assert [kind for _, kind, _ in crossing] == ["trade", "depth"]
    assert crossing == await late_stream.take(2)


async def test_last_event_id_resumes_where_the_client_left(api: Api) -> None:
    watcher = await open_stream(api, instrument="1")  # keeps the instrument watched all along
    await watcher.next()
    first = await open_stream(api, instrument="1")
    await first.next()
    await api.order(101, side="SELL", qty="1", price="50000.00")
    seen_id, _, _ = await first.next()
    first.resp.close()
    await api.order(101, side="SELL", qty="1", price="50002.00")
    await api.order(100, side="BUY", qty="1.5", price="50002.00")
    missed = await watcher.take(5)
    assert [kind for _, kind, _ in missed[1:]] == ["depth", "trade", "trade", "depth"]
    resumed = await open_stream(api, headers={"Last-Event-ID": str(seen_id)}, instrument="1")
    assert await resumed.take(4) == missed[1:], "the events after the id, nothing before, no snapshot"
    assert await resumed.quiet(0.1)
    # the id of a snapshot resumes too: the events after the state it showed
    snap_id, kind, _ = await (await open_stream(api, instrument="1")).next()
    assert kind == "snapshot"
    await api.order(100, side="BUY", qty="0.1", price="49000.00")
    after = await watcher.next()
    again = await open_stream(api, headers={"Last-Event-ID": str(snap_id)}, instrument="1")
    assert await again.next() == after


async def test_an_id_the_ring_no_longer_reaches_gets_a_fresh_snapshot(api: Api) -> None:
    hub_of(api).settings = StreamSettings(ring_events=3)
    watcher = await open_stream(api, instrument="1")
    old_id, _, _ = await watcher.next()
    for step in range(4):
        await api.order(101, side="SELL", qty="1", price=f"5000{step}.00")
    await watcher.take(4)
    for stale in (old_id, "garbage", "99999999-0", ""):
        resumed = await open_stream(api, headers={"Last-Event-ID": stale}, instrument="1")
        _event_id, kind, snap = await resumed.next()
        assert kind == "snapshot" and len(snap["depth"]["asks"]) == 4, stale
        assert snap["reason"] == ("connect" if stale == "" else "resume-gap")
        resumed.resp.close()


async def test_the_scenarios_own_trades_are_streamed(api_factory) -> None:
    doc = json.loads(DEMO.read_text())
    api = await api_factory(doc=doc)
    sse = await open_stream(api, instrument="1")
    _, kind, snap = await sse.next()
    assert kind == "snapshot" and len(snap["depth"]["bids"]) == 5  # the market maker's ladder
    await api.advance(120)
    kinds = set()
    while "trade" not in kinds:
        kinds.add((await sse.next())[1])


async def test_reset_sends_every_stream_a_snapshot(api: Api) -> None:
    await api.order(101, side="SELL", qty="1", price="50000.00")
    sse = await open_stream(api, instrument="1", client="101")
    before_id, _, snap = await sse.next()
    assert len(snap["orders"]) == 1 and before_id is not None
    status, _, _ = await api.call("POST", "/_sim/reset", client_id=None)
    assert status == 200
    _, kind, snap = await sse.next(3.0)  # no command follows: the hub notices within a second
    assert kind == "snapshot" and snap["reason"] == "reset" and snap["orders"] == [] and snap["depth"]["asks"] == []
    # the reset applied no event (no agents): n is the same before and after, yet an id from before
    # the reset never resumes into the state after it
    resumed = await open_stream(api, headers={"Last-Event-ID": before_id}, instrument="1", client="101")
    _, kind, snap = await resumed.next()
    assert kind == "snapshot" and snap["reason"] == "resume-gap" and snap["orders"] == []


async def test_a_slow_client_is_dropped_and_the_others_go_on(api: Api) -> None:
    hub = hub_of(api)
    hub.settings = StreamSettings(queue_events=32)
    sim = api.sim
    for i in range(25):  # a deep book: every depth event is large (about 2.5 kB)
        assert sim.submit(PlaceOrder(101, 1, "SELL", "LIMIT", "0.1", f"{50000 + i}.00")).ok
        assert sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.1", f"{49900 + i}.00")).ok
    fast = await open_stream(api, instrument="1")
    await fast.next()
    host, port = api.client.server.host, api.client.server.port
    sock = socket.socket()  # the slow client: asks for the stream, then reads nothing
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, port))
    sock.sendall(f"GET /_sim/stream?instrument=1 HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    for _ in range(100):
        if hub.open == 2:
            break
        await asyncio.sleep(0.01)
    assert hub.open == 2
    received: list[tuple[str | None, str, Any]] = []
    reader = asyncio.create_task(_drain(fast, received))
    deadline = time.monotonic() + 20
    i = 0
    while hub.dropped == 0 and time.monotonic() < deadline:
        for _ in range(10):  # 20 events a turn: a reader that keeps up never has 32 waiting
            placed = sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1", f"{49950 + i % 25}.00"))
            assert placed.order is not None and placed.ok
            sim.submit(CancelOrder(100, str(placed.order.id)))
            i += 1
        await asyncio.sleep(0.001)
    assert hub.dropped == 1, "the slow stream was dropped"
    assert hub.open == 1, "the fast one still runs"
    sock.settimeout(5)
    with contextlib.suppress(ConnectionResetError):  # the server closed the connection: EOF (or a reset)
        while sock.recv(1 << 20):
            pass  # what the kernel still held for it; a timeout here fails the test
    sock.close()
    await api.order(101, side="SELL", qty="0.1", price="50000.50")
    for _ in range(500):
        if received and received[-1][2]["asks"][1]["price"] == "50000.50":
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the fast stream stopped")
    reader.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await reader


async def _drain(sse: Sse, into: list[tuple[str | None, str, Any]]) -> None:
    """Read as fast as the server writes (until cancelled)."""
    while True:
        into.append(await sse.next(30))


async def test_streams_beyond_the_cap_get_a_429_problem(api: Api) -> None:
    hub_of(api).settings = StreamSettings(max_streams=2)
    first = await open_stream(api, instrument="1")
    await open_stream(api, instrument="2")
    resp = await api.client.get("/_sim/stream", params={"instrument": "1"})
    body = await resp.json(content_type=None)
    assert resp.status == 429 and body["type"].endswith("/too-many-streams") and resp.headers["Retry-After"]
    first.resp.close()
    for _ in range(50):  # the server notices the client left within a second
        if hub_of(api).open == 1:
            break
        await asyncio.sleep(0.1)
    await open_stream(api, instrument="1")


@pytest.mark.parametrize(
    ("params", "status", "detail"),
    [
        ({}, 400, "instrument: required"),
        ({"instrument": "x1"}, 400, "instrument: must be a whole number"),
        ({"instrument": "9"}, 404, "instrument: no instrument '9'"),
        ({"instrument": "1", "client": "5"}, 404, "client: no client '5'"),
        ({"instrument": "1", "venue": "team-a"}, 404, "venue: no venue 'team-a'"),
    ],
)
async def test_bad_parameters_are_problems_naming_them(
    api: Api, params: dict[str, str], status: int, detail: str
) -> None:
    resp = await api.client.get("/_sim/stream", params=params)
    body = await resp.json(content_type=None)
    assert resp.status == status and resp.content_type == "application/problem+json"
    assert body["detail"].startswith(detail)


async def test_the_default_venue_by_name_or_empty(api: Api) -> None:
    for venue in ("default", ""):
        sse = await open_stream(api, instrument="2", venue=venue)
        assert (await sse.next())[1] == "snapshot"
        sse.resp.close()


async def test_the_page_and_its_files(api: Api) -> None:
    resp = await api.client.get("/_sim/ui/", params={"instrument": "1"})
    html = await resp.text()
    assert resp.status == 200 and resp.content_type == "text/html" and '<script src="app.js">' in html
    assert "default-src 'none'" in resp.headers["Content-Security-Policy"]
    assert "http" not in html.replace("http-equiv", ""), "nothing is loaded from elsewhere"
    for name, kind in (("app.js", "text/javascript"), ("style.css", "text/css")):
        resp = await api.client.get(f"/_sim/ui/{name}")
        assert resp.status == 200 and resp.content_type == kind
        assert "//" not in (await resp.text()).replace("// ", "").replace("://", "") or name == "app.js"
    resp = await api.client.get("/_sim/ui", params={"instrument": "2"}, allow_redirects=False)
    assert resp.status == 302 and resp.headers["Location"] == "/_sim/ui/?instrument=2"
    for path in ("/_sim/ui/index.html", "/_sim/ui/..%2Fstream.py", "/_sim/ui/x.js"):
        assert (await api.client.get(path)).status == 404, path
    resp = await api.client.get("/_sim/ui/", params={"venue": "nope"})
    assert resp.status == 404 and "venue: no venue 'nope'" in (await resp.json(content_type=None))["detail"]


async def test_the_control_guard_covers_stream_and_page(api_factory) -> None:
    """With a token, the page's own files load without it (a browser cannot send the header; they hold
    no state); the stream and every data route need it, the stream also from its query (EventSource
    sends no header)."""
    api = await api_factory(control_token="s3cret")
    for path in ("/_sim/stream?instrument=1", "/_sim/stream?instrument=1&token=wrong", "/_sim/instruments"):
        assert (await api.client.get(path)).status == 401, path
    for path in ("/_sim/ui/", "/_sim/ui/app.js", "/_sim/ui/style.css"):
        assert (await api.client.get(path)).status == 200, path
    assert (await api.client.get("/_sim/ui/x.js")).status == 401  # not a file of the page: the guard first
    assert (await api.client.get("/_sim/instruments?token=s3cret")).status == 401  # the query serves the stream only
    sse = await open_stream(api, headers={"Authorization": "Bearer s3cret"}, instrument="1")
    assert (await sse.next())[1] == "snapshot"
    sse = await open_stream(api, instrument="1", token="s3cret")
    assert (await sse.next())[1] == "snapshot"


async def test_nothing_is_recorded_once_nobody_watches(api: Api) -> None:
    hub = hub_of(api)
    hub.settings = StreamSettings(linger_s=0)
    sse = await open_stream(api, instrument="1")
    await sse.next()
    assert hub.watched() == [1]
    sse.resp.close()
    for _ in range(50):
        if not hub.watched():
            break
        await asyncio.sleep(0.1)
    assert hub.watched() == [] and hub.open == 0


async def test_shutdown_ends_open_streams(api: Api) -> None:
    sse = await open_stream(api, instrument="1")
    await sse.next()
    started = time.monotonic()
    await api.client.close()
    assert time.monotonic() - started < 5


async def test_a_failure_in_the_stream_never_fails_the_command(
    api: Api, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    sse = await open_stream(api, instrument="1")
    await sse.next()

    def broken(*args: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("cefisim.api.web.server.stream_hub._changes", broken)
    rec = await api.order(101, side="SELL", qty="1", price="50000.00")  # 200: the order stands
    assert rec["status"] == "ACTIVE" and "every stream starts over" in caplog.text
    with pytest.raises(AssertionError, match="the stream ended"):
        await sse.next()
    monkeypatch.undo()
    fresh = await open_stream(api, instrument="1")
    _, kind, snap = await fresh.next()
    assert kind == "snapshot" and snap["depth"]["asks"][0]["price"] == "50000.00"


async def test_a_resume_that_missed_more_than_a_stream_may_queue_gets_a_snapshot(api: Api) -> None:
    hub_of(api).settings = StreamSettings(queue_events=4)
    watcher = await open_stream(api, instrument="1")
    seen_id, _, _ = await watcher.next()
    for step in range(5):
        await api.order(101, side="SELL", qty="0.1", price=f"5000{step}.00")
    await watcher.take(5)
    resumed = await open_stream(api, headers={"Last-Event-ID": str(seen_id)}, instrument="1")
    _, kind, snap = await resumed.next()  # not dropped at once (and again at every reconnection)
    assert kind == "snapshot" and snap["reason"] == "resume-gap" and len(snap["depth"]["asks"]) == 5
    assert hub_of(api).dropped == 0


async def test_an_idle_stream_gets_heartbeat_comments(api: Api) -> None:
    hub_of(api).settings = StreamSettings(heartbeat_s=0.5)
    sse = await open_stream(api, instrument="1")
    await sse.next()
    async with asyncio.timeout(5):
        while (line := await sse.resp.content.readline()) != b": keep-alive\n":
            assert line == b"\n", line


async def test_once_sends_the_snapshot_and_ends_the_stream(api: Api) -> None:
    """``once=1`` (the live page's ``?once=1``): a bounded answer, so a headless browser's
    ``--virtual-time-budget`` screenshot is not held up by a stream that never idles."""
    await cross(api)
    resp = await api.client.get("/_sim/stream", params={"instrument": "1", "client": "100", "once": "1"})
    assert resp.status == 200 and resp.headers["Content-Type"] == "text/event-stream"
    async with asyncio.timeout(30):
        body = (await resp.read()).decode()  # returns only because the server ended the stream
    events = [line.removeprefix("event: ") for line in body.splitlines() if line.startswith("event: ")]
    assert events == ["snapshot"]
    assert hub_of(api).open == 0
    for bad in ("yes", "2"):
        status, problem, _ = await api.call(
            "GET", "/_sim/stream", client_id=None, params={"instrument": "1", "once": bad}
        )
        assert status == 400 and problem["detail"].startswith("once: ")
