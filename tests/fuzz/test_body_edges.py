"""Bodies that never come whole, over real sockets (docs/limits.md, "Transport"):

- a ``Content-Length`` over the body limit is a 413 problem at once, nothing read, the connection
  closed (it used to wait for the read timeout and answer 408);
- a ``Content-Length`` that is not a number is the HTTP parser's 400, logged at INFO in one line;
- a chunked body that passes the limit is a 413 while the client is still sending, the connection
  closed;
- a body that is not in the Content-Encoding it names (plain JSON sent as gzip) is a 400 problem,
  and one a route left unread is no error in the log;
- a client that hangs up in the middle of its body gets no answer (there is no one to send it to):
  the request is recorded as 499 in the access log and ``GET /_sim/requests``, and nothing is logged
  as an error, with or without the read timeout, on ``/v1/`` and ``/_sim/`` routes.

None of these may answer a 5xx or put an ERROR or a traceback in the server's log.
"""

from __future__ import annotations

import io
import socket
import time
from collections.abc import Callable, Iterator
from itertools import count

import orjson
import pytest

from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.server.limit_flags import install_log_redaction
from cefisim.api.web.server.request_log import REQUEST_LOG
from tests.fuzz.support import (
    Client,
    LogRecords,
    Served,
    assert_problem,
    build_app,
    fuzz_doc,
    parse_reply,
    raw_exchange,
    raw_reply,
    serve,
    signed_headers,
)

LIMIT = 1024
BODY_ROUTES = ["/v1/cefi/orders", "/v1/auth/api-key/token", "/v1/paper-trading/funds", "/_sim/latency"]
_ids = count(1)


class Edge:
    """A server with a 1 KiB body limit whose access log is kept in memory, and its log records."""

    def __init__(self, served: Served, records: LogRecords, read_timeout: float | None) -> None:
        self.served = served
        self.records = records
        self.read_timeout = read_timeout
        self.access = io.StringIO()

        def keep_access_log() -> None:
            served.app[REQUEST_LOG].stream = self.access

        served.on_loop(keep_access_log)

    def access_line(self, request_id: str) -> str:
        """The access-log line of ``request_id``, once the server has written it."""

        def lines() -> list[str]:
            return [ln for ln in self.access.getvalue().splitlines() if ln.endswith(f"request_id={request_id}")]

        _wait(lambda: bool(lines()))
        (line,) = lines()
        return line


