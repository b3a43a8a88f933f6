"""The media tasks are registered under their names and beat runs the lifecycle sweep and the
image-job resumer; the webhooks sweeper is scheduled and its tasks go to the webhooks queue."""

from __future__ import annotations

from config.celery import app, collect_beat_schedule, route_task


def test_media_and_webhook_tasks_are_registered_scheduled_and_routed() -> None:
    app.loader.import_default_modules()
    for name in (
        "media.make_preview",
        "media.collect_garbage",
        "media.generate_image",
        "media.resume_image_jobs",
        "media.collect_orphans",
    ):
        assert name in app.tasks
        assert route_task(name, (), {}, {}) == {"queue": "default"}
    for name in ("webhooks.deliver", "webhooks.deliver_many", "webhooks.sweep"):
        assert name in app.tasks
        assert route_task(name, (), {}, {}) == {"queue": "webhooks"}
    schedule = collect_beat_schedule()
    assert schedule["media.collect_garbage"]["task"] == "media.collect_garbage"
    assert schedule["media.collect_garbage"]["schedule"] <= 3600
    assert schedule["media.collect_orphans"]["task"] == "media.collect_orphans"
    assert schedule["media.resume_image_jobs"]["task"] == "media.resume_image_jobs"
    assert schedule["webhooks.sweep"]["task"] == "webhooks.sweep"
    assert schedule["webhooks.sweep"]["schedule"] <= 60
