"""Celery tasks of the audit app: thin wrappers, idempotent."""

from __future__ import annotations

from celery import shared_task

from audit.services import audit_events_prune


@shared_task(name="audit.prune_events", ignore_result=True)
def prune_events() -> None:
    """Delete audit events past AUDIT_RETENTION_DAYS; a second run deletes nothing more."""
    audit_events_prune()
