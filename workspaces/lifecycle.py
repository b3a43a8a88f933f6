"""Workspaces made, changed, deleted and restored through the API by an organization key, and
the deletion job.

Deleting a workspace is a two-step job (a :class:`~workspaces.models.WorkspaceDeletion`):

1. At once, in the request's transaction: the workspace is marked deleted (every call in it is
   refused with 403 ``workspace_inactive`` from then on, its keys included, in every process:
   ``key_cache.keys_changed``) and step one is queued after commit.
2. Step one (:func:`workspace_deactivate`, task ``workspaces.deactivate_workspace``): its series
   paused, its scheduled posts unscheduled (back to undated drafts: nothing is sent), then its
   accounts disconnected as ``DELETE /social-accounts/{id}`` does. One transaction, under the deletion's row lock; a
   second run, or a run after a restore, does nothing. The beat task runs it again for a job
   whose task was lost.
3. Until ``purge_after`` (``WORKSPACE_DELETION_GRACE_DAYS``, default 30 days) the organization may
   restore the workspace (:func:`workspace_restore`): it is active again, its keys work again,
   its accounts must be connected again and its series resumed. After it, the beat task
   (:func:`workspaces_purge`) deletes every row of the workspace in bounded batches, each its
   own transaction (``workspaces.purge``), then the workspace; the job is kept, so that its
   status URL answers ``purged``.

Each change is recorded in the audit log in its own transaction."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.disconnect import workspace_accounts_disconnect
from audit.actors import Actor, system_actor
from audit.services import record
from core.errors import Conflict, NotFound
from posts.models import Post, PostStatus, RecurringPost, RecurringStatus
from posts.recurrence.services import series_pause
from posts.services.transitions import post_unschedule
from workspaces import key_cache
from workspaces.models import DeletionStatus, Organization, Workspace, WorkspaceDeletion
from workspaces.plans import WORKSPACES, require_within
from workspaces.purge import workspace_rows_purge

logger = logging.getLogger(__name__)

DEACTIVATE_TASK = "workspaces.deactivate_workspace"
OPEN = (DeletionStatus.PENDING, DeletionStatus.DEACTIVATED)
# A pending job older than this is run again by the beat task (its task was lost).
LOST_AFTER = dt.timedelta(minutes=2)


def workspace_of(*, organization: Organization, workspace_id: str, for_update: bool = False) -> Workspace:
    """The workspace of the organization (deleted or not); 404 otherwise, alike for another
    organization's and for none."""
    workspaces = Workspace.objects.select_for_update() if for_update else Workspace.objects
    workspace = workspaces.filter(pk=workspace_id, organization_id=organization.id).first()
    if workspace is None:
        raise NotFound("Workspace not found")
    workspace.organization = organization
    return workspace


def require_active(workspace: Workspace) -> None:
    """409 ``workspace_inactive`` for a deleted workspace (nothing is made in it until restored)."""
    if workspace.deleted_at is not None:
        raise Conflict("This workspace is deleted; restore it first", code="workspace_inactive")


def _conflict(exc: IntegrityError) -> Conflict:
    if "external_id" in str(exc):
        return Conflict("A workspace with this externalId already exists in the organization", code="conflict")
    return Conflict("A workspace with this name already exists in the organization", code="conflict")


def _audit(workspace: Workspace, action: str, actor: Actor, changes: dict[str, Any] | None = None) -> None:
    record(
        actor=actor,
        action=action,
        organization_id=workspace.organization_id,
        workspace_id=workspace.id,
        target_type="workspace",
        target_id=workspace.id,
        changes=changes,
    )


def workspace_create(
    *, organization: Organization, name: str, external_id: str | None, metadata: dict[str, Any], actor: Actor
) -> Workspace:
    """A new workspace of ``organization``. 409 ``conflict`` when the name or the ``external_id`` is
    taken in the organization (never for another organization's); 403 ``subscription_required``
    past the plan's workspace limit (exact under concurrency). Recorded in the audit log."""
    try:
        with transaction.atomic():
            require_within(WORKSPACES, organization_id=organization.id)
            workspace = Workspace.objects.create(
                organization=organization, name=name, external_id=external_id, metadata=metadata
            )
            _audit(workspace, "workspace.create", actor, {"name": name, "externalId": external_id})
    except IntegrityError as exc:
        raise _conflict(exc) from exc
    workspace.organization = organization
    return workspace


