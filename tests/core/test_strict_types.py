"""A JSON value of the wrong type is a 400 naming the field, never coerced (issue 15, item 2).

The table is the OpenAPI description itself: every operation with a JSON request body gets, for
each string / integer / number / boolean field (nested objects and list items included), a body
with a wrong-typed value there; every query parameter documented as integer, number or boolean
gets text that is not one. New endpoints and fields are covered as soon as they are described.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework import serializers
from rest_framework.test import APIClient

from core import serializers as strict
from core.serializers import strictness_problems
from tests.contract.test_response_shapes import ORGANIZATION_OPERATIONS
from workspaces.roles import ORGANIZATION_PERMISSIONS
from workspaces.services import organization_key_create

pytestmark = pytest.mark.django_db

# One wrong value per documented type: a number for a string, text for the others.
WRONG_BODY_VALUES: dict[str, list[Any]] = {
    "string": [42, True],
    "integer": ["7", True],
    "number": ["1.5"],
    "boolean": ["true", 1],
}
WRONG_QUERY_VALUES = {"integer": ["seven", "1.5", " 7"], "number": ["one"], "boolean": ["yes"]}
# Items of POST /social-posts/bulk are validated one by one (one bad item never sinks the
# others): their errors are reported per item, in results[i].errorMessage, with a 201 when the
# batch-level fields are valid.
PER_ITEM = {("post", "/social-posts/bulk"): ("posts", {"platforms": ["TWITTER"], "timezone": "UTC"})}
# POST /social-posts/validate answers every problem in a 200: {valid: false, issues: [{message}]}.
ISSUES_IN_200 = {("post", "/social-posts/validate")}


def error_messages(method: str, path: str, response: Any) -> list[str]:
    body = response.json()
    if (method, path) in ISSUES_IN_200 and response.status_code == 200 and body["valid"] is False:
        return [issue["message"] for issue in body["issues"]]
    messages = body.get("message") if response.status_code == 400 else None
    return messages if isinstance(messages, list) else []


def _resolve(schema: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    for part in schema.get("allOf", []):
        schema = {**_resolve(part, document), **{k: v for k, v in schema.items() if k != "allOf"}}
    return schema


def scalar_fields(schema: dict[str, Any], document: dict[str, Any], path: str = "") -> Iterator[tuple[str, str]]:
    """(field path as the error messages write it, JSON type) of every scalar in ``schema``."""
    schema = _resolve(schema, document)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        for name, sub in schema.get("properties", {}).items():
            if not sub.get("readOnly"):
                yield from scalar_fields(sub, document, f"{path}.{name}" if path else name)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            yield from scalar_fields(extra, document, f"{path}.key")
    elif kind == "array":
        yield from scalar_fields(schema.get("items", {}), document, f"{path}[0]")
    elif kind in WRONG_BODY_VALUES:
        yield path, kind


def body_with(path: str, value: Any) -> Any:
    """The smallest body that holds ``value`` at ``path`` (``a.b[0].c``)."""
    tokens: list[str | int] = []
    for part in path.split("."):
        name, *indexes = part.split("[")
        tokens.append(name)
        tokens += [0 for _ in indexes]
    body: Any = value
    for token in reversed(tokens):
        body = [body] if token == 0 else {token: body}
    return body


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            yield method, path, operation


def _url(path: str) -> str:
    # Validation runs before any lookup, so ids need not exist.
    return "/api/v1" + path.replace("{", "").replace("}", "")


@pytest.fixture
def description(anon: Any) -> dict[str, Any]:
    return anon.get("/api/v1/openapi.json").json()


@pytest.fixture
def admin(client_for: Any) -> Any:
    return client_for("admin", rate_limit=1_000_000)


@pytest.fixture
def caller(admin: Any, workspace: Any) -> Any:
    """The client an operation takes: an organization key (every organization permission) for the
    organization operations, the workspace's admin key for the rest."""
    organization_client = APIClient()
    key = organization_key_create(
        organization=workspace.organization, name="strict", role="admin", permissions=list(ORGANIZATION_PERMISSIONS)
    ).plaintext
    organization_client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return lambda operation: organization_client if operation["operationId"] in ORGANIZATION_OPERATIONS else admin


def test_every_wrong_typed_body_value_is_a_400_naming_the_field(description, caller):
    tried, failures = 0, []
    for method, path, operation in _operations(description):
        content = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if content is None:
            continue
        item_of, batch = PER_ITEM.get((method, path), (None, {}))
        for field, kind in scalar_fields(content["schema"], description):
            for wrong in WRONG_BODY_VALUES[kind]:
                tried += 1
                per_item = item_of is not None and field.startswith(f"{item_of}[0].")
                request_body = {**batch, **body_with(field, wrong)} if per_item else body_with(field, wrong)
                response = getattr(caller(operation), method)(_url(path), request_body, format="json")
                body = response.json()
                if per_item:
                    inner = field.removeprefix(f"{item_of}[0].")
                    message = body["results"][0]["errorMessage"] if response.status_code == 201 else ""
                    if f"{inner}: must be " not in message:
                        failures.append((method, path, field, wrong, response.status_code, message))
                    continue
                if not any(m.startswith(f"{field}: must be ") for m in error_messages(method, path, response)):
                    failures.append((method, path, field, wrong, response.status_code, body))
    assert tried > 300  # the description lists every field of every body
    assert failures == [], "\n".join(map(str, failures))


