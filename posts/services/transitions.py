"""State transitions of one post: delete, unschedule, publish (a draft), retry (failed entries).
Each runs in one transaction with the post row locked, so a transition never interleaves with
the dispatcher's claim or with another transition of the same post."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit.actors import Actor, system_actor
from audit.services import record
from core.errors import BadRequest, Conflict
from core.fields import format_instant
from platforms.base import Platform
from posts.models import (
    FINAL_POST_STATUSES,
    ActionStatus,
    Post,
    PostStatus,
    PostTarget,
    PostTargetAction,
    TargetStatus,
)
from posts.pipeline.enqueue import enqueue_targets
from posts.recurrence.services import upcoming_post_deleted, upcoming_post_sent_now, upcoming_post_unscheduled
from posts.selectors import post_get_for_update
from posts.services.creation import (
    DRAFT,
    NOW,
    SCHEDULED,
    build_targets,
    go_live,
    payload_of,
    require_for_timing,
    timing_of,
)
from posts.validation import PostPlan, build_plan
from workspaces.access import Access
from workspaces.models import Workspace


@transaction.atomic
def post_delete(*, workspace_id: str, post_id: str, actor: Actor | None = None) -> None:
    """Delete the post (404 when not in this workspace); 409 ``conflict`` while it or any of its
    entries is being published, or edited or removed on its platform (after publishing). Our record
    only: a published post stays live on its platforms (``post_unpublish`` removes it there).
    Deleting the upcoming post of a series tells the recurrence engine first
    (``posts.recurrence.services.upcoming_post_deleted``). Recorded in the audit log (``actor``)
    in the same transaction."""
    post = post_get_for_update(workspace_id=workspace_id, post_id=post_id)
    publishing = PostTarget.objects.filter(post=post, status=TargetStatus.PUBLISHING).exists()
    if publishing or post.status == PostStatus.PUBLISHING:
        raise Conflict("Post is being published and cannot be deleted now")
    if PostTargetAction.objects.filter(target__post=post, status=ActionStatus.SENDING).exists():
        raise Conflict("Post is being edited or removed on a platform and cannot be deleted now")
    if post.recurring_post_id:
        upcoming_post_deleted(post=post)
    record(
        actor=actor or system_actor("service call"),
        action="post.delete",
        organization_id=str(Workspace.objects.filter(pk=workspace_id).values_list("organization_id", flat=True).get()),
        workspace_id=workspace_id,
        target_type="post",
        target_id=post.id,
        changes={"status": post.status, "scheduledAt": format_instant(post.scheduled_at)},
    )
    post.delete()


@transaction.atomic
def post_unschedule(*, workspace_id: str, post_id: str) -> Post:
    """SCHEDULED or dated DRAFT → undated DRAFT, content kept; an undated draft is returned
    unchanged. Other states: 400 ``post_not_unschedulable``. Because the row is locked and the
    dispatcher claims only SCHEDULED rows, a post unscheduled before its claim is never sent."""
    post = post_get_for_update(workspace_id=workspace_id, post_id=post_id)
    if post.status not in (PostStatus.DRAFT, PostStatus.SCHEDULED):
        raise BadRequest("Only a draft or a scheduled post can be unscheduled", code="post_not_unschedulable")
    if post.status != PostStatus.DRAFT or post.scheduled_at is not None:
        if post.recurring_post_id:
            # The upcoming occurrence of a series leaves the schedule: the series moves on to the next.
            upcoming_post_unscheduled(post=post)
        post.status, post.scheduled_at = PostStatus.DRAFT, None
        post.save(update_fields=["status", "scheduled_at", "updated_at"])
    return post


@dataclass(frozen=True)
class PublishOutcome:
    post: Post
    plan: PostPlan

    def body(self) -> dict[str, Any]:
        # Only a post going out now queues its platforms (a scheduled one queues them at its time).
        going_out = self.post.status == PostStatus.PENDING
        return {
            "postId": self.post.id,
            "queuedPlatforms": [t.platform for t in self.plan.targets] if going_out else [],
            "isScheduled": self.post.status == PostStatus.SCHEDULED,
            "scheduledAt": format_instant(self.post.scheduled_at),
        }


@transaction.atomic
def post_publish(
    *,
    access: Access,
    post_id: str,
    timezone_name: str | None = None,
    scheduled_at: dt.datetime | None = None,
    now: dt.datetime | None = None,
) -> PublishOutcome:
    """Publish a DRAFT or a SCHEDULED post (else 400 ``post_not_draft``, the message naming its status):
    the create validation runs now on its content; a future time (``scheduledAt`` given, else the
    post's own) makes it SCHEDULED (again, for a scheduled post: rescheduled) with post.scheduled
    emitted, otherwise PENDING with its targets queued after commit. A SCHEDULED post published
    without ``scheduledAt`` goes out now. Needs posts.schedule or posts.publish accordingly.
    Targets are rebuilt from fresh accounts. The post row is locked first, and the dispatcher
    claims only SCHEDULED rows it can lock (a conditional UPDATE to PENDING): a post it has
    claimed is PENDING here (400), and one published here is never claimed at its old time, so
    it goes out once."""
    workspace_id = access.workspace.id
    post = post_get_for_update(workspace_id=workspace_id, post_id=post_id)
    if post.status not in (PostStatus.DRAFT, PostStatus.SCHEDULED):
        raise BadRequest(
            f"Post is not a draft or scheduled post (its status is {post.status})",
            code="post_not_draft",
        )
    now = now or timezone.now()
    # A scheduled post published without a time goes out now; a draft keeps its own date.
    own = post.scheduled_at if post.status == PostStatus.DRAFT else None
    when = scheduled_at if scheduled_at is not None else own
    timing = timing_of(save_as_draft=False, scheduled_at=when, now=now)
    require_for_timing(access, timing)
    data = payload_of(post)
    data["timezone"] = timezone_name or post.timezone
    plan = build_plan(workspace_id=workspace_id, data=data, full=True)
    plan.raise_if_invalid()
    if timing == NOW and post.recurring_post_id:
        upcoming_post_sent_now(post=post)  # its series schedules the next occurrence, as a claim would
    PostTarget.objects.filter(post=post).delete()
    targets = build_targets(post, plan)
    post.timezone = data["timezone"]
    post.status = PostStatus.SCHEDULED if timing == SCHEDULED else PostStatus.PENDING
    post.scheduled_at = when if timing == SCHEDULED else None
    post.save(update_fields=["timezone", "status", "scheduled_at", "updated_at"])
    post = Post.objects.prefetch_related("targets").get(pk=post.pk)
    go_live(post, timing=timing, target_ids=[t.id for t in targets])
    return PublishOutcome(post=post, plan=plan)


@transaction.atomic
def post_retry(*, workspace_id: str, post_id: str, platform_ids: list[str] | None) -> list[PostTarget]:
    """Move the matched FAILED entries back to PENDING (error fields cleared, attempts reset)
    before returning, put the post back in PENDING if it had finished, and queue exactly those
    entries after commit. ``platform_ids`` values are entry ids or platform names; empty or
    missing means every FAILED entry. A value matching nothing: 400 ``unknown_retry_target``;
    nothing matched has failed: 400 ``no_failed_platforms``. The post and entry rows are locked,
    so two concurrent retries queue each entry once."""
    post = post_get_for_update(workspace_id=workspace_id, post_id=post_id)
    targets = list(PostTarget.objects.select_for_update().filter(post=post).order_by("id"))
    targets.sort(key=lambda t: (t.created_at, t.id))  # locked in id order, answered in entry order
    matched = _match_targets(targets, platform_ids or [])
    failed = [t for t in matched if t.status == TargetStatus.FAILED]
    if not failed:
        raise BadRequest("None of the matched platform entries has failed", code="no_failed_platforms")
    ids = [t.id for t in failed]
    PostTarget.objects.filter(id__in=ids).update(
        status=TargetStatus.PENDING,
        error_message="",
        error_code="",
        attempts=0,
        lease_until=None,
        next_attempt_at=None,
        remote_state={},
        tiktok_draft_fallback=False,
        updated_at=timezone.now(),
    )
    if post.status in FINAL_POST_STATUSES:
        post.status, post.finished_at = PostStatus.PENDING, None
        post.save(update_fields=["status", "finished_at", "updated_at"])
    transaction.on_commit(lambda: enqueue_targets(ids), robust=True)
    return failed


def _match_targets(targets: list[PostTarget], values: list[str]) -> list[PostTarget]:
    if not values:
        return targets
    platform_names = {p.value for p in Platform}
    matched: dict[str, PostTarget] = {}
    unknown: list[str] = []
    for value in values:
        name = value.strip().upper()
        hits = [t for t in targets if t.id == value or (name in platform_names and t.platform == name)]
        if not hits:
            unknown.append(value)
        matched.update({t.id: t for t in hits})
    if unknown:
        raise BadRequest(
            f"platformIds: {', '.join(unknown)} matches no platform entry of this post", code="unknown_retry_target"
        )
    return [t for t in targets if t.id in matched]


__all__ = ["DRAFT", "NOW", "SCHEDULED", "post_delete", "post_publish", "post_retry", "post_unschedule"]
