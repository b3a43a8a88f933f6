from __future__ import annotations

import pytest
from django.urls import get_resolver
from openapi_spec_validator import validate

pytestmark = pytest.mark.django_db


def test_openapi_is_public_valid_and_names_permissions(anon):
    response = anon.get("/api/v1/openapi.json")
    assert response.status_code == 200
    schema = response.json()
    validate(schema)
    assert schema["openapi"].startswith("3.0")
    assert schema["info"]["version"] == "1.0.0"
    assert schema["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "A workspace API key (`cpk_…`: acts in its own workspace), an organization key "
        "(`cpo_…`: acts in any workspace of its organization named by X-Workspace-Id, with the key's role, "
        "and holds its own organization permissions: workspaces.manage, keys.manage, usage.read, "
        "audit.read), or a member's OAuth access token.",
    }
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert "**Permission:**" in operation.get("description", ""), (method, path)
            permission = operation["x-required-permission"]
            assert permission is None or f"`{permission}`" in operation["description"], (method, path)
            assert operation["security"] == [{"bearerAuth": []}], (method, path)
            assert len(operation["tags"]) == 1, (method, path)
            assert {"400", "401", "403", "429"} <= set(operation["responses"]), (method, path)
            [workspace_header] = [p for p in operation["parameters"] if p["name"] == "X-Workspace-Id"]
            assert (workspace_header["in"], workspace_header["required"]) == ("header", False), (method, path)
            assert "workspace_required" in workspace_header["description"], (method, path)
    assert anon.get("/openapi.json").status_code == 200
    tags = {operation["tags"][0] for operations in schema["paths"].values() for operation in operations.values()}
    assert {"Account", "Posts", "Recurring posts", "Social accounts", "Webhooks", "Analytics", "Media"} <= tags
    assert schema["paths"]["/me"]["get"]["x-required-permission"] is None
    assert schema["paths"]["/social-posts"]["get"]["x-required-permission"] == "posts.read"


def test_list_operations_document_the_object_they_answer(anon, api):
    """Lists answer an object such as {posts, total, hasMore}; the description said a bare array
    (drf-spectacular's default for a ``list`` action; found by the fuzz tests)."""
    schema = anon.get("/api/v1/openapi.json").json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            for code, response in operation["responses"].items():
                body = response.get("content", {}).get("application/json", {}).get("schema", {})
                assert body.get("type") != "array", (method, path, code)
    listed = schema["paths"]["/social-posts"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    component = schema["components"]["schemas"][listed["$ref"].rsplit("/", 1)[1]]
    assert set(api.get("/api/v1/social-posts").json()) == set(component["properties"]) == {"posts", "total", "hasMore"}


def test_idempotency_key_reuse_is_documented_where_the_header_is(anon, api):
    """A reused Idempotency-Key with another body is a 422 the description did not list (found by
    the fuzz tests on POST /social-posts/bulk)."""
    for body in ({"posts": []}, {"posts": [{}]}):
        response = api.post("/api/v1/social-posts/bulk", body, format="json", HTTP_IDEMPOTENCY_KEY="same-key")
    assert response.status_code == 422
    schema = anon.get("/api/v1/openapi.json").json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            headers = {p["name"] for p in operation.get("parameters", []) if p["in"] == "header"}
            if "Idempotency-Key" in headers:
                assert {"409", "422"} <= set(operation["responses"]), (method, path)
    assert "422" in schema["paths"]["/social-posts/bulk"]["post"]["responses"]


def test_oversized_bodies_are_documented(anon, api):
    """A body over the size limit is a 413 the description did not list (found by the fuzz tests
    with a 6 MB POST /social-posts)."""
    body = b'{"text": "' + b"x" * (6 * 1024 * 1024) + b'"}'
    assert api.generic("POST", "/api/v1/social-posts", body, content_type="application/json").status_code == 413
    schema = anon.get("/api/v1/openapi.json").json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if "requestBody" in operation:
                assert "413" in operation["responses"], (method, path)


def test_health_endpoints_need_no_key(anon):
    from core import health

    health.record_beat_heartbeat()
    assert anon.get("/healthz").json() == {"status": "ok"}
    ready = anon.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {
        "status": "ok",
        "checks": {"database": "ok", "redis": "ok", "beat": "ok", "publishBacklog": "ok"},
    }


def _api_views():
    def walk(patterns, prefix=""):
        for pattern in patterns:
            if hasattr(pattern, "url_patterns"):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            else:
                yield prefix + str(pattern.pattern), pattern.callback

    for route, callback in walk(get_resolver().url_patterns):
        cls = getattr(callback, "cls", None)
        # The description and its reference pages (Swagger UI, ReDoc) are public, like the spec.
        public = "openapi" in route or route in ("api/v1/docs/", "api/v1/redoc/")
        if route.startswith("api/v1/") and cls is not None and not public:
            yield route, cls, getattr(callback, "actions", None)


def test_every_api_operation_declares_its_permission():
    missing = []
    for route, cls, actions in _api_views():
        declared = getattr(cls, "required_permissions", {})
        names = (
            list(actions.values())
            if actions
            else [m for m in ("get", "post", "patch", "put", "delete") if hasattr(cls, m)]
        )
        missing += [f"{route} {name}" for name in names if name not in declared and "*" not in declared]
    assert missing == []
