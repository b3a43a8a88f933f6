"""The purge of a deleted workspace removes its rows in bounded batches, each its own
transaction, children first (``workspaces.purge``): nothing of another workspace is touched, a
purge that dies midway is finished by the next run, and a second run deletes nothing more."""

from __future__ import annotations

import datetime as dt
import secrets
from typing import Any

import pytest
from django.db import models
from django.utils import timezone

from accounts.models import ConnectAttempt, ConnectBranding, PostingQueue, QueueSlot
from analytics.models import AccountSyncState
from audit.actors import system_actor
from audit.models import AuditEvent
from core.models import IdempotencyRecord
from engagement.models import CommentAction, CommentSource
from media.models import AiUsage, MediaVariant
from posts.models import Post, PostRecord, PostTarget, PostTargetAction, RecurringPost
from tests.factories import MembershipFactory, OrganizationFactory, WorkspaceFactory
from tests.factories.accounts import SocialAccountFactory, make_connect_link
from tests.factories.analytics import FollowerSnapshotFactory, TrackedPostFactory
from tests.factories.engagement import CommentFactory
from tests.factories.media import AiImageJobFactory, MediaFileFactory
from tests.factories.posts import PostFactory, PostTargetFactory
from tests.factories.webhooks import WebhookFactory
from webhooks.events import emit_event
from webhooks.models import Attempt, Delivery
from workspaces import purge
from workspaces.lifecycle import workspace_deactivate, workspace_delete, workspaces_purge
from workspaces.models import DeletionStatus, MonthlyUsage, Workspace, WorkspaceDeletion
from workspaces.services import api_key_create

pytestmark = pytest.mark.django_db

ROWS = 3  # of each kind, one more than a batch: every table takes two batches
BATCH = 2


def _fill(workspace: Workspace) -> None:
    """Rows of the workspace in every table the purge plan names (at least one each; most ROWS)."""
    now = timezone.now()
    accounts = [SocialAccountFactory(workspace=workspace, platform="FACEBOOK") for _ in range(ROWS)]
    for index, account in enumerate(accounts):
        queue = PostingQueue.objects.create(account=account, timezone="UTC")
        for hour in range(ROWS):
            QueueSlot.objects.create(queue=queue, weekday=index, local_time=dt.time(hour, 0))
        AccountSyncState.objects.create(workspace=workspace, account=account)
        FollowerSnapshotFactory(account=account, day=dt.date(2026, 8, 1) + dt.timedelta(days=index), count=10)
    link, _ = make_connect_link(workspace)
    for _ in range(ROWS):
        make_connect_link(workspace)
        ConnectAttempt.objects.create(
            link=link, platform="MASTODON", nonce=secrets.token_hex(8), expires_at=now + dt.timedelta(hours=1)
        )
    files = [MediaFileFactory(workspace=workspace) for _ in range(ROWS)]
    ConnectBranding.objects.create(workspace=workspace, logo=files[0])
    for index, file in enumerate(files):
        MediaVariant.objects.create(
            workspace=workspace, original=file, platform="INSTAGRAM", post_type=f"T{index}", output=files[-1 - index]
        )
        AiImageJobFactory(workspace=workspace, media_file=file)
    keys = [api_key_create(workspace=workspace, name=f"k{n}", role="viewer").api_key for n in range(ROWS)]
    for n, key in enumerate(keys):
        AiUsage.objects.create(
            workspace=workspace, month=dt.date(2026, 8, 1), kind="image", member=f"key:{n}", api_key=key
        )
        MembershipFactory(workspace=workspace)
        MonthlyUsage.objects.create(workspace=workspace, month=dt.date(2026, 1 + n, 1), posts=n)
        IdempotencyRecord.objects.create(
            workspace_id=workspace.id, key=f"idem-{n}", fingerprint="f", expires_at=now + dt.timedelta(days=1)
        )
    series = RecurringPost.objects.create(
        workspace=workspace, frequency="DAILY", starts_at=now + dt.timedelta(days=1), timezone="UTC"
    )
    for n in range(ROWS):
        post = PostFactory(workspace=workspace, recurring_post=series if n == 0 else None)
        PostRecord.objects.create(post=post, stamp="s", body="{}")
        for account in accounts:
            target = PostTargetFactory(post=post, platform="FACEBOOK", account=account)
            PostTargetAction.objects.create(target=target, request_id=f"req{n}", kind="EDIT")
            TrackedPostFactory(account=account, target_id=target.id)
            comment = CommentFactory(target=target, workspace=workspace, account=account, post=post)
            CommentSource.objects.create(workspace=workspace, account=account, platform="FACEBOOK", target=target)
            CommentAction.objects.create(workspace=workspace, comment=comment, kind="HIDE")
    webhooks = [WebhookFactory(workspace=workspace) for _ in range(ROWS)]
    for n in range(ROWS):
        emit_event(workspace_id=workspace.id, name="post.published", data={"post": {"id": f"post_{n}"}})
    for delivery in Delivery.objects.filter(webhook__in=webhooks):
        Attempt.objects.create(delivery=delivery, duration_ms=5, created_at=now)


