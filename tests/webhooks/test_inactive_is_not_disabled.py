"""Issue 29 item 5, as the published clients send and read it: ``PATCH /webhooks/{id}`` with
``{"active": false}`` makes a webhook inactive, which the clients tell apart from ``disabledAt``
("disabled after failures"): only the automatic disable sets it, and activating clears it."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from core.fields import format_instant
from tests.factories.webhooks import WebhookFactory
from webhooks.models import Webhook


def test_deactivating_leaves_disabled_at_null(api: Any, workspace: Any) -> None:
    webhook = WebhookFactory(workspace=workspace)
    response = api.patch(f"/api/v1/webhooks/{webhook.id}", {"active": False}, format="json")
    assert response.status_code == 200, response.json()
    assert (response.json()["active"], response.json()["disabledAt"]) == (False, None)
    assert api.get(f"/api/v1/webhooks/{webhook.id}").json()["disabledAt"] is None
    assert Webhook.objects.get(pk=webhook.pk).disabled_at is None


def test_an_automatic_disable_is_kept_until_activated_again(api: Any, workspace: Any) -> None:
    disabled_at = timezone.now().replace(microsecond=0)
    webhook = WebhookFactory(workspace=workspace, active=False, disabled_at=disabled_at, consecutive_failures=20)
    again = api.patch(f"/api/v1/webhooks/{webhook.id}", {"active": False}, format="json")
    assert again.status_code == 200 and again.json()["disabledAt"] == format_instant(disabled_at)
    renamed = api.patch(f"/api/v1/webhooks/{webhook.id}", {"events": ["post.published"]}, format="json")
    assert renamed.status_code == 200 and renamed.json()["disabledAt"] == format_instant(disabled_at)
    activated = api.patch(f"/api/v1/webhooks/{webhook.id}", {"active": True}, format="json")
    assert (activated.json()["active"], activated.json()["disabledAt"]) == (True, None)
    deactivated = api.patch(f"/api/v1/webhooks/{webhook.id}", {"active": False}, format="json")
    assert (deactivated.json()["active"], deactivated.json()["disabledAt"]) == (False, None)
