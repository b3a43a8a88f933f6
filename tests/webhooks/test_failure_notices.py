"""webhook.failing at the 15th consecutive failure and webhook.disabled at the 20th: once per
crossing, through the outbox, to the workspace's other active webhooks (their filters respected),
never to the failing webhook itself; a task run twice emits once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.utils import timezone

from core.fields import format_instant
from tests.factories.webhooks import WebhookFactory
from tests.webhooks.conftest import Receiver, attempt_one
from webhooks import tasks
from webhooks.events import emit_event
from webhooks.models import Delivery, DeliveryStatus, Event, Webhook

pytestmark = pytest.mark.django_db


def _notices(name: str) -> list[Event]:
    return list(Event.objects.filter(name=name).order_by("created_at"))


def _fail_once(workspace: Any, failing: Webhook) -> None:
    """One failed delivery of one new event to ``failing`` (its first attempt)."""
    emit_event(workspace_id=workspace.id, name="post.published", data={})
    delivery = Delivery.objects.filter(webhook=failing, attempt_count=0, status=DeliveryStatus.PENDING).get()
    attempt_one(delivery.pk)


@pytest.fixture
def hooks(workspace: Any, receiver: Receiver, allow_private: Any) -> dict[str, Webhook]:
    receiver.behave("/down", status=503)
    return {
        "failing": WebhookFactory(workspace=workspace, url=receiver.url("/down"), events=["post.published"]),
        "all": WebhookFactory(workspace=workspace, url=receiver.url("/all"), events=["image.failed"]),
        "notices": WebhookFactory(workspace=workspace, url=receiver.url("/notices"), events=["webhook.failing"]),
        "everything": WebhookFactory(workspace=workspace, url=receiver.url("/everything")),
        "inactive": WebhookFactory(workspace=workspace, url=receiver.url("/inactive"), active=False),
    }


def test_failing_at_the_15th_failure_once_then_disabled_at_the_20th(
    workspace: Any, other_workspace: Any, hooks: dict[str, Webhook], receiver: Receiver
) -> None:
    failing = hooks["failing"]
    WebhookFactory(workspace=other_workspace)
    for _ in range(14):
        _fail_once(workspace, failing)
    assert not _notices("webhook.failing")
    _fail_once(workspace, failing)
    (notice,) = _notices("webhook.failing")
    failing.refresh_from_db()
    assert failing.consecutive_failures == 15 and failing.failing_notified_at is not None
    assert json.loads(notice.payload)["data"] == {
        "webhook": {
            "id": failing.id,
            "url": failing.url,
            "active": True,
            "consecutiveFailures": 15,
            "lastFailureAt": format_instant(failing.last_failure_at),
            "disabledAt": None,
        }
    }
    # To the other active webhooks whose filter takes it, never to the failing one itself.
    assert set(Delivery.objects.filter(event=notice).values_list("webhook_id", flat=True)) == {
        hooks["notices"].id,
        hooks["everything"].id,
    }
    for _ in range(4):
        _fail_once(workspace, failing)
    assert len(_notices("webhook.failing")) == 1  # 16th to 19th: nothing more
    assert not _notices("webhook.disabled")
    _fail_once(workspace, failing)
    (disabled,) = _notices("webhook.disabled")
    failing.refresh_from_db()
    assert not failing.active and failing.consecutive_failures == 20
    data = json.loads(disabled.payload)["data"]["webhook"]
    assert data["active"] is False and data["disabledAt"] == format_instant(failing.disabled_at)
    assert set(Delivery.objects.filter(event=disabled).values_list("webhook_id", flat=True)) == {hooks["everything"].id}
    # Delivered for real: signed bodies at the receivers, the notice webhook got only its notice.
    for delivery in Delivery.objects.filter(event__name__startswith="webhook.").order_by("event__created_at"):
        attempt_one(delivery.pk)
    assert [json.loads(r.body)["event"] for r in receiver.to("/notices")] == ["webhook.failing"]
    assert [json.loads(r.body)["event"] for r in receiver.to("/everything") if b'"webhook.' in r.body] == [
        "webhook.failing",
        "webhook.disabled",
    ]
    assert not receiver.to("/inactive")
    assert Event.objects.filter(workspace=other_workspace).count() == 0


def test_a_success_or_re_enabling_starts_a_new_run_that_notifies_again(
    api: Any, workspace: Any, hooks: dict[str, Webhook], receiver: Receiver
) -> None:
    failing = hooks["failing"]
    Webhook.objects.filter(pk=failing.pk).update(consecutive_failures=14)
    _fail_once(workspace, failing)
    assert len(_notices("webhook.failing")) == 1
    receiver.behave("/down", status=200)
    emit_event(workspace_id=workspace.id, name="post.published", data={})
    attempt_one(Delivery.objects.get(webhook=failing, attempt_count=0).pk)
    failing.refresh_from_db()
    assert failing.consecutive_failures == 0 and failing.failing_notified_at is None
    receiver.behave("/down", status=500)
    Webhook.objects.filter(pk=failing.pk).update(consecutive_failures=14)
    _fail_once(workspace, failing)
    assert len(_notices("webhook.failing")) == 2
    # Disabled at 20, then PATCH active: true resets the counter and the notice.
    Webhook.objects.filter(pk=failing.pk).update(consecutive_failures=19)
    _fail_once(workspace, failing)
    assert len(_notices("webhook.disabled")) == 1
    response = api.patch(f"/api/v1/webhooks/{failing.id}", {"active": True}, format="json")
    assert response.status_code == 200 and response.json()["active"] is True
    failing.refresh_from_db()
    assert failing.consecutive_failures == 0 and failing.failing_notified_at is None
    Webhook.objects.filter(pk=failing.pk).update(consecutive_failures=14)
    _fail_once(workspace, failing)
    assert len(_notices("webhook.failing")) == 3


@pytest.mark.parametrize(("before", "notice"), [(14, "webhook.failing"), (19, "webhook.disabled")])
def test_the_delivery_task_run_twice_emits_once(
    workspace: Any, hooks: dict[str, Webhook], settings: Any, before: int, notice: str
) -> None:
    settings.WEBHOOK_RETRY_DELAYS = [60.0, 60.0]
    failing = hooks["failing"]
    Webhook.objects.filter(pk=failing.pk).update(consecutive_failures=before)
    emit_event(workspace_id=workspace.id, name="post.published", data={})
    delivery = Delivery.objects.get(webhook=failing)
    tasks.deliver_many([delivery.pk])
    tasks.deliver_many([delivery.pk])  # the retry is not due: nothing sent, nothing recorded
    assert len(_notices(notice)) == 1
    failing.refresh_from_db()
    assert failing.consecutive_failures == before + 1
    assert Delivery.objects.get(pk=delivery.pk).attempt_count == 1


def test_notices_are_recorded_with_the_failure_even_when_no_other_webhook_listens(
    workspace: Any, receiver: Receiver, allow_private: Any
) -> None:
    receiver.behave("/down", status=500)
    failing = WebhookFactory(workspace=workspace, url=receiver.url("/down"), consecutive_failures=14)
    _fail_once(workspace, failing)
    (notice,) = _notices("webhook.failing")  # in the outbox, so GET /events serves it
    assert not Delivery.objects.filter(event=notice).exists()
    failing.refresh_from_db()
    assert failing.failing_notified_at is not None and failing.failing_notified_at <= timezone.now()
