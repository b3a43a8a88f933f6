"""Periodic tasks of the audit app (merged by config/celery.py)."""

BEAT_SCHEDULE = {
    "audit.prune_events": {"task": "audit.prune_events", "schedule": 3600.0},
}
