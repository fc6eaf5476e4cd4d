"""schemathesis against the served OpenAPI document, with signed requests: no 5xx, every response as
documented (schema, status code, content type, headers), every 4xx a problem document.

The app runs in this process (``tests/fuzz/support.serve``: a loopback port, a thread); each era of the
engine clock gets its own server and its own document, built by the function that serves it (a test
pins that the served bytes are that document): before 2026-11-01 both schema versions, from then on
v2026_01_23 only. Every operation of the document becomes one test.

Signing: a ``requests`` auth hook signs the prepared request, i.e. the exact method, path and body
bytes schemathesis sends, after it has serialised them, so even generated bodies carry a valid
signature and reach the validators. It signs only when the case carries all four signing headers: a
case that leaves one out on purpose (a negative case, the ``ignored_auth`` probes) goes out as generated
and must be refused. Client ids in generated requests are sent as drawn: the signing client's, another
client's (403) or one no client has (404 ``unknown-client``), each a status the operation declares.

schemathesis is a test-only dependency; without it the module is skipped.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import pytest

schemathesis = pytest.importorskip("schemathesis")
requests = pytest.importorskip("requests")

from hypothesis import HealthCheck, Phase, settings  # noqa: E402

from cefisim.api.edge.problems import PROBLEM_BASE, PROBLEM_CONTENT_TYPE  # noqa: E402
from cefisim.api.edge.signing import HEADERS, sign  # noqa: E402
from cefisim.api.formats.scenario import parse_scenario  # noqa: E402
from cefisim.api.runtime.simulation import Simulation  # noqa: E402
from cefisim.api.web.app.openapi_documents import OPENAPI_PATH, openapi_document  # noqa: E402
from cefisim.api.web.control.openapi import CONTROL_OPENAPI_PATH, control_document  # noqa: E402
from cefisim.engine.commands import PlaceOrder  # noqa: E402
from tests.api.conftest import SECRETS  # noqa: E402
from tests.fuzz.support import USER_KEY, Served, build_app, es256, examples, fuzz_doc, serve, serve_sim  # noqa: E402

CLIENT = 100
BEARERS: dict[int, str] = {}  # server port -> the access token the run's bearer requests carry
#: the two eras of the engine clock: both schema versions offered, and v2026_01_23 alone
ERAS = {"both-versions": "2026-10-01T09:00:00Z", "v2026-only": "2026-11-02T09:00:00Z"}
SCHEMAS = {
    era: schemathesis.openapi.from_dict(openapi_document(int(datetime.fromisoformat(start).timestamp()) * 10**9))
    for era, start in ERAS.items()
}
#: the live stream never ends (an event stream): it is tested over HTTP in tests/api/web/control/test_stream.py
CONTROL = schemathesis.openapi.from_dict(control_document("http://127.0.0.1:8080")).exclude(operation_id="sim_stream")
schemathesis.checks.load_all_checks()
#: Every built-in check runs but one. ``positive_data_acceptance`` ("any schema-valid request gets a
#: 2xx") cannot hold for a venue: an unknown instrument or asset, an off-grid or below-minimum quantity,
#: an order that is not this client's, a version header and query that disagree are schema-valid and
#: business answers (400/404/409, each declared on the operation). The checks that need what this run
#: does not give (``use_after_free`` and ``ensure_resource_availability``: OpenAPI links;
#: ``object_level_authorization``: a second identity) run and pass vacuously.
EXCLUDED = [schemathesis.checks.positive_data_acceptance]
#: the coverage phase (schemathesis' boundary and negative values of every parameter, an undeclared
#: method per path for ``unsupported_method``, missing headers for ``missing_required_header``) runs as
#: hypothesis "explicit" examples next to the generated ones
PHASES = [Phase.explicit, Phase.generate]


class HmacAuth(requests.auth.AuthBase):
    """Sign the prepared request exactly as sent: timestamp, METHOD, path without query, raw body.

    A bearer credential schemathesis generated (``Authorization``, the Auth interface's consent) is
    replaced by a real access token of the API-key exchange, the way the signing headers are.
    """

    def __init__(self, bearer: str | None = None) -> None:
        self.bearer = bearer

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        if self.bearer is not None and r.headers.get("Authorization", "").startswith("Bearer "):
            r.headers["Authorization"] = f"Bearer {self.bearer}"
        if not all(name in r.headers for name in HEADERS):
            return r
        body = r.body or b""
        if isinstance(body, str):
            body = body.encode()
        key, secret = SECRETS[CLIENT]
        ts = str(int(time.time()))
        r.headers.update(
            {
                "x-svc-auth-token": key,
                "x-svc-auth-timestamp": ts,
                "x-svc-auth-userid": str(CLIENT),
                "x-svc-auth-signature": sign(secret, ts, r.method or "GET", urlsplit(r.url).path, body),
            }
        )
        return r


def access_token(served: Served, session: requests.Session) -> str:
    """An access token of the scenario's user key (API-key exchange)."""
    ts = int(time.time())
    answer = session.post(
        served.base + "/v1/auth/api-key/token",
        timeout=10,
        json={"key_id": "k-alice", "timestamp": ts, "signature": es256(USER_KEY, "k-alice", ts)},
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["access_token"])


@contextmanager
def served_era(era: str) -> Iterator[tuple[str, Served, requests.Session]]:
    sim = Simulation(parse_scenario(fuzz_doc(start=ERAS[era]), "schemathesis.json"), clock="virtual")
    app, handler = build_app(sim)
    for i in range(3):  # some depth to quote against, and orders to look up
        sim.submit(PlaceOrder(101, 1, "SELL", "LIMIT", "0.01", f"5000{i}.00", external_id=f"s{i}"))
        sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.01", f"4900{i}.00", external_id=f"b{i}"))
    with serve(app, sim, **handler) as served, requests.Session() as session:
        BEARERS[served.port] = access_token(served, session)
        yield era, served, session


@pytest.fixture(scope="module")
def served_before() -> Iterator[tuple[str, Served, requests.Session]]:
    with served_era("both-versions") as served:
        yield served


@pytest.fixture(scope="module")
def served_after() -> Iterator[tuple[str, Served, requests.Session]]:
    with served_era("v2026-only") as served:
        yield served


@pytest.fixture(params=list(ERAS))
def served_api(request: pytest.FixtureRequest) -> tuple[str, Served, requests.Session]:
    return request.getfixturevalue({"both-versions": "served_before", "v2026-only": "served_after"}[request.param])


def test_the_served_document_is_the_one_tested(served_api: tuple[str, Served, requests.Session]) -> None:
    era, served, session = served_api
    response = session.get(served.base + OPENAPI_PATH, timeout=10)
    assert response.status_code == 200
    assert response.json() == {
        **SCHEMAS[era].raw_schema,
        "servers": [{"url": served.base, "description": "the cefisim server this document was read from"}],
    }


def _key_proof(body: dict[str, Any]) -> dict[str, Any]:
    """A well-typed key-exchange body gets a real key id, timestamp and signature (a malformed one
    stays malformed), so generation reaches the token minting rather than the unknown-key answer."""
    if isinstance(body.get("timestamp"), int) and all(
        isinstance(body.get(k), str) and body[k] for k in ("key_id", "signature")
    ):
        ts = int(time.time())
        return {**body, "key_id": "k-alice", "timestamp": ts, "signature": es256(USER_KEY, "k-alice", ts)}
    return body


def _conforms(case: Any, served: Served, session: requests.Session) -> None:
    if isinstance(case.body, dict) and case.path == "/v1/auth/api-key/token":
        case.body = _key_proof(case.body)
    response = case.call_and_validate(
        base_url=served.base, session=session, auth=HmacAuth(BEARERS.get(served.port)), excluded_checks=EXCLUDED
    )
    assert response.status_code < 500
    if response.status_code >= 400 and case.path != "/v1/auth/oauth/token":  # that one answers RFC 6749
        content_type = (response.headers.get("content-type") or [""])[0]  # schemathesis: lower-case, lists
        if case.path == "/v1/auth/oauth/consent" and case.method == "GET":
            assert content_type.startswith("text/html")  # the consent page says what went wrong
            return
        assert content_type.startswith(PROBLEM_CONTENT_TYPE), (case.method, case.path, response.status_code)
        problem = response.json()
        if isinstance(problem.get("error"), dict):  # nested (v2026_01_23); Auth's `error` is its code
            problem = problem["error"]
        assert problem["type"].startswith(PROBLEM_BASE) and problem["status"] == response.status_code


_SETTINGS = settings(
    max_examples=examples(10),
    deadline=None,
    derandomize=True,
    database=None,
    phases=PHASES,
    suppress_health_check=list(HealthCheck),
)


@SCHEMAS["both-versions"].parametrize()
@_SETTINGS
def test_cefi_before_the_removal_conforms(case: Any, served_before: tuple[str, Served, requests.Session]) -> None:
    _conforms(case, *served_before[1:])


@SCHEMAS["v2026-only"].parametrize()
@_SETTINGS
def test_cefi_after_the_removal_conforms(case: Any, served_after: tuple[str, Served, requests.Session]) -> None:
    _conforms(case, *served_after[1:])


@pytest.fixture(scope="module")
def served_control() -> Iterator[tuple[Served, requests.Session]]:
    with serve_sim(fuzz_doc(start=ERAS["v2026-only"])) as served, requests.Session() as session:
        yield served, session


def test_the_served_control_document_is_the_one_tested(served_control: tuple[Served, requests.Session]) -> None:
    served, session = served_control
    response = session.get(served.base + CONTROL_OPENAPI_PATH, timeout=10)
    assert response.status_code == 200
    assert (
        response.json()
        == control_document(served.base)
        == {**CONTROL.raw_schema, "servers": response.json()["servers"]}
    )


@CONTROL.parametrize()
@_SETTINGS
def test_control_plane_conforms(case: Any, served_control: tuple[Served, requests.Session]) -> None:
    """The control plane on its own server (it resets, advances and restores the state), as a loopback
    peer without --control-token: every operation answers as its document says, problems bare."""
    served, session = served_control
    response = case.call_and_validate(base_url=served.base, session=session, excluded_checks=EXCLUDED)
    assert response.status_code < 500 or (case.path == "/_sim/invariants" and response.status_code == 500)
    if response.status_code >= 400:
        assert (response.headers.get("content-type") or [""])[0].startswith(PROBLEM_CONTENT_TYPE)
        assert response.json()["type"].startswith(PROBLEM_BASE)


def test_allow_headers_match_the_document(served_api: tuple[str, Served, requests.Session]) -> None:
    era, served, session = served_api
    wrong = {}
    for path, item in SCHEMAS[era].raw_schema["paths"].items():
        documented = {m.upper() for m in item} | ({"HEAD"} if "get" in item else set())
        response = session.request("OPTIONS", served.base + path.replace("{ref_id}", "1"), timeout=10)
        allowed = {m.strip() for m in response.headers.get("Allow", "").split(",") if m.strip()}
        if response.status_code == 405 and allowed != documented:
            wrong[path] = sorted(allowed - documented)
    assert not wrong, wrong
