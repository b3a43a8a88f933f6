"""Celery tasks of the webhooks app: thin wrappers, ids in, idempotent."""

from __future__ import annotations

from celery import shared_task

from webhooks.delivery.engine import deliveries_attempt, deliveries_sweep, delivery_attempt


@shared_task(name="webhooks.deliver", acks_late=True, ignore_result=True)
def deliver(delivery_id: str) -> None:
    """One attempt of a delivery; a second run (or a run before it is due) sends nothing."""
    delivery_attempt(delivery_id=delivery_id)


@shared_task(name="webhooks.deliver_many", acks_late=True, ignore_result=True)
def deliver_many(delivery_ids: list[str]) -> None:
    """One attempt of each of several deliveries, sent side by side; idempotent like ``deliver``."""
    deliveries_attempt(delivery_ids=list(delivery_ids))


@shared_task(name="webhooks.sweep", ignore_result=True)
def sweep() -> None:
    """Re-enqueue overdue deliveries whose task was lost."""
    deliveries_sweep()
