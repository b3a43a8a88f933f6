"""The recurring post record of CONTRACT.md §6, rendered from the row alone (no query)."""

from __future__ import annotations

from typing import Any

from core.fields import format_instant
from posts.models import RecurringPost
from posts.rendering import PLATFORM_CONFIG_FIELDS, record_field_name


def _platform_record(target: dict[str, Any]) -> dict[str, Any]:
    platform = target.get("platform") or ""
    record: dict[str, Any] = {
        "platform": platform,
        "connectionId": target.get("accountId"),
        "pageId": target.get("pageId") or None,
        "accountName": target.get("accountName") or "",
        "text": target.get("text") or "",
    }
    if platform in PLATFORM_CONFIG_FIELDS:
        config = target.get("config") or {}
        for key in PLATFORM_CONFIG_FIELDS[platform][1]:
            record[record_field_name(platform, key)] = config.get(key)
    return record


def recurring_record(series: RecurringPost) -> dict[str, Any]:
    template = series.template or {}
    targets = list(template.get("targets") or [])
    return {
        "id": series.id,
        "status": series.status,
        "pauseReason": series.pause_reason or None,
        "lastError": series.last_error or None,
        "frequency": series.frequency,
        "interval": series.interval,
        "weekdays": list(series.weekdays or []),
        "startsAt": format_instant(series.starts_at),
        "timezone": series.timezone,
        "endsOn": series.ends_on.isoformat() if series.ends_on else None,
        "maxOccurrences": series.max_occurrences,
        "nextOccurrenceAt": format_instant(series.next_occurrence_at),
        "occurrenceCount": series.occurrence_count,
        "userId": None if series.created_by_id is None else str(series.created_by_id),
        "contentType": template.get("contentType"),
        "text": template.get("text") or "",
        "mediaUrls": list(template.get("mediaUrls") or []),
        "mediaAltTexts": list(template.get("mediaAltTexts") or []),
        "thumbnailUrl": template.get("thumbnailUrl") or None,
        "platformTypes": list(dict.fromkeys(t.get("platform") for t in targets)),
        "platforms": [_platform_record(t) for t in targets],
        "createdAt": format_instant(series.created_at),
        "updatedAt": format_instant(series.updated_at),
    }
