"""The one way publishing work is queued. Call it from ``transaction.on_commit`` only.

A queued task is only a wake-up call: the database row (status PENDING, ``next_attempt_at``) is the
source of truth, the task claims it before acting, and the sweeper re-queues work whose task was
lost. So queueing twice is harmless and losing a message only delays."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from celery import current_app as app
from django.conf import settings

logger = logging.getLogger(__name__)

PUBLISH_TARGETS = "posts.publish_targets"
# The queue config.celery routes this app's tasks to (QUEUE_BY_APP["posts"]).
PUBLISH_QUEUE = "publish"
SEND_FIRST_COMMENTS = "posts.send_first_comments"
RUN_PLATFORM_ACTIONS = "posts.run_platform_actions"


def enqueue_targets(target_ids: Iterable[str], *, countdown: float | None = None) -> None:
    """``posts.publish_targets`` tasks of up to ``PUBLISH_TASK_BATCH`` targets each (one target is
    a batch of one): fewer broker round trips when thousands of targets fall due at once, and the
    targets of one task are sent side by side."""
    ids = list(target_ids)
    size = settings.PUBLISH_TASK_BATCH
    for start in range(0, len(ids), size):
        app.send_task(PUBLISH_TARGETS, args=[ids[start : start + size]], countdown=_countdown(countdown))


def enqueue_first_comments(target_ids: Iterable[str], *, countdown: float | None = None) -> None:
    """``posts.send_first_comments`` tasks (batches as :func:`enqueue_targets`): a wake-up call
    only; the task claims each comment before sending it."""
    ids = list(target_ids)
    size = settings.PUBLISH_TASK_BATCH
    for start in range(0, len(ids), size):
        app.send_task(SEND_FIRST_COMMENTS, args=[ids[start : start + size]], countdown=_countdown(countdown))


def enqueue_actions(action_ids: Iterable[str], *, countdown: float | None = None) -> None:
    """``posts.run_platform_actions`` tasks (edits and deletes after publishing, batches as
    :func:`enqueue_targets`): a wake-up call only; the task claims each action before sending it."""
    ids = list(action_ids)
    size = settings.PUBLISH_TASK_BATCH
    for start in range(0, len(ids), size):
        app.send_task(RUN_PLATFORM_ACTIONS, args=[ids[start : start + size]], countdown=_countdown(countdown))


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
