"""The error body for every status, strict parsing of queries and bodies, request ids."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.core.urls")]


def test_validation_error_lists_messages_naming_fields(api):
    response = api.post("/api/v1/_test/body", {"name": "toolong", "count": -1}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["statusCode"] == 400 and body["error"] == "Bad Request" and body["code"] == "validation_error"
    assert sorted(body["message"]) == [
        "count: Ensure this value is greater than or equal to 0.",
        "name: Ensure this field has no more than 5 characters.",
    ]


def test_permission_denied_names_the_permission(client_for):
    response = client_for("editor").get("/api/v1/_test/manage")
    assert response.status_code == 403
    assert response.json() == {
        "statusCode": 403,
        "error": "Forbidden",
        "message": "This operation requires the accounts.manage permission",
        "code": "permission_denied",
        "requiredPermission": "accounts.manage",
        "role": "editor",
        "tokenType": "api_token",
    }
    assert client_for("admin").get("/api/v1/_test/manage").json() == {"ok": True}


def test_unknown_route_under_api_is_json_404(api):
    response = api.get("/api/v1/no-such-thing")
    assert response.status_code == 404
    assert response.json() == {
        "statusCode": 404,
        "error": "Not Found",
        "message": "Cannot GET /api/v1/no-such-thing",
        "code": "route_not_found",
    }


@pytest.mark.parametrize("method", ["post", "patch", "put", "delete"])
def test_unknown_route_is_json_404_for_writes_too(api, method):
    """Like a real server (no test-client CSRF bypass), a write to an unknown route (here an id
    with a dot, which no route matches) was Django's HTML CSRF 403 (found by the fuzz tests)."""
    api.handler.enforce_csrf_checks = True
    response = getattr(api, method)("/api/v1/social-posts/F.x", {}, format="json")
    assert response.status_code == 404
    assert response.json()["code"] == "route_not_found"


def test_method_not_allowed(api):
    response = api.delete("/api/v1/me")
    assert response.status_code == 405
    assert response.json()["error"] == "Method Not Allowed"


def test_conflict(api):
    response = api.delete("/api/v1/_test/body")
    assert response.json() == {"statusCode": 409, "error": "Conflict", "message": "It is busy", "code": "conflict"}


def test_server_error_hides_internals(api):
    response = api.get("/api/v1/_test/boom")
    assert response.status_code == 500
    assert response.json() == {
        "statusCode": 500,
        "error": "Internal Server Error",
        "message": "Internal server error",
        "code": "internal_error",
    }
    assert "hunter2" not in response.content.decode()


@pytest.mark.parametrize(
    ("content_type", "body"),
    [("text/plain", b"hello"), ("application/xml", b"<a/>"), ("application/x-www-form-urlencoded", b"a=1")],
)
def test_non_json_bodies_are_415(api, content_type, body):
    response = api.generic("POST", "/api/v1/_test/body", body, content_type=content_type)
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


def test_oversized_body_is_413(api):
    response = api.generic(
        "POST", "/api/v1/_test/body", b"{" + b" " * (5 * 1024 * 1024) + b"}", content_type="application/json"
    )
    assert response.status_code == 413
    assert response.json()["statusCode"] == 413


@pytest.mark.parametrize("body", [b'{"name": "a\\u0000", "count": 1}', b'{"name": "\xff\xfe", "count": 1}', b"{nope"])
def test_nul_invalid_utf8_and_malformed_json_are_400(api, body):
    response = api.generic("POST", "/api/v1/_test/body", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["code"] == "malformed_body"


@pytest.mark.parametrize("query", ["limit=%00", "limit=%ff", "statuses=DRAFT%00"])
def test_nul_or_invalid_utf8_in_query_is_400(api, query):
    response = api.get(f"/api/v1/_test/query?{query}")
    assert response.status_code == 400
    assert response.json()["code"] == "malformed_query"


@pytest.mark.parametrize("path", ["social-posts/post%00", "webhooks/wh%00", "recurring-posts/rec%00/pause"])
def test_nul_in_a_path_is_404_not_500(api, path):
    response = api.post(f"/api/v1/{path}") if path.endswith("pause") else api.get(f"/api/v1/{path}")
    assert response.status_code == 404
    assert response.json() == {"statusCode": 404, "error": "Not Found", "message": "Not found", "code": "not_found"}


def test_empty_json_body_on_get_and_delete_is_fine(api):
    response = api.generic("GET", "/api/v1/me", b"", content_type="application/json")
    assert response.status_code == 200


def test_accept_and_client_headers_never_fail(api):
    response = api.get(
        "/api/v1/me",
        headers={"Accept": "text/html", "User-Agent": "n8n", "X-Language": "de", "X-Request-Id": "req-123"},
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["X-Request-Id"] == "req-123"


def test_request_id_generated_when_absent(anon):
    response = anon.get("/api/v1/me")
    assert len(response["X-Request-Id"]) == 32


def test_repeated_and_bracket_arrays_and_alias(api):
    assert api.get("/api/v1/_test/query?statuses=DRAFT&statuses=SCHEDULED").json()["statuses"] == [
        "DRAFT",
        "SCHEDULED",
    ]
    assert api.get("/api/v1/_test/query?statuses[1]=SCHEDULED&statuses[0]=DRAFT").json()["statuses"] == [
        "DRAFT",
        "SCHEDULED",
    ]
    assert api.get("/api/v1/_test/query?status=DRAFT").json()["statuses"] == ["DRAFT"]
    assert api.get("/api/v1/_test/query?statuses[]=DRAFT").json()["statuses"] == ["DRAFT"]


def test_unknown_parameter_is_named(api):
    response = api.get("/api/v1/_test/query?limit=5&colour=red")
    assert response.status_code == 400
    assert response.json()["message"] == ["property colour should not exist"]


def test_invalid_filter_value_names_the_parameter(api):
    response = api.get("/api/v1/_test/query?statuses=NOPE")
    assert response.status_code == 400
    assert response.json()["message"][0].startswith("statuses")
    assert api.get("/api/v1/_test/query?limit=0").json()["message"][0].startswith("limit")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-08-01", "2026-08-01T00:00:00+00:00"),
        ("2026-08-01T10:30:00Z", "2026-08-01T10:30:00+00:00"),
        ("2026-08-01T12:30:00%2B02:00", "2026-08-01T10:30:00+00:00"),
        ("2026-08-01T12:30:00+02:00", "2026-08-01T10:30:00+00:00"),
    ],
)
def test_dates_accept_bare_dates_and_offsets(api, raw, expected):
    assert api.get(f"/api/v1/_test/query?startDate={raw}").json()["startDate"] == expected


def test_bad_date_is_400(api):
    response = api.get("/api/v1/_test/query?startDate=yesterday")
    assert response.status_code == 400
    assert response.json()["message"] == ["startDate: must be an ISO 8601 date-time or a date (YYYY-MM-DD)"]


def test_head_and_options_follow_get(api, anon):
    assert api.head("/api/v1/me").status_code == 200
    assert api.options("/api/v1/me").status_code == 200
    assert anon.head("/api/v1/me").status_code == 401