def test_every_query_number_or_boolean_given_as_other_text_is_a_400_naming_it(description, caller):
    tried, failures = 0, []
    for method, path, operation in _operations(description):
        for parameter in operation.get("parameters", []):
            schema = parameter.get("schema", {})
            kind = schema.get("items", {}).get("type") if schema.get("type") == "array" else schema.get("type")
            if parameter["in"] != "query" or kind not in WRONG_QUERY_VALUES:
                continue
            for wrong in WRONG_QUERY_VALUES[kind]:
                tried += 1
                response = getattr(caller(operation), method)(_url(path), {parameter["name"]: wrong})
                messages = response.json().get("message") if response.status_code == 400 else None
                name = parameter["name"] + ("[0]" if schema.get("type") == "array" else "")
                if (
                    not isinstance(messages, list)
                    or f"{name}: must be {'an' if kind == 'integer' else 'a'} {kind}" not in messages
                ):
                    failures.append((method, path, name, wrong, response.status_code, response.json()))
    assert tried >= 10
    assert failures == [], "\n".join(map(str, failures))


def test_the_examples_of_the_issue(api, workspace):
    """POST /ai/images with a numeric prompt created a job; "text": 42 became "42"."""
    response = api.post("/api/v1/ai/images", {"prompt": 42}, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == ["prompt: must be a string, not a number"]
    response = api.post("/api/v1/upload-urls", {"files": [{"fileName": 42, "mimeType": "image/png"}]}, format="json")
    assert response.json()["message"] == ["files[0].fileName: must be a string, not a number"]
    body = {"contentType": "TEXT", "text": 42, "platforms": ["TWITTER"], "timezone": "UTC", "saveAsDraft": "true"}
    response = api.post("/api/v1/social-posts", body, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == [
        "text: must be a string, not a number",
        "saveAsDraft: must be a boolean, not a string",
    ]


def test_strictness_check_names_what_would_coerce():
    class Loose(serializers.Serializer):
        name = serializers.CharField()

    class Odd(serializers.Field):
        pass

    class Outer(strict.Serializer):
        inner = Loose()
        items = serializers.ListField(child=Odd())
        fine = serializers.ListField(child=serializers.IntegerField())

    assert strictness_problems(Outer) == [
        "Outer.inner: Loose does not derive from core.serializers.Serializer",
        "Outer.items[]: the JSON type of Odd is unknown (declare json_type on the field class)",
    ]
    assert strictness_problems(Outer, query=True) == [
        "Outer: Outer does not derive from core.serializers.QuerySerializer"
    ]


def test_a_strict_serializer_still_takes_the_right_types_and_nulls():
    class Sample(strict.Serializer):
        name = serializers.CharField(allow_null=True)
        count = serializers.IntegerField()
        ratio = serializers.FloatField()
        flags = serializers.DictField(child=serializers.BooleanField())

    ok = Sample(data={"name": None, "count": 2.0, "ratio": 1, "flags": {"a": True}})
    assert ok.is_valid(), ok.errors
    assert ok.validated_data == {"name": None, "count": 2, "ratio": 1.0, "flags": {"a": True}}
    bad = Sample(data={"name": "x", "count": 2.5, "ratio": False, "flags": {"a": "yes"}})
    assert not bad.is_valid()
    assert bad.errors == {
        "count": ["must be an integer, not a number"],
        "ratio": ["must be a number, not a boolean"],
        "flags": {"a": ["must be a boolean, not a string"]},
    }


def test_every_described_input_is_strict():
    """The schema generation reports an operation whose body or query serializer is not strict
    as an error (``make schema`` fails on it); the description of today has none."""
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", os.devnull)


def test_an_empty_value_of_a_list_parameter_is_validated_like_any_other(admin):
    """``?statuses=`` was read as no filter although "" is not one of the documented values
    (found by schemathesis)."""
    response = admin.get("/api/v1/recurring-posts", {"statuses": ""})
    assert response.status_code == 400
    assert response.json()["message"] == ['statuses[0]: "" is not a valid choice.']
    assert admin.get("/api/v1/recurring-posts", {"statuses": "ACTIVE"}).status_code == 200


def test_a_patch_still_needs_the_required_fields_of_each_item_it_sends(admin):
    """PATCH applied ``partial`` to the list items too, so an item without ``platform`` reached
    the duplicate check and raised a KeyError: a 500 (found by schemathesis)."""
    response = admin.patch("/api/v1/social-posts/post_absent", {"platformTexts": [{"text": "x"}]}, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == ["platformTexts[0].platform: This field is required."]
