"""The client holds to the served /openapi.json: every operation is a method of ``Api`` and
``AsyncApi`` taking each of its parameters, and every schema is a TypedDict naming each of its
properties, with annotations that resolve."""

from __future__ import annotations

import inspect
import re
import typing

import httpx
import pytest

from cutout import OPERATIONS, SCHEMAS, Api, AsyncApi


def snake(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)).lower()


@pytest.fixture(scope="module")
def document(stack: tuple[str, str]) -> dict[str, typing.Any]:
    response = httpx.get(f"{stack[0]}/openapi.json")
    response.raise_for_status()
    return response.json()


def operations(document: dict[str, typing.Any]) -> list[tuple[str, str, dict[str, typing.Any]]]:
    return [(m.upper(), path, op) for path, ops in document["paths"].items() for m, op in ops.items()]


def test_every_operation_is_a_method_of_both_clients_with_its_parameters(document):
    listed = operations(document)
    assert len(listed) == len(OPERATIONS)
    for method, path, op in listed:
        assert OPERATIONS[op["operationId"]] == (method, path)
        for api in (Api, AsyncApi):
            function = getattr(api, snake(op["operationId"]), None)
            assert function is not None, f"{api.__name__} lacks {op['operationId']}"
            accepted = set(inspect.signature(function).parameters)
            for parameter in op.get("parameters", []):
                assert snake(parameter["name"]) in accepted, f"{op['operationId']}: {parameter['name']}"
            content = op.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                assert "body" in accepted, op["operationId"]
            if "multipart/form-data" in content:
                assert "multipart" in accepted, op["operationId"]


def properties(schema: dict[str, typing.Any]) -> set[str]:
    own = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        own |= set(part.get("properties", {}))
    return own


def test_every_schema_is_a_typeddict_with_every_property(document):
    schemas = document["components"]["schemas"]
    assert sorted(SCHEMAS) == sorted(schemas)
    for name, schema in schemas.items():
        declared = set(typing.get_type_hints(SCHEMAS[name]))
        missing = properties(schema) - declared
        assert not missing, f"{name} lacks {sorted(missing)}"
        assert set(schema.get("required", [])) <= SCHEMAS[name].__required_keys__, name


def test_every_method_annotation_resolves():
    namespace = {"Iterator": typing.Iterator, "AsyncIterator": typing.AsyncIterator}
    for api in (Api, AsyncApi):
        for name, function in inspect.getmembers(api, inspect.isfunction):
            if not name.startswith("_"):
                typing.get_type_hints(function, localns=namespace)