def _rows(workspace_id: str) -> dict[str, set[Any]]:
    """The workspace's rows in each table of the plan (their primary keys), along every lookup."""
    found: dict[str, set[Any]] = {}
    for step in purge.purge_plan():
        for lookup in step.lookups:
            pks = set(step.model._base_manager.filter(**{lookup: workspace_id}).values_list("pk", flat=True))
            found.setdefault(step.model._meta.label, set()).update(pks)
    return found


def _due(workspace: Workspace) -> WorkspaceDeletion:
    deletion = workspace_delete(
        organization=workspace.organization, workspace_id=workspace.id, actor=system_actor("test")
    )
    assert workspace_deactivate(deletion_id=deletion.id) is True
    WorkspaceDeletion.objects.filter(pk=deletion.pk).update(purge_after=timezone.now() - dt.timedelta(seconds=1))
    return deletion


@pytest.fixture
def batches(settings: Any) -> None:
    settings.WORKSPACE_PURGE_BATCH_SIZE = BATCH


def test_the_plan_covers_every_table_holding_a_workspaces_rows_children_first() -> None:
    plan = purge.purge_plan()
    order = [step.model for step in plan]
    position = {model: index for index, model in enumerate(order)}
    assert len(set(order)) == len(order)
    for model in order:
        for field in model._meta.concrete_fields:
            target = field.related_model if field.is_relation else None
            if target in position and target is not model:
                # Whatever the key's on_delete: a batch of parents cascades into, or nulls, no child.
                assert position[model] < position[target], (model._meta.label, field.name, target._meta.label)
    assert position[Post] < position[RecurringPost] and position[PostTarget] < position[Post]
    lookups = {step.model: step.lookups for step in plan}
    assert lookups[Delivery] == ("webhook__workspace", "event__workspace")
    assert lookups[PostTargetAction] == ("target__post__workspace",)
    # The tables keyed by the workspace's id without a foreign key come last (the rollups after
    # the tracked posts whose triggers write them); the audit log and the deletion jobs are kept.
    assert [step.lookups for step in plan[-2:]] == [("workspace_id",), ("workspace_id",)]
    assert {step.model._meta.label for step in plan[-2:]} == {
        "analytics.AnalyticsDailyRollup",
        "core.IdempotencyRecord",
    }
    assert AuditEvent not in position and WorkspaceDeletion not in position and Workspace not in position


