BEAT_SCHEDULE = {
    "media.collect_garbage": {"task": "media.collect_garbage", "schedule": 900.0},
    "media.resume_image_jobs": {"task": "media.resume_image_jobs", "schedule": 300.0},
}
