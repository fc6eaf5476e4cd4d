"""Every request example in the docs is a body the served OpenAPI document accepts.

A request example is a fenced ``http`` block in README.md or docs/*.md: its first line is
``METHOD /path``, the rest the JSON body as sent. Each is checked against the request-body schema of
that operation in the document the server serves (the CeFi document, or the control plane's for
``/_sim/`` paths), so an example that leaves out a required field (as docs/cefi.md's modify once left
out ``info.client_id``) or names an operation the server does not serve fails here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from cefisim.api.web.app.openapi_documents import OPENAPI_PATH
from cefisim.api.web.control.openapi import CONTROL_OPENAPI_PATH
from tests.api.conftest import Api

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[4]
BLOCK = re.compile(r"^```http\n(.*?)^```", re.DOTALL | re.MULTILINE)


def request_examples() -> list[tuple[str, str, str, Any]]:
    """(where, METHOD, path, body) of every request example, in file order."""
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            first, _, rest = m.group(1).partition("\n")
            method, path = first.split()
            line = text.count("\n", 0, m.start()) + 1
            found.append((f"{doc.relative_to(ROOT)}:{line}", method, path, orjson.loads(rest)))
    return found


EXAMPLES = request_examples()


def test_the_docs_show_request_examples() -> None:
    assert {(method, path) for _, method, path, _ in EXAMPLES} >= {
        ("POST", "/v1/cefi/orders"),
        ("PATCH", "/v1/cefi/orders"),
        ("POST", "/v1/cefi/transfers"),
    }


@pytest.mark.parametrize(("where", "method", "path", "body"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
async def test_a_request_example_is_valid_for_the_served_document(
    api: Api, where: str, method: str, path: str, body: Any
) -> None:
    served = OPENAPI_PATH if not path.startswith("/_sim/") else CONTROL_OPENAPI_PATH
    status, document, _ = await api.call("GET", served, client_id=None)
    assert status == 200
    operation = document["paths"].get(path, {}).get(method.lower())
    assert operation is not None, f"{where}: {method} {path} is not an operation of {served}"
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    errors = list(jsonschema.Draft202012Validator({**schema, "components": document["components"]}).iter_errors(body))
    assert not errors, f"{where}: " + "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
