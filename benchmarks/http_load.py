"""HTTP/1.1 keep-alive load generator for ``bench_http.py``, and the bare aiohttp hello-world server.

    python benchmarks/http_load.py load --port P --mode orders|echo|hello [--connections 32] [--duration 10]
                                        [--warmup 2] [--depth 25] [--scenario FILE] [--seed N]
                                        [--server-pid PID]
    python benchmarks/http_load.py hello-server --port P [--scenario FILE]
    python benchmarks/http_load.py inproc --mode orders|echo|hello [--requests N] [--cprofile FILE]

``load`` opens ``--connections`` keep-alive connections to 127.0.0.1 and keeps exactly one request in
flight on each (closed loop, like wrk): the next request is written from ``data_received`` the moment
the previous response is complete. It is a plain ``asyncio.Protocol`` (no streams, no tasks per
request); responses are parsed minimally (status code, ``Content-Length``, the order id and status at
the front of an order record, ``orjson`` if the record does not start as expected). Nothing but the
standard library and orjson: the generator must cost far less per request than the server.

Modes:
- ``orders``: connection ``i`` acts for client ``i mod K`` of the scenario's K HMAC keys. It places
  passive LIMIT GTC orders (``POST /v1/cefi/orders``, qty 0.01, seeded side and price: BUY at
  29,791.00-29,990.00, SELL at 30,010.00-30,209.00, i.e. 9-208 steps of 1.00 outside the market
  maker's 29,999.00 / 30,001.00) until it has ``depth + 1`` open, then alternates: cancel its
  oldest open order (``DELETE /v1/cefi/orders/{id}``), place a new one. So the mix is 50/50 and the
  book holds about ``connections * depth`` of our orders. Every request is signed for real: base64
  HMAC-SHA256 of ``timestamp + METHOD + path + body`` with the current wall-clock second.
- ``echo``: the same signed POST bodies to ``POST /echo`` of ``hello-server`` (signature checked, the
  JSON echoed): the floor for a signed JSON endpoint on aiohttp.
- ``hello``: ``GET /hello`` (no body, no signature) against ``hello-server``.

``inproc`` runs one connection through the server's real aiohttp ``RequestHandler`` in this process,
with in-memory transports instead of sockets, and reports CPU per request (server and client
together, no kernel, no scheduler): a figure that a busy machine disturbs far less.

Only responses completed within the measurement window (after ``--warmup`` seconds, for
``--duration`` seconds) are counted; the rate is those responses over the window. Latency is from
the write of a request to the parse of its complete response, per request (``perf_counter_ns``).
The result is one JSON object on stdout: counts, rate, latency percentiles, non-2xx and REJECTED
counts, and CPU seconds of the generator and (``--server-pid``, Linux ``/proc``) of the server over
the window, which shows which side was saturated.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import functools
import gc
import hmac
import json
import os
import random
import resource
import sys
import time
from collections import deque
from typing import Any

import orjson

ORDERS_PATH = "/v1/cefi/orders"
HELLO_PATH = "/hello"
ECHO_PATH = "/echo"
INSTRUMENT_ID = "1"
BUY_TOP_CENTS = 2999000  # 29,990.00: 9 steps of 1.00 below the market maker's best bid (29,999.00)
SELL_TOP_CENTS = 3001000  # 30,010.00
PRICE_LEVELS = 200  # prices BUY_TOP - k * 1.00, k in [0, 200)
QTY = "0.01"
MAX_ERROR_SAMPLES = 5


# --- the hello-world server -----------------------------------------------------------------------


def hello_app(scenario: str) -> Any:
    """A bare aiohttp app: ``GET /hello`` returns a small JSON body (the baseline); ``POST /echo``
    checks the request's HMAC signature (the scenario's keys, hmac.digest, constant-time compare) and
    echoes its JSON body (orjson) — the least a signed JSON endpoint can do."""
    from aiohttp import web

    keys = {key.encode(): (client_id, secret.encode()) for client_id, key, secret in scenario_keys(scenario)}

    async def hello(request: web.Request) -> web.Response:
        return web.json_response({"hello": "world"})

    async def echo(request: web.Request) -> web.Response:
        h = request.headers
        owner = keys.get(h.get("x-svc-auth-token", "").encode())
        ts = h.get("x-svc-auth-timestamp", "")
        if (
            owner is None
            or h.get("x-svc-auth-userid") != owner[0]
            or not ts.isdigit()
            or abs(int(ts) - time.time()) > 15
        ):
            return web.Response(status=401)
        body = await request.read()
        mac = hmac.digest(owner[1], ts.encode() + b"POST" + request.raw_path.encode() + body, "sha256")
        if not hmac.compare_digest(base64.b64encode(mac), h.get("x-svc-auth-signature", "").encode()):
            return web.Response(status=401)
        return web.Response(body=orjson.dumps(orjson.loads(body)), content_type="application/json")

    app = web.Application()
    app.router.add_get(HELLO_PATH, hello)
    app.router.add_post(ECHO_PATH, echo)
    return app


def hello_server(port: int, scenario: str, loop: str) -> None:
    from aiohttp import web

    from cefisim.api.cli.event_loop import loop_factory

    app = hello_app(scenario)
    gc.collect()
    gc.freeze()  # the same collector setting as `cefisim serve`
    # the event loop `cefisim serve --loop` would pick, so both servers of a comparison run on the same one
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None, loop=loop_factory(loop)())


def orders_app(scenario: str) -> Any:
    """The app `cefisim serve --clock virtual` builds, in this process (for ``inproc``)."""
    from pathlib import Path

    from cefisim.api.formats.scenario import load_scenario
    from cefisim.api.runtime.simulation import Simulation
    from cefisim.api.web.app.application import create_app
    from cefisim.api.web.server.keys import ServerOptions

    return create_app(Simulation(load_scenario(Path(scenario)), clock="virtual"), ServerOptions())


# --- time -------------------------------------------------------------------------------------------


def cpu_seconds_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def cpu_seconds_pid(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    except (OSError, ValueError, IndexError):
        return None


class Stats:
    """Shared counters: the window, latencies per kind, errors."""

    def __init__(self, t_start: int, t_end: int) -> None:
        self.t_start = t_start  # perf_counter_ns: the window
        self.t_end = t_end
        self.lat: dict[str, list[int]] = {"POST": [], "DELETE": [], "GET": [], "ECHO": []}
        self.non_2xx: dict[int, int] = {}
        self.rejected = 0
        self.unexpected = 0  # a 2xx order record with a status we did not expect
        self.samples: list[str] = []
        self.total = 0  # responses, window or not
        self.stopping = False
        self.done = asyncio.get_running_loop().create_future()
        self.open_conns = 0

    def sample(self, text: str) -> None:
        if len(self.samples) < MAX_ERROR_SAMPLES:
            self.samples.append(text[:300])


# --- requests -----------------------------------------------------------------------------------------


class Signer:
    """Headers of one client; the timestamp prefix is rebuilt once per wall-clock second."""

    def __init__(self, client_id: str, key: str, secret: str, host: str) -> None:
        self.secret = secret.encode()
        self.head = (f"Host: {host}\r\nx-svc-auth-token: {key}\r\nx-svc-auth-userid: {client_id}\r\n").encode()
        self._second = -1
        self._ts = b""
        self._ts_header = b""

    def stamp(self) -> None:
        now = int(time.time())
        if now != self._second:
            self._second = now
            self._ts = str(now).encode()
            self._ts_header = b"x-svc-auth-timestamp: " + self._ts + b"\r\n"

    def headers(self, method_path: bytes, body: bytes) -> bytes:
        """Auth headers for METHOD+path (as bytes) and body; call stamp() first."""
        sig = base64.b64encode(hmac.digest(self.secret, self._ts + method_path + body, "sha256"))
        return self.head + self._ts_header + b"x-svc-auth-signature: " + sig + b"\r\n"


def order_bodies(client_id: str, rng: random.Random, count: int) -> list[bytes]:
    out = []
    for _ in range(count):
        side = rng.choice(("BUY", "SELL"))
        k = rng.randrange(PRICE_LEVELS) * 100
        cents = BUY_TOP_CENTS - k if side == "BUY" else SELL_TOP_CENTS + k
        price = f"{cents // 100}.{cents % 100:02d}"
        info = {
            "client_id": client_id,
            "instrument_id": INSTRUMENT_ID,
            "qty": QTY,
            "price": price,
            "side": side,
            "type": "LIMIT",
            "tif": "GTC",
        }
        out.append(orjson.dumps({"info": info}))
    return out


class Conn(asyncio.Protocol):
    """One keep-alive connection with one request in flight."""

    def __init__(
        self, stats: Stats, mode: str, signer: Signer | None, bodies: list[bytes], depth: int, host: str
    ) -> None:
        self.stats = stats
        self.mode = mode
        self.signer = signer
        self.bodies = bodies
        self.next_body = 0
        self.depth = depth
        self.open_ids: deque[bytes] = deque()
        self.buf = b""
        self.kind = ""
        self.sent_at = 0
        self.transport: asyncio.Transport | None = None
        self.hello_req = f"GET {HELLO_PATH} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        self.closed = False

    # asyncio callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.stats.open_conns += 1
        self.send()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.stats.open_conns -= 1
        if self.kind and not self.stats.stopping:
            self.stats.sample(f"connection lost with a {self.kind} in flight: {exc!r}")
            self.stats.non_2xx[0] = self.stats.non_2xx.get(0, 0) + 1
        if self.stats.open_conns == 0 and not self.stats.done.done():
            self.stats.done.set_result(None)

    def data_received(self, data: bytes) -> None:
        buf = self.buf + data if self.buf else data
        while True:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                break
            i = buf.find(b"\r\nContent-Length: ", 0, end)
            if i < 0:
                i = buf.lower().find(b"\r\ncontent-length: ", 0, end)
            if i < 0:
                self.fail(f"no Content-Length in {buf[:end]!r}")
                return
            j = buf.find(b"\r\n", i + 18, end + 2)
            body_start = end + 4
            body_end = body_start + int(buf[i + 18 : j])
            if len(buf) < body_end:
                break
            self.complete(int(buf[9:12]), buf[body_start:body_end])
            buf = buf[body_end:]
        self.buf = buf

    # the workload
    def fail(self, text: str) -> None:
        self.stats.sample(text)
        self.stats.non_2xx[-1] = self.stats.non_2xx.get(-1, 0) + 1
        assert self.transport is not None
        self.transport.close()

    def complete(self, status: int, body: bytes) -> None:
        now = time.perf_counter_ns()
        stats = self.stats
        kind, self.kind = self.kind, ""
        stats.total += 1
        in_window = stats.t_start <= now <= stats.t_end
        if in_window:
            stats.lat[kind].append(now - self.sent_at)
        if not 200 <= status < 300:  # counted in the warm-up too: an error is an error
            stats.non_2xx[status] = stats.non_2xx.get(status, 0) + 1
            stats.sample(f"{kind} -> {status}: {body[:200]!r}")
        elif kind == "POST":
            order_id, order_status = parse_record(body)
            if order_status == b"ACTIVE":
                self.open_ids.append(order_id)
            elif order_status == b"REJECTED":
                stats.rejected += 1
                stats.sample(f"POST -> REJECTED: {body[:300]!r}")
            else:
                stats.unexpected += 1
                stats.sample(f"POST -> {order_status!r}: {body[:200]!r}")
        elif kind == "DELETE":
            order_status = parse_record(body)[1]
            if order_status != b"CANCELED":
                stats.unexpected += 1
                stats.sample(f"DELETE -> {order_status!r}: {body[:200]!r}")
        if now > stats.t_end:
            stats.stopping = True
            assert self.transport is not None
            self.transport.close()
            return
        self.send()

    def _signed_post(self, path: bytes) -> bytes:
        """A signed JSON POST of the next body in turn to ``path``."""
        body = self.bodies[self.next_body]
        self.next_body = (self.next_body + 1) % len(self.bodies)
        assert self.signer is not None
        return (
            b"POST " + path + b" HTTP/1.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: "
            + str(len(body)).encode()
            + b"\r\n"
            + self.signer.headers(b"POST" + path, body)
            + b"\r\n"
            + body
        )

    def send(self) -> None:
        assert self.transport is not None
        if self.mode == "hello":
            self.kind = "GET"
            self.sent_at = time.perf_counter_ns()
            self.transport.write(self.hello_req)
            return
        signer = self.signer
        assert signer is not None
        signer.stamp()
        if self.mode == "echo":
            req = self._signed_post(ECHO_PATH.encode())
            self.kind = "ECHO"
        elif len(self.open_ids) > self.depth:
            path = b"/v1/cefi/orders/" + self.open_ids.popleft()
            req = b"DELETE " + path + b" HTTP/1.1\r\n" + signer.headers(b"DELETE" + path, b"") + b"\r\n"
            self.kind = "DELETE"
        else:
            req = self._signed_post(ORDERS_PATH.encode())
            self.kind = "POST"
        self.sent_at = time.perf_counter_ns()
        self.transport.write(req)


def parse_record(body: bytes) -> tuple[bytes, bytes]:
    """(id, status) of an order record; the fast path relies on orjson keeping the key order."""
    if body.startswith(b'{"id":"'):
        j = body.find(b'"', 7)
        if body.startswith(b',"status":"', j + 1):
            k = j + 12
            return body[7:j], body[k : body.find(b'"', k)]
    try:
        doc = orjson.loads(body)
        return str(doc["id"]).encode(), str(doc["status"]).encode()
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return b"", b"?"


def scenario_keys(path: str) -> list[tuple[str, str, str]]:
    """(client id, key, secret) of every client of the scenario that has an HMAC key, in file order."""
    with open(path, "rb") as f:
        doc = orjson.loads(f.read())
    return [(str(c["id"]), c["key"], c["secret"]) for c in doc.get("clients", []) if "key" in c and "secret" in c]


async def create_venue(host: str, scenario: str) -> list[tuple[str, str, str]]:
    """A venue of ``scenario`` made by ``POST /_sim/venues`` (docs/venues.md): its (client id, key, secret)."""
    with open(scenario, "rb") as f:
        body = b'{"scenario":' + f.read() + b"}"
    reader, writer = await asyncio.open_connection(*host.split(":"))
    writer.write(
        b"POST /_sim/venues HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (host.encode(), len(body), body)
    )
    answer = await reader.read()
    writer.close()
    head, _, payload = answer.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 201"):
        raise SystemExit(f"http_load: POST /_sim/venues: {head.splitlines()[0].decode()} {payload[:300]!r}")
    return [(c["client_id"], c["key"], c["secret"]) for c in json.loads(payload)["clients"]]


def percentile(sorted_values: list[int], q: float) -> float:
    """Nearest-rank percentile, in ms."""
    if not sorted_values:
        return float("nan")
    rank = max(1, -(-len(sorted_values) * q // 100))
    return sorted_values[int(rank) - 1] / 1e6


def _same(conn: Conn) -> Conn:
    return conn


async def run_load(args: argparse.Namespace) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    host = f"127.0.0.1:{args.port}"
    keys = scenario_keys(args.scenario) if args.mode != "hello" else []
    if args.mode != "hello" and not keys:
        raise SystemExit(f"http_load: {args.scenario} defines no client with key and secret")
    venues = [keys] + [await create_venue(host, args.scenario) for _ in range(args.venues - 1)]
    t0 = time.perf_counter_ns() + int(args.warmup * 1e9)  # the warm-up starts once the venues exist
    stats = Stats(t0, t0 + int(args.duration * 1e9))
    conns = []
    for i in range(args.connections):
        signer, bodies = None, []
        if args.mode != "hello":
            # connection i: venue i mod N, and within it the next of its clients
            venue_keys = venues[i % len(venues)]
            client_id, key, secret = venue_keys[(i // len(venues)) % len(venue_keys)]
            signer = Signer(client_id, key, secret, host)
            bodies = order_bodies(client_id, random.Random(args.seed * 1000 + i), 4096)
        conn = Conn(stats, args.mode, signer, bodies, args.depth, host)
        await loop.create_connection(functools.partial(_same, conn), "127.0.0.1", args.port)
        conns.append(conn)
    gc.collect()
    gc.freeze()
    gc.disable()  # the generator allocates little that lives; keep the collector out of the way
    # sample CPU at the window's edges
    await asyncio.sleep(max(0.0, (t0 - time.perf_counter_ns()) / 1e9))
    cpu_gen0, cpu_srv0 = cpu_seconds_self(), cpu_seconds_pid(args.server_pid)
    wall0 = time.perf_counter_ns()
    await asyncio.sleep(max(0.0, (stats.t_end - time.perf_counter_ns()) / 1e9))
    cpu_gen1, cpu_srv1 = cpu_seconds_self(), cpu_seconds_pid(args.server_pid)
    wall = (time.perf_counter_ns() - wall0) / 1e9
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(stats.done), timeout=5.0)
    for conn in conns:
        if not conn.closed and conn.transport is not None:
            conn.transport.abort()
    gc.enable()
    window = (stats.t_end - stats.t_start) / 1e9
    all_lat = sorted(lat for values in stats.lat.values() for lat in values)
    out: dict[str, Any] = {
        "mode": args.mode,
        "connections": args.connections,
        "window_s": window,
        "responses": len(all_lat),
        "rps": len(all_lat) / window,
        "p50_ms": percentile(all_lat, 50),
        "p99_ms": percentile(all_lat, 99),
        "max_ms": all_lat[-1] / 1e6 if all_lat else float("nan"),
        "by_kind": {},
        "non_2xx": sum(stats.non_2xx.values()),
        "non_2xx_by_status": {str(k): v for k, v in sorted(stats.non_2xx.items())},
        "rejected": stats.rejected,
        "unexpected_status": stats.unexpected,
        "error_samples": stats.samples,
        "generator_cpu": (cpu_gen1 - cpu_gen0) / wall,
        "server_cpu": (cpu_srv1 - cpu_srv0) / wall if cpu_srv0 is not None and cpu_srv1 is not None else None,
        "open_orders_left": sum(len(c.open_ids) for c in conns),
    }
    for kind, values in stats.lat.items():
        if values:
            values.sort()
            out["by_kind"][kind] = {
                "count": len(values),
                "p50_ms": percentile(values, 50),
                "p99_ms": percentile(values, 99),
            }
    return out


# --- in-process: the server's real request handler, no sockets ------------------------------------------


class PipeTransport(asyncio.Transport):
    """A transport whose writes go straight to a callback (one side of an in-process connection)."""

    def __init__(self, deliver: Any) -> None:
        super().__init__()
        self.deliver = deliver
        self.closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.deliver(bytes(data))

    def writelines(self, chunks: Any) -> None:
        self.deliver(b"".join(chunks))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def abort(self) -> None:
        self.closing = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 0) if name in ("peername", "sockname") else default

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def get_write_buffer_size(self) -> int:
        return 0

    def can_write_eof(self) -> bool:
        return False


async def run_inproc(args: argparse.Namespace) -> dict[str, Any]:
    """One connection, one request in flight, through aiohttp's RequestHandler with pipe transports.

    Each request is handed to the server on the next event-loop iteration (as a socket read would be);
    the server's writes reach the client at once. Measures process CPU per request of server and client
    together, with no kernel and no scheduler in the way."""
    from aiohttp import web

    loop = asyncio.get_running_loop()
    app = orders_app(args.scenario) if args.mode == "orders" else hello_app(args.scenario)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    stats = Stats(0, 1 << 62)
    venues = [scenario_keys(args.scenario)] if args.mode != "hello" else [[]]
    if args.venues > 1:  # the same scenario again, each venue with its own keys (docs/venues.md)
        from cefisim.api.web.control.isolated_venues import VENUES

        with open(args.scenario, "rb") as f:
            doc = json.load(f)
        for _ in range(args.venues - 1):
            made = await app[VENUES].create(json.dumps({"scenario": doc}).encode())
            sim = app[VENUES].created[made["id"]].sim
            venues.append([(str(cid), key, secret) for key, (cid, secret) in sim.scenario.hmac_keys.items()])
    conns = []
    for i in range(args.connections):  # connection i: venue i mod N, and within it the next of its clients
        signer, bodies = None, []
        if args.mode != "hello":
            keys = venues[i % len(venues)]
            client_id, key, secret = keys[(i // len(venues)) % len(keys)]
            signer = Signer(client_id, key, secret, "127.0.0.1")
            bodies = order_bodies(client_id, random.Random(args.seed * 1000 + i if i else args.seed), 4096)
        conns.append(Conn(stats, args.mode, signer, bodies, args.depth, "127.0.0.1"))
    warm, total = args.warmup_requests, args.warmup_requests + args.requests
    sent = 0
    marks: dict[str, float] = {}
    done = loop.create_future()
    profiler = None
    if args.cprofile:
        import cProfile

        profiler = cProfile.Profile()

    def to_server(proto: Any, data: bytes) -> None:
        nonlocal sent
        if sent == warm:
            marks["cpu0"], marks["wall0"] = time.process_time(), time.perf_counter()
            if profiler is not None:
                profiler.enable()
        if sent == total:
            if profiler is not None:
                profiler.disable()
            marks["cpu1"], marks["wall1"] = time.process_time(), time.perf_counter()
            if not done.done():
                done.set_result(None)
            return
        sent += 1
        loop.call_soon(proto.data_received, data)

    for conn in conns:
        proto = runner.server()  # type: ignore[misc]
        proto.connection_made(PipeTransport(conn.data_received))
        conn.transport = PipeTransport(functools.partial(to_server, proto))
    gc.collect()
    gc.freeze()  # as `cefisim serve` does after loading; the collector stays on
    if args.wait_for_go:
        print("ready", flush=True)
        await loop.run_in_executor(None, sys.stdin.readline)
    for conn in conns:
        conn.send()
    await done
    if profiler is not None:
        profiler.dump_stats(args.cprofile)
    await runner.cleanup()
    cpu = marks["cpu1"] - marks["cpu0"]
    return {
        "mode": args.mode,
        "requests": args.requests,
        "cpu_us_per_request": cpu / args.requests * 1e6,
        "wall_us_per_request": (marks["wall1"] - marks["wall0"]) / args.requests * 1e6,
        "errors": sum(stats.non_2xx.values()) + stats.rejected + stats.unexpected,
        "error_samples": stats.samples,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    load = sub.add_parser("load")
    load.add_argument("--port", type=int, required=True)
    load.add_argument("--mode", choices=("orders", "hello", "echo"), required=True)
    load.add_argument("--connections", type=int, default=32)
    load.add_argument("--duration", type=float, default=10.0)
    load.add_argument("--warmup", type=float, default=2.0)
    load.add_argument("--depth", type=int, default=25, help="open orders each connection keeps")
    load.add_argument("--scenario", default=os.path.join(os.path.dirname(__file__), "bench_http_scenario.json"))
    load.add_argument("--seed", type=int, default=1)
    load.add_argument("--server-pid", type=int, default=None)
    load.add_argument(
        "--venues",
        type=int,
        default=1,
        help="spread the connections over this many venues (the default one and N-1 made by POST /_sim/venues)",
    )
    ip = sub.add_parser("inproc")
    ip.add_argument("--mode", choices=("orders", "hello", "echo"), required=True)
    ip.add_argument("--requests", type=int, default=20_000)
    ip.add_argument("--warmup-requests", type=int, default=2_000)
    ip.add_argument("--depth", type=int, default=25)
    ip.add_argument("--connections", type=int, default=1, help="connections, one request in flight on each")
    ip.add_argument("--venues", type=int, default=1, help="spread the connections over this many venues")
    ip.add_argument("--scenario", default=os.path.join(os.path.dirname(__file__), "bench_http_scenario.json"))
    ip.add_argument("--seed", type=int, default=1)
    ip.add_argument("--cprofile", default=None, help="write a cProfile of the measured requests here")
    ip.add_argument("--wait-for-go", action="store_true", help="print 'ready', wait for a line on stdin")
    ip.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio", help="the event loop it runs on")
    hs = sub.add_parser("hello-server")
    hs.add_argument("--port", type=int, required=True)
    hs.add_argument("--scenario", default=os.path.join(os.path.dirname(__file__), "bench_http_scenario.json"))
    hs.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio", help="the event loop (as serve's)")
    args = ap.parse_args(argv)
    if args.command == "hello-server":
        hello_server(args.port, args.scenario, args.loop)
        return 0
    if args.command == "inproc" and args.loop == "uvloop":
        from cefisim.api.cli.event_loop import loop_factory  # only for this choice: the others need no cefisim

        with asyncio.Runner(loop_factory=loop_factory("uvloop")) as runner:
            result = runner.run(run_inproc(args))
    else:
        result = asyncio.run(run_inproc(args) if args.command == "inproc" else run_load(args))
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
