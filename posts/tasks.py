"""Thin Celery wrappers of the publishing pipeline: ids in, one pipeline call each. Every task is
idempotent: it claims its rows before acting, so a duplicate or late delivery changes nothing."""

from __future__ import annotations

from celery import shared_task

from posts.pipeline.dispatcher import dispatch_due
from posts.pipeline.publisher import publish_targets
from posts.pipeline.sweeper import sweep


@shared_task(name="posts.publish_target", ignore_result=True)
def publish_target_task(target_id: str) -> int:
    return publish_targets([target_id])


@shared_task(name="posts.publish_targets", ignore_result=True)
def publish_targets_task(target_ids: list[str]) -> int:
    return publish_targets(list(target_ids))


@shared_task(name="posts.dispatch_due", ignore_result=True)
def dispatch_due_task() -> int:
    return dispatch_due()


@shared_task(name="posts.sweep", ignore_result=True)
def sweep_task() -> None:
    sweep()


@shared_task(name="posts.repair_stalled_series", ignore_result=True)
def repair_stalled_series_task() -> int:
    from posts.recurrence.services import series_repair_stalled

    return series_repair_stalled()
