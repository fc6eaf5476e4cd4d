"""Every request body of the served documents is one model holding every field, in each generator.

The venue's document (CeFi and Auth) and the control plane's, as a live server serves them, go through
openapi-python-client and datamodel-code-generator (pydantic v2); openapi-typescript's side is in
test_typescript_client.py. For each operation that takes a body, the generated function takes one model
(not a union of models), that model declares exactly the schema's properties, and a valid body
(tests/clients/request_examples.py) goes in and comes out unchanged with nothing kept beside the
declared fields. The rules across fields stay in the schema for validators: the examples are checked
against it here, the rules themselves in tests/api/web/app/test_openapi.py.
"""

from __future__ import annotations

import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import jsonschema
import pytest
from pydantic import BaseModel, RootModel

from tests.clients.request_examples import EXAMPLES
from tests.clients.support import SLOW, declared_only, generated_function, operations, request_bodies

KINDS = ["cefi", "control"]


def _schema(document: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(document["components"]["schemas"][name])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.timeout(SLOW)
def test_every_body_has_a_valid_example(kind: str, documents: dict[str, tuple[dict[str, Any], Path]]) -> None:
    document = documents[kind][0]
    assert set(EXAMPLES[kind]) == set(request_bodies(document).values())
    for name, example in EXAMPLES[kind].items():
        # the document as the root, so the schema's $refs resolve
        jsonschema.Draft202012Validator({**document, "$ref": f"#/components/schemas/{name}"}).validate(example)


def _attrs_names(cls: type) -> set[str]:
    """The JSON names of a generated attrs model's fields (``type`` is spelled ``type_`` in Python)."""
    return {f.name.removesuffix("_") for f in attrs.fields(cls) if f.name != "additional_properties"}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.timeout(SLOW)
def test_openapi_python_client_makes_one_model_of_each_body(
    kind: str,
    documents: dict[str, tuple[dict[str, Any], Path]],
    cefi_client: ModuleType,
    control_client: ModuleType,
) -> None:
    package = {"cefi": cefi_client, "control": control_client}[kind]
    document = documents[kind][0]
    for op_id, name in request_bodies(document).items():
        _method, _path, op = operations(document)[op_id]
        module = generated_function(package, op)
        model = getattr(package.models, name)
        assert typing.get_type_hints(module.sync_detailed)["body"] is model, op_id
        assert _attrs_names(model) == set(_schema(document, name)["properties"]), name
        example = EXAMPLES[kind][name]
        built = declared_only(model.from_dict(example))
        assert built.to_dict() == example, name


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.timeout(SLOW)
def test_datamodel_code_generator_makes_one_model_of_each_body(
    kind: str, documents: dict[str, tuple[dict[str, Any], Path]], pydantic_models: dict[str, ModuleType]
) -> None:
    document = documents[kind][0]
    for name in set(request_bodies(document).values()):
        model = getattr(pydantic_models[kind], name)
        assert issubclass(model, BaseModel) and not issubclass(model, RootModel), name
        declared = {field.alias or python for python, field in model.model_fields.items()}
        assert declared == set(_schema(document, name)["properties"]), name
        example = EXAMPLES[kind][name]
        built = model.model_validate(example)
        assert not built.model_extra, name
        assert built.model_dump(mode="json", by_alias=True, exclude_unset=True) == example, name
