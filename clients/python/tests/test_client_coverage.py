"""Every operation of the service's OpenAPI description has an SDK method (and the SDK calls
nothing the description lacks, but for operations announced by open issues)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from crosspost import AsyncClient, Client
from crosspost.mcp_tools import HELPER_SCHEMAS, TOOLS, input_schema
from crosspost.operations import ANNOUNCED, OPERATIONS

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    """The description as the running service serves it (``/api/v1/openapi.json``)."""
    from drf_spectacular.generators import SchemaGenerator

    return dict(SchemaGenerator().get_schema(request=None, public=True))


def _shape(path: str) -> str:
    """Path parameters are compared by position, not by name."""
    return re.sub(r"\{[^}]+\}", "{}", path)


def described(openapi: dict[str, Any]) -> dict[tuple[str, str], str]:
    prefix = "/api/v1"
    found = {}
    for path, item in openapi["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                relative = path[len(prefix) :] if path.startswith(prefix) else path
                found[(method.upper(), _shape(relative))] = f"{method.upper()} {relative} ({operation['operationId']})"
    return found


def test_every_described_operation_has_an_sdk_method(openapi: dict[str, Any]) -> None:
    sdk = {(op.method, _shape(op.path)) for op in OPERATIONS.values()}
    missing = sorted(label for key, label in described(openapi).items() if key not in sdk)
    assert not missing, (
        "operations of the OpenAPI description without an SDK method (add them to "
        "clients/python/crosspost/operations.py): " + "; ".join(missing)
    )


def test_sdk_calls_only_described_or_announced_operations(openapi: dict[str, Any]) -> None:
    known = described(openapi)
    extra = sorted(
        f"{name}: {op.method} {op.path}"
        for name, op in OPERATIONS.items()
        if (op.method, _shape(op.path)) not in known and name not in ANNOUNCED
    )
    assert not extra, "SDK methods for operations the description lacks: " + "; ".join(extra)


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_each_operation_is_a_method_of_both_clients(name: str) -> None:
    assert callable(getattr(Client, name)) and callable(getattr(AsyncClient, name))


def test_mcp_tools_take_their_schemas_from_the_description(openapi: dict[str, Any]) -> None:
    for spec in TOOLS:
        if spec.name in HELPER_SCHEMAS:
            continue
        schema = input_schema(openapi, spec.operation)
        assert schema["type"] == "object", spec.name
    create = input_schema(openapi, "create_post")
    assert {"platforms", "text", "mediaUrls", "scheduledAt", "blueskyConnectionIds"} <= set(create["properties"])
    assert set(create["required"]) == {"contentType", "platforms", "timezone"}
    assert all(ref.startswith("#/$defs/") for ref in re.findall(r"'\$ref': '([^']+)'", str(create)))
    assert set(re.findall(r"'\$ref': '#/\$defs/([^']+)'", str(create))) <= set(create.get("$defs", {}))
    publish = input_schema(openapi, "publish_post")
    assert publish["properties"]["id"]["type"] == "string" and "id" in publish["required"]


def test_the_tools_for_queues_webhooks_and_events_take_the_described_fields(openapi: dict[str, Any]) -> None:
    queue = input_schema(openapi, "set_account_queue")
    assert {"id", "slots", "timezone"} <= set(queue["required"])
    events = input_schema(openapi, "list_events")
    assert events["properties"]["type"]["type"] == "array" and {"after", "limit"} <= set(events["properties"])
    rotate = input_schema(openapi, "rotate_webhook_secret")
    assert rotate["required"] == ["id"] and "graceSeconds" in rotate["properties"]
    assert input_schema(openapi, "list_platforms") == {"type": "object", "properties": {}}
