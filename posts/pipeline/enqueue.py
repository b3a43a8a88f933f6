"""The one way publishing work is queued. Call it from ``transaction.on_commit`` only."""

from __future__ import annotations

from collections.abc import Iterable

from config.celery import app


def enqueue_targets(target_ids: Iterable[str], *, countdown: float | None = None) -> None:
    for target_id in target_ids:
        app.send_task("posts.publish_target", args=[target_id], countdown=countdown)
