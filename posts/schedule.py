"""Periodic tasks of the posts app, merged into the beat schedule by config/celery.py.
Both are safe if beat briefly runs twice (SKIP LOCKED claims; fenced sweeper writes)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

# Both run on the "default" queue: behind thousands of queued publish tasks (a burst, or a queue
# refilled after an outage) they would come too late to claim the next posts or recover lost work.
# A tick that could not run in time is dropped: the next one does the same work.
BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "posts.dispatch_due": {
        "task": "posts.dispatch_due",
        "schedule": settings.PUBLISH_DISPATCH_INTERVAL_SECONDS,
        "options": {"queue": "default", "expires": max(settings.PUBLISH_DISPATCH_INTERVAL_SECONDS * 2, 2.0)},
    },
    "posts.sweep": {
        "task": "posts.sweep",
        "schedule": settings.PUBLISH_SWEEP_INTERVAL_SECONDS,
        "options": {"queue": "default", "expires": max(settings.PUBLISH_SWEEP_INTERVAL_SECONDS * 2, 10.0)},
    },
    # A recurring series left ACTIVE without its upcoming post (a failed hook) gets it back.
    "posts.repair_stalled_series": {
        "task": "posts.repair_stalled_series",
        "schedule": 60.0,
        "options": {"queue": "default", "expires": 120.0},
    },
}
