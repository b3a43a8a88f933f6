"""Event filters (``events`` on create and PATCH) and secret rotation (two signatures during the
grace period, one outside it), through the API and real loopback receivers."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
from typing import Any

import pytest
from crosspost.webhooks import InvalidSignature, verify_webhook
from django.db import connection
from django.utils import timezone

from core.fields import format_instant
from core.models import IdempotencyRecord
from tests.factories.webhooks import WebhookFactory
from tests.webhooks.conftest import Received, Receiver, attempt_one
from webhooks.delivery.signing import sign, signed_headers
from webhooks.events import EVENT_NAMES, emit_event
from webhooks.models import Delivery, Webhook

pytestmark = pytest.mark.django_db

SUBSCRIBABLE = ", ".join(EVENT_NAMES)


def _signed_by(received: Received, secret: str) -> str:
    timestamp = received.headers["x-service-timestamp"]
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + received.body, hashlib.sha256).hexdigest()
    return f"sha256={mac}"


# --- filters ---------------------------------------------------------------------------------


def test_create_with_events_answers_them_and_only_those_are_delivered(
    api: Any, workspace: Any, receiver: Receiver, allow_private: Any
) -> None:
    response = api.post(
        "/api/v1/webhooks",
        {"url": receiver.url("/only"), "events": ["post.failed", "post.published", "post.failed"]},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["events"] == ["post.failed", "post.published"]
    everything = api.post("/api/v1/webhooks", {"url": receiver.url("/all")}, format="json").json()
    assert everything["events"] is None
    explicit_null = api.post("/api/v1/webhooks", {"url": receiver.url("/null"), "events": None}, format="json")
    assert explicit_null.status_code == 201 and explicit_null.json()["events"] is None

    for name in ("post.published", "post.scheduled", "image.completed", "post.failed"):
        emit_event(workspace_id=workspace.id, name=name, data={})
    for delivery in Delivery.objects.order_by("event__created_at", "webhook__created_at"):
        attempt_one(delivery.pk)
    assert [json.loads(r.body)["event"] for r in receiver.to("/only")] == ["post.published", "post.failed"]
    assert len(receiver.to("/all")) == 4 and len(receiver.to("/null")) == 4
    # webhook.test always goes through, and says what the webhook is subscribed to.
    test = api.post(f"/api/v1/webhooks/{response.json()['id']}/test")
    assert test.status_code == 201 and test.json()["success"] is True
    sent = json.loads(receiver.to("/only")[-1].body)
    assert sent["event"] == "webhook.test"
    assert sent["data"] == {"webhookId": response.json()["id"], "events": ["post.failed", "post.published"]}


def test_patch_events_changes_the_subscription_and_null_restores_all(
    api: Any, workspace: Any, receiver: Receiver, allow_private: Any
) -> None:
    webhook = WebhookFactory(workspace=workspace, url=receiver.url("/hook"))
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {"events": ["image.failed"]}, format="json")
    assert response.status_code == 200 and response.json()["events"] == ["image.failed"]
    assert api.get(f"/api/v1/webhooks/{webhook.id}").json()["events"] == ["image.failed"]
    emit_event(workspace_id=workspace.id, name="post.published", data={})
    assert not Delivery.objects.exists()
    # PATCH without events keeps the filter.
    assert api.patch(f"/api/v1/webhooks/{webhook.id}", {"active": True}, format="json").json()["events"] == [
        "image.failed"
    ]
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {"events": None}, format="json")
    assert response.status_code == 200 and response.json()["events"] is None
    emit_event(workspace_id=workspace.id, name="post.published", data={})
    assert Delivery.objects.filter(webhook=webhook).count() == 1


@pytest.mark.parametrize(
    ("events", "message"),
    [
        (
            ["post.published", "post.exploded"],
            f'events[1]: "post.exploded" is not an event name; valid names: {SUBSCRIBABLE}',
        ),
        ("post.published", 'events: Expected a list of items but got type "str".'),
        ([], "events: This list may not be empty."),
        ([5], "events[0]: must be a string, not a number"),
        ({"a": 1}, 'events: Expected a list of items but got type "dict".'),
    ],
)
def test_invalid_events_are_400_naming_the_field(
    api: Any, workspace: Any, receiver: Receiver, allow_private: Any, events: Any, message: str
) -> None:
    response = api.post("/api/v1/webhooks", {"url": receiver.url(), "events": events}, format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["message"] == [message]
    webhook = WebhookFactory(workspace=workspace)
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {"events": events}, format="json")
    assert response.status_code == 400 and response.json()["message"] == [message]
    assert not Webhook.objects.filter(events__isnull=False).exists()


# --- rotation --------------------------------------------------------------------------------


def test_rotation_signs_with_both_secrets_during_the_grace_period(
    api: Any, workspace: Any, receiver: Receiver, allow_private: Any
) -> None:
    created = api.post("/api/v1/webhooks", {"url": receiver.url("/hook")}, format="json").json()
    old = created["secret"]
    emit_event(workspace_id=workspace.id, name="post.published", data={"n": 1})
    attempt_one(Delivery.objects.get().pk)
    before = receiver.to("/hook")[0]
    assert before.headers["x-service-signature"] == _signed_by(before, old)  # exactly one value

    response = api.post(f"/api/v1/webhooks/{created['id']}/rotate-secret", {}, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    webhook = Webhook.objects.get()
    new = body["secret"]
    assert new.startswith("whsec_") and new != old and webhook.secret == new and webhook.previous_secret == old
    expires = webhook.previous_secret_expires_at
    assert expires is not None and abs((expires - timezone.now()).total_seconds() - 86_400) < 60
    assert body == {
        "id": webhook.id,
        "url": webhook.url,
        "active": True,
        "createdAt": format_instant(webhook.created_at),
        "updatedAt": format_instant(webhook.updated_at),
        "lastSuccessAt": format_instant(webhook.last_success_at),
        "lastFailureAt": None,
        "disabledAt": None,
        "events": None,
        "previousSecretExpiresAt": format_instant(expires),
        "secret": new,
    }
    # Stored encrypted, like the current secret.
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret, previous_secret FROM webhooks_webhook WHERE id = %s", [webhook.id])
        stored_secret, stored_previous = cursor.fetchone()
    assert new not in stored_secret and old not in stored_previous and stored_previous
    assert "secret" not in api.get(f"/api/v1/webhooks/{webhook.id}").json()

    emit_event(workspace_id=workspace.id, name="post.published", data={"n": 2})
    attempt_one(Delivery.objects.exclude(status="succeeded").get().pk)
    during = receiver.to("/hook")[1]
    assert during.headers["x-service-signature"] == f"{_signed_by(during, new)} {_signed_by(during, old)}"
    # The SDK's verifier accepts it with either secret, or both; not with another.
    for secrets in (old, new, [old, new]):
        assert verify_webhook(during.headers, during.body, secrets)["data"] == {"n": 2}
    with pytest.raises(InvalidSignature):
        verify_webhook(during.headers, during.body, "whsec_other")
    # The test send is signed the same way.
    api.post(f"/api/v1/webhooks/{webhook.id}/test")
    test = receiver.to("/hook")[2]
    assert test.headers["x-service-signature"] == f"{_signed_by(test, new)} {_signed_by(test, old)}"

    # After the grace period: one value again, the new secret's.
    Webhook.objects.filter(pk=webhook.pk).update(previous_secret_expires_at=timezone.now() - dt.timedelta(seconds=1))
    emit_event(workspace_id=workspace.id, name="post.published", data={"n": 3})
    attempt_one(Delivery.objects.exclude(status="succeeded").get().pk)
    after = receiver.to("/hook")[3]
    assert after.headers["x-service-signature"] == _signed_by(after, new)
    with pytest.raises(InvalidSignature):
        verify_webhook(after.headers, after.body, old)


def test_rotation_with_no_grace_ends_the_old_secret_now_and_a_second_rotation_keeps_the_last(
    api: Any, workspace: Any
) -> None:
    webhook = WebhookFactory(workspace=workspace)
    first = webhook.secret
    body = api.post(f"/api/v1/webhooks/{webhook.id}/rotate-secret", {"graceSeconds": 0}, format="json").json()
    webhook.refresh_from_db()
    assert body["previousSecretExpiresAt"] is None and webhook.previous_secret == "" and body["secret"] != first
    second = body["secret"]
    body = api.post(f"/api/v1/webhooks/{webhook.id}/rotate-secret", {"graceSeconds": 60}, format="json").json()
    webhook.refresh_from_db()
    assert webhook.previous_secret == second and webhook.secret == body["secret"]
    assert webhook.previous_secret_at(timezone.now()) == second
    assert webhook.previous_secret_at(timezone.now() + dt.timedelta(seconds=61)) is None
    # An empty body is the default grace period.
    response = api.post(f"/api/v1/webhooks/{webhook.id}/rotate-secret", content_type="application/json")
    assert response.status_code == 201
    webhook.refresh_from_db()
    assert (webhook.previous_secret_expires_at - timezone.now()).total_seconds() > 86_000


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"graceSeconds": "60"}, "graceSeconds: must be an integer, not a string"),
        ({"graceSeconds": -1}, "graceSeconds: Ensure this value is greater than or equal to 0."),
        ({"graceSeconds": 604_801}, "graceSeconds: Ensure this value is less than or equal to 604800."),
        ({"graceSeconds": 1.5}, "graceSeconds: must be an integer, not a number"),
        ({"graceSeconds": None}, "graceSeconds: This field may not be null."),
    ],
)
def test_rotation_refuses_bad_input_with_a_400_naming_the_field(
    api: Any, workspace: Any, payload: Any, message: str
) -> None:
    webhook = WebhookFactory(workspace=workspace)
    response = api.post(f"/api/v1/webhooks/{webhook.id}/rotate-secret", payload, format="json")
    assert response.status_code == 400, response.json()
    assert message in response.json()["message"]
    assert Webhook.objects.get().secret == webhook.secret


def test_rotation_is_404_across_workspaces_and_needs_webhooks_manage(
    api: Any, client_for: Any, workspace: Any, other_workspace: Any, anon: Any
) -> None:
    theirs = WebhookFactory(workspace=other_workspace)
    response = api.post(f"/api/v1/webhooks/{theirs.id}/rotate-secret", {}, format="json")
    assert response.status_code == 404 and response.json()["message"] == "Webhook not found"
    assert api.post("/api/v1/webhooks/wh_nope/rotate-secret", {}, format="json").status_code == 404
    ours = WebhookFactory(workspace=workspace)
    for role in ("viewer", "contributor"):
        response = client_for(role).post(f"/api/v1/webhooks/{ours.id}/rotate-secret", {}, format="json")
        assert response.status_code == 403
        assert response.json()["requiredPermission"] == "webhooks.manage"
        assert response.json()["code"] == "permission_denied"
    assert client_for("editor").post(f"/api/v1/webhooks/{ours.id}/rotate-secret", {}, format="json").status_code == 201
    response = anon.post(f"/api/v1/webhooks/{ours.id}/rotate-secret", {}, format="json")
    assert response.status_code == 401 and response.json()["message"] == "API key is invalid or missing"
    assert Webhook.objects.get(pk=theirs.pk).secret == theirs.secret


def test_rotation_under_an_idempotency_key_rotates_once_and_stores_no_secret(api: Any, workspace: Any) -> None:
    webhook = WebhookFactory(workspace=workspace)
    headers = {"Idempotency-Key": "rotate-1"}
    first = api.post(f"/api/v1/webhooks/{webhook.id}/rotate-secret", {}, format="json", headers=headers)
    again = api.post(f"/api/v1/webhooks/{webhook.id}/rotate-secret", {}, format="json", headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    webhook.refresh_from_db()
    assert webhook.secret == first.json()["secret"]
    assert webhook.previous_secret != webhook.secret  # rotated once: the previous is the original
    with connection.cursor() as cursor:  # the rows as stored (the model decrypts the response)
        cursor.execute("SELECT row_to_json(r)::text FROM core_idempotencyrecord r")
        stored = " ".join(row[0] for row in cursor.fetchall())
    assert IdempotencyRecord.objects.count() == 1
    assert webhook.secret not in stored and webhook.previous_secret not in stored
    assert first["RateLimit-Limit"] == "600" and "RateLimit-Remaining" in first


def test_rotation_is_rate_limited_like_every_post(client_for: Any, workspace: Any) -> None:
    webhook = WebhookFactory(workspace=workspace)
    limited = client_for("admin", rate_limit=1)
    assert limited.post(f"/api/v1/webhooks/{webhook.id}/rotate-secret", {}, format="json").status_code == 201
    response = limited.post(f"/api/v1/webhooks/{webhook.id}/rotate-secret", {}, format="json")
    assert response.status_code == 429 and response.json()["code"] == "rate_limited"
    assert response["Retry-After"] == response["RateLimit-Reset"]


def test_the_two_value_header_is_the_new_signature_then_the_old() -> None:
    body = b'{"id":"evt_0001","event":"webhook.test","createdAt":"2026-01-01T00:00:00Z","data":{}}'
    headers = signed_headers(
        secret="whsec_new", webhook_id="wh_1", event_name="webhook.test", body=body, previous_secret="whsec_old"
    )
    timestamp = headers["x-service-timestamp"]
    expected = f"{sign(secret='whsec_new', timestamp=timestamp, body=body)} {sign(secret='whsec_old', timestamp=timestamp, body=body)}"
    assert headers["x-service-signature"] == expected
    single = signed_headers(secret="whsec_new", webhook_id="wh_1", event_name="webhook.test", body=body)
    assert " " not in single["x-service-signature"]