def workspace_update(
    *, organization: Organization, workspace_id: str, changes: dict[str, Any], actor: Actor
) -> Workspace:
    """Change name, ``external_id`` and/or metadata (those given). 409 for a taken name or external
    id, and for a deleted workspace (restore it first). Recorded in the audit log with the old and
    new values."""
    try:
        with transaction.atomic():
            workspace = workspace_of(organization=organization, workspace_id=workspace_id, for_update=True)
            require_active(workspace)
            before = {name: getattr(workspace, name) for name in changes}
            for name, value in changes.items():
                setattr(workspace, name, value)
            workspace.save()
            _audit(workspace, "workspace.update", actor, {"before": before, "after": changes})
    except IntegrityError as exc:
        raise _conflict(exc) from exc
    return workspace


def _open_deletion(workspace_id: str) -> WorkspaceDeletion | None:
    return WorkspaceDeletion.objects.filter(workspace_ref=workspace_id, status__in=OPEN).first()


def _enqueue_deactivation(deletion_id: str) -> None:
    current_app.send_task(DEACTIVATE_TASK, args=[deletion_id])


@transaction.atomic
def workspace_delete(*, organization: Organization, workspace_id: str, actor: Actor) -> WorkspaceDeletion:
    """Request the workspace's deletion: it is inactive at once and step one is queued after
    commit (see the module). Idempotent: deleting a deleted workspace answers its open job."""
    workspace = workspace_of(organization=organization, workspace_id=workspace_id, for_update=True)
    existing = _open_deletion(workspace.id)
    if workspace.deleted_at is not None and existing is not None:
        return existing
    now = timezone.now()
    deletion = WorkspaceDeletion.objects.create(
        organization=organization,
        workspace=workspace,
        workspace_ref=workspace.id,
        requested_at=now,
        purge_after=now + dt.timedelta(days=settings.WORKSPACE_DELETION_GRACE_DAYS),
    )
    Workspace.objects.filter(pk=workspace.pk).update(deleted_at=now)
    key_cache.keys_changed()  # its keys are refused in every process from now on
    _audit(workspace, "workspace.delete", actor, {"deletionId": deletion.id, "purgeAfter": deletion.purge_after})
    transaction.on_commit(lambda: _enqueue_deactivation(deletion.id), robust=True)
    return deletion


@transaction.atomic
def workspace_restore(*, organization: Organization, workspace_id: str, actor: Actor) -> Workspace:
    """Make a deleted workspace active again before its grace period ends (409
    ``restore_period_over`` after; 403 ``subscription_required`` when the plan's workspace limit
    is reached meanwhile). Its keys work again; accounts disconnected by step one must be
    connected again, and paused series resumed. Restoring an active workspace changes nothing."""
    workspace = workspace_of(organization=organization, workspace_id=workspace_id, for_update=True)
    if workspace.deleted_at is None:
        return workspace
    deletion = WorkspaceDeletion.objects.select_for_update().filter(workspace_ref=workspace.id, status__in=OPEN).first()
    now = timezone.now()
    if deletion is not None and deletion.purge_after <= now:
        raise Conflict(
            "The grace period of this deletion is over; the workspace cannot be restored", code="restore_period_over"
        )
    require_within(WORKSPACES, organization_id=organization.id)
    if deletion is not None:
        deletion.status, deletion.restored_at = DeletionStatus.RESTORED, now
        deletion.save(update_fields=["status", "restored_at"])
    workspace.deleted_at = None
    workspace.save(update_fields=["deleted_at", "updated_at"])
    _audit(workspace, "workspace.restore", actor, {"deletionId": deletion.id if deletion else None})
    return workspace


