"""Periodic tasks of the inbox, merged into the beat schedule by config/celery.py. Both are safe if
beat briefly runs twice: sources are queued under SKIP LOCKED and claimed with a lease; the
actions' sweeper writes fenced."""

from __future__ import annotations

from typing import Any

from django.conf import settings

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # Finds newly published entries and queues the syncs of the accounts with due sources.
    "engagement.sync_due": {
        "task": "engagement.sync_due",
        "schedule": settings.COMMENT_SYNC_INTERVAL_SECONDS,
        "options": {"queue": "default", "expires": settings.COMMENT_SYNC_INTERVAL_SECONDS * 2},
    },
    # Comment actions whose worker was lost, and due ones whose task was lost.
    "engagement.sweep_comment_actions": {
        "task": "engagement.sweep_comment_actions",
        "schedule": settings.PUBLISH_SWEEP_INTERVAL_SECONDS,
        "options": {"queue": "default", "expires": max(settings.PUBLISH_SWEEP_INTERVAL_SECONDS * 2, 10.0)},
    },
}
