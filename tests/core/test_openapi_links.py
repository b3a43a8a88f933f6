"""The description's links (core.schema.add_links): every id a path takes comes from somewhere, so
a client or schemathesis's stateful phase reaches every operation (issue 28 item 14)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from posts.models import RecurringPost
from tests.factories.engagement import CommentFactory
from tests.factories.posts import PostFactory, account
from tests.factories.webhooks import WebhookFactory
from webhooks.models import Delivery, DeliveryStatus, Event
from workspaces.roles import ORGANIZATION_PERMISSIONS
from workspaces.services import organization_key_create

pytestmark = pytest.mark.django_db

METHODS = {"get", "post", "put", "patch", "delete"}


def _operations(schema: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    return {
        operation["operationId"]: (method, path, operation)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if method in METHODS
    }


def _path_parameters(operation: dict[str, Any]) -> set[str]:
    return {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}


def _links(schema: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    """(source operationId, status, link name, link) for every link of every response."""
    return [
        (source, status, name, link)
        for source, (_, _, operation) in _operations(schema).items()
        for status, response in operation["responses"].items()
        for name, link in response.get("links", {}).items()
    ]


def _schema_at(schema: dict[str, Any], node: dict[str, Any], pointer: str) -> dict[str, Any] | None:
    """The schema of the value a JSON pointer names in a body described by ``node``."""
    for token in pointer.strip("/").split("/"):
        while "$ref" in node:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
        if token.isdigit() and node.get("type") == "array":
            node = node["items"]
        elif token in node.get("properties", {}):
            node = node["properties"][token]
        else:
            return None
    return node


def _resolve(expression: str, request_path: dict[str, str], body: Any) -> Any:
    if expression.startswith("$request.path."):
        return request_path[expression.removeprefix("$request.path.")]
    value = body
    for token in expression.removeprefix("$response.body#/").split("/"):
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


def test_every_operation_with_an_id_in_its_path_is_the_target_of_a_link(anon):
    schema = anon.get("/api/v1/openapi.json").json()
    operations = _operations(schema)
    targeted = set()
    for source, status, name, link in _links(schema):
        source_method, source_path, source_operation = operations[source]
        where = (source_method, source_path, status, name)
        assert link["operationId"] in operations, where
        _, _, target = operations[link["operationId"]]
        assert set(link["parameters"]) == _path_parameters(target), where  # every id it takes, nothing else
        body = source_operation["responses"][status]["content"]["application/json"]["schema"]
        for expression in link["parameters"].values():
            if expression.startswith("$request.path."):
                assert expression.removeprefix("$request.path.") in _path_parameters(source_operation), where
            else:
                assert expression.startswith("$response.body#/"), where
                field = _schema_at(schema, body, expression.removeprefix("$response.body#"))
                assert field is not None and field.get("type") == "string", (where, expression)
        targeted.add(link["operationId"])
    with_ids = {operation_id for operation_id, (_, _, op) in operations.items() if _path_parameters(op)}
    assert len(with_ids) >= 26
    assert with_ids - targeted == set()


def test_the_links_of_the_lists_lead_to_the_resources_they_list(api, anon, workspace, sandbox):
    """Followed for real from every list: each GET a link leads to finds its resource (any
    answer but 404, never a 5xx), the deliveries through the webhook's own link first."""
    now = timezone.now()
    account(workspace, "PINTEREST")
    PostFactory(workspace=workspace)
    RecurringPost.objects.create(
        workspace=workspace, status="ACTIVE", frequency="DAILY", starts_at=now, timezone="UTC", template={}
    )
    webhook = WebhookFactory(workspace=workspace)
    event = Event.objects.create(workspace=workspace, name="post.published", payload="{}", created_at=now)
    Delivery.objects.create(webhook=webhook, event=event, status=DeliveryStatus.FAILED)
    CommentFactory(target__post__workspace=workspace)
    schema = anon.get("/api/v1/openapi.json").json()
    operations = _operations(schema)
    lists = [
        op_id
        for op_id, (method, _, op) in operations.items()
        if method == "get" and not _path_parameters(op) and op["responses"]["200"].get("links")
    ]
    # What only an organization key reaches (its own keys) is followed with one of the workspace's
    # organization, holding every organization permission.
    organization = APIClient()
    organization_key = organization_key_create(
        organization=workspace.organization, name="links", role="admin", permissions=list(ORGANIZATION_PERMISSIONS)
    )
    organization.credentials(HTTP_AUTHORIZATION=f"Bearer {organization_key.plaintext}")
    pending: list[tuple[str, dict[str, str]]] = [(op_id, {}) for op_id in lists]
    followed = set()
    while pending:
        operation_id, ids = pending.pop()
        _, path, operation = operations[operation_id]
        response = api.get(f"/api/v1{path.format(**ids)}")
        if response.status_code == 403:
            response = organization.get(f"/api/v1{path.format(**ids)}")
        if operation_id in lists:
            assert response.status_code == 200, (operation_id, response.status_code)
        else:
            assert response.status_code != 404 and response.status_code < 500, (path, ids, response.status_code)
            followed.add(operation_id)
        if response.status_code != 200:
            continue
        for link in operation["responses"]["200"].get("links", {}).values():
            if operations[link["operationId"]][0] == "get":
                parameters = link["parameters"].items()
                pending.append((link["operationId"], {k: _resolve(v, ids, response.json()) for k, v in parameters}))
    assert followed == {
        operation_id
        for operation_id, (method, path, _) in operations.items()
        if method == "get"
        and "{" in path
        # an AI image job comes from its create, a workspace deletion job from DELETE /workspaces/{id}
        and operation_id not in ("getAiImage", "getWorkspaceDeletion")
    }