@transaction.atomic
def workspace_deactivate(*, deletion_id: str) -> bool:
    """Step one of a deletion (see the module): pause, unschedule, disconnect. Only a PENDING job
    whose workspace is still deleted is acted on; True when this call did it."""
    deletion = WorkspaceDeletion.objects.select_for_update().filter(pk=deletion_id).first()
    if deletion is None or deletion.status != DeletionStatus.PENDING or deletion.workspace_id is None:
        return False
    workspace_id = deletion.workspace_id
    # Series and scheduled posts first: disconnecting an account fails its posts' unsent entries
    # and pauses its series as CONNECTION_REMOVED, so disconnecting first would fail every
    # scheduled post (post.failed) instead of keeping it as a draft to find after a restore.
    active_series = RecurringPost.objects.filter(workspace_id=workspace_id, status=RecurringStatus.ACTIVE)
    series_ids = list(active_series.order_by("id").values_list("id", flat=True))
    for series_id in series_ids:
        series_pause(workspace_id=workspace_id, series_id=series_id)
    deletion.series_stopped = len(series_ids)
    scheduled = Post.objects.filter(workspace_id=workspace_id, status=PostStatus.SCHEDULED)
    post_ids = list(scheduled.order_by("id").values_list("id", flat=True))
    for post_id in post_ids:
        post_unschedule(workspace_id=workspace_id, post_id=post_id)
    deletion.posts_cancelled = len(post_ids)
    deletion.accounts_disconnected = workspace_accounts_disconnect(
        workspace_id=workspace_id, actor=system_actor("workspace deletion")
    )
    deletion.status, deletion.deactivated_at = DeletionStatus.DEACTIVATED, timezone.now()
    deletion.save()
    return True


def workspaces_purge(*, now: dt.datetime | None = None) -> int:
    """The beat task's work: run step one again for jobs whose task was lost, then purge every
    workspace whose grace period is over (:func:`workspace_purge`, one after the other; one that
    fails does not keep the others waiting, and its error is raised once they are done). Running
    it twice deletes nothing more. Returns how many workspaces were purged."""
    now = now or timezone.now()
    lost = WorkspaceDeletion.objects.filter(status=DeletionStatus.PENDING, requested_at__lte=now - LOST_AFTER)
    for deletion_id in list(lost.values_list("id", flat=True)):
        workspace_deactivate(deletion_id=deletion_id)
    due = WorkspaceDeletion.objects.filter(status=DeletionStatus.DEACTIVATED, purge_after__lte=now)
    purged, failures = 0, []
    for deletion_id in list(due.order_by("purge_after").values_list("id", flat=True)):
        try:
            purged += int(workspace_purge(deletion_id=deletion_id, now=now))
        except Exception as exc:
            logger.exception("workspace purge %s failed; the next run resumes it", deletion_id)
            failures.append(exc)
    if failures:
        raise failures[0]
    return purged


def workspace_purge(*, deletion_id: str, now: dt.datetime) -> bool:
    """Step two of a deletion whose grace period is over: the workspace's rows removed in
    bounded batches, each its own transaction (``workspaces.purge``), then the workspace itself
    with whatever appeared meanwhile, the job marked ``purged`` and the purge recorded in the
    audit log, in one short transaction. Until that last step the job stays ``deactivated``
    (it can no longer be restored: its grace period is over), so a purge that dies midway is
    finished by the next run. True when this call marked it purged; a second call does nothing."""
    workspace_id = _purgeable(deletion_id, now=now)
    if workspace_id is None:
        return False
    workspace_rows_purge(workspace_id=workspace_id, batch_size=settings.WORKSPACE_PURGE_BATCH_SIZE)
    return _purge_finish(deletion_id, now=now)


def _purgeable(deletion_id: str, *, now: dt.datetime) -> str | None:
    """The id of the workspace of a due job whose rows may be removed; None when the job is not due
    (or no longer open). An active workspace's rows are never removed."""
    deletion = WorkspaceDeletion.objects.filter(pk=deletion_id).first()
    if deletion is None or deletion.status != DeletionStatus.DEACTIVATED or deletion.purge_after > now:
        return None
    if Workspace.objects.filter(pk=deletion.workspace_ref, deleted_at__isnull=True).exists():
        return None
    return deletion.workspace_ref


@transaction.atomic
def _purge_finish(deletion_id: str, *, now: dt.datetime) -> bool:
    deletion = WorkspaceDeletion.objects.select_for_update().filter(pk=deletion_id).first()
    if deletion is None or deletion.status != DeletionStatus.DEACTIVATED or deletion.purge_after > now:
        return False
    workspace = Workspace.objects.select_for_update().filter(pk=deletion.workspace_ref).first()
    if workspace is not None and workspace.deleted_at is not None:
        record(
            actor=system_actor("workspaces.purge_deleted"),
            action="workspace.purge",
            organization_id=deletion.organization_id,
            workspace_id=workspace.id,
            target_type="workspace",
            target_id=workspace.id,
            changes={"deletionId": deletion.id, "name": workspace.name},
        )
        workspace.delete()  # its rows are gone by now: only those made since the batches ran cascade
    deletion.status, deletion.purged_at = DeletionStatus.PURGED, now
    deletion.save(update_fields=["status", "purged_at"])
    return True
