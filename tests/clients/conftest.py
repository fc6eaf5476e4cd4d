"""Session fixtures of the generated-client tests: one live ``cefisim serve`` (``--port 0 --ready-file``,
the demo scenario on a virtual clock) per test process, the documents it serves, and the Python code
the generators make of them, generated once per process (under ``pytest -n`` once per worker).

A test that changes the venue starts with ``POST /_sim/reset`` (``tests.clients.support.reset``), so
the tests stand alone in any order and on any worker.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.api.cli.test_cli_serve import serving
from tests.clients.support import (
    PYTHON_SECTION,
    generate_pydantic_models,
    generate_python_client,
    only,
    run_shell,
)


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of a live ``cefisim serve`` with the demo scenario on a virtual clock."""
    with serving(tmp_path_factory.mktemp("serve")) as (url, proc):
        yield str(url)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def served(url: str, path: str, folder: Path, name: str) -> tuple[dict[str, Any], Path]:
    """The document served at ``path``, parsed and written to ``folder/name``."""
    answer = httpx.get(url + path, timeout=30)
    answer.raise_for_status()
    file = folder / name
    file.write_bytes(answer.content)
    return answer.json(), file


@pytest.fixture(scope="session")
def documents(sandbox: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], Path]]:
    """``cefi`` and ``control``: each served document, parsed, and the file it was written to."""
    folder = tmp_path_factory.mktemp("documents")
    return {
        "cefi": served(sandbox, "/v1/cefi/openapi.json", folder, "cefi.json"),
        "control": served(sandbox, "/_sim/openapi.json", folder, "control.json"),
    }


def _import(folder: Path, name: str) -> ModuleType:
    sys.path.insert(0, str(folder))
    try:
        importlib.import_module(f"{name}.models")
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(folder))


def _forget(name: str) -> None:
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


@pytest.fixture(scope="session")
def cefi_client(sandbox: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """The package docs/client.md's command generates from the live server's venue document
    (openapi-python-client), imported as ``cefi_client``."""
    folder = tmp_path_factory.mktemp("python-client")
    run_shell(only(PYTHON_SECTION, "generate"), sandbox, folder)
    yield _import(folder, "cefi_client")
    _forget("cefi_client")


@pytest.fixture(scope="session")
def control_client(
    documents: dict[str, tuple[dict[str, Any], Path]], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModuleType]:
    """openapi-python-client's package of the control plane's document, imported as ``control_client``."""
    folder = tmp_path_factory.mktemp("control-client")
    generate_python_client(documents["control"][1], folder / "control_client")
    yield _import(folder, "control_client")
    _forget("control_client")


def _models(document: Path, name: str) -> ModuleType:
    out = document.parent / f"{name}.py"
    generate_pydantic_models(document, out)
    spec = importlib.util.spec_from_file_location(name, out)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic resolves the models' forward references through it
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def pydantic_models(documents: dict[str, tuple[dict[str, Any], Path]]) -> Iterator[dict[str, ModuleType]]:
    """``cefi`` and ``control``: datamodel-code-generator's pydantic v2 models of each served document."""
    yield {kind: _models(file, f"{kind}_pydantic_models") for kind, (_doc, file) in documents.items()}
    for kind in ("cefi", "control"):
        sys.modules.pop(f"{kind}_pydantic_models", None)
