"""Header values of any bytes (not UTF-8, control characters, lone high bytes) on every route family:
a 4xx problem, never a 5xx (docs/security.md).

aiohttp hands a header that is not UTF-8 to the app as text with surrogates; anything that encodes
it again (a signature's string-to-sign, the control token's comparison) must answer a problem, not
fail. The requests go over a raw socket, since HTTP clients refuse to send such bytes.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cefisim.api.web.server.keys import OPTIONS
from tests.fuzz.support import Client, Served, examples, serve_sim

FUZZ = settings(
    max_examples=examples(60),
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
TOKEN = "fuzz-control-token"
ROUTES = [
    ("GET", "/v1/cefi/balances", b""),
    ("POST", "/v1/cefi/orders", b'{"info": {"client_id": "100"}}'),
    ("GET", "/v1/cefi/instruments", b""),
    ("POST", "/v1/auth/api-key/token", b'{"key_id": "k-alice", "timestamp": 1, "signature": "x"}'),
    ("GET", "/v1/auth/oauth/authorize?client_id=cli-demo", b""),
    ("POST", "/v1/paper-trading/funds", b'{"asset": "USD", "amount": "1"}'),
    ("GET", "/_sim/health", b""),
    ("POST", "/_sim/reset", b""),
    ("GET", "/_sim/venues/v1/book/1", b""),
    ("GET", "/_sim/venues/v9/book/1", b""),
    ("GET", "/_sim/stream?venue=v1&instrument=1", b""),
]
NAMES = [
    b"x-svc-auth-token",
    b"x-svc-auth-signature",
    b"x-svc-auth-timestamp",
    b"x-svc-auth-userid",
    b"Authorization",
    b"X-Request-Id",
    b"SVC-On-Behalf-Of",
    b"Content-Type",
    b"Last-Event-ID",
    b"x-svc-api-version",
    b"Cookie",
    b"Host",
    b"Accept",
    b"Origin",
    b"Forwarded",
    b"X-Forwarded-For",
    b"Content-Encoding",
    b"Transfer-Encoding",
    b"\xc3\x28-bad-name",
]
# a header value is any bytes but the line's own end (CR, LF) and NUL, which the HTTP parser refuses
VALUES = st.binary(min_size=1, max_size=48).filter(lambda v: not {0, 10, 13} & set(v))
PREFIXES = st.sampled_from([b"", b"Bearer ", b"Bearer v1.", b"2f1d7c9e-8a3b-4c5d-9e6f-0a1b2c3d4e5f"])


@pytest.fixture(scope="module", params=[None, TOKEN], ids=["loopback", "control-token"])
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    options = {"control_token": request.param} if request.param else {}
    with serve_sim(**options) as served:
        client = Client(served.port)
        auth = {"Authorization": f"Bearer {TOKEN}"} if request.param else {}
        reply = client.request(
            "POST", "/_sim/venues", b'{"scenario": "demo"}', {**auth, "Content-Type": "application/json"}
        )
        assert reply.status == 201, reply.body
        client.close()
        yield served


@FUZZ
@given(route=st.sampled_from(ROUTES), name=st.sampled_from(NAMES), prefix=PREFIXES, value=VALUES)
def test_header_bytes_never_give_a_5xx(
    served: Served, route: tuple[str, str, bytes], name: bytes, prefix: bytes, value: bytes
) -> None:
    method, target, body = route
    head = b"%s %s HTTP/1.1\r\nConnection: close\r\nContent-Length: %d\r\n" % (
        method.encode(),
        target.encode(),
        len(body),
    )
    if body:
        head += b"Content-Type: application/json\r\n"
    head += b"Host: " + (prefix + value if name == b"Host" else b"x") + b"\r\n"
    answer = _exchange(served.port, head + name + b": " + prefix + value + b"\r\n\r\n" + body)
    status_line = answer.split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1."), answer[:200]
    status = int(status_line.split()[1])
    assert status < 500, answer[:600]
    token = served.app[OPTIONS].control_token is not None
    if target.startswith("/_sim/") and token and name == b"Authorization" and status != 400:
        assert status == 401, answer[:600]


def _exchange(port: int, request: bytes) -> bytes:
    """Send ``request``; what came back up to the end of its head (a stream's answer never ends)."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer
