"""Reads of the audit log, always of one organization."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from dataclasses import dataclass

from django.db.models import Q

from audit.models import AuditEvent
from core.errors import ValidationFailed


@dataclass(frozen=True)
class AuditPage:
    items: list[AuditEvent]
    next_cursor: str | None
    has_more: bool


def _encode(event: AuditEvent) -> str:
    raw = f"{event.created_at.isoformat()}|{event.id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str) -> tuple[dt.datetime, str]:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        instant, _, event_id = text.partition("|")
        parsed = dt.datetime.fromisoformat(instant)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValidationFailed(["after must be a nextCursor returned by GET /audit-events"]) from None
    if not event_id or parsed.tzinfo is None:
        raise ValidationFailed(["after must be a nextCursor returned by GET /audit-events"])
    return parsed, event_id


def audit_page(
    *,
    organization_id: str,
    limit: int,
    after: str | None = None,
    workspace_id: str | None = None,
    actor_id: str | None = None,
    actions: list[str] | None = None,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
) -> AuditPage:
    """The organization's audit events, newest first, ``limit`` of them after the cursor (one
    query: a row more than the page says whether more follow)."""
    events = AuditEvent.objects.filter(organization_id=organization_id)
    if workspace_id is not None:
        events = events.filter(workspace_ref=workspace_id)
    if actor_id is not None:
        events = events.filter(actor_id=actor_id)
    if actions:
        events = events.filter(action__in=actions)
    if since is not None:
        events = events.filter(created_at__gte=since)
    if until is not None:
        events = events.filter(created_at__lt=until)
    if after is not None:
        instant, event_id = _decode(after)
        events = events.filter(Q(created_at__lt=instant) | Q(created_at=instant, id__lt=event_id))
    rows = list(events.order_by("-created_at", "-id")[: limit + 1])
    items, has_more = rows[:limit], len(rows) > limit
    return AuditPage(items=items, next_cursor=_encode(items[-1]) if items else after, has_more=has_more)
