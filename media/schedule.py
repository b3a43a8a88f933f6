BEAT_SCHEDULE = {
    "media.collect_garbage": {"task": "media.collect_garbage", "schedule": 900.0},
    # Lists the whole store, so less often; an orphan waits a day (ORPHAN_GRACE) anyway.
    "media.collect_orphans": {"task": "media.collect_orphans", "schedule": 6 * 3600.0},
    "media.resume_image_jobs": {"task": "media.resume_image_jobs", "schedule": 300.0},
}
