"""Reads of the audit log, always of one organization."""

from __future__ import annotations

import datetime as dt

from audit.models import AuditEvent
from core.pagination import CursorPage, newest_first_page


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
) -> CursorPage:
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
    return newest_first_page(
        events, limit=limit, after=after, invalid="after must be a nextCursor returned by GET /audit-events"
    )
