BEAT_SCHEDULE = {
    "analytics.refresh_due": {"task": "analytics.refresh_due", "schedule": 900.0},
}
