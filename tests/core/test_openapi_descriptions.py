"""The reference teaches: every property of every request, response and event schema in the
OpenAPI description carries a description (a new field without one fails here), targeting is
explained where a post is created, and the README's first post is a body the service accepts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from posts.payloads import CONNECTION_FIELDS
from tests.factories.accounts import SocialAccountFactory

pytestmark = pytest.mark.django_db

README = Path(__file__).resolve().parents[2] / "README.md"


def undescribed(schema: Any, where: str) -> Iterator[str]:
    """Every property under ``schema`` (nested objects, array items, allOf/oneOf/anyOf members,
    additionalProperties) whose own schema has no description, as ``where.name``. A property
    that is a bare ``$ref`` counts as undescribed: its description must sit beside it (allOf)."""
    if not isinstance(schema, dict):
        return
    for key in ("allOf", "oneOf", "anyOf"):
        for member in schema.get(key, []):
            yield from undescribed(member, where)
    if "items" in schema:
        yield from undescribed(schema["items"], f"{where}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from undescribed(schema["additionalProperties"], f"{where}{{}}")
    for name, prop in (schema.get("properties") or {}).items():
        if not (isinstance(prop, dict) and str(prop.get("description", "")).strip()):
            yield f"{where}.{name}"
        yield from undescribed(prop, f"{where}.{name}")


def every_undescribed_property(document: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for name, component in document.get("components", {}).get("schemas", {}).items():
        found += undescribed(component, name)
    operations = [
        (f"{method.upper()} {path}", operation)
        for path, item in document.get("paths", {}).items()
        for method, operation in item.items()
        if isinstance(operation, dict)
    ] + [
        (f"webhook {name}", operation)
        for name, item in document.get("x-webhooks", {}).items()
        for operation in item.values()
    ]
    for label, operation in operations:
        for media in operation.get("requestBody", {}).get("content", {}).values():
            found += undescribed(media.get("schema", {}), f"{label} body")
        for status, response in operation.get("responses", {}).items():
            for media in response.get("content", {}).values():
                found += undescribed(media.get("schema", {}), f"{label} {status}")
    return found


def test_the_walk_finds_an_undescribed_property_wherever_it_hides():
    document = {
        "components": {
            "schemas": {
                "Described": {"properties": {"a": {"type": "string", "description": "A."}}},
                "Nested": {
                    "properties": {
                        "list": {
                            "type": "array",
                            "description": "Items.",
                            "items": {"properties": {"deep": {"type": "integer"}}},
                        },
                        "ref": {"$ref": "#/components/schemas/Described"},
                        "blank": {"type": "string", "description": "  "},
                    }
                },
            }
        },
        "paths": {
            "/x": {
                "post": {
                    "requestBody": {"content": {"application/json": {"schema": {"properties": {"q": {}}}}}},
                    "responses": {
                        "200": {"content": {"application/json": {"schema": {"allOf": [{"properties": {"r": {}}}]}}}}
                    },
                }
            }
        },
    }
    assert every_undescribed_property(document) == [
        "Nested.list[].deep",
        "Nested.ref",
        "Nested.blank",
        "POST /x body.q",
        "POST /x 200.r",
    ]


def test_every_property_of_every_request_response_and_event_schema_is_described(anon):
    document = anon.get("/api/v1/openapi.json").json()
    assert len(document["components"]["schemas"]) > 100  # the walk sees the real description
    assert every_undescribed_property(document) == []


def test_targeting_is_explained_on_the_fields_and_on_create(anon):
    document = anon.get("/api/v1/openapi.json").json()
    create = document["components"]["schemas"]["PostCreateInputRequest"]["properties"]
    for platform, field in CONNECTION_FIELDS.items():
        assert platform in create[field]["description"], field
        assert f"`{field}`" in document["paths"]["/social-posts"]["post"]["description"], field
    assert "pageId" in create["pageIds"]["description"]
    for field in ("text", "scheduledAt", "contentType", "platforms", "timezone"):
        assert len(create[field]["description"]) > 20, field
    assert "**Targeting:**" in document["paths"]["/social-posts"]["post"]["description"]


def _readme_snippet(name: str) -> Any:
    match = re.search(rf"<!-- snippet: {name} -->\n```json\n(.*?)\n```", README.read_text(), re.S)
    assert match, name
    return json.loads(match.group(1))


def test_the_readme_first_post_is_accepted_as_it_is_written(api, workspace):
    """Exactly the README's body, its account id replaced by a connected account's: 201, sent now."""
    body = _readme_snippet("first-post")
    assert body["mastodonConnectionIds"] == ["acc_…"]
    account = SocialAccountFactory(workspace=workspace, platform="MASTODON")
    response = api.post("/api/v1/social-posts", {**body, "mastodonConnectionIds": [account.id]}, format="json")
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["status"] == "PENDING" and created["isScheduled"] is False
    assert created["skippedPlatforms"] == []


def test_the_readme_shows_every_targeting_form(api, workspace):
    body = _readme_snippet("every-target")
    assert sorted(body["platforms"]) == sorted(CONNECTION_FIELDS)
    assert all(field in body for field in CONNECTION_FIELDS.values())
    # Every field of it is one the create accepts: a validation names no unknown property.
    response = api.post("/api/v1/social-posts/validate", body, format="json")
    assert response.status_code in (200, 400), response.content
    assert "should not exist" not in response.content.decode()
