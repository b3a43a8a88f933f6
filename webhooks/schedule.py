"""Periodic tasks of the webhooks app (merged by config/celery.py)."""

BEAT_SCHEDULE = {
    "webhooks.sweep": {"task": "webhooks.sweep", "schedule": 30.0},
    "webhooks.prune_events": {"task": "webhooks.prune_events", "schedule": 3600.0},
}
