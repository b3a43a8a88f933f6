"""The webhook management API: every endpoint, every documented error, permissions, isolation."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.fields import format_instant
from tests.factories.webhooks import WebhookFactory
from tests.webhooks.conftest import Receiver, attempt_one
from webhooks.events import EVENT_NAMES, emit_event
from webhooks.models import Delivery, Webhook

pytestmark = pytest.mark.django_db


def _expected(webhook: Webhook) -> dict[str, Any]:
    webhook.refresh_from_db()
    return {
        "id": webhook.id,
        "url": webhook.url,
        "active": webhook.active,
        "createdAt": format_instant(webhook.created_at),
        "updatedAt": format_instant(webhook.updated_at),
        "lastSuccessAt": format_instant(webhook.last_success_at),
        "lastFailureAt": format_instant(webhook.last_failure_at),
        "disabledAt": format_instant(webhook.disabled_at),
        "events": webhook.events,
        "previousSecretExpiresAt": format_instant(webhook.previous_secret_expires_at),
    }


@pytest.fixture
def dns(public_dns: Any) -> Any:
    public_dns(
        {
            "hooks.example.com": ["93.184.216.34"],
            "other.example.com": ["93.184.216.35"],
            "internal.example.com": ["10.1.2.3"],
        }
    )
    return public_dns


def test_create_returns_the_webhook_with_its_secret_once(api: Any, workspace: Any, dns: Any) -> None:
    response = api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/in"}, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    webhook = Webhook.objects.get(pk=body["id"])
    assert body == {**_expected(webhook), "secret": webhook.secret}
    assert body["id"].startswith("wh_") and body["url"] == "https://hooks.example.com/in"
    assert body["active"] is True and body["lastSuccessAt"] is None
    assert body["secret"].startswith("whsec_") and len(base64.b64decode(body["secret"][6:])) == 32
    assert webhook.workspace == workspace
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM webhooks_webhook WHERE id = %s", [webhook.id])
        stored = cursor.fetchone()[0]
    assert body["secret"] not in stored
    # Never again in a response.
    assert "secret" not in api.get(f"/api/v1/webhooks/{webhook.id}").json()
    assert "secret" not in api.get("/api/v1/webhooks").json()["webhooks"][0]
    assert "secret" not in api.patch(f"/api/v1/webhooks/{webhook.id}", {"active": True}, format="json").json()


def test_idempotent_create_keeps_no_plaintext_secret_and_replays_it(api: Any, workspace: Any, dns: Any) -> None:
    """The idempotency store keeps response bodies encrypted: the secret is not readable in the
    row, yet the replayed create response carries it."""
    from core.models import IdempotencyRecord

    headers = {"Idempotency-Key": "create-hook-1"}
    first = api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/in"}, format="json", headers=headers)
    assert first.status_code == 201
    secret = first.json()["secret"]
    assert secret == Webhook.objects.get().secret
    record = IdempotencyRecord.objects.get(workspace_id=workspace.id, key="create-hook-1")
    assert record.response_status == 201 and record.response_json == first.content.decode()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM core_idempotencyrecord r WHERE row_to_json(r)::text LIKE %s", [f"%{secret}%"]
        )
        assert cursor.fetchone()[0] == 0
    again = api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/in"}, format="json", headers=headers)
    assert (again.status_code, again.json(), again["Idempotent-Replayed"]) == (201, first.json(), "true")
    assert Webhook.objects.count() == 1


def test_paths_with_nul_bytes_are_refused_not_500(api: Any, workspace: Any) -> None:
    """No route matches a NUL (404); the core request guard may answer 400 before routing."""
    webhook = WebhookFactory(workspace=workspace)
    for method, path in (
        ("get", "/api/v1/webhooks/wh_%00x"),
        ("patch", "/api/v1/webhooks/%00"),
        ("delete", "/api/v1/webhooks/%00"),
        ("post", "/api/v1/webhooks/%00/test"),
        ("get", "/api/v1/webhooks/wh_%00/deliveries"),
        ("post", f"/api/v1/webhooks/{webhook.id}/deliveries/dlv_%00/redeliver"),
    ):
        response = getattr(api, method)(path, {"active": True} if method == "patch" else None, format="json")
        assert response.status_code in (400, 404), (method, path, response.content)
        assert response.json()["statusCode"] == response.status_code


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://10.0.0.1/hook", "10.0.0.1 is a private"),
        ("http://169.254.169.254/", "link-local"),
        ("https://internal.example.com/", "internal.example.com resolves to a private address"),
        ("http://localhost:8000/", "localhost"),
        ("ftp://hooks.example.com/", "http or https"),
        ("https://user@hooks.example.com/", "credentials"),
        ("https://hooks.example.com:70000/", "invalid port"),
        ("not a url", "whitespace"),
        ("", "non-empty"),
    ],
)
def test_create_refuses_invalid_urls_saying_why(api: Any, dns: Any, url: str, reason: str) -> None:
    response = api.post("/api/v1/webhooks", {"url": url}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid_webhook_url" and body["error"] == "Bad Request"
    assert len(body["message"]) == 1 and reason in body["message"][0] and body["message"][0].startswith("url")
    assert "10.1.2.3" not in body["message"][0]  # what the name resolves to stays inside
    assert not Webhook.objects.exists()


@pytest.mark.parametrize("payload", [{}, {"url": 5}, {"url": None}])
def test_create_requires_a_url_string(api: Any, payload: dict[str, Any]) -> None:
    response = api.post("/api/v1/webhooks", payload, format="json")
    assert response.status_code == 400
    assert response.json()["message"][0].startswith("url")


def test_duplicate_url_after_normalization_is_409(api: Any, dns: Any) -> None:
    assert api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/in"}, format="json").status_code == 201
    for variant in ("HTTPS://Hooks.Example.com:443/in", "https://hooks.example.com/in"):
        response = api.post("/api/v1/webhooks", {"url": variant}, format="json")
        assert response.status_code == 409
        assert response.json() == {
            "statusCode": 409,
            "error": "Conflict",
            "message": "A webhook with this URL already exists in this workspace",
            "code": "conflict",
        }
    assert api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/IN"}, format="json").status_code == 201


def test_same_url_in_another_workspace_is_fine(api: Any, client_for: Any, other_workspace: Any, dns: Any) -> None:
    assert api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/in"}, format="json").status_code == 201
    other = client_for("admin", other_workspace)
    assert other.post("/api/v1/webhooks", {"url": "https://hooks.example.com/in"}, format="json").status_code == 201


def test_limit_of_ten_per_workspace(api: Any, dns: Any) -> None:
    for index in range(10):
        url = f"https://hooks.example.com/{index}"
        assert api.post("/api/v1/webhooks", {"url": url}, format="json").status_code == 201
    response = api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/eleven"}, format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "webhook_limit_reached"
    assert "at most 10" in response.json()["message"]
    assert Webhook.objects.count() == 10


def test_list_shows_only_this_workspace(api: Any, workspace: Any, other_workspace: Any) -> None:
    first = WebhookFactory(workspace=workspace)
    second = WebhookFactory(workspace=workspace, active=False, disabled_at=timezone.now())
    WebhookFactory(workspace=other_workspace)
    response = api.get("/api/v1/webhooks")
    assert response.status_code == 200
    assert response.json() == {"webhooks": [_expected(first), _expected(second)]}


def test_get_and_cross_workspace_404(api: Any, workspace: Any, other_workspace: Any) -> None:
    mine = WebhookFactory(workspace=workspace, last_failure_at=timezone.now())
    theirs = WebhookFactory(workspace=other_workspace)
    assert api.get(f"/api/v1/webhooks/{mine.id}").json() == _expected(mine)
    for path in (
        f"/api/v1/webhooks/{theirs.id}",
        "/api/v1/webhooks/wh_missing",
    ):
        response = api.get(path)
        assert response.status_code == 404
        assert response.json() == {
            "statusCode": 404,
            "error": "Not Found",
            "message": "Webhook not found",
            "code": "not_found",
        }
    for method, path in (
        ("patch", f"/api/v1/webhooks/{theirs.id}"),
        ("delete", f"/api/v1/webhooks/{theirs.id}"),
        ("post", f"/api/v1/webhooks/{theirs.id}/test"),
        ("get", f"/api/v1/webhooks/{theirs.id}/deliveries"),
        ("post", f"/api/v1/webhooks/{theirs.id}/deliveries/dlv_x/redeliver"),
    ):
        data = {"active": True} if method == "patch" else None
        assert getattr(api, method)(path, data, format="json").status_code == 404
    theirs.refresh_from_db()
    assert theirs.active


def test_patch_url_and_duplicates(api: Any, workspace: Any, dns: Any) -> None:
    webhook = WebhookFactory(workspace=workspace, url="https://hooks.example.com/a")
    WebhookFactory(workspace=workspace, url="https://hooks.example.com/b")
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {"url": "https://other.example.com/x"}, format="json")
    assert response.status_code == 200
    assert response.json() == _expected(webhook)
    assert response.json()["url"] == "https://other.example.com/x"
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {"url": "https://HOOKS.example.com:443/b"}, format="json")
    assert response.status_code == 409 and response.json()["code"] == "conflict"
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {"url": "http://192.168.0.1/"}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "invalid_webhook_url"
    # Re-saving its own URL is not a duplicate.
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {"url": "https://other.example.com/x"}, format="json")
    assert response.status_code == 200
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {}, format="json")
    assert response.status_code == 400
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {"active": "maybe"}, format="json")
    assert response.status_code == 400 and response.json()["message"][0].startswith("active")


def test_patch_active_disables_and_reenables(api: Any, workspace: Any, receiver: Receiver, allow_private: Any) -> None:
    webhook = WebhookFactory(workspace=workspace, url=receiver.url("/hook"))
    emit_event(workspace_id=workspace.id, name="post.published", data={})
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {"active": False}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body["active"] is False and body["disabledAt"] is None  # inactive, not disabled after failures
    assert Delivery.objects.get().status == "failed"  # pending retries dropped
    Webhook.objects.filter(pk=webhook.pk).update(consecutive_failures=20)
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {"active": True}, format="json")
    assert response.json() == _expected(webhook)
    assert response.json()["active"] is True and response.json()["disabledAt"] is None
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 0


def test_delete(api: Any, workspace: Any) -> None:
    webhook = WebhookFactory(workspace=workspace)
    emit_event(workspace_id=workspace.id, name="post.published", data={})
    response = api.delete(f"/api/v1/webhooks/{webhook.id}")
    assert response.status_code == 200 and response.json() == {"deleted": True}
    assert not Webhook.objects.exists() and not Delivery.objects.exists()
    assert api.delete(f"/api/v1/webhooks/{webhook.id}").status_code == 404


def test_test_send_succeeds_signed_and_does_not_count(
    api: Any, workspace: Any, receiver: Receiver, allow_private: Any
) -> None:
    webhook = WebhookFactory(workspace=workspace, url=receiver.url("/hook"), consecutive_failures=7)
    response = api.post(f"/api/v1/webhooks/{webhook.id}/test")
    assert response.status_code == 201
    assert response.json() == {"success": True, "statusCode": 200, "error": None}
    [request] = receiver.to("/hook")
    envelope = json.loads(request.body)
    assert envelope["event"] == "webhook.test" and envelope["id"].startswith("evt_")
    assert envelope["data"] == {"webhookId": webhook.id, "events": list(EVENT_NAMES)}
    assert request.headers["x-service-event"] == "webhook.test"
    timestamp = request.headers["x-service-timestamp"]
    mac = hmac.new(webhook.secret.encode(), timestamp.encode() + b"." + request.body, hashlib.sha256).hexdigest()
    assert request.headers["x-service-signature"] == f"sha256={mac}"
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 7 and webhook.last_success_at is None
    assert not Delivery.objects.exists()


def test_test_send_reports_the_receivers_status(
    api: Any, workspace: Any, receiver: Receiver, allow_private: Any
) -> None:
    receiver.behave("/hook", status=410)
    webhook = WebhookFactory(workspace=workspace, url=receiver.url("/hook"), consecutive_failures=19)
    response = api.post(f"/api/v1/webhooks/{webhook.id}/test")
    assert response.status_code == 201
    assert response.json() == {"success": False, "statusCode": 410, "error": "HTTP 410"}
    webhook.refresh_from_db()
    assert webhook.active and webhook.consecutive_failures == 19


def test_test_send_connection_failure_has_null_status(api: Any, workspace: Any, allow_private: Any) -> None:
    webhook = WebhookFactory(workspace=workspace, url="http://127.0.0.1:9/closed")
    response = api.post(f"/api/v1/webhooks/{webhook.id}/test")
    assert response.json() == {"success": False, "statusCode": None, "error": "connection refused"}


def test_test_send_has_the_delivery_deadline(
    api: Any, workspace: Any, receiver: Receiver, allow_private: Any, settings: Any
) -> None:
    settings.WEBHOOK_TIMEOUT_SECONDS = 1.0
    receiver.behave("/hook", mode="silent")
    webhook = WebhookFactory(workspace=workspace, url=receiver.url("/hook"))
    response = api.post(f"/api/v1/webhooks/{webhook.id}/test")
    assert response.status_code == 201
    assert response.json() == {
        "success": False,
        "statusCode": None,
        "error": "timed out: no complete response within 1 s",
    }
    assert len(receiver.to("/hook")) == 1
    webhook.refresh_from_db()
    assert webhook.consecutive_failures == 0 and webhook.last_failure_at is None


def test_test_send_is_guarded_like_deliveries(api: Any, workspace: Any, dns: Any) -> None:
    webhook = WebhookFactory(workspace=workspace, url="https://internal.example.com/hook")
    response = api.post(f"/api/v1/webhooks/{webhook.id}/test")
    assert response.status_code == 201
    body = response.json()
    assert body["success"] is False and body["statusCode"] is None
    assert (
        body["error"]
        == "refused: url must be a public endpoint: url host internal.example.com resolves to a private address"
    )


def _delivery_body(delivery: Delivery) -> dict[str, Any]:
    delivery.refresh_from_db()
    return {
        "id": delivery.id,
        "eventId": delivery.event_id,
        "event": delivery.event.name,
        "status": delivery.status,
        "attempts": [
            {
                "statusCode": a.status_code,
                "durationMs": a.duration_ms,
                "error": a.error or None,
                "createdAt": format_instant(a.created_at),
            }
            for a in delivery.attempts.order_by("created_at", "id")
        ],
        "createdAt": format_instant(delivery.created_at),
        "lastAttemptAt": format_instant(delivery.last_attempt_at),
        "nextAttemptAt": format_instant(delivery.next_attempt_at) if delivery.status == "pending" else None,
    }


def test_deliveries_listing_and_pagination(
    api: Any, workspace: Any, receiver: Receiver, allow_private: Any, fast_retries: Any
) -> None:
    receiver.behave("/hook", status=500)
    webhook = WebhookFactory(workspace=workspace, url=receiver.url("/hook"))
    for name in ("post.published", "post.failed", "image.completed"):
        emit_event(workspace_id=workspace.id, name=name, data={})
    first, second, third = Delivery.objects.order_by("created_at")
    attempt_one(first.pk)
    attempt_one(first.pk)
    receiver.behave("/hook", status=200)
    attempt_one(second.pk)
    response = api.get(f"/api/v1/webhooks/{webhook.id}/deliveries")
    assert response.status_code == 200
    assert response.json() == {
        "deliveries": [_delivery_body(third), _delivery_body(second), _delivery_body(first)],
        "total": 3,
        "hasMore": False,
    }
    assert _delivery_body(first)["attempts"][0]["statusCode"] == 500
    assert _delivery_body(first)["attempts"][0]["error"] == "HTTP 500"
    assert _delivery_body(second)["status"] == "succeeded"
    page = api.get(f"/api/v1/webhooks/{webhook.id}/deliveries?limit=1&offset=1").json()
    assert page == {"deliveries": [_delivery_body(second)], "total": 3, "hasMore": True}
    assert api.get(f"/api/v1/webhooks/{webhook.id}/deliveries?limit=0").status_code == 400
    response = api.get(f"/api/v1/webhooks/{webhook.id}/deliveries?page=2")
    assert response.status_code == 400 and "page" in response.json()["message"][0]


def test_deliveries_listing_uses_a_fixed_number_of_queries(api: Any, workspace: Any) -> None:
    webhook = WebhookFactory(workspace=workspace)

    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert api.get(f"/api/v1/webhooks/{webhook.id}/deliveries?limit=100").status_code == 200
        return len(ctx.captured_queries)

    emit_event(workspace_id=workspace.id, name="post.published", data={})
    count()  # the key's first use writes last_used_at
    few = count()
    for _ in range(10):
        emit_event(workspace_id=workspace.id, name="post.published", data={})
    assert count() == few


def test_redeliver_creates_a_new_delivery_of_the_same_event(
    api: Any, workspace: Any, receiver: Receiver, allow_private: Any
) -> None:
    webhook = WebhookFactory(workspace=workspace, url=receiver.url("/hook"))
    emit_event(workspace_id=workspace.id, name="post.published", data={"x": "😀"})
    original = Delivery.objects.get()
    attempt_one(original.pk)
    response = api.post(f"/api/v1/webhooks/{webhook.id}/deliveries/{original.id}/redeliver")
    assert response.status_code == 201
    new = Delivery.objects.exclude(pk=original.pk).get()
    assert response.json() == _delivery_body(new)
    assert new.event_id == original.event_id and new.status == "pending" and new.attempt_count == 0
    attempt_one(new.pk)
    first, again = receiver.to("/hook")
    assert first.body == again.body
    assert api.post(f"/api/v1/webhooks/{webhook.id}/deliveries/dlv_nope/redeliver").status_code == 404
    Webhook.objects.filter(pk=webhook.pk).update(active=False)
    response = api.post(f"/api/v1/webhooks/{webhook.id}/deliveries/{original.id}/redeliver")
    assert response.status_code == 400 and response.json()["code"] == "webhook_inactive"


def test_redeliver_refuses_a_delivery_of_another_webhook(api: Any, workspace: Any) -> None:
    one, two = WebhookFactory(workspace=workspace), WebhookFactory(workspace=workspace)
    emit_event(workspace_id=workspace.id, name="post.published", data={})
    delivery_of_two = Delivery.objects.get(webhook=two)
    assert api.post(f"/api/v1/webhooks/{one.id}/deliveries/{delivery_of_two.id}/redeliver").status_code == 404


def test_anonymous_is_401(anon: Any) -> None:
    for method, path in (
        ("get", "/api/v1/webhooks"),
        ("post", "/api/v1/webhooks"),
        ("get", "/api/v1/webhooks/wh_x"),
        ("patch", "/api/v1/webhooks/wh_x"),
        ("delete", "/api/v1/webhooks/wh_x"),
        ("post", "/api/v1/webhooks/wh_x/test"),
        ("get", "/api/v1/webhooks/wh_x/deliveries"),
        ("post", "/api/v1/webhooks/wh_x/deliveries/dlv_x/redeliver"),
    ):
        response = getattr(anon, method)(path)
        assert response.status_code == 401
        assert response.json()["message"] == "API key is invalid or missing"


def test_roles_without_the_permission_get_403(client_for: Any, workspace: Any) -> None:
    webhook = WebhookFactory(workspace=workspace)
    contributor = client_for("contributor")
    for path in ("/api/v1/webhooks", f"/api/v1/webhooks/{webhook.id}", f"/api/v1/webhooks/{webhook.id}/deliveries"):
        response = contributor.get(path)
        assert response.status_code == 403
        assert response.json() == {
            "statusCode": 403,
            "error": "Forbidden",
            "message": "This operation requires the webhooks.read permission",
            "code": "permission_denied",
            "requiredPermission": "webhooks.read",
            "role": "contributor",
            "tokenType": "api_token",
        }
    viewer = client_for("viewer")
    assert viewer.get("/api/v1/webhooks").status_code == 200
    for method, path in (
        ("post", "/api/v1/webhooks"),
        ("patch", f"/api/v1/webhooks/{webhook.id}"),
        ("delete", f"/api/v1/webhooks/{webhook.id}"),
        ("post", f"/api/v1/webhooks/{webhook.id}/test"),
        ("post", f"/api/v1/webhooks/{webhook.id}/deliveries/dlv_x/redeliver"),
    ):
        response = getattr(viewer, method)(path, {"url": "https://hooks.example.com/"}, format="json")
        assert response.status_code == 403
        assert response.json()["requiredPermission"] == "webhooks.manage"
    assert Webhook.objects.get().pk == webhook.pk


def test_editor_can_manage(client_for: Any, dns: Any) -> None:
    editor = client_for("editor")
    assert editor.post("/api/v1/webhooks", {"url": "https://hooks.example.com/e"}, format="json").status_code == 201


def test_a_non_ascii_path_and_its_percent_encoding_are_the_same_webhook(api: Any, dns: Any) -> None:
    created = api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/café"}, format="json")
    assert created.status_code == 201 and created.json()["url"] == "https://hooks.example.com/café"
    again = api.post("/api/v1/webhooks", {"url": "https://hooks.example.com/caf%C3%A9"}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "conflict"
