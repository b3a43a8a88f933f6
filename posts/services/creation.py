"""Creating posts from a validated plan, and the pieces publish and change reuse."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.errors import ValidationFailed
from core.fields import format_instant
from media.services import media_mark_referenced
from posts.fitting import request_fits
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from posts.payloads import CONFIG_FIELDS, CONNECTION_FIELDS
from posts.pipeline.enqueue import enqueue_targets
from posts.queues import queue_claim
from posts.recurrence.services import series_start
from posts.rendering import post_record
from posts.validation import Issue, PostPlan, TargetPlan, build_plan
from webhooks.events import emit_event
from workspaces.access import Access
from workspaces.plans import post_counted
from workspaces.roles import Permission

DRAFT, SCHEDULED, NOW = "draft", "scheduled", "now"


def timing_of(
    *, save_as_draft: bool, scheduled_at: dt.datetime | None, now: dt.datetime | None = None, queue: bool = False
) -> str:
    """draft, scheduled (a future ``scheduledAt``, or a queued post: its slot is in the future)
    or now (missing or past ``scheduledAt``)."""
    if save_as_draft:
        return DRAFT
    if queue:
        return SCHEDULED
    if scheduled_at is not None and scheduled_at > (now or timezone.now()):
        return SCHEDULED
    return NOW


def require_for_timing(access: Access, timing: str) -> None:
    """posts.draft is checked by the view; scheduling and publishing now need more (spec §3)."""
    if timing == SCHEDULED:
        access.require(Permission.POSTS_SCHEDULE)
    elif timing == NOW:
        access.require(Permission.POSTS_PUBLISH)


def build_targets(post: Post, plan: PostPlan) -> list[PostTarget]:
    targets = PostTarget.objects.bulk_create([_target_row(post, t) for t in plan.targets])
    request_fits(post, targets)
    return targets


def _target_row(post: Post, target: TargetPlan) -> PostTarget:
    account = target.account
    return PostTarget(
        post=post,
        platform=target.platform,
        account=account,
        account_name=account.display_name or account.username or account.external_id,
        page_id=target.page_id,
        status=TargetStatus.PENDING,
        text=target.text,
        config=target.config,
        first_comment_text=target.first_comment_text,
        media_fit=target.media_fit,
    )


def go_live(post: Post, *, timing: str, target_ids: list[str]) -> None:
    """Emit post.scheduled for a scheduled post, or queue the targets of a post due now once
    the surrounding transaction commits."""
    if timing == SCHEDULED:
        emit_event(workspace_id=post.workspace_id, name="post.scheduled", data={"post": post_record(post)})
    elif timing == NOW:
        transaction.on_commit(lambda: enqueue_targets(target_ids), robust=True)


@transaction.atomic
def post_create(
    *,
    workspace_id: str,
    plan: PostPlan,
    now: dt.datetime | None = None,
    user_id: int | None = None,
    counted: bool = True,
) -> Post:
    """Create the post (``user_id``: the member creating it, also of its series) and its targets
    from a valid plan (400 otherwise) in one transaction. A queued plan (``queue: true``) is
    scheduled at its accounts' earliest free queue slot, claimed under their queue locks:
    DRAFT (a dated draft keeps a future ``scheduledAt``), SCHEDULED (post.scheduled emitted in
    the same transaction) or PENDING (targets queued after commit). Media is marked referenced.
    The post counts toward the organization plan's monthly post limit (403
    ``subscription_required`` past it, nothing created); a dry run passes ``counted=False``."""
    plan.raise_if_invalid()
    now = now or timezone.now()
    if plan.queue:
        plan.scheduled_at = queue_claim(accounts=[t.account for t in plan.targets], now=now)
    timing = timing_of(save_as_draft=plan.save_as_draft, scheduled_at=plan.scheduled_at, now=now)
    future = plan.scheduled_at if plan.scheduled_at is not None and plan.scheduled_at > now else None
    status = {DRAFT: PostStatus.DRAFT, SCHEDULED: PostStatus.SCHEDULED, NOW: PostStatus.PENDING}[timing]
    post = Post.objects.create(
        workspace_id=workspace_id,
        status=status,
        content_type=plan.content_type,
        text=plan.text,
        timezone=plan.timezone,
        scheduled_at=future,
        media_urls=plan.media_urls,
        media_alt_texts=plan.media_alt_texts,
        thumbnail_url=plan.thumbnail_url,
        thumbnail_timestamp_ms=plan.thumbnail_timestamp_ms,
        late_policy=plan.late_policy,
        max_lateness_seconds=plan.max_lateness_seconds,
        thread=plan.thread,
        first_comment=plan.first_comment,
        created_by_id=user_id,
    )
    targets = build_targets(post, plan)
    referenced = [*plan.media_urls, *(url for item in plan.thread for url in item["mediaUrls"])]
    if referenced:  # a post without media has nothing to mark (and skips its savepoint)
        media_mark_referenced(workspace_id=workspace_id, urls=referenced)
    if plan.recurrence:
        _start_series(post, plan)
    go_live(post, timing=timing, target_ids=[t.id for t in targets])
    # Last, so that the organization's row (locked when its plan limits posts) is held briefly.
    if counted:
        post_counted(workspace_id=workspace_id)
    return post


class _DryRunDone(Exception):
    """Raised to roll back the transaction of a dry run that passed."""


def post_validate(*, workspace_id: str, data: dict[str, Any]) -> PostPlan:
    """Exactly the create validation of ``data`` (validated by ``PostCreateInput``), creating
    nothing: the plan with every issue found. The rules a recurring series checks when it starts
    (they need the post being created) run on a creation inside a transaction that is always
    rolled back, so no row, event or queued task survives it."""
    plan = build_plan(workspace_id=workspace_id, data=data, full=not data.get("saveAsDraft"))
    if not plan.valid or not plan.recurrence:
        return plan
    try:
        with transaction.atomic():
            post_create(workspace_id=workspace_id, plan=plan, counted=False)
            raise _DryRunDone
    except _DryRunDone:
        pass
    except ValidationFailed as exc:
        messages = exc.message if isinstance(exc.message, list) else [exc.message]
        plan.issues.extend(Issue.from_message(m, exc.code) for m in messages)
    return plan


def _start_series(post: Post, plan: PostPlan) -> None:
    """The recurrence engine validates ``plan.recurrence`` against the post (400 otherwise),
    creates the RecurringPost and links ``post`` as its first occurrence."""
    series_start(post=post, plan=plan)


def creation_result(post: Post, plan: PostPlan) -> dict[str, Any]:
    """The 201 body of POST /social-posts."""
    body: dict[str, Any] = {
        "postId": post.id,
        "status": post.status,
        # only a post going out now lists them: a scheduled post (and a draft) queues nothing yet
        "queuedPlatforms": [t.platform for t in plan.targets] if post.status == PostStatus.PENDING else [],
        "skippedPlatforms": list(plan.skipped),
        "isScheduled": post.status == PostStatus.SCHEDULED,
        "scheduledAt": format_instant(post.scheduled_at),
    }
    if post.recurring_post_id:
        body["recurringPostId"] = post.recurring_post_id
    return body


def payload_of(post: Post) -> dict[str, Any]:
    """The create payload that would rebuild ``post`` as it stands (targets, configs, texts):
    what publish re-validates and what a change is merged into."""
    targets = list(post.targets.all())
    data: dict[str, Any] = {
        "contentType": post.content_type,
        "text": post.text,
        "timezone": post.timezone,
        "scheduledAt": post.scheduled_at,
        "mediaUrls": list(post.media_urls or []),
        "mediaAltTexts": list(post.media_alt_texts or []),
        "thumbnailUrl": post.thumbnail_url,
        "thumbnailTimestampMs": post.thumbnail_timestamp_ms,
        "latePolicy": post.late_policy,
        "maxLatenessSeconds": post.max_lateness_seconds,
        "platforms": list(dict.fromkeys(t.platform for t in targets)),
        "platformTexts": [{"platform": t.platform, "text": t.text} for t in targets if t.text != post.text],
    }
    if post.thread:
        data["thread"] = [dict(item) for item in post.thread]
    if post.first_comment:
        data["firstComment"] = dict(post.first_comment)
    fits = [{"platform": t.platform, "mediaFit": "auto"} for t in targets if t.media_fit]
    if fits:
        data["platformMediaFit"] = fits
    comments = [{"platform": t.platform, "text": t.first_comment_text} for t in targets if t.first_comment_text]
    if comments:
        data["platformFirstComments"] = comments
    for target in targets:
        data.setdefault(CONNECTION_FIELDS[target.platform], [])
        if target.account_id:
            data[CONNECTION_FIELDS[target.platform]].append(target.account_id)
        if target.platform in CONFIG_FIELDS and target.config and target.account_id:
            key = "pageId" if target.platform == "FACEBOOK" else "connectionId"
            data.setdefault(CONFIG_FIELDS[target.platform], []).append({key: target.account_id, **target.config})
    return data
