"""Celery tasks of the webhooks app: thin wrappers, ids in, idempotent."""

from __future__ import annotations

from celery import shared_task

from webhooks.delivery.engine import deliveries_sweep, delivery_attempt


@shared_task(name="webhooks.deliver", acks_late=True, ignore_result=True)
def deliver(delivery_id: str) -> None:
    """One attempt of a delivery; a second run (or a run before it is due) sends nothing."""
    delivery_attempt(delivery_id=delivery_id)


@shared_task(name="webhooks.sweep", ignore_result=True)
def sweep() -> None:
    """Re-enqueue overdue deliveries whose task was lost."""
    deliveries_sweep()
