"""What the generated-client tests share: docs/client.md's fenced blocks, the generators' command lines,
and a reader of the served documents (which model a successful answer of an operation is).

The blocks of docs/client.md's "Generated clients" sections carry a title (```` ```sh title="generate" ````);
:func:`blocks` reads them per section, so the tests run exactly what the page shows, with only the
address of ``cefisim serve`` (:data:`DOC_URL`) replaced by the live server's.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import httpx

ROOT = Path(__file__).resolve().parents[2]
CLIENT_DOC = ROOT / "docs" / "client.md"
DOC_URL = "http://127.0.0.1:8080"
PYTHON_SECTION = "Python: openapi-python-client"
TS_SECTION = "TypeScript: openapi-typescript and openapi-fetch"
CONTROL_SECTION = "TypeScript: steering the sandbox (the control plane)"
#: pytest-timeout for a test that generates code (its session fixtures count): minutes on a busy 2-core machine
SLOW = 900
#: the venv's scripts (openapi-python-client, datamodel-codegen, ruff, which the first runs on its output)
BIN = Path(sys.executable).parent


def blocks(section: str) -> dict[str, list[str]]:
    """The titled fenced blocks of the ``### section`` of docs/client.md: title -> bodies, in page order."""
    text = CLIENT_DOC.read_text(encoding="utf-8")
    start = text.index(f"### {section}\n")
    end = text.find("\n### ", start + 1)
    found: dict[str, list[str]] = {}
    for title, body in re.findall(
        r'```\w+ title="([^"]+)"\n(.*?)```', text[start : end if end > 0 else None], re.DOTALL
    ):
        found.setdefault(title, []).append(body)
    return found


def only(section: str, title: str) -> str:
    """The one block titled ``title`` in ``section``."""
    (body,) = blocks(section)[title]
    return body


def run_shell(script: str, url: str, cwd: Path, timeout: float = 300) -> str:
    """Run a shell block of the page with the live server's address, in ``cwd``; its output, or a failure
    that shows what it printed."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script.replace(DOC_URL, url)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{script.strip()}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def reset(url: str) -> None:
    """``POST /_sim/reset``: back to the loaded scenario."""
    httpx.post(f"{url}/_sim/reset", timeout=30).raise_for_status()


def generate_python_client(document: Path, out: Path) -> None:
    """openapi-python-client's package of ``document`` in ``out`` (as the page's command makes it)."""
    run_shell(
        f"openapi-python-client generate --path '{document}' --meta none --output-path '{out}'", DOC_URL, out.parent
    )


def generate_pydantic_models(document: Path, out: Path) -> None:
    """datamodel-code-generator's pydantic v2 models of ``document``, in the module file ``out``."""
    run_shell(
        f"datamodel-codegen --input '{document}' --input-file-type openapi "
        f"--output-model-type pydantic_v2.BaseModel --formatters builtin --output '{out}'",
        DOC_URL,
        out.parent,
    )


def resolve(document: dict[str, Any], ref: str) -> Any:
    node: Any = document
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def operations(document: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """operationId -> (METHOD, path template, operation) of every operation of ``document``."""
    return {
        op["operationId"]: (method.upper(), path, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
    }


def success_schema(operation: dict[str, Any]) -> str:
    """The name of the schema of the operation's 200 (or 201) JSON answer."""
    ok = operation["responses"].get("200") or operation["responses"]["201"]
    return str(ok["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1])


def operation_at(document: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    """The operation of ``document`` that serves ``method path`` (a path template's ``{x}`` is one segment)."""
    for template, item in document["paths"].items():
        if method.lower() in item and re.fullmatch(re.sub(r"\{[^/]+\}", "[^/]+", template), path):
            return dict(item[method.lower()])
    raise AssertionError(f"{method} {path}: no operation of the document serves it")


def generated_function(package: ModuleType, operation: dict[str, Any]) -> ModuleType:
    """openapi-python-client's module of ``operation`` in ``package``: ``api.<first tag>.<operationId>``,
    both in snake case."""
    tag = re.sub(r"\W", "_", operation["tags"][0])
    return importlib.import_module(f"{package.__name__}.api.{tag}.{operation['operationId']}")


def request_bodies(document: dict[str, Any]) -> dict[str, str]:
    """operationId -> the schema name of its request body, for every operation that takes one."""
    out = {}
    for op_id, (_method, _path, op) in operations(document).items():
        for media in op.get("requestBody", {}).get("content", {}).values():
            out[op_id] = media["schema"]["$ref"].rsplit("/", 1)[1]
    return out


def declared_only(model: Any) -> Any:
    """``model`` after checking that it and every model inside it carry nothing beyond their declared
    fields (a generated model keeps unknown keys in ``additional_properties``)."""
    if attrs.has(type(model)):
        assert not getattr(model, "additional_properties", None), model
        for field in attrs.fields(type(model)):
            declared_only(getattr(model, field.name))
    elif isinstance(model, list):
        for item in model:
            declared_only(item)
    return model
