"""The events outbox (DESIGN.md §7). Owned by the webhooks app; every other app calls
``emit_event`` inside its own transaction."""

from __future__ import annotations

import datetime as dt
import json
from functools import partial
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from core.fields import format_instant
from core.ids import new_id
from webhooks.enqueue import enqueue_deliveries
from webhooks.models import Delivery, Event, Webhook

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
    emit_events([(workspace_id, name, data)])


def emit_events(events: list[tuple[str, str, dict[str, Any]]]) -> None:
    """:func:`emit_event` for several ``(workspace_id, name, data)`` at once, with the same
    guarantees: the active webhooks of their workspaces read in one query, the events inserted in
    one statement and their deliveries in one more, each event's deliveries enqueued after commit
    as its own task(s), exactly as one by one."""
    if not events:
        return
    for _, name, _ in events:
        if name not in EVENT_NAMES or name == "webhook.test":
            raise ValueError(f"unknown event name {name!r}")
    # No savepoint: inside the caller's transaction an error here fails that transaction anyway
    # (no caller catches one), so the SAVEPOINT/RELEASE pair was two round trips for nothing.
    with transaction.atomic(savepoint=False):
        hooks: dict[str, list[str]] = {}
        for webhook_id, workspace_id in (
            Webhook.objects.filter(workspace_id__in={str(e[0]) for e in events}, active=True)
            .order_by("id")
            .values_list("id", "workspace_id")
        ):
            hooks.setdefault(str(workspace_id), []).append(webhook_id)
        rows: list[Event] = []
        for workspace_id, name, data in events:
            now = timezone.now()  # each its own instant, in the order given, as one by one
            event_id = new_id("evt")
            payload = serialize_envelope(event_id=event_id, name=name, created_at=now, data=data)
            rows.append(Event(id=event_id, workspace_id=workspace_id, name=name, payload=payload, created_at=now))
        Event.objects.bulk_create(rows)
        deliveries = [
            Delivery(webhook_id=webhook_id, event=event, next_attempt_at=event.created_at)
            for event in rows
            for webhook_id in hooks.get(str(event.workspace_id), [])
        ]
        if not deliveries:
            return
        Delivery.objects.bulk_create(deliveries)
        by_event: dict[str, list[str]] = {}
        for delivery in deliveries:
            by_event.setdefault(delivery.event_id, []).append(delivery.id)
        for delivery_ids in by_event.values():
            transaction.on_commit(partial(enqueue_deliveries, delivery_ids), robust=True)
