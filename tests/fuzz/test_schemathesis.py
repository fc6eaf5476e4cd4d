"""schemathesis against the served OpenAPI document: no 5xx, every response as documented, every 4xx
a problem document.

The document (``GET /v1/cefi/openapi.json``, ``api/openapi.py``) is loaded at import so that each
operation becomes one test; the server runs on a loopback port in a thread. Signed operations are
signed by a ``requests`` auth hook that sees the final URL and body bytes, after schemathesis has
serialised them, so even generated bodies carry a valid signature and reach the validators. Client
ids in generated requests are pointed at the signing client (a foreign one is a 403 the hypothesis
fuzzing covers), so generation explores validation rather than the identity check.

schemathesis is a test-only dependency; without it the module is skipped.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

schemathesis = pytest.importorskip("schemathesis")
requests = pytest.importorskip("requests")

from hypothesis import HealthCheck, Phase, settings  # noqa: E402

from cefisim.api.openapi import OPENAPI_PATH, openapi_document, openapi_routes  # noqa: E402
from cefisim.api.problems import PROBLEM_BASE, PROBLEM_CONTENT_TYPE  # noqa: E402
from cefisim.api.scenario import parse_scenario  # noqa: E402
from cefisim.api.signing import HEADERS, sign  # noqa: E402
from cefisim.api.sim import Simulation  # noqa: E402
from cefisim.engine.commands import PlaceOrder  # noqa: E402
from tests.api.conftest import SECRETS  # noqa: E402
from tests.fuzz.support import FUZZ_SCALE, Served, build_app, examples, fuzz_doc, serve  # noqa: E402

SCHEMA = schemathesis.openapi.from_dict(openapi_document())
CLIENT = 100
schemathesis.checks.load_all_checks()
#: "any schema-valid request gets a 2xx" cannot hold for a venue: an unknown instrument, a zero or
#: off-grid quantity, a version header and query that disagree are all schema-valid and all a 400
#: (the document lists 400 on every operation). Every other built-in check runs.
EXCLUDED = [schemathesis.checks.positive_data_acceptance]
#: schemathesis' coverage phase (boundary and negative values of every parameter, ~50 requests per
#: operation, run as hypothesis "explicit" examples) takes ~25 s: on with CEFISIM_FUZZ_SCALE >= 2.
PHASES = [Phase.explicit, Phase.generate] if FUZZ_SCALE > 1 else [Phase.generate]


class HmacAuth(requests.auth.AuthBase):
    """Sign the prepared request exactly as sent: method, path without query, raw body.

    Only when schemathesis sent all four signing headers (with placeholder values): a case that
    leaves one out on purpose (a negative case) goes out as generated and must be refused.
    """

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        if not all(name in r.headers for name in HEADERS):
            return r
        body = r.body or b""
        if isinstance(body, str):
            body = body.encode()
        key, secret = SECRETS[CLIENT]
        ts = str(int(time.time()))
        r.headers.update({"x-svc-auth-token": key, "x-svc-auth-timestamp": ts, "x-svc-auth-userid": str(CLIENT),
                          "x-svc-auth-signature": sign(secret, ts, r.method or "GET", urlsplit(r.url).path, body)})
        return r


@pytest.fixture(scope="module")
def served_api() -> Iterator[tuple[Served, requests.Session]]:
    # Before 2026-11-01 (engine clock) both schema versions are served, as the document lists them.
    sim = Simulation(parse_scenario(fuzz_doc(start="2026-10-01T09:00:00Z"), "schemathesis.json"), clock="virtual")
    app, handler = build_app(sim)
    if not any(getattr(r.resource, "canonical", None) == OPENAPI_PATH for r in app.router.routes()):
        app.add_routes(openapi_routes())  # until api/app.py serves it
    for i in range(3):  # some depth to quote against, and orders to look up
        sim.submit(PlaceOrder(101, 1, "SELL", "LIMIT", "0.01", f"5000{i}.00", external_id=f"s{i}"))
        sim.submit(PlaceOrder(100, 1, "BUY", "LIMIT", "0.01", f"4900{i}.00", external_id=f"b{i}"))
    with serve(app, sim, **handler) as served, requests.Session() as session:
        yield served, session


def test_the_served_document_is_the_one_tested(served_api: tuple[Served, requests.Session]) -> None:
    served, session = served_api
    response = session.get(served.base + OPENAPI_PATH, timeout=10)
    assert response.status_code == 200
    assert response.json() == openapi_document()


def _own(value: Any) -> Any:
    """Point client ids of a generated body at the signing client."""
    if isinstance(value, dict):
        out = {k: _own(v) for k, v in value.items()}
        if isinstance(out.get("client_id"), str):
            out["client_id"] = str(CLIENT)
        return out
    return value


@SCHEMA.parametrize()
@settings(max_examples=examples(12), deadline=None, derandomize=True, database=None, phases=PHASES,
          suppress_health_check=list(HealthCheck))
def test_operation_conforms_to_its_document(case: Any, served_api: tuple[Served, requests.Session]) -> None:
    served, session = served_api
    if isinstance(case.body, dict):  # replace client ids that are there; never add one (negative cases)
        case.body = _own(case.body)
        if case.path == "/v1/cefi/clients" and case.method == "PATCH" and isinstance(case.body.get("id"), str):
            case.body["id"] = str(CLIENT)
    if case.query:
        for name in ("client_id",):
            if name in case.query:
                case.query[name] = str(CLIENT)
        if case.path == "/v1/cefi/clients" and "id" in case.query:
            case.query["id"] = str(CLIENT)
    response = case.call_and_validate(base_url=served.base, session=session, auth=HmacAuth(),
                                      excluded_checks=EXCLUDED)
    assert response.status_code < 500
    if response.status_code >= 400:
        content_type = (response.headers.get("content-type") or [""])[0]  # schemathesis: lower-case, lists
        assert content_type.startswith(PROBLEM_CONTENT_TYPE), (case.method, case.path, response.status_code)
        problem = response.json()
        problem = problem.get("error", problem)
        assert problem["type"].startswith(PROBLEM_BASE) and problem["status"] == response.status_code


def test_allow_headers_match_the_document(served_api: tuple[Served, requests.Session]) -> None:
    served, session = served_api
    wrong = {}
    for path, item in openapi_document()["paths"].items():
        documented = {m.upper() for m in item} | ({"HEAD"} if "get" in item else set())
        response = session.request("OPTIONS", served.base + path.replace("{ref_id}", "1"), timeout=10)
        allowed = {m.strip() for m in response.headers.get("Allow", "").split(",") if m.strip()}
        if response.status_code == 405 and allowed != documented:
            wrong[path] = sorted(allowed - documented)
    assert not wrong, wrong
