"""Header values whose bytes are not UTF-8 (docs/security.md, "Header bytes").

aiohttp decodes a header's bytes as UTF-8 with ``surrogateescape``: a byte that is not UTF-8 reaches
the app as a lone surrogate (0xFF as U+DCFF), which a strict ``str.encode()`` and orjson refuse. The
signature is compared as the bytes the client sent (a mismatch, 401, like any other wrong
signature), the OpenAPI documents build ``servers`` only from a ``Host`` that is ``host[:port]``, and
the JSON writer escapes such text instead of failing. Requests go over raw sockets: HTTP clients
refuse to send such bytes. The property tests over every route are in
``tests/fuzz/test_fuzz_header_values.py``.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import orjson
import pytest
from aiohttp.test_utils import make_mocked_request

from cefisim.api.edge.problems import Problem
from cefisim.api.edge.signing import CHALLENGE
from cefisim.api.web.app.openapi_documents import server_url
from cefisim.api.web.server.http import dumps
from cefisim.api.web.server.middleware import render_problem
from tests.fuzz.support import Reply, Served, assert_problem, raw_reply, serve_sim, signed_headers

TOKEN = "header-text-token"


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with serve_sim(control_token=TOKEN) as served:
        yield served


def _send(served: Served, head: bytes, body: bytes = b"") -> Reply:
    with socket.create_connection(("127.0.0.1", served.port), timeout=60) as sock:
        sock.sendall(head + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
        return raw_reply(sock)


def _request(method: str, path: str, headers: dict[str, bytes]) -> bytes:
    """The request's head (HTTP/1.0 without a Host: HTTP/1.1 requires one)."""
    version = "1.1" if "Host" in headers else "1.0"
    lines = [f"{method} {path} HTTP/{version}".encode()] + [k.encode() + b": " + v for k, v in headers.items()]
    return b"\r\n".join(lines) + b"\r\n"


@pytest.mark.parametrize(
    ("method", "path", "body"), [("GET", "/v1/cefi/balances", b""), ("POST", "/v1/cefi/orders", b"{}")]
)
@pytest.mark.parametrize("signature", [b"\xff", b"\xc3\x28", b"AAAA\x80AAAA", "é".encode("latin-1")])
def test_a_signature_of_bytes_that_are_not_utf8_is_a_401_mismatch(
    served: Served, method: str, path: str, body: bytes, signature: bytes
) -> None:
    """With a valid key, client and timestamp, so that the signature's comparison is reached."""
    headers = {k: v.encode() for k, v in signed_headers(100, method, path, body).items()}
    headers |= {"Host": b"x", "Content-Type": b"application/json", "x-svc-auth-signature": signature}
    reply = _send(served, _request(method, path, headers), body)
    assert reply.status == 401, reply.body
    problem = assert_problem(reply, path)
    assert problem["detail"].startswith("x-svc-auth-signature: does not match the request.")
    assert reply.headers["WWW-Authenticate"] == CHALLENGE


@pytest.mark.parametrize("path", ["/v1/cefi/openapi.json", "/_sim/openapi.json"])
@pytest.mark.parametrize(
    ("host", "url"),
    [
        (b"venue.test:9443", "http://venue.test:9443"),
        (b"127.0.0.1", "http://127.0.0.1"),
        (b"[::1]:8080", "http://[::1]:8080"),
        (b"\xff\xfe", "/"),
        (b"venue.test\xc3\x28", "/"),
        (b"a host", "/"),
        (b"venue.test:99999", "/"),
        (b"[not-v6]:80", "/"),
        (b"user@venue.test", "/"),
        (b'"><script>', "/"),
        (None, "/"),
    ],
)
def test_a_document_names_its_server_only_from_a_host_that_is_host_and_port(
    served: Served, path: str, host: bytes | None, url: str
) -> None:
    """Otherwise ``servers`` is ``/``: relative, the server the document was read from."""
    headers = {"Authorization": f"Bearer {TOKEN}".encode()}
    if host is not None:
        headers["Host"] = host
    reply = _send(served, _request("GET", path, headers))
    assert reply.status == 200, reply.body
    assert orjson.loads(reply.body)["servers"][0]["url"] == url


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("example.com", "http://example.com"),
        ("EXAMPLE.com:80", "http://EXAMPLE.com:80"),
        ("xn--bcher-kva.example:1", "http://xn--bcher-kva.example:1"),
        ("a%41b:65535", "http://a%41b:65535"),
        ("[2001:db8::7]", "http://[2001:db8::7]"),
        ("[2001:db8::7%25eth0]", "/"),  # a zone id is not RFC 3986
        ("host:", "/"),
        (":80", "/"),
        ("host:65536", "/"),
        ("host:8o", "/"),
        ("a/b", "/"),
        ("bücher.example", "/"),  # not ASCII: a client sends the IDNA form
        ("", "/"),
    ],
)
def test_server_url_takes_rfc3986_host_and_port_only(host: str, url: str) -> None:
    assert server_url(make_mocked_request("GET", "/v1/cefi/openapi.json", headers={"Host": host})) == url


def test_json_escapes_text_a_header_brought_instead_of_failing() -> None:
    """A problem that quotes a header of any bytes still renders (as ``\\udcXX`` escapes)."""
    quoted = b"id-\xff".decode("utf-8", "surrogateescape")
    assert orjson.loads(dumps({"detail": quoted, quoted: [quoted]})) == {
        "detail": "id-\\udcff",
        "id-\\udcff": ["id-\\udcff"],
    }
    request = make_mocked_request("GET", "/v1/cefi/balances")
    response = render_problem(request, Problem(400, "invalid-request", f"x-thing: {quoted}"))
    assert response.status == 400
    assert isinstance(response.body, bytes)
    assert orjson.loads(response.body)["error"]["detail"] == "x-thing: id-\\udcff"
    with pytest.raises(TypeError):  # anything else JSON cannot carry still fails loudly
        dumps({"n": object()})


@pytest.mark.parametrize("charset", [b"nonsense", b"\xff"])
def test_a_form_in_an_unknown_charset_is_an_oauth_invalid_request(served: Served, charset: bytes) -> None:
    form = b"grant_type=refresh_token&refresh_token=x&client_id=cli-demo"
    headers = {"Host": b"x", "Content-Type": b"application/x-www-form-urlencoded; charset=" + charset}
    reply = _send(served, _request("POST", "/v1/auth/oauth/token", headers), form)
    assert reply.status == 400, reply.body
    doc = orjson.loads(reply.body)
    assert doc["error"] == "invalid_request" and doc["error_description"].startswith("Content-Type: unknown charset ")
