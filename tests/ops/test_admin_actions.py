"""Staff actions go through the same services as the API: retry a post's failed entries,
redeliver a delivery (refused while its webhook is disabled), revoke keys."""

from __future__ import annotations

import pytest
from django.contrib.admin.utils import quote

from posts.models import PostStatus, TargetStatus
from tests.factories.posts import PostFactory, PostTargetFactory
from tests.factories.webhooks import WebhookFactory
from webhooks.models import Delivery, DeliveryStatus, Event

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch):
    """What the services queue after commit (no broker in these tests)."""
    calls = []
    monkeypatch.setattr("posts.services.transitions.enqueue_targets", lambda ids: calls.append(("targets", ids)))
    monkeypatch.setattr("webhooks.services.enqueue_deliveries", lambda ids, **kw: calls.append(("deliveries", ids)))
    return calls


def test_retry_failed_entries_moves_them_back_to_pending(admin_client, queued, django_capture_on_commit_callbacks):
    post = PostFactory(status=PostStatus.PARTIAL_FAILURE)
    failed = PostTargetFactory(post=post, platform="TELEGRAM", status=TargetStatus.FAILED, error_code="rate_limited")
    PostTargetFactory(post=post, platform="MASTODON", status=TargetStatus.PUBLISHED, platform_post_id="r1")
    untouched = PostFactory(status=PostStatus.COMPLETED)
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/posts/post/",
            {"action": "retry_failed_entries", "_selected_action": [post.pk, untouched.pk]},
            follow=True,
        )
    assert response.status_code == 200
    shown = [str(m) for m in response.context["messages"]]
    assert "1 failed entry queued again." in shown
    assert any(m.startswith(f"{untouched.pk}: ") for m in shown)
    failed.refresh_from_db()
    post.refresh_from_db()
    assert (failed.status, failed.error_code, post.status) == (TargetStatus.PENDING, "", PostStatus.PENDING)
    assert queued == [("targets", [failed.pk])]


def test_posts_are_read_only_in_the_admin(admin_client):
    post = PostFactory()
    page = admin_client.get(f"/admin/posts/post/{quote(post.pk)}/change/")
    assert page.status_code == 200
    assert 'name="text"' not in page.content.decode()
    assert admin_client.get("/admin/posts/post/add/").status_code == 403


def test_redeliver_creates_a_new_delivery_and_refuses_a_disabled_webhook(
    admin_client, queued, django_capture_on_commit_callbacks
):
    live, disabled = WebhookFactory(), WebhookFactory(active=False)
    deliveries = []
    for webhook in (live, disabled):
        event = Event.objects.create(
            workspace=webhook.workspace, name="post.published", payload="{}", created_at="2026-01-01T00:00Z"
        )
        deliveries.append(Delivery.objects.create(webhook=webhook, event=event, status=DeliveryStatus.FAILED))
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            "/admin/webhooks/delivery/",
            {"action": "redeliver", "_selected_action": [d.pk for d in deliveries]},
            follow=True,
        )
    shown = [str(m) for m in response.context["messages"]]
    assert "1 redelivery queued." in shown
    assert any(m.startswith(f"{deliveries[1].pk}: Webhook is disabled") for m in shown), shown
    new = Delivery.objects.exclude(pk__in=[d.pk for d in deliveries]).get()
    assert (new.webhook_id, new.event_id, new.status) == (live.pk, deliveries[0].event_id, DeliveryStatus.PENDING)
    assert queued == [("deliveries", [new.pk])]
