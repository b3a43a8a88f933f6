"""Celery tasks of the webhooks app: thin wrappers, ids in, idempotent."""

from __future__ import annotations

from celery import shared_task

from webhooks.delivery.engine import deliveries_attempt, deliveries_sweep
from webhooks.services import events_prune


@shared_task(name="webhooks.deliver_many", acks_late=True, ignore_result=True)
def deliver_many(delivery_ids: list[str]) -> None:
    """A wake-up call for these deliveries: the next attempt of the oldest due deliveries, up to a
    batch (these, or older ones first when the queue is behind), sent side by side; a second run, or
    a run before they are due, sends nothing of these."""
    deliveries_attempt(delivery_ids=list(delivery_ids), any_due=True)


@shared_task(name="webhooks.deliver", acks_late=True, ignore_result=True)
def deliver(delivery_id: str) -> None:
    """Alias kept registered for messages queued before every delivery became a batch (nothing
    sends this name any more): the same path as ``webhooks.deliver_many`` with a batch of one."""
    deliveries_attempt(delivery_ids=[delivery_id])


@shared_task(name="webhooks.sweep", ignore_result=True)
def sweep() -> None:
    """Re-enqueue overdue deliveries whose task was lost."""
    deliveries_sweep()


@shared_task(name="webhooks.prune_events", ignore_result=True)
def prune_events() -> None:
    """Delete events past the feed's retention window; a second run deletes nothing more."""
    events_prune()
