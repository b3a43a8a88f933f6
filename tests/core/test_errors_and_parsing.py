"""The error body for every status, strict parsing of queries and bodies, request ids."""

from __future__ import annotations

import io
import json

import pytest

from posts.models import Post
from tests.factories.posts import account

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


RATE_HEADERS = ("RateLimit-Policy", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset")


def test_error_bodies_whole_for_each_status(api, anon):
    """One shape for every status the service produces (CONTRACT §3), compared whole."""
    huge = b'{"a": "' + b"x" * (5 * 1024 * 1024) + b'"}'
    cases = [
        (
            anon.get("/api/v1/me"),
            {
                "statusCode": 401,
                "error": "Unauthorized",
                "message": "API key is invalid or missing",
                "code": "unauthorized",
            },
        ),
        (
            api.get("/api/v1/social-posts/post_missing"),
            {
                "statusCode": 404,
                "error": "Not Found",
                "message": "Post not found or access denied",
                "code": "not_found",
            },
        ),
        (
            api.delete("/api/v1/me"),
            {
                "statusCode": 405,
                "error": "Method Not Allowed",
                "message": 'Method "DELETE" not allowed.',
                "code": "method_not_allowed",
            },
        ),
        (
            api.generic("POST", "/api/v1/_test/body", huge, content_type="application/json"),
            {
                "statusCode": 413,
                "error": "Request Entity Too Large",
                "message": "Request body exceeds 5242880 bytes",
                "code": "payload_too_large",
            },
        ),
        (
            api.generic("POST", "/api/v1/_test/body", b"<a/>", content_type="application/xml"),
            {
                "statusCode": 415,
                "error": "Unsupported Media Type",
                "message": "Content-Type must be application/json",
                "code": "unsupported_media_type",
            },
        ),
    ]
    for response, body in cases:
        assert response.status_code == body["statusCode"]
        assert response.json() == body
        assert response["Content-Type"] == "application/json"
        assert all(name in response for name in (*RATE_HEADERS, "X-Request-Id")), body["statusCode"]


def test_guard_answers_carry_the_rate_limit_headers(api):
    """The 413 and the malformed-query 400 are answered before any view: they still count and
    carry the RateLimit headers like every other response."""
    too_big = api.generic(
        "POST", "/api/v1/_test/body", b"{" + b" " * (6 * 1024 * 1024) + b"}", content_type="application/json"
    )
    bad_query = api.get("/api/v1/_test/query?limit=%00")
    assert (too_big.status_code, bad_query.status_code) == (413, 400)
    assert too_big["RateLimit-Remaining"] == "599"
    assert bad_query["RateLimit-Remaining"] == "598"


@pytest.mark.parametrize(
    "path", ["/api/v1/social-posts/%00", "/api/v1/webhooks/wh%00x", "/api/v1/recurring-posts/%00/pause"]
)
@pytest.mark.parametrize("method", ["get", "post", "patch", "delete"])
def test_nul_in_the_path_is_404_for_every_method(api, path, method):
    """No identifier holds a NUL byte (PostgreSQL refuses it in a lookup): the path names nothing."""
    response = getattr(api, method)(path, {}, format="json")
    assert response.status_code == 404
    assert response.json() == {"statusCode": 404, "error": "Not Found", "message": "Not found", "code": "not_found"}


def test_invalid_utf8_in_the_path_is_a_plain_404(api):
    assert api.get("/api/v1/social-posts/abc%ff").status_code == 404
    assert api.get("/api/v1/no-such%ff").json()["code"] == "route_not_found"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"name": NaN, "count": 1}', "Malformed request body: invalid JSON (NaN is not valid JSON)"),
        (b'{"name": "a", "count": Infinity}', "Malformed request body: invalid JSON (Infinity is not valid JSON)"),
        (b"[" * 100_000 + b"]" * 100_000, "Malformed request body: invalid JSON (nested too deeply)"),
        (b'{"a": ' * 40 + b"1" + b"}" * 40, "Malformed request body: nested deeper than 32 levels"),
        (b'{"a\\u0000": 1}', "Malformed request body: NUL characters are not allowed"),
    ],
)
def test_bodies_json_does_not_allow_are_400(api, body, message):
    response = api.generic("POST", "/api/v1/_test/body", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"statusCode": 400, "error": "Bad Request", "message": message, "code": "malformed_body"}


