"""Reads of the webhooks app, always scoped by workspace."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from core.errors import NotFound, ValidationFailed
from core.pagination import Page, paginate
from webhooks.models import Attempt, Delivery, Event, Webhook
from workspaces.models import Workspace

WEBHOOK_NOT_FOUND = "Webhook not found"


def webhook_list(*, workspace: Workspace) -> QuerySet[Webhook]:
    return Webhook.objects.filter(workspace=workspace).order_by("created_at", "id")


def webhook_get(*, workspace: Workspace, webhook_id: str, for_update: bool = False) -> Webhook:
    queryset = Webhook.objects.filter(workspace=workspace, pk=webhook_id)
    if for_update:
        queryset = queryset.select_for_update()
    webhook = queryset.first()
    if webhook is None:
        raise NotFound(WEBHOOK_NOT_FOUND)
    return webhook


def delivery_get(*, webhook: Webhook, delivery_id: str) -> Delivery:
    delivery = Delivery.objects.filter(webhook=webhook, pk=delivery_id).first()
    if delivery is None:
        raise NotFound("Delivery not found")
    return delivery


def attempt_recent(*, webhook_id: str, limit: int) -> list[Attempt]:
    """The latest attempts of one webhook across its deliveries, newest first (staff views)."""
    queryset = (
        Attempt.objects.filter(delivery__webhook_id=webhook_id)
        .select_related("delivery__event")
        .only("created_at", "status_code", "duration_ms", "error", "delivery__id", "delivery__event__name")
        .order_by("-created_at", "-id")
    )
    return list(queryset[:limit])


def _with_attempts(queryset: QuerySet[Delivery]) -> QuerySet[Delivery]:
    return (
        queryset.select_related("event")
        .defer("event__payload")
        .prefetch_related(Prefetch("attempts", queryset=Attempt.objects.order_by("created_at", "id")))
    )


def delivery_page(*, workspace: Workspace, webhook_id: str, limit: int, offset: int) -> Page:
    """Deliveries of one webhook, newest first, each with its attempts: a fixed number of queries."""
    webhook = webhook_get(workspace=workspace, webhook_id=webhook_id)
    queryset = _with_attempts(Delivery.objects.filter(webhook=webhook).order_by("-created_at", "-id"))
    return paginate(queryset, limit=limit, offset=offset)


# --- the events feed (GET /events) ----------------------------------------------------------------


@dataclass(frozen=True)
class EventPage:
    payloads: list[str]  # each exactly the body the webhooks received
    next_cursor: str | None
    has_more: bool  # more events after this page, already visible now


def encode_event_cursor(seq: int) -> str:
    """The position just after one event: its feed number, as text (clients pass it back as is)."""
    return str(seq)


def decode_event_cursor(cursor: str) -> int:
    """The feed number a cursor stands for (the query serializer let only digits through); a 400
    naming ``after`` otherwise."""
    if not cursor.isdigit() or len(cursor) > 18:
        raise ValidationFailed(["after must be a nextCursor returned by GET /events"])
    return int(cursor)


def event_page(*, workspace: Workspace, after: str | None, limit: int, names: list[str] | None) -> EventPage:
    """The workspace's sealed events (``webhooks.services.events_seal``) after the cursor ``after``
    (from the oldest kept when None) in feed order, at most ``limit``, only ``names`` when given,
    within the last EVENTS_RETENTION_DAYS days. One query over the (workspace, seq) index (one row
    more than ``limit``, to tell ``has_more``). ``next_cursor`` points after the last one returned,
    or stays ``after`` when there is nothing new, so a client polls with it again."""
    events = Event.objects.filter(
        workspace=workspace,
        seq__isnull=False,
        created_at__gte=timezone.now() - dt.timedelta(days=settings.EVENTS_RETENTION_DAYS),
    )
    if after is not None:
        events = events.filter(seq__gt=decode_event_cursor(after))
    if names:
        events = events.filter(name__in=names)
    rows = list(events.order_by("seq").values_list("seq", "payload")[: limit + 1])
    has_more = len(rows) > limit
    rows = rows[:limit]
    if not rows:
        return EventPage(payloads=[], next_cursor=after, has_more=False)
    last = rows[-1][0]
    assert last is not None  # only numbered events are listed
    return EventPage(
        payloads=[payload for _, payload in rows], next_cursor=encode_event_cursor(last), has_more=has_more
    )
