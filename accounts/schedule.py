"""Periodic tasks of the accounts app (merged into the beat schedule by config/celery.py)."""

from __future__ import annotations

from typing import Any

from celery.schedules import crontab

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "accounts.check_facebook_pages": {
        "task": "accounts.check_facebook_pages",
        "schedule": crontab(minute=17, hour="5,17"),  # twice a day
    },
    "accounts.purge_expired_connect_links": {
        "task": "accounts.purge_expired_connect_links",
        "schedule": crontab(minute=41, hour=3),  # daily
    },
    "accounts.refresh_expiring_tokens": {
        "task": "accounts.refresh_expiring_tokens",
        "schedule": 300.0,  # every 5 minutes; tokens are refreshed up to 30 minutes ahead
    },
}
