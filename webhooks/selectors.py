"""Reads of the webhooks app, always scoped by workspace."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from dataclasses import dataclass

from django.conf import settings
from django.db.models import Prefetch, Q, QuerySet
from django.utils import timezone

from core.errors import NotFound, ValidationFailed
from core.pagination import Page, paginate
from webhooks.models import Attempt, Delivery, Event, OldestRunningTransactionId, Webhook
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


def webhook_secret(*, workspace: Workspace, webhook_id: str) -> str | None:
    """The plaintext secret of a webhook (decrypted), or None when it no longer exists."""
    webhook = Webhook.objects.filter(workspace=workspace, pk=webhook_id).only("secret").first()
    return None if webhook is None else webhook.secret


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

_CURSOR_VERSION = "2"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EVENT_ID = re.compile(r"[A-Za-z0-9_]{1,40}")


@dataclass(frozen=True)
class EventPage:
    payloads: list[str]  # each exactly the body the webhooks received
    next_cursor: str | None


def encode_event_cursor(txid: int, created_at: dt.datetime, event_id: str) -> str:
    """The position just after one event: opaque to clients (URL-safe base64 of the feed's sort
    key: its transaction id, its instant in microseconds and its id)."""
    micros = (created_at - _EPOCH) // dt.timedelta(microseconds=1)
    raw = f"{_CURSOR_VERSION}.{txid}.{micros}.{event_id}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_event_cursor(cursor: str) -> tuple[int, dt.datetime, str]:
    """The (txid, created_at, id) a cursor stands for; a 400 naming ``after`` when it is not one
    of ours."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        version, txid, micros, event_id = raw.split(".", 3)
        if (
            version != _CURSOR_VERSION
            or not txid.isdigit()
            or len(txid) > 18
            or not micros.isdigit()
            or not _EVENT_ID.fullmatch(event_id)
        ):
            raise ValueError(raw)
        created_at = _EPOCH + dt.timedelta(microseconds=int(micros))
    except (ValueError, UnicodeDecodeError, binascii.Error, OverflowError, OSError):
        raise ValidationFailed(["after must be a nextCursor returned by GET /events"])
    return int(txid), created_at, event_id


def event_page(*, workspace: Workspace, after: str | None, limit: int, names: list[str] | None) -> EventPage:
    """The workspace's events after the cursor ``after`` (from the oldest kept when None), at most
    ``limit``, only ``names`` when given, within the last EVENTS_RETENTION_DAYS days. One query
    over the (workspace, txid, created_at, id) index. ``next_cursor`` points after the last one
    returned, or stays ``after`` when there is nothing new, so a client polls with it again.

    The order is that of the transactions that wrote them (their ids), then of their instants:
    a total order in which nothing can appear behind a cursor, because only the events of
    transactions that have all ended are listed (ids below the oldest one still running). An
    event stamped earlier whose transaction commits later would otherwise be skipped by a reader
    whose cursor had already passed its instant. The price: an event waits for the transactions
    that began writing before its own to end (milliseconds, as long as the longest of them)."""
    events = Event.objects.filter(
        workspace=workspace,
        created_at__gte=timezone.now() - dt.timedelta(days=settings.EVENTS_RETENTION_DAYS),
        txid__lt=OldestRunningTransactionId(),
    )
    if after is not None:
        txid, created_at, event_id = decode_event_cursor(after)
        events = events.filter(
            Q(txid__gt=txid)
            | Q(txid=txid, created_at__gt=created_at)
            | Q(txid=txid, created_at=created_at, id__gt=event_id)
        )
    if names:
        events = events.filter(name__in=names)
    rows = list(events.order_by("txid", "created_at", "id").values_list("txid", "created_at", "id", "payload")[:limit])
    if not rows:
        return EventPage(payloads=[], next_cursor=after)
    last_txid, last_created_at, last_id, _ = rows[-1]
    return EventPage(
        payloads=[row[3] for row in rows], next_cursor=encode_event_cursor(last_txid, last_created_at, last_id)
    )
