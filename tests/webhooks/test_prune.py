"""Events past the feed's retention window are pruned with their deliveries; the window the feed
serves is kept whole, and an event still being delivered waits until it is done."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from config.celery import app, collect_beat_schedule, route_task
from tests.factories import WorkspaceFactory
from tests.factories.webhooks import WebhookFactory
from webhooks import tasks
from webhooks.events import emit_event
from webhooks.models import Attempt, Delivery, DeliveryStatus, Event
from webhooks.services import events_prune

pytestmark = pytest.mark.django_db


def _event(workspace: Any, *, age: dt.timedelta, label: str) -> Event:
    emit_event(workspace_id=workspace.id, name="post.published", data={"label": label})
    event = Event.objects.get(payload__contains=f'"label":"{label}"')
    Event.objects.filter(pk=event.pk).update(created_at=timezone.now() - age)
    return event


def test_the_task_prunes_past_the_window_once_and_keeps_the_window(settings: Any) -> None:
    workspace = WorkspaceFactory()
    WebhookFactory(workspace=workspace)
    old = _event(workspace, age=dt.timedelta(days=30, hours=1), label="old")
    Delivery.objects.filter(event=old).update(status=DeliveryStatus.SUCCEEDED)
    Attempt.objects.create(delivery=Delivery.objects.get(event=old), duration_ms=1, created_at=timezone.now())
    still_sending = _event(workspace, age=dt.timedelta(days=31), label="pending")
    inside = _event(workspace, age=dt.timedelta(days=29, hours=23), label="inside")
    tasks.prune_events()
    assert set(Event.objects.values_list("pk", flat=True)) == {still_sending.pk, inside.pk}
    assert not Delivery.objects.filter(event_id=old.pk).exists() and not Attempt.objects.exists()
    tasks.prune_events()  # a second run deletes nothing more
    assert Event.objects.count() == 2
    Delivery.objects.filter(event=still_sending).update(status=DeliveryStatus.FAILED)
    settings.EVENTS_RETENTION_DAYS = 60
    tasks.prune_events()
    assert Event.objects.count() == 2  # a longer window keeps it
    settings.EVENTS_RETENTION_DAYS = 30
    assert events_prune() == 1 and events_prune() == 0
    assert list(Event.objects.values_list("pk", flat=True)) == [inside.pk]


def test_pruning_goes_in_batches_oldest_first() -> None:
    workspace = WorkspaceFactory()
    for n in range(5):
        _event(workspace, age=dt.timedelta(days=40 - n), label=f"e{n}")
    assert events_prune(batch=2, max_batches=2) == 4
    assert [e.payload.split('"label":"')[1][:2] for e in Event.objects.all()] == ["e4"]


def test_the_prune_task_is_registered_scheduled_and_routed() -> None:
    app.loader.import_default_modules()
    assert "webhooks.prune_events" in app.tasks
    assert route_task("webhooks.prune_events", (), {}, {}) == {"queue": "webhooks"}
    assert collect_beat_schedule()["webhooks.prune_events"]["schedule"] <= 3600