def test_a_workspace_is_purged_in_batches_and_another_is_untouched(
    batches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    organization = OrganizationFactory()
    victim, bystander = WorkspaceFactory(organization=organization), WorkspaceFactory(organization=organization)
    _fill(victim)
    _fill(bystander)
    before = _rows(victim.id)
    kept = _rows(bystander.id)
    empty = [label for label, pks in before.items() if not pks]
    assert not empty, f"the test fills no row of {empty}: add them to _fill"
    assert sum(len(pks) > BATCH for pks in before.values()) >= 20  # most tables take several batches
    deletion = _due(victim)

    calls: list[tuple[str, int]] = []
    original = purge.delete_batch

    def counted(model: type[models.Model], lookup: str, workspace_id: str, size: int) -> int:
        deleted = original(model, lookup, workspace_id, size)
        assert deleted <= size == BATCH
        calls.append((model._meta.label, deleted))
        return deleted

    monkeypatch.setattr(purge, "delete_batch", counted)
    assert workspaces_purge() == 1
    assert workspaces_purge() == 0  # run twice: nothing more
    assert len(calls) > len(before)  # several batches, and no batch on the second run
    assert sum(deleted for _, deleted in calls) == sum(len(pks) for pks in before.values())
    assert all(not pks for pks in _rows(victim.id).values())
    assert not Workspace.objects.filter(pk=victim.pk).exists()
    assert _rows(bystander.id) == kept
    assert Workspace.objects.get(pk=bystander.pk).deleted_at is None
    assert WorkspaceDeletion.objects.get(pk=deletion.pk).status == DeletionStatus.PURGED
    assert AuditEvent.objects.filter(action="workspace.purge", workspace_ref=victim.id).count() == 1


class Interrupted(Exception):
    pass


def test_a_purge_that_dies_after_its_first_batch_is_finished_by_the_next_run(
    batches: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim, bystander = WorkspaceFactory(), WorkspaceFactory()
    _fill(victim)
    _fill(bystander)
    before, kept = _rows(victim.id), _rows(bystander.id)
    deletion = _due(victim)
    original = purge.delete_batch
    done: list[int] = []

    def dies_after_one(*args: Any) -> int:
        if done:
            raise Interrupted("the worker died")
        done.append(original(*args))
        return done[-1]

    monkeypatch.setattr(purge, "delete_batch", dies_after_one)
    with pytest.raises(Interrupted):
        workspaces_purge()
    # The first batch committed on its own, and cascaded into nothing else; the job is still open.
    after_one = _rows(victim.id)
    assert done == [BATCH]
    assert sum(len(pks) for pks in before.values()) - sum(len(pks) for pks in after_one.values()) == BATCH
    assert WorkspaceDeletion.objects.get(pk=deletion.pk).status == DeletionStatus.DEACTIVATED
    assert Workspace.objects.filter(pk=victim.pk).exists()
    assert not AuditEvent.objects.filter(action="workspace.purge").exists()

    monkeypatch.setattr(purge, "delete_batch", original)
    assert workspaces_purge() == 1
    assert workspaces_purge() == 0
    assert all(not pks for pks in _rows(victim.id).values())
    assert _rows(bystander.id) == kept
    assert WorkspaceDeletion.objects.get(pk=deletion.pk).status == DeletionStatus.PURGED
    assert AuditEvent.objects.filter(action="workspace.purge", workspace_ref=victim.id).count() == 1


def test_one_failing_purge_keeps_no_other_waiting(batches: None, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = WorkspaceFactory(), WorkspaceFactory()
    SocialAccountFactory(workspace=first)
    SocialAccountFactory(workspace=second)
    failing, other = _due(first), _due(second)
    WorkspaceDeletion.objects.filter(pk=failing.pk).update(purge_after=timezone.now() - dt.timedelta(days=1))
    original = purge.delete_batch

    def refuses_the_first(model: type[models.Model], lookup: str, workspace_id: str, size: int) -> int:
        if workspace_id == first.id:
            raise Interrupted("a row that cannot be deleted")
        return original(model, lookup, workspace_id, size)

    monkeypatch.setattr(purge, "delete_batch", refuses_the_first)
    with pytest.raises(Interrupted):
        workspaces_purge()
    assert WorkspaceDeletion.objects.get(pk=other.pk).status == DeletionStatus.PURGED
    assert WorkspaceDeletion.objects.get(pk=failing.pk).status == DeletionStatus.DEACTIVATED
    assert Workspace.objects.filter(pk=first.pk).exists() and not Workspace.objects.filter(pk=second.pk).exists()


def test_an_active_workspaces_rows_are_never_purged(batches: None) -> None:
    """A job left open for a workspace active again (never through a restore, which closes it) purges nothing."""
    workspace = WorkspaceFactory()
    PostFactory(workspace=workspace)
    deletion = _due(workspace)
    Workspace.objects.filter(pk=workspace.pk).update(deleted_at=None)
    assert workspaces_purge() == 0
    assert Post.objects.filter(workspace=workspace).count() == 1
    assert WorkspaceDeletion.objects.get(pk=deletion.pk).status == DeletionStatus.DEACTIVATED
