"""Periodic tasks of the workspaces app (merged by config/celery.py)."""

BEAT_SCHEDULE = {
    "workspaces.purge_deleted": {"task": "workspaces.purge_deleted", "schedule": 300.0},
}
