"""Periodic tasks of the posts app, merged into the beat schedule by config/celery.py.
Both are safe if beat briefly runs twice (SKIP LOCKED claims; fenced sweeper writes)."""

from __future__ import annotations

from typing import Any

from posts.pipeline import config

BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "posts.dispatch_due": {
        "task": "posts.dispatch_due",
        "schedule": config.dispatch_interval_seconds(),
        # A tick that could not run in time is useless: the next one claims the same posts.
        "options": {"expires": max(config.dispatch_interval_seconds() * 2, 1.0)},
    },
    "posts.sweep": {
        "task": "posts.sweep",
        "schedule": config.sweep_interval_seconds(),
        "options": {"expires": config.sweep_interval_seconds()},
    },
}
