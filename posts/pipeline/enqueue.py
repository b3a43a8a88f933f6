"""The one way publishing work is queued. Call it from ``transaction.on_commit`` only.

A queued task is only a wake-up call: the database row (status PENDING, ``next_attempt_at``) is the
source of truth, the task claims it before acting, and the sweeper re-queues work whose task was
lost. So queueing twice is harmless and losing a message only delays."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from config.celery import QUEUE_BY_APP, app

logger = logging.getLogger(__name__)

PUBLISH_TARGET = "posts.publish_target"
PUBLISH_TARGETS = "posts.publish_targets"
PUBLISH_QUEUE = QUEUE_BY_APP["posts"]


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


def publish_backlog() -> int:
    """Messages waiting in the publish queue of the broker (0 when the broker cannot tell)."""
    try:
        with app.connection_for_read() as connection:
            client = getattr(connection.default_channel, "client", None)
            return int(client.llen(PUBLISH_QUEUE)) if client is not None else 0
    except Exception:  # the broker is down: whatever it held is gone, so nothing is waiting
        logger.warning("could not read the length of the %s queue", PUBLISH_QUEUE, exc_info=True)
        return 0
