"""Celery tasks of the workspaces app: thin wrappers, ids in, idempotent."""

from __future__ import annotations

from celery import shared_task

from workspaces.lifecycle import workspace_deactivate, workspaces_purge


@shared_task(name="workspaces.deactivate_workspace", acks_late=True, ignore_result=True)
def deactivate_workspace(deletion_id: str) -> None:
    """Step one of a workspace deletion; a second run (or one after a restore) does nothing."""
    workspace_deactivate(deletion_id=deletion_id)


@shared_task(name="workspaces.purge_deleted", ignore_result=True)
def purge_deleted() -> None:
    """Remove the workspaces whose grace period is over (and redo lost step ones); a second run
    removes nothing more."""
    workspaces_purge()
