"""The events outbox (DESIGN.md §7). Owned by the webhooks app; every other app calls
``emit_event`` inside its own transaction."""

from __future__ import annotations

import datetime as dt
import json
from functools import partial
from typing import Any

from django.db import transaction
from django.utils import timezone

from core import bulk
from core.fields import InstantJSONEncoder, format_instant
from core.ids import new_id
from webhooks.enqueue import enqueue_deliveries
from webhooks.models import Delivery, Event, Webhook

EVENT_NAMES = (
    "post.published",
    "post.partially_failed",
    "post.failed",
    "post.scheduled",
    "post.missed",
    "post.first_comment.published",
    "post.first_comment.failed",
    "post.updated",
    "post.unpublished",
    "account.unauthorized",
    "account.disconnected",
    "comment.received",
    "comment.replied",
    "comment.hidden",
    "comment.unhidden",
    "comment.deleted",
    "comment.liked",
    "comment.action_failed",
    "image.completed",
    "image.failed",
    "media.processed",
    "media.failed",
    "webhook.test",
    "webhook.failing",
    "webhook.disabled",
)
# What the outbox stores and GET /events serves: every event but the test send (never stored).
STORED_EVENT_NAMES = tuple(name for name in EVENT_NAMES if name != "webhook.test")


def subscribed(events: list[str] | None, name: str) -> bool:
    """Whether a webhook whose ``events`` filter is ``events`` receives event ``name`` (no filter:
    every event, as the spec says; ``webhook.test`` always goes through)."""
    return events is None or name == "webhook.test" or name in events


def serialize_envelope(*, event_id: str, name: str, created_at: dt.datetime, data: dict[str, Any]) -> str:
    """The body every attempt sends: ``{id, event, createdAt, data}`` as compact JSON (UTF-8
    characters kept as they are)."""
    envelope = {"id": event_id, "event": name, "createdAt": format_instant(created_at), "data": data}
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False, cls=InstantJSONEncoder)


def emit_event(*, workspace_id: str, name: str, data: dict[str, Any]) -> None:
    """Record event ``name`` with ``data`` for every active webhook of the workspace, in the
    caller's transaction; deliveries are enqueued after commit.

    Guarantees: the Event and its Delivery rows commit or roll back with the caller's work;
    a webhook inactive now never receives this event, nor one whose ``events`` filter leaves it
    out; a lost enqueue is picked up by the sweeper."""
    emit_events([(workspace_id, name, data)])


def emit_webhook_notice(*, workspace_id: str, name: str, data: dict[str, Any], about_webhook_id: str) -> None:
    """:func:`emit_event` of a notice about one webhook (``webhook.failing``, ``webhook.disabled``)
    to the workspace's other active webhooks: the one it is about is failing, so it never gets
    its own notice. Stored in the outbox like any event (GET /events serves it)."""
    emit_events([(workspace_id, name, data)], except_webhook_id=about_webhook_id)


def emit_events(events: list[tuple[str, str, dict[str, Any]]], *, except_webhook_id: str | None = None) -> None:
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
        hooks: dict[str, list[tuple[str, list[str] | None]]] = {}
        active = Webhook.objects.filter(workspace_id__in={str(e[0]) for e in events}, active=True)
        if except_webhook_id is not None:
            active = active.exclude(pk=except_webhook_id)
        for webhook_id, workspace_id, filter_ in active.order_by("id").values_list("id", "workspace_id", "events"):
            hooks.setdefault(str(workspace_id), []).append((webhook_id, filter_))
        rows: list[Event] = []
        for workspace_id, name, data in events:
            now = timezone.now()  # each its own instant, in the order given, as one by one
            event_id = new_id("evt")
            payload = serialize_envelope(event_id=event_id, name=name, created_at=now, data=data)
            rows.append(Event(id=event_id, workspace_id=workspace_id, name=name, payload=payload, created_at=now))
        bulk.insert(rows)
        deliveries = [
            Delivery(webhook_id=webhook_id, event=event, next_attempt_at=event.created_at)
            for event in rows
            for webhook_id, filter_ in hooks.get(str(event.workspace_id), [])
            if subscribed(filter_, event.name)
        ]
        if not deliveries:
            return
        bulk.insert(deliveries)
        by_event: dict[str, list[str]] = {}
        for delivery in deliveries:
            by_event.setdefault(delivery.event_id, []).append(delivery.id)
        for delivery_ids in by_event.values():
            transaction.on_commit(partial(enqueue_deliveries, delivery_ids), robust=True)
