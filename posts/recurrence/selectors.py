"""Reads of recurring series, always scoped to one workspace."""

from __future__ import annotations

import datetime as dt

from django.db.models import QuerySet
from django.utils import timezone

from core.errors import NotFound
from posts.models import RecurringPost, RecurringStatus
from posts.recurrence.occurrences import SERIES_NOT_FOUND
from posts.recurrence.rules import Rule


def series_get(*, workspace_id: str, series_id: str) -> RecurringPost:
    """The series, or 404 "Recurring post not found" (other workspaces' included)."""
    series = RecurringPost.objects.filter(workspace_id=workspace_id, id=series_id).first()
    if series is None:
        raise NotFound(SERIES_NOT_FOUND)
    return series


def series_list(*, workspace_id: str, statuses: list[str] | None = None) -> QuerySet[RecurringPost]:
    """The workspace's series, newest first (ties: id descending), optionally by status."""
    queryset = RecurringPost.objects.filter(workspace_id=workspace_id)
    if statuses:
        queryset = queryset.filter(status__in=statuses)
    return queryset.order_by("-created_at", "-id")


def series_upcoming(*, series: RecurringPost, limit: int, now: dt.datetime | None = None) -> list[dt.datetime]:
    """The next ``limit`` occurrence times: from the upcoming one for an ACTIVE series, those
    after now for a PAUSED one (what resuming now would publish), none for an ENDED one."""
    if series.status == RecurringStatus.ENDED:
        return []
    rule = Rule.of(series)
    upcoming_counted = series.status == RecurringStatus.ACTIVE and series.next_occurrence_at is not None
    if series.max_occurrences is not None:
        # The upcoming post already counts toward maxOccurrences; the ones after it do not yet.
        left = series.max_occurrences - series.occurrence_count + (1 if upcoming_counted else 0)
        limit = max(0, min(limit, left))
    if upcoming_counted:
        assert series.next_occurrence_at is not None
        return rule.upcoming(series.next_occurrence_at, limit=limit, inclusive=True)
    return rule.upcoming(now or timezone.now(), limit=limit)
