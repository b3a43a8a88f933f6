"""The one way publishing work is queued. Call it from ``transaction.on_commit`` only.

A queued task is only a wake-up call: the database row (status PENDING, ``next_attempt_at``) is the
source of truth, the task claims it before acting, and the sweeper re-queues work whose task was
lost. So queueing twice is harmless and losing a message only delays."""

from __future__ import annotations

from collections.abc import Iterable

from config.celery import app

PUBLISH_TARGET = "posts.publish_target"
PUBLISH_TARGETS = "posts.publish_targets"


def enqueue_targets(target_ids: Iterable[str], *, countdown: float | None = None) -> None:
    """One ``posts.publish_target`` task per target."""
    for target_id in target_ids:
        app.send_task(PUBLISH_TARGET, args=[target_id], countdown=_countdown(countdown))


def enqueue_target_batches(target_ids: list[str], *, batch_size: int, countdown: float | None = None) -> None:
    """``posts.publish_targets`` tasks of up to ``batch_size`` targets each (same claim rules):
    fewer broker round trips when thousands of targets fall due at once."""
    if batch_size <= 1:
        enqueue_targets(target_ids, countdown=countdown)
        return
    for start in range(0, len(target_ids), batch_size):
        chunk = target_ids[start : start + batch_size]
        if len(chunk) == 1:
            app.send_task(PUBLISH_TARGET, args=[chunk[0]], countdown=_countdown(countdown))
        else:
            app.send_task(PUBLISH_TARGETS, args=[chunk], countdown=_countdown(countdown))


def _countdown(countdown: float | None) -> float | None:
    return countdown if countdown and countdown > 0 else None