def _wait(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the server did not get there"
        time.sleep(0.01)


@pytest.fixture(scope="module", params=[3600.0, None], ids=["read-timeout", "no-read-timeout"])
def edge(request: pytest.FixtureRequest) -> Iterator[Edge]:
    install_log_redaction()  # what `cefisim serve` installs: refused request lines are one line at INFO
    sim = Simulation(parse_scenario(fuzz_doc(), "edges.json"), clock="virtual")
    app, handler = build_app(sim, max_body_bytes=LIMIT, read_timeout_s=request.param, access_log="text")
    # aiohttp reads what is left of a refused body for up to lingering_time before it closes: an hour
    # here, so that a refusal that does not close the connection itself is seen not to
    with LogRecords(("cefisim", "aiohttp")) as records, serve(app, sim, lingering_time=3600, **handler) as served:
        yield Edge(served, records, request.param)


@pytest.fixture
def log(edge: Edge) -> Iterator[LogRecords]:
    edge.records.clear()
    yield edge.records
    assert not edge.records.bad(), edge.records.bad()


def _head(path: str, length: str, request_id: str = "edge", extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Request-Id: {request_id}\r\n"
        f"Content-Length: {length}\r\n{extra}\r\n"
    ).encode()


@pytest.mark.parametrize("path", [*BODY_ROUTES, "/_sim/venues"])
def test_a_declared_length_over_the_limit_is_413_at_once(edge: Edge, log: LogRecords, path: str) -> None:
    """The client sends two bytes of the 99,999,999,999 it announces and waits: the server answers
    413 without waiting for the rest (the read timeout is an hour, or off) and closes."""
    before = edge.served.snapshot()
    data, closed = raw_exchange(edge.served.port, _head(path, "99999999999") + b"{}", timeout=60)
    assert data.startswith(b"HTTP/1.1 413 "), data[:300]
    assert closed and b"Connection: close" in data
    problem = assert_problem(parse_reply(data), path)
    assert problem["type"].endswith("/payload-too-large")
    if path != "/_sim/venues":  # a create body has its own, larger limit (docs/venues.md)
        assert (
            problem["detail"]
            == f"body: Content-Length 99999999999 is over the limit of {LIMIT} bytes; nothing was read"
        )
    assert edge.served.snapshot() == before


@pytest.mark.parametrize("length", ["-1", "abc", "1 2", "+5", "0x10", "1e3", "", "9" * 30])
def test_a_content_length_that_is_not_a_number_is_the_parsers_400(edge: Edge, log: LogRecords, length: str) -> None:
    data, closed = raw_exchange(edge.served.port, _head("/v1/cefi/orders", length) + b"{}", timeout=60)
    assert data.startswith((b"HTTP/1.0 400 ", b"HTTP/1.1 400 ")), data[:300]
    assert closed
    refusals = [r for r in log.records if r.name == "aiohttp.server"]
    assert len(refusals) == 1 and refusals[0].levelname == "INFO" and refusals[0].exc_info is None, refusals
    assert "the offending bytes are not logged" in refusals[0].getMessage()


def test_a_chunked_body_over_the_limit_is_413_while_it_streams(edge: Edge, log: LogRecords) -> None:
    """No terminating chunk: the body is still arriving when the server refuses it and hangs up."""
    head = (
        b"POST /v1/cefi/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"x" * (2 * LIMIT)
    data, closed = raw_exchange(edge.served.port, head + f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n", timeout=60)
    assert data.startswith(b"HTTP/1.1 413 "), data[:300]
    assert closed and b"Connection: close" in data
    assert_problem(parse_reply(data), "/v1/cefi/orders")


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/v1/cefi/orders", "application/json"),
        ("/v1/auth/oauth/token", "application/x-www-form-urlencoded"),
        ("/_sim/latency", "application/json"),
    ],
)
def test_a_body_that_is_not_in_its_content_encoding_is_a_400_problem(
    edge: Edge, log: LogRecords, path: str, content_type: str
) -> None:
    """aiohttp decompresses a body as it is read: plain bytes sent as gzip fail there. Whoever reads
    the body (the middleware under the read timeout, else the route) meets it: a 400 problem naming
    the header on every route (the OAuth token endpoint too: the form cannot be read at all), and the
    connection closed, since the rest of the body cannot be read."""
    head = _head(path, "2", extra="Content-Encoding: gzip\r\n").replace(b"application/json", content_type.encode())
    data, closed = raw_exchange(edge.served.port, head + b"{}", timeout=60)
    assert data.startswith(b"HTTP/1.1 400 "), data[:300]
    assert closed
    problem = assert_problem(parse_reply(data), path)
    assert problem["detail"] == "body: cannot be decoded as its Content-Encoding 'gzip' says"


def test_a_body_left_unread_that_is_not_in_its_content_encoding_is_no_error(edge: Edge, log: LogRecords) -> None:
    """Without the read timeout, a route that refuses before it reads (no bearer token) leaves the
    body to aiohttp, which drains it after the answer, fails to decode it and closes: one INFO line
    where aiohttp alone logs an ERROR with a traceback (``cefisim serve`` installs the filter)."""
    data, closed = raw_exchange(
        edge.served.port, _head("/v1/paper-trading/funds", "2", extra="Content-Encoding: gzip\r\n") + b"{}", timeout=60
    )
    status = parse_reply(data).status
    assert status == (400 if edge.read_timeout else 401), data[:300]
    assert closed
    assert_problem(parse_reply(data), "/v1/paper-trading/funds")
    if not edge.read_timeout:
        (drained,) = [r for r in log.records if r.name == "aiohttp.server"]
        assert drained.levelname == "INFO"
        assert drained.getMessage() == (
            "a request body that cannot be decoded was left unread; connection closed [ContentEncodingError]"
        )


@pytest.mark.parametrize("path", ["/v1/cefi/orders", "/v1/auth/api-key/token", "/_sim/latency", "/_sim/venues"])
def test_a_client_that_hangs_up_mid_body_is_recorded_as_499_and_not_logged_as_an_error(
    edge: Edge, log: LogRecords, path: str
) -> None:
    """Each route reads the body before anything else could refuse the request (the order's
    signature covers the body): its read is what the hang-up interrupts."""
    request_id = f"gone-{next(_ids)}"
    body = orjson.dumps({"info": {"client_id": "100"}, "pad": "x" * 100})
    signed = signed_headers(100, "POST", path, body) if path == "/v1/cefi/orders" else {}
    extra = "Expect: 100-continue\r\n" + "".join(f"{k}: {v}\r\n" for k, v in signed.items())
    before = edge.served.snapshot()
    with socket.create_connection(("127.0.0.1", edge.served.port), timeout=60) as sock:
        sock.sendall(_head(path, str(len(body)), request_id, extra))
        # "100 Continue" comes once the app is handling the request: then half the body, and gone
        assert raw_reply(sock, head_only=True).status == 100
        sock.sendall(body[: len(body) // 2])
    line = edge.access_line(request_id)
    assert f" POST {path} 499 " in line, line
    assert edge.served.snapshot() == before
    if not path.startswith("/_sim/"):
        client = Client(edge.served.port)
        reply = client.request("GET", "/_sim/requests")
        client.close()
        (entry,) = [r for r in reply.json()["requests"] if r["request_id"] == request_id]
        assert entry["status"] == 499 and "problem" not in entry, entry
    assert not [r for r in log.records if r.name.startswith("cefisim")], [r.getMessage() for r in log.records]
