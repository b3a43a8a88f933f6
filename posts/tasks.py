"""Thin Celery wrappers of the publishing pipeline: ids in, one pipeline call each. Every task is
idempotent: it claims its rows before acting, so a duplicate or late delivery changes nothing."""

from __future__ import annotations

from celery import shared_task

from posts.pipeline.after_publishing import run_actions
from posts.pipeline.dispatcher import dispatch_due
from posts.pipeline.first_comment import send_first_comments
from posts.pipeline.publisher import publish_targets
from posts.pipeline.sweeper import sweep
from posts.recurrence.services import series_repair_stalled


@shared_task(name="posts.publish_targets", ignore_result=True)
def publish_targets_task(target_ids: list[str]) -> int:
    """One attempt of each due target among ``target_ids``, sent side by side (one is a batch of one)."""
    return publish_targets(list(target_ids))


@shared_task(name="posts.publish_target", ignore_result=True)
def publish_target_task(target_id: str) -> int:
    """Alias kept registered for messages queued before every publish became a batch (nothing sends
    this name any more): the same path as ``posts.publish_targets`` with a batch of one."""
    return publish_targets([target_id])


@shared_task(name="posts.send_first_comments", ignore_result=True)
def send_first_comments_task(target_ids: list[str]) -> int:
    """The first comment of each due entry among ``target_ids``, claimed before it is sent."""
    return send_first_comments(list(target_ids))


@shared_task(name="posts.run_platform_actions", ignore_result=True)
def run_platform_actions_task(action_ids: list[str]) -> int:
    """Each due edit or delete among ``action_ids`` (after publishing), claimed before it is sent."""
    return run_actions(list(action_ids))


@shared_task(name="posts.dispatch_due", ignore_result=True)
def dispatch_due_task() -> int:
    return dispatch_due()


@shared_task(name="posts.sweep", ignore_result=True)
def sweep_task() -> None:
    sweep()


@shared_task(name="posts.repair_stalled_series", ignore_result=True)
def repair_stalled_series_task() -> int:
    return series_repair_stalled()
