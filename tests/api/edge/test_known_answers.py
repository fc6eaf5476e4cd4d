"""Known answers: wire formats checked against values computed outside the project's code.

Every HTTP test signs with ``cefisim.api.edge.signing.sign``, the payload function the server verifies with,
so a wrong payload order would go unnoticed by them. Here the signatures are literal strings computed
once with the OpenSSL command line (``printf PAYLOAD | openssl dgst -sha256 -hmac SECRET -binary |
base64``), following the interface description's layouts:

- concat: timestamp + METHOD + path + body (no separators)
- newline: METHOD, path, timestamp, body joined by ``\\n``

The server must accept each of them over HTTP, refuse them under the other layout, and the project's
signer must produce exactly them. The README's hand-written examples (the curl/openssl line that
``cefisim serve`` prints and the Python snippet) run against a live server. The journal record (and
its checksum, the CRC-32 that ``gzip`` writes in its trailer, of the file's bytes before its seal), the
ES256 key exchange (signed by the ``openssl`` command, not by ``cryptography``),
the PKCE challenge and the token response's ``expires_in`` format are pinned the same way.
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from cefisim.api.edge.signing import sign
from cefisim.api.formats.scenario import parse_scenario
from cefisim.api.runtime.simulation import Simulation
from cefisim.engine.commands import PlaceOrder
from tests.api.conftest import ALICE_KEY, BOB_KEY, scenario_doc

ROOT = Path(__file__).resolve().parents[3]
TS = 1_793_610_000  # 2026-11-02T09:00:00Z: the servers below run with their wall clock stopped here
ORDER_BODY = (
    b'{"info":{"client_id":"100","instrument_id":"1","side":"BUY","type":"LIMIT","qty":"0.5000","price":"50000.00"}}'
)

# (secret, method, path, body, concat signature, newline signature), computed with openssl
KNOWN = [
    (
        "alice-secret",
        "GET",
        "/v1/cefi/balances",
        b"",
        "lXZ7xQ7fc8Kx/Bd22/qpFheqhx6TjHTmkS4hKjrQe90=",
        "Tafhh9KYy64Mzy1jIKBYqAAemuCQNie5kgCRyLXn4qU=",
    ),
    (
        "alice-secret",
        "POST",
        "/v1/cefi/orders",
        ORDER_BODY,
        "brIbpuP96e5JsbZc3+RKtjfZenflaJUt1VmVjVGlL7A=",
        "srjsv76vbH2xO1FLwK0GUSaL//sONgFaZlIt3BwYQMs=",
    ),
    (
        "bob-secret",
        "GET",
        "/v1/cefi/orders/all",
        b"",
        "aY1+Eznevl3a2pwzmdZV4ZjsA9/0/7VPN4XzNdyBK+4=",
        "CC5Ik9swvOiOIGKOoO8sYwZIp1uybyZMh/Fe/o1Ot14=",
    ),
]
KEY_OF = {"alice-secret": (ALICE_KEY, "100"), "bob-secret": (BOB_KEY, "101")}
#: openssl over "1793610000GET/v1/cefi/orders/all?size=5" (the query wrongly included)
WITH_QUERY_SIGNED = "unvUemhftrZP3cIwXvTDAGTSmRhVSJejYjZN4aC/to8="


def _ids(row: tuple) -> str:
    return f"{row[1]} {row[2]}{' +body' if row[3] else ''}"


@pytest.mark.parametrize("row", KNOWN, ids=_ids)
@pytest.mark.parametrize("layout", ["concat", "newline"])
def test_the_signer_produces_the_known_signature(row: tuple, layout: str) -> None:
    secret, method, path, body, concat, newline = row
    assert sign(secret, str(TS), method, path, body, layout) == (concat if layout == "concat" else newline)


async def _send(
    api_factory: Callable[..., Any],
    layout: str,
    method: str,
    path: str,
    body: bytes,
    secret: str,
    signature: str,
    query: str = "",
) -> tuple[int, Any]:
    api = await api_factory(layout=layout, wall_s=lambda: float(TS))
    key, userid = KEY_OF[secret]
    headers = {
        "x-svc-auth-token": key,
        "x-svc-auth-signature": signature,
        "x-svc-auth-timestamp": str(TS),
        "x-svc-auth-userid": userid,
    }
    if body:
        headers["Content-Type"] = "application/json"
    resp = await api.client.request(method, path + query, data=body or None, headers=headers)
    return resp.status, await resp.json(content_type=None)


@pytest.mark.parametrize("row", KNOWN, ids=_ids)
@pytest.mark.parametrize("layout", ["concat", "newline", "either"])
async def test_the_server_accepts_the_known_signature(api_factory: Callable[..., Any], row: tuple, layout: str) -> None:
    secret, method, path, body, concat, newline = row
    query = "?timestamp=1793610000000000000" if path.endswith("/all") else ""
    for signature in [concat] if layout == "concat" else [newline] if layout == "newline" else [concat, newline]:
        status, answer = await _send(api_factory, layout, method, path, body, secret, signature, query)
        assert status == 200, answer
    if body:
        assert answer["status"] == "ACTIVE" and answer["order_info"]["qty"] == "0.5000"


@pytest.mark.parametrize("row", KNOWN, ids=_ids)
async def test_the_other_layout_is_refused(api_factory: Callable[..., Any], row: tuple) -> None:
    secret, method, path, body, concat, newline = row
    for layout, wrong in (("concat", newline), ("newline", concat)):
        status, problem = await _send(api_factory, layout, method, path, body, secret, wrong)
        assert status == 401 and problem["error"]["status"] == 401


async def test_a_query_string_does_not_count(api_factory: Callable[..., Any]) -> None:
    query = "?size=5&skip=0&timestamp=1793610000000000000"
    signed = KNOWN[2][4]  # over the path alone
    status, page = await _send(api_factory, "concat", "GET", "/v1/cefi/orders/all", b"", "bob-secret", signed, query)
    assert (status == 200 and page == []) or page["data"] == []
    status, _ = await _send(
        api_factory, "concat", "GET", "/v1/cefi/orders/all", b"", "bob-secret", WITH_QUERY_SIGNED, "?size=5"
    )
    assert status == 401


async def test_the_known_signature_fits_only_its_own_body_and_timestamp(api_factory: Callable[..., Any]) -> None:
    signature = KNOWN[1][4]
    status, _ = await _send(
        api_factory,
        "concat",
        "POST",
        "/v1/cefi/orders",
        ORDER_BODY.replace(b"0.5000", b"0.6000"),
        "alice-secret",
        signature,
    )
    assert status == 401
    api = await api_factory(wall_s=lambda: float(TS))
    resp = await api.client.post(
        "/v1/cefi/orders",
        data=ORDER_BODY,
        headers={
            "x-svc-auth-token": ALICE_KEY,
            "x-svc-auth-signature": signature,
            "x-svc-auth-timestamp": str(TS + 1),
            "x-svc-auth-userid": "100",
            "Content-Type": "application/json",
        },
    )
    assert resp.status == 401


# --- the README's examples against a live `cefisim serve` ---------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def live_server() -> Any:
    """``cefisim serve`` with the demo scenario in a subprocess; yields (base url, the printed example line)."""
    port = _free_port()
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
            "--log-level",
            "ERROR",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:  # the example is printed right before the server starts listening
            lines.append(line)
            if line.startswith("  TS="):
                break
        example = lines[-1].strip()
        assert example.startswith("TS="), lines
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "server did not start"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}", example
    finally:
        os.killpg(proc.pid, 9)
        proc.wait(timeout=10)
        proc.stdout.close()  # type: ignore[union-attr]


def _records(body: Any) -> list[dict[str, Any]]:
    """The balance records of either schema version (the demo's start is past the version switch)."""
    return body["data"] if isinstance(body, dict) else body


@pytest.mark.skipif(not (shutil.which("openssl") and shutil.which("curl")), reason="needs openssl and curl")
def test_the_printed_curl_openssl_line_works(live_server: tuple[str, str]) -> None:
    _base, example = live_server
    assert "http://127.0.0.1:" in example and "openssl dgst -sha256 -hmac" in example
    out = subprocess.run(["bash", "-c", example], capture_output=True, text=True, timeout=20)
    assert {r["id"] for r in _records(orjson.loads(out.stdout))} >= {"1", "2"}, out.stdout


def test_the_readme_python_snippet_works(live_server: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    base, _ = live_server
    readme = (ROOT / "README.md").read_text()
    snippets = [s for s in re.findall(r"```python\n(.*?)```", readme, re.DOTALL) if "urllib" in s]
    assert len(snippets) == 1
    code = snippets[0].replace("http://127.0.0.1:8080", base)
    exec(compile(code, "README.md", "exec"), {})
    assert {r["id"] for r in _records(orjson.loads(capsys.readouterr().out))} >= {"1", "2"}


# --- the journal record: docs/journal.md's example, written as [at, src, kind, values, checksum] ------------
# (``at`` is the engine time the command applied at: the scenario's start, 2026-11-02T09:00:00Z, which
# is also the order's timestamp)

DOC_RECORD = (
    b'[1793610000000000000,"ext","place",[100,1,"BUY","LIMIT","1.5","50000.00","GTC",[],[],null,null,"my-1",null,null]'
)
HEADER_SEAL = re.compile(rb',"crc32":"([0-9a-f]{8})"}$')


def _gzip_crc32(data: bytes) -> bytes:
    """The CRC-32 of ``data`` as ``gzip`` computes it (the first four bytes of its trailer, little-endian)."""
    out = subprocess.run(["gzip", "-c", "-n"], input=data, capture_output=True, check=True).stdout
    return b"%08x" % int.from_bytes(out[-8:-4], "little")


def _sealed_doc_record(header: bytes) -> bytes:
    """The documented record sealed after ``header`` (a line without its end): a line's checksum is the
    CRC-32 of every byte of the file before its seal, the header line whole and the record up to it."""
    seal = HEADER_SEAL.search(header)
    assert seal is not None and _gzip_crc32(header[: seal.start()]) == seal.group(1)
    return DOC_RECORD + b',"' + _gzip_crc32(header + b"\n" + DOC_RECORD) + b'"]'


@pytest.mark.skipif(not shutil.which("gzip"), reason="needs gzip")
def test_the_journal_writes_the_documented_record(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    sim = Simulation(parse_scenario(scenario_doc(), "s.json"), clock="virtual", journal_path=path)
    sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "1.5", "50000.00", external_id="my-1"))
    sim.close()
    header, record = path.read_bytes().splitlines()
    assert orjson.loads(header)["format"] == "cefisim-journal/3"
    assert record == _sealed_doc_record(header)


@pytest.mark.skipif(not shutil.which("gzip"), reason="needs gzip")
async def test_a_handwritten_record_is_replayed(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    Simulation(parse_scenario(scenario_doc(), "s.json"), clock="virtual", journal_path=path).close()
    header = path.read_bytes().rstrip(b"\n")
    path.write_bytes(header + b"\n" + _sealed_doc_record(header) + b"\n")
    sim = Simulation(parse_scenario(scenario_doc(), "s.json"), clock="virtual", journal_path=path)
    try:
        assert sim.recovered_commands == 1
        order = sim.venue.accounts[100].orders[1]
        assert (order.external_id, order.status, order.created) == ("my-1", "ACTIVE", 1793610000000000000)
    finally:
        sim.close()


# --- the ES256 key exchange, signed by openssl ----------------------------------------------------------


def _der_to_raw(der: bytes) -> bytes:
    """r||s (32 bytes each) from a DER ECDSA signature: SEQUENCE { INTEGER r, INTEGER s }."""
    assert der[0] == 0x30
    i = 2 if der[1] < 0x80 else 2 + (der[1] & 0x7F)
    out = b""
    for _ in range(2):
        assert der[i] == 0x02
        n = der[i + 1]
        out += der[i + 2 : i + 2 + n].lstrip(b"\0").rjust(32, b"\0")
        i += 2 + n
    return out


@pytest.mark.skipif(not shutil.which("openssl"), reason="needs openssl")
async def test_key_exchange_with_an_openssl_signature(api_factory: Callable[..., Any], tmp_path: Path) -> None:
    key = tmp_path / "k.pem"
    subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", str(key)], check=True)
    pub = subprocess.run(
        ["openssl", "ec", "-in", str(key), "-pubout"], check=True, capture_output=True, text=True
    ).stdout
    doc = scenario_doc(
        api_keys=[{"key_id": "k-ossl", "kind": "user", "user_id": "u-alice", "client_id": "100", "public_key": pub}]
    )
    api = await api_factory(doc, wall_s=lambda: float(TS))
    der = subprocess.run(
        ["openssl", "dgst", "-sha256", "-sign", str(key)],
        input=f"k-ossl.{TS}".encode(),
        check=True,
        capture_output=True,
    ).stdout
    signature = base64.urlsafe_b64encode(_der_to_raw(der)).rstrip(b"=").decode()
    resp = await api.client.post(
        "/v1/auth/api-key/token", json={"key_id": "k-ossl", "timestamp": TS, "signature": signature}
    )
    body = await resp.json()
    assert resp.status == 200, body
    assert set(body) == {"access_token", "refresh_token", "expires_in", "token_type"}
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == "2026-11-02T10:00:00Z"  # one hour after the scenario's start, ISO 8601 UTC
    wrong = subprocess.run(
        ["openssl", "dgst", "-sha256", "-sign", str(key)],
        input=f"k-ossl.{TS + 1}".encode(),
        check=True,
        capture_output=True,
    ).stdout
    resp = await api.client.post(
        "/v1/auth/api-key/token",
        json={"key_id": "k-ossl", "timestamp": TS, "signature": base64.urlsafe_b64encode(_der_to_raw(wrong)).decode()},
    )
    assert resp.status == 401


# --- PKCE: a verifier and its challenge computed with openssl --------------------------------------------

#: printf VERIFIER | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d '='
VERIFIER = "dBjftJeZ4CVP-mJ4TCQhKQ1hNQ8x2eDn3kqwbx0UxD3"
CHALLENGE = "mJEXix5aCkyT_1nXTq7dNILoOYWnpVYSGwSOjWw-GGM"


async def test_pkce_with_a_known_verifier_and_challenge() -> None:
    from tests.api.auth.auth_support import running
    from tests.api.auth.test_auth_oauth import authorize_params, code_form, consent, query_of, token_call

    async with running() as h:
        params = authorize_params(CHALLENGE)
        status, body = await consent(h, await h.token("k-alice"), {**params, "decision": "approve"})
        assert status == 200, body
        code = query_of(body["redirect_to"])["code"]
        status, _ = await token_call(h, code_form(code, VERIFIER[:-1] + "4"))
        assert status == 400
        status, body = await consent(h, await h.token("k-alice"), {**params, "decision": "approve"})
        code = query_of(body["redirect_to"])["code"]
        status, tokens = await token_call(h, code_form(code, VERIFIER))
        assert status == 200 and tokens["token_type"].lower() == "bearer", tokens
