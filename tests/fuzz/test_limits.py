"""Every server limit answers a clear 4xx, is configurable, and a refused request changes nothing.

Limits (docs/limits.md): body size (413), header size (400 from aiohttp's parser), body read timeout
(408, connection closed), open orders per client and instrument (200 REJECTED TOO_MANY_OPEN_ORDERS),
levels walked by a quote (400 quote-depth-limit), per-key rate limit (429 with Retry-After).
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Iterator

import orjson
import pytest
from aiohttp.test_utils import make_mocked_request

from cefisim.api.edge.problems import Problem
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.api.web.server.keys import ServerOptions
from cefisim.api.web.server.limit_flags import (
    add_limit_arguments,
    limit_options,
    parse_rate,
    parse_rate_limits,
    venue_config_for,
)
from cefisim.api.web.server.limits import RateLimit, RateLimits, TokenBuckets, limit_settings, rate_limiter
from cefisim.engine.commands import PlaceOrder
from cefisim.engine.venue import VenueConfig
from tests.api.conftest import ALICE_KEY, BOB_KEY
from tests.fuzz.support import (
    Client,
    Reply,
    Served,
    assert_problem,
    build_app,
    fuzz_doc,
    raw_exchange,
    serve,
    signed_headers,
)

ORDERS = "/v1/cefi/orders"


def _order(client_id: int = 100, price: str = "49000.00", instrument: str = "1", qty: str = "0.01") -> bytes:
    return orjson.dumps(
        {
            "info": {
                "client_id": str(client_id),
                "instrument_id": instrument,
                "side": "BUY",
                "type": "LIMIT",
                "qty": qty,
                "price": price,
            }
        }
    )


def _post(client: Client, path: str, body: bytes, client_id: int = 100) -> Reply:
    return client.request(
        "POST", path, body, {**signed_headers(client_id, "POST", path, body), "Content-Type": "application/json"}
    )


@pytest.fixture
def limited() -> Iterator[callable]:
    """``limited(**options)`` -> (served, client) on a fresh simulation; closed at the end."""
    stack: list = []

    def make(doc: dict | None = None, venue_config: VenueConfig | None = None, **options) -> tuple[Served, Client]:
        sim = Simulation(parse_scenario(doc or fuzz_doc(), "limits.json"), clock="virtual", venue_config=venue_config)
        app, handler = build_app(sim, **options)
        cm = serve(app, sim, **handler)
        served = cm.__enter__()
        client = Client(served.port)
        stack.append((cm, client))
        return served, client

    yield make
    for cm, client in reversed(stack):
        client.close()
        cm.__exit__(None, None, None)


# --- body size -----------------------------------------------------------------------------------------


def test_a_body_over_the_limit_is_413_and_changes_nothing(limited) -> None:
    served, client = limited(max_body_bytes=1024)
    body = orjson.dumps(
        {
            "external_id": "big",
            "info": {
                "client_id": "100",
                "instrument_id": "1",
                "side": "BUY",
                "type": "LIMIT",
                "qty": "0.01",
                "price": "49000.00",
                "msg_id": "x" * 200,
            },
            "pad": "y" * 2000,
        }
    )
    before = served.snapshot()
    reply = _post(client, ORDERS, body)
    assert reply.status == 413
    assert assert_problem(reply, ORDERS)["type"].endswith("/payload-too-large")
    assert served.snapshot() == before
    assert _post(client, ORDERS, _order()).status == 200  # under the limit: fine


def test_a_chunked_body_over_the_limit_is_413(limited) -> None:
    served, _ = limited(max_body_bytes=1024)
    body = b"x" * 3000
    head = (
        f"POST {ORDERS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    ).encode()
    data, _ = raw_exchange(served.port, head + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n", timeout=5)
    assert data.startswith(b"HTTP/1.1 413"), data[:200]
    assert b"application/problem+json" in data


def test_the_control_plane_reads_snapshots_past_the_body_limit(limited) -> None:
    _served, client = limited(max_body_bytes=1024)
    doc = client.request("GET", "/_sim/snapshot").body
    assert len(doc) > 1024
    assert client.request("POST", "/_sim/snapshot", doc, {"Content-Type": "application/json"}).status == 200


# --- header size ---------------------------------------------------------------------------------------


def _get(path: str, extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode()


def test_a_header_over_the_limit_is_400_from_the_parser_and_the_connection_closes(limited) -> None:
    served, _ = limited(max_header_bytes=1024)
    ok, _ = raw_exchange(served.port, _get("/v1/cefi/health", "X-Pad: " + "a" * 900 + "\r\nConnection: close\r\n"))
    assert ok.startswith(b"HTTP/1.1 200"), ok[:100]
    data, closed = raw_exchange(served.port, _get("/v1/cefi/health", "X-Pad: " + "a" * 2000 + "\r\n"))
    # aiohttp's parser answers before the application sees the request: HTTP/1.0 (it could not read the
    # version), text/plain naming the limit, no problem document, connection closed
    assert data.startswith(b"HTTP/1.0 400 Bad Request"), data[:200]
    assert b"Content-Type: text/plain" in data and b"Got more than 1024 bytes" in data
    assert closed


def test_a_request_line_over_the_limit_is_400(limited) -> None:
    served, _ = limited(max_header_bytes=1024)
    data, closed = raw_exchange(served.port, _get("/v1/cefi/health?x=" + "a" * 2000))
    assert data.startswith(b"HTTP/1.0 400") and closed, data[:200]


def test_too_many_header_lines_is_400(limited) -> None:
    served, _ = limited()
    data, closed = raw_exchange(served.port, _get("/v1/cefi/health", "".join(f"X-H{i}: v\r\n" for i in range(200))))
    assert data.startswith((b"HTTP/1.0 400", b"HTTP/1.1 400")) and closed, data[:200]


# --- read timeout ---------------------------------------------------------------------------------------


def _signed_head(body_length: int) -> bytes:
    body = b"x" * body_length  # the signature does not matter: the body never arrives in time
    headers = signed_headers(100, "POST", ORDERS, body)
    lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return (
        f"POST {ORDERS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {body_length}\r\n{lines}\r\n"
    ).encode()


def _status_and_body(data: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def test_a_body_that_never_arrives_is_408_and_the_connection_closes(limited) -> None:
    served, _ = limited(read_timeout_s=0.3)
    before = served.snapshot()
    started = time.monotonic()
    data, closed = raw_exchange(served.port, _signed_head(200) + b'{"info":', timeout=5)
    elapsed = time.monotonic() - started
    status, headers, body = _status_and_body(data)
    # never before the read timeout (how long after it depends on the machine's load: pytest-timeout
    # and the exchange's own 5 s timeout catch a server that never answers)
    assert status == 408 and closed and elapsed > 0.25, (status, closed, elapsed)
    assert headers["content-type"].startswith("application/problem+json")
    assert headers.get("connection", "").lower() == "close"
    problem = orjson.loads(body)["error"]
    assert problem["status"] == 408 and problem["type"].endswith("/request-timeout")
    assert served.snapshot() == before


def test_a_trickled_body_is_cut_off_at_the_deadline(limited) -> None:
    served, _ = limited(read_timeout_s=0.5)
    started = time.monotonic()
    trickle = [(0.15, b"x")] * 30  # 30 of the 40 bytes, one every 0.15 s: never idle long enough to time out
    data, closed = raw_exchange(served.port, _signed_head(40), trickle=trickle, timeout=5)
    assert data.startswith(b"HTTP/1.1 408") and closed, data[:100]
    # the answer came while the client was still trickling (the whole-body deadline, not an idle timeout,
    # cut it off): an ordering of events, not a wall-clock threshold
    assert time.monotonic() - started < sum(delay for delay, _ in trickle)


def test_a_slow_but_timely_body_is_served(limited) -> None:
    served, _ = limited(read_timeout_s=2)
    body = _order()
    headers = signed_headers(100, "POST", ORDERS, body)
    head = (
        f"POST {ORDERS} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
        f"Content-Length: {len(body)}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    ).encode()
    data, _ = raw_exchange(served.port, head + body[:10], trickle=[(0.2, body[10:20]), (0.2, body[20:])], timeout=5)
    assert data.startswith(b"HTTP/1.1 200"), data[:300]


@pytest.mark.parametrize("seconds", [None, 0])
def test_read_timeout_zero_turns_it_off(seconds: float | None) -> None:
    read_timeout_s, rate_check = limit_settings(ServerOptions(read_timeout_s=seconds), lambda request: {})
    assert read_timeout_s is None and rate_check is None
    assert limit_settings(ServerOptions(read_timeout_s=2), lambda request: {})[0] == 2


# --- open orders -----------------------------------------------------------------------------------------


def test_open_orders_per_client_and_instrument(limited) -> None:
    _served, client = limited(venue_config=VenueConfig(max_open_orders=2))
    ids = [_post(client, ORDERS, _order(price=f"4900{i}.00")).json()["id"] for i in range(2)]
    third = _post(client, ORDERS, _order(price="48000.00")).json()
    assert third["status"] == "REJECTED" and third["reject_reason"] == "TOO_MANY_OPEN_ORDERS"
    other_instrument = _post(client, ORDERS, _order(instrument="2", price="3000.00", qty="0.01")).json()
    assert other_instrument["status"] == "ACTIVE"
    other_client = _post(client, ORDERS, _order(client_id=101), client_id=101).json()
    assert other_client["status"] == "ACTIVE"
    path = f"{ORDERS}/{ids[0]}"
    assert client.request("DELETE", path, b"", signed_headers(100, "DELETE", path, b"")).status == 200
    assert _post(client, ORDERS, _order(price="48000.00")).json()["status"] == "ACTIVE"


# --- quote depth ---------------------------------------------------------------------------------------


def test_a_quote_walking_more_levels_than_allowed_is_400(limited) -> None:
    served, client = limited(quote_max_levels=2)

    def seed() -> None:
        for i in range(3):
            served.sim.submit(PlaceOrder(101, 1, "SELL", "LIMIT", "0.01", f"5000{i}.00"))

    served.on_loop(seed)
    two = orjson.dumps({"qty": "0.02", "instrument_id": "1", "side": "BUY", "qty_unit": "BASE"})
    three = orjson.dumps({"qty": "0.03", "instrument_id": "1", "side": "BUY", "qty_unit": "BASE"})
    json = {"Content-Type": "application/json"}
    assert client.request("POST", "/v1/cefi/markets/quote", two, json).status == 200
    reply = client.request("POST", "/v1/cefi/markets/quote", three, json)
    assert reply.status == 400
    assert assert_problem(reply, "/v1/cefi/markets/quote")["type"].endswith("/quote-depth-limit")
    spend = orjson.dumps({"qty": "150000.00", "instrument_id": "1"})
    reply = client.request("POST", "/v1/cefi/market/quote", spend, json)
    assert reply.status == 400 and assert_problem(reply, "/v1/cefi/market/quote")["type"].endswith("/quote-depth-limit")


# --- rate limits ----------------------------------------------------------------------------------------


def test_an_empty_bucket_is_429_with_retry_after_and_changes_nothing(limited) -> None:
    served, client = limited(rate_limits=parse_rate_limits(["0.001:2"]))
    assert _post(client, ORDERS, _order()).status == 200
    assert _post(client, ORDERS, _order()).status == 200
    before = served.snapshot()
    reply = _post(client, ORDERS, _order())
    assert reply.status == 429
    assert int(reply.headers["Retry-After"]) >= 1
    assert assert_problem(reply, ORDERS)["type"].endswith("/rate-limited")
    assert ALICE_KEY not in reply.body.decode()
    assert served.snapshot() == before
    # another key has its own bucket; unsigned and public requests are not limited
    assert _post(client, ORDERS, _order(client_id=101), client_id=101).status == 200
    for _ in range(5):
        assert client.request("GET", "/v1/cefi/health").status == 200


def test_per_key_limits_and_exemptions(limited) -> None:
    _, client = limited(rate_limits=parse_rate_limits(["0.001:1", f"{BOB_KEY}=off"]))
    path = "/v1/cefi/balances"
    statuses = [client.request("GET", path, b"", signed_headers(100, "GET", path, b"")).status for _ in range(3)]
    assert statuses == [200, 429, 429]
    assert all(client.request("GET", path, b"", signed_headers(101, "GET", path, b"")).status == 200 for _ in range(5))


def test_unknown_keys_are_not_limited_and_get_their_401(limited) -> None:
    _served, client = limited(rate_limits=parse_rate_limits(["0.001:1"]))
    path = "/v1/cefi/balances"
    for _ in range(3):
        headers = {**signed_headers(100, "GET", path, b""), "x-svc-auth-token": "00000000-0000-4000-8000-000000000000"}
        assert client.request("GET", path, b"", headers).status == 401


def test_the_bucket_refills_at_the_rate() -> None:
    buckets = TokenBuckets()
    limit = RateLimit(rate=2.0, burst=3)
    assert [buckets.take("k", limit, 100.0) for _ in range(3)] == [0, 0, 0]
    assert buckets.take("k", limit, 100.0) == pytest.approx(0.5)
    assert buckets.take("k", limit, 100.25) == pytest.approx(0.25)  # half a token back, not enough
    assert buckets.take("k", limit, 100.5) == 0  # one token
    assert buckets.take("k", limit, 1000.0) == 0  # long idle: full, but never more than the burst
    assert [buckets.take("k", limit, 1000.0) for _ in range(3)][-1] > 0
    assert len(buckets) == 1


def test_retry_after_rounds_up_to_whole_seconds() -> None:
    clock = [50.0]
    check = rate_limiter(RateLimits(RateLimit(0.4, 1)), lambda request: {ALICE_KEY: None}, clock=lambda: clock[0])
    request = make_mocked_request("GET", "/v1/cefi/balances", headers={"x-svc-auth-token": ALICE_KEY})
    check(request)  # the burst's one token
    with pytest.raises(Problem) as caught:
        check(request)
    assert caught.value.status == 429 and caught.value.headers["Retry-After"] == "3"  # 2.5 s -> 3
    clock[0] += 2.5
    check(request)


RPS_FORMAT = "expected RPS[:BURST], e.g. 20 or 0.5:2 or 100:200"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("0", "'0': RPS must be greater than 0 and at most 1000000"),
        ("-1", f"'-1': {RPS_FORMAT}"),
        ("abc", f"'abc': {RPS_FORMAT}"),
        ("1:0", "'1:0': BURST must be a whole number from 1 to 1000000"),
        ("1:", f"'1:': {RPS_FORMAT}"),
        (":5", f"':5': {RPS_FORMAT}"),
        ("1.5.2", f"'1.5.2': {RPS_FORMAT}"),
        ("2000000", "'2000000': RPS must be greater than 0 and at most 1000000"),
        ("=1", "'=1': expected KEY=RPS[:BURST] or KEY=off"),
        ("k=", f"'': {RPS_FORMAT}"),  # the message quotes the limit part
        ("k=x", f"'x': {RPS_FORMAT}"),
    ],
)
def test_bad_rate_limit_specs_are_refused(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_rate_limits([spec])


def test_rate_limit_specs() -> None:
    assert parse_rate("20") == RateLimit(20.0, 20)
    assert parse_rate("0.5") == RateLimit(0.5, 1)
    assert parse_rate("100:250") == RateLimit(100.0, 250)
    limits = parse_rate_limits(["10:20", "k1=off", "k2=1:1"])
    assert limits is not None
    assert limits.for_key("k0") == RateLimit(10.0, 20) and limits.for_key("k1") is None
    assert limits.for_key("k2") == RateLimit(1.0, 1)
    assert parse_rate_limits(None) is None and parse_rate_limits(["k=off"]) is None
    with pytest.raises(ValueError, match="twice"):
        parse_rate_limits(["1", "2"])


# --- flags ----------------------------------------------------------------------------------------------


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_limit_arguments(parser)
    return parser.parse_args(argv)


def test_limit_flags_become_server_options_and_venue_config() -> None:
    scenario = parse_scenario(fuzz_doc(settings={"max_open_orders": 7}), "flags.json")
    args = _parse([])
    defaults = limit_options(args)
    assert defaults.pop("venue_config")(scenario) == venue_config_for(scenario, args)  # of created venues
    assert defaults == {
        "quote_max_levels": 1000,
        "max_header_bytes": 8190,
        "read_timeout_s": 30.0,
        "rate_limits": None,
        "max_venues": 64,
        "data_dir": None,
    }
    assert venue_config_for(scenario, args).max_open_orders == 7  # the scenario's setting stands
    args = _parse(
        [
            "--max-open-orders",
            "5",
            "--quote-max-levels",
            "3",
            "--max-header-bytes",
            "4096",
            "--read-timeout",
            "0",
            "--rate-limit",
            "10:20",
            "--rate-limit",
            f"{BOB_KEY}=off",
        ]
    )
    options = limit_options(args)
    assert options["quote_max_levels"] == 3 and options["max_header_bytes"] == 4096
    assert options["read_timeout_s"] is None
    assert options["rate_limits"] == RateLimits(RateLimit(10.0, 20), {BOB_KEY: None})
    assert venue_config_for(scenario, args).max_open_orders == 5
    assert venue_config_for(scenario, _parse(["--max-open-orders", "none"])).max_open_orders is None


@pytest.mark.parametrize(
    "argv",
    [
        ["--max-open-orders", "0"],
        ["--quote-max-levels", "x"],
        ["--max-header-bytes", "10"],
        ["--read-timeout", "-1"],
        ["--read-timeout", "nan"],
        ["--rate-limit", "fast"],
    ],
)
def test_bad_limit_flags_are_usage_errors(argv: list[str]) -> None:
    with pytest.raises((argparse.ArgumentError, SystemExit)):
        _parse(argv)


def _serve_wired() -> bool:
    """Whether ``cefisim serve`` has the limit flags (the lead wires api/web/server/limit_flags.py into
    api/cli/main.py)."""
    from cefisim.api.cli import main as cli

    sub = argparse.ArgumentParser().add_subparsers()
    cli._serve_parser(sub)
    return "--max-open-orders" in sub.choices["serve"].format_help()


@pytest.mark.skipif(not _serve_wired(), reason="api/cli/main.py does not add the limit flags yet")
def test_serve_flags_reach_the_server(tmp_path) -> None:
    import os
    import signal
    import socket
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    scenario = tmp_path / "limits.json"
    scenario.write_bytes(orjson.dumps(fuzz_doc()))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cefisim.api.cli.main",
            "serve",
            "--port",
            str(port),
            "--clock",
            "virtual",
            "--scenario",
            str(scenario),
            "--log-level",
            "ERROR",
            "--max-open-orders",
            "1",
            "--read-timeout",
            "0.4",
            "--max-header-bytes",
            "1024",
            "--rate-limit",
            f"{ALICE_KEY}=0.001:3",
        ],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    client = Client(port)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if client.request("GET", "/v1/cefi/health").status == 200:
                    break
            except OSError:
                client.close()
            assert time.monotonic() < deadline and proc.poll() is None, "server did not start"
            time.sleep(0.05)
        assert _post(client, ORDERS, _order()).json()["status"] == "ACTIVE"
        second = _post(client, ORDERS, _order(price="48000.00")).json()
        assert second["reject_reason"] == "TOO_MANY_OPEN_ORDERS"
        assert (
            client.request("GET", "/v1/cefi/balances", b"", signed_headers(100, "GET", "/v1/cefi/balances", b"")).status
            == 200
        )
        assert _post(client, ORDERS, _order()).status == 429
        assert _post(client, ORDERS, _order(client_id=101), client_id=101).status == 200  # bob: no limit
        data, _ = raw_exchange(port, _get("/v1/cefi/health", "X-Pad: " + "a" * 2000 + "\r\n"))
        assert data.startswith(b"HTTP/1.0 400")
        data, closed = raw_exchange(port, _signed_head(100), timeout=5)
        assert data.startswith(b"HTTP/1.1 408") and closed
    finally:
        client.close()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
