"""Periodic tasks of the webhooks app (merged by config/celery.py)."""

BEAT_SCHEDULE = {
    "webhooks.sweep": {"task": "webhooks.sweep", "schedule": 30.0},
}
