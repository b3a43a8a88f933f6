"""The events outbox (DESIGN.md §7). Owned by the webhooks app; every other app calls
``emit_event`` inside its own transaction."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from core.fields import format_instant
from core.ids import new_id

EVENT_NAMES = (
    "post.published",
    "post.partially_failed",
    "post.failed",
    "post.scheduled",
    "account.unauthorized",
    "image.completed",
    "image.failed",
    "webhook.test",
)


def serialize_envelope(*, event_id: str, name: str, created_at: dt.datetime, data: dict[str, Any]) -> str:
    """The body every attempt sends: ``{id, event, createdAt, data}`` as compact JSON (UTF-8
    characters kept as they are)."""
    envelope = {"id": event_id, "event": name, "createdAt": format_instant(created_at), "data": data}
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False, cls=DjangoJSONEncoder)


def emit_event(*, workspace_id: str, name: str, data: dict[str, Any]) -> None:
    """Record event ``name`` with ``data`` for every active webhook of the workspace, in the
    caller's transaction; deliveries are enqueued after commit.

    Guarantees: the Event and its Delivery rows commit or roll back with the caller's work;
    a webhook inactive now never receives this event; a lost enqueue is picked up by the sweeper."""
    from webhooks.models import Delivery, Event, Webhook

    if name not in EVENT_NAMES or name == "webhook.test":
        raise ValueError(f"unknown event name {name!r}")
    now = timezone.now()
    event_id = new_id("evt")
    payload = serialize_envelope(event_id=event_id, name=name, created_at=now, data=data)
    # No savepoint: inside the caller's transaction an error here fails that transaction anyway
    # (no caller catches one), so the SAVEPOINT/RELEASE pair was two round trips for nothing.
    with transaction.atomic(savepoint=False):
        webhook_ids = list(
            Webhook.objects.filter(workspace_id=workspace_id, active=True).order_by("id").values_list("id", flat=True)
        )
        event = Event.objects.create(id=event_id, workspace_id=workspace_id, name=name, payload=payload, created_at=now)
        deliveries = Delivery.objects.bulk_create(
            [Delivery(webhook_id=webhook_id, event=event, next_attempt_at=now) for webhook_id in webhook_ids]
        )
        delivery_ids = [delivery.id for delivery in deliveries]
        if delivery_ids:
            transaction.on_commit(lambda: enqueue_deliveries(delivery_ids), robust=True)


def enqueue_deliveries(delivery_ids: list[str], *, countdown: float | None = None) -> None:
    """Hand deliveries to the worker; call only after the rows are committed. Several go as
    ``webhooks.deliver_many`` tasks of up to ``WEBHOOK_DELIVERY_BATCH`` (one event's deliveries
    are sent together: one broker message instead of one per webhook); one alone as ``deliver``."""
    from webhooks.delivery.engine import batch_size
    from webhooks.tasks import deliver, deliver_many

    options: dict[str, Any] = {} if countdown is None else {"countdown": countdown}
    size = batch_size()
    for start in range(0, len(delivery_ids), size):
        chunk = list(delivery_ids[start : start + size])
        if len(chunk) == 1:
            deliver.apply_async(args=(chunk[0],), **options)
        else:
            deliver_many.apply_async(args=(chunk,), **options)