@pytest.mark.parametrize(
    ("body", "key"),
    [
        (b'{"saveAsDraft": true, "saveAsDraft": false}', "saveAsDraft"),
        (b'{"name": "a", "count": 1, "name": "a"}', "name"),  # the same value twice is still two keys
        (b'{"name": "a", "n\\u0061me": "b"}', "name"),  # spelled differently, the same key once decoded
        (
            b'{"name": "a", "tiktokConfigs": [{"connectionId": "x", "privacyLevel": "A", "privacyLevel": "B"}]}',
            "privacyLevel",
        ),
        (b'{"a": ' * 20 + b'{"deep": 1, "deep": 2}' + b"}" * 20, "deep"),
        (b'[{"ok": 1}, {"ok": 1, "twice": 1, "twice": 1}]', "twice"),
        (b'{"": 1, "": 2}', ""),
    ],
)
def test_a_key_repeated_in_any_object_is_400_naming_it(api, body, key):
    """A repeated key is ambiguous (the last one won: a draft was scheduled); refused at any depth."""
    response = api.generic("POST", "/api/v1/_test/body", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": f"Malformed request body: duplicate key {json.dumps(key)} in a JSON object",
        "code": "malformed_body",
    }


def test_a_long_repeated_key_is_named_shortened(api):
    key = "k" * 5000
    body = json.dumps({key: 1}).encode()[:-1] + b", " + json.dumps(key).encode() + b": 2}"
    response = api.generic("POST", "/api/v1/_test/body", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["message"] == f'Malformed request body: duplicate key "{"k" * 100}..." in a JSON object'


def test_the_same_key_in_different_objects_is_accepted(api):
    body = b'{"name": "a", "count": 1, "nested": {"name": "b", "inner": [{"name": "c"}, {"name": "d"}]}}'
    response = api.generic("POST", "/api/v1/_test/body", body, content_type="application/json")
    assert response.status_code == 201, response.json()
    assert response.json()["name"] == "a"


def test_a_post_with_a_repeated_key_is_refused_and_nothing_is_created(api, workspace):
    masto = account(workspace, "MASTODON")
    fields = (
        f'"platforms": ["MASTODON"], "mastodonConnectionIds": ["{masto.id}"], "contentType": "TEXT", '
        '"timezone": "UTC", "text": "hello"'
    )
    body = ("{" + fields + ', "saveAsDraft": true, "saveAsDraft": false}').encode()
    response = api.generic("POST", "/api/v1/social-posts", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["message"] == 'Malformed request body: duplicate key "saveAsDraft" in a JSON object'
    assert not Post.objects.exists()
    single = ("{" + fields + ', "saveAsDraft": true}').encode()
    assert api.generic("POST", "/api/v1/social-posts", single, content_type="application/json").status_code == 201
    assert Post.objects.get().status == "DRAFT"


def test_a_value_the_database_refuses_is_400_not_500(api):
    response = api.post("/api/v1/_test/out-of-range", {"value": 10**9}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "statusCode": 400,
        "error": "Bad Request",
        "message": "A value in the request is invalid or out of range",
        "code": "invalid_value",
    }


@pytest.mark.parametrize("supplied", ["req-123", "my request 42", "a" * 200, "01J9Z3-%7B:;/?"])
def test_request_id_is_echoed_verbatim(api, anon, supplied):
    assert api.get("/api/v1/me", headers={"X-Request-Id": supplied})["X-Request-Id"] == supplied
    assert anon.get("/api/v1/me", headers={"X-Request-Id": supplied})["X-Request-Id"] == supplied
    assert anon.get("/healthz", headers={"X-Request-Id": supplied})["X-Request-Id"] == supplied


@pytest.mark.parametrize("unusable", ["a" * 201, "tab\there", "caf\u00e9"])
def test_request_id_that_cannot_be_echoed_safely_is_replaced(api, unusable):
    response = api.get("/api/v1/me", headers={"X-Request-Id": unusable})
    assert response.status_code == 200
    assert len(response["X-Request-Id"]) == 32 and response["X-Request-Id"] != unusable


def test_log_lines_of_a_request_carry_its_request_id(api):
    import logging

    console = next(h for h in logging.getLogger().handlers if h.name == "console")
    stream = io.StringIO()
    previous = console.setStream(stream)  # type: ignore[attr-defined]
    try:
        api.get("/api/v1/_test/boom", headers={"X-Request-Id": "trace-me-42"})
    finally:
        console.setStream(previous)  # type: ignore[attr-defined]

    lines = [json.loads(line) for line in stream.getvalue().splitlines() if '"level": "ERROR"' in line]
    assert len(lines) == 2  # ours and Django's "Internal Server Error", logged after the middleware
    assert all(line["request_id"] == "trace-me-42" for line in lines)
    from core.middleware import request_id_var

    assert request_id_var.get() == "-"  # forgotten once the response is closed


def test_a_new_request_id_is_a_version_4_uuid_in_hex() -> None:
    import uuid

    from core.middleware import new_request_id

    ids = {new_request_id() for _ in range(200)}
    assert len(ids) == 200
    for value in ids:
        parsed = uuid.UUID(hex=value)
        assert parsed.hex == value and parsed.version == 4 and parsed.variant == uuid.RFC_4122
