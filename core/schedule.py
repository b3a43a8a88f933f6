BEAT_SCHEDULE = {
    "core.purge_idempotency_records": {"task": "core.purge_idempotency_records", "schedule": 3600.0},
}
