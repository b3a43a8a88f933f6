"""The staff admin: webhooks with their state and recent attempts, a re-enable action that goes
through the service, and never the secret."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.contrib.admin.utils import quote
from django.utils import timezone

from tests.factories.webhooks import WebhookFactory
from tests.webhooks.conftest import Receiver, attempt_one
from webhooks.events import emit_event
from webhooks.models import Delivery, Webhook

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("allow_private", "fast_retries")]
URL = "/admin/webhooks/webhook/"


def test_list_shows_state_and_never_the_secret(admin_client: Any) -> None:
    working = WebhookFactory(consecutive_failures=3)
    disabled = WebhookFactory(active=False, disabled_at=timezone.now(), consecutive_failures=20)
    page = admin_client.get(URL)
    assert page.status_code == 200
    content = page.content.decode()
    for webhook in (working, disabled):
        assert webhook.id in content and webhook.url in content
        assert webhook.secret not in content
    assert admin_client.get(f"{URL}?active__exact=0").content.decode().count(disabled.id) >= 1
    assert working.id not in admin_client.get(f"{URL}?active__exact=0").content.decode()


def test_change_page_shows_recent_attempts(admin_client: Any, receiver: Receiver) -> None:
    receiver.behave("/hook", status=503)
    webhook = WebhookFactory(url=receiver.url("/hook"))
    emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={})
    delivery = Delivery.objects.get(webhook=webhook)
    attempt_one(delivery.pk)
    receiver.behave("/hook", status=200)
    attempt_one(delivery.pk)
    page = admin_client.get(f"{URL}{quote(webhook.id)}/change/")
    assert page.status_code == 200
    content = page.content.decode()
    assert "Recent attempts" in content
    assert "HTTP 503" in content and "<td>503</td>" in content and "<td>200</td>" in content
    assert "post.failed" in content and f"/admin/webhooks/delivery/{quote(delivery.id)}/change/" in content
    assert webhook.secret not in content
    assert admin_client.get(f"/admin/webhooks/delivery/{quote(delivery.id)}/change/").status_code == 200
    quiet = WebhookFactory()
    assert "No attempts yet." in admin_client.get(f"{URL}{quote(quiet.id)}/change/").content.decode()


def test_recent_attempts_are_capped(admin_client: Any, receiver: Receiver) -> None:
    receiver.behave("/hook", status=500)
    webhook = WebhookFactory(url=receiver.url("/hook"))
    for _ in range(5):
        emit_event(workspace_id=webhook.workspace_id, name="post.failed", data={})
    for delivery in Delivery.objects.filter(webhook=webhook):
        for _ in range(5):
            attempt_one(delivery.pk)
    page = admin_client.get(f"{URL}{quote(webhook.id)}/change/")
    assert page.status_code == 200, (page.status_code, page.get("Location"))
    assert page.content.decode().count("HTTP 500") == 20


def test_reenable_action_reenables_and_resets(admin_client: Any) -> None:
    disabled = WebhookFactory(active=False, disabled_at=timezone.now(), consecutive_failures=20)
    response = admin_client.post(URL, {"action": "reenable", "_selected_action": [disabled.id]}, follow=True)
    assert response.status_code == 200 and b"Re-enabled 1 webhook(s)." in response.content
    disabled.refresh_from_db()
    assert (disabled.active, disabled.disabled_at, disabled.consecutive_failures) == (True, None, 0)
    assert Webhook.objects.get(pk=disabled.pk).active


def test_change_page_shows_the_filter_and_rotation_but_neither_secret(admin_client: Any) -> None:
    expires = timezone.now() + dt.timedelta(hours=1)
    webhook = WebhookFactory(
        events=["post.failed"], previous_secret="whsec_previous_secret_value", previous_secret_expires_at=expires
    )
    content = admin_client.get(f"{URL}{quote(webhook.id)}/change/").content.decode()
    assert "post.failed" in content and "Previous secret expires at" in content
    assert webhook.secret not in content and "whsec_previous_secret_value" not in content
