"""Creating one occurrence of a series as a SCHEDULED post, and the series-row locking every
series write shares.

Lock order, everywhere: posts first, then the series row. The dispatcher (claiming an
occurrence) and the pipeline's finalize (an occurrence finishing) hold a post and then call into
the series; the API transitions lock the series' posts they may touch before the series, and
touch posts that appeared meanwhile only with SKIP LOCKED, so no two transactions ever wait on
each other in a cycle."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.db import transaction

from accounts.models import SocialAccount
from core.errors import ApplicationError, NotFound
from media.services import media_mark_referenced
from posts.fitting import request_fits
from posts.models import (
    LatePolicy,
    PauseReason,
    Post,
    PostStatus,
    PostTarget,
    RecurringPost,
    RecurringStatus,
    TargetStatus,
)
from posts.rendering import post_record
from webhooks.events import emit_event

SERIES_NOT_FOUND = "Recurring post not found"


class SeriesBroken(Exception):
    """An occurrence cannot be made from the series' template: why (a pause reason) and how."""

    def __init__(self, reason: str, message: str, code: str) -> None:
        super().__init__(message)
        self.reason, self.message, self.code = reason, message, code


def lock_series(*, series_id: str, workspace_id: str | None = None, post_statuses: Iterable[str] = ()) -> RecurringPost:
    """The series row locked (FOR NO KEY UPDATE, so inserting its posts is not blocked), after
    its posts in ``post_statuses`` (lock order: posts, then series). 404 when it is not found
    (in ``workspace_id`` when given)."""
    statuses = list(post_statuses)
    if statuses:
        list(
            Post.objects.select_for_update()
            .filter(recurring_post_id=series_id, status__in=statuses)
            .order_by("id")
            .values_list("id", flat=True)
        )
    queryset = RecurringPost.objects.select_for_update(no_key=True).filter(id=series_id)
    if workspace_id is not None:
        queryset = queryset.filter(workspace_id=workspace_id)
    series = queryset.first()
    if series is None:
        raise NotFound(SERIES_NOT_FOUND)
    return series


def delete_upcoming(series: RecurringPost) -> int:
    """Delete the series' SCHEDULED posts that no other transaction holds (a held one is being
    claimed, changed or deleted right now and is left to that transaction). Returns how many."""
    ids = list(
        Post.objects.select_for_update(skip_locked=True)
        .filter(recurring_post_id=series.id, status=PostStatus.SCHEDULED)
        .values_list("id", flat=True)
    )
    if ids:
        Post.objects.filter(id__in=ids).delete()
    return len(ids)


def pause_locked(series: RecurringPost, *, reason: str, error: str | None = None) -> None:
    """ACTIVE → PAUSED with ``reason`` (``error`` replaces lastError when given); the upcoming
    post is deleted and, never having gone out, no longer counts toward occurrenceCount (nor
    maxOccurrences). With the series locked by the caller."""
    series.status, series.pause_reason, series.next_occurrence_at = RecurringStatus.PAUSED, reason, None
    fields = ["status", "pause_reason", "next_occurrence_at", "occurrence_count", "updated_at"]
    if error is not None:
        series.last_error = error
        fields.append("last_error")
    series.occurrence_count = max(0, series.occurrence_count - delete_upcoming(series))
    series.save(update_fields=fields)


def template_targets(series: RecurringPost) -> list[dict[str, Any]]:
    return list((series.template or {}).get("targets") or [])


def live_accounts(series: RecurringPost) -> dict[str, SocialAccount]:
    ids = [t["accountId"] for t in template_targets(series) if t.get("accountId")]
    # A disconnected account (issue 31) keeps its row but counts as removed: the series pauses.
    accounts = SocialAccount.objects.filter(workspace_id=series.workspace_id, id__in=ids).exclude(status="disconnected")
    return {a.id: a for a in accounts}


def removed_targets(series: RecurringPost, accounts: dict[str, SocialAccount]) -> list[dict[str, Any]]:
    return [t for t in template_targets(series) if t.get("accountId") not in accounts]


def describe_removed(targets: list[dict[str, Any]]) -> str:
    names = ", ".join(f"{t.get('platform')} account {t.get('accountName') or t.get('accountId')}" for t in targets)
    return f"The {names} {'was' if len(targets) == 1 else 'were'} removed from the workspace"


def create_occurrence(series: RecurringPost, at: dt.datetime) -> Post | None:
    """The SCHEDULED post of the occurrence at ``at``, copied from the template (its entries'
    mediaFit too: their variants are requested, usually those made for the first post, which
    are shared), with post.scheduled emitted; None when that occurrence already exists (the
    unique constraint on series + occurrence makes a concurrent second creation a no-op). Raises SeriesBroken when an
    account of the template is gone or its media cannot be referenced."""
    template = series.template or {}
    accounts = live_accounts(series)
    removed = removed_targets(series, accounts)
    if removed or not accounts:
        raise SeriesBroken(PauseReason.CONNECTION_REMOVED, describe_removed(removed), "connection_not_found")
    media_urls = list(template.get("mediaUrls") or [])
    try:
        media_mark_referenced(workspace_id=series.workspace_id, urls=media_urls)
    except ApplicationError as exc:
        message = "; ".join(exc.message) if isinstance(exc.message, list) else exc.message
        raise SeriesBroken(PauseReason.INVALID_CONTENT, message, exc.code or "validation_error") from exc
    post = Post(
        workspace_id=series.workspace_id,
        status=PostStatus.SCHEDULED,
        content_type=template.get("contentType") or "TEXT",
        text=template.get("text") or "",
        timezone=series.timezone,
        scheduled_at=at,
        media_urls=media_urls,
        media_alt_texts=list(template.get("mediaAltTexts") or []),
        thumbnail_url=template.get("thumbnailUrl") or "",
        thumbnail_timestamp_ms=template.get("thumbnailTimestampMs"),
        late_policy=template.get("latePolicy") or LatePolicy.PUBLISH,
        max_lateness_seconds=template.get("maxLatenessSeconds"),
        first_comment=dict(template.get("firstComment") or {}),
        recurring_post=series,
        occurrence_at=at,
        created_by_id=series.created_by_id,
    )
    with transaction.atomic():
        Post.objects.bulk_create([post], ignore_conflicts=True)
        if not Post.objects.filter(id=post.id).exists():
            return None
        targets = PostTarget.objects.bulk_create(
            [_target_row(post, target, accounts[target["accountId"]]) for target in template_targets(series)]
        )
        request_fits(post, targets)  # the series' variants, made for its first post, are shared
    post = Post.objects.prefetch_related("targets").get(id=post.id)
    emit_event(workspace_id=series.workspace_id, name="post.scheduled", data={"post": post_record(post)})
    return post


def _target_row(post: Post, target: dict[str, Any], account: SocialAccount) -> PostTarget:
    return PostTarget(
        post=post,
        platform=target["platform"],
        account=account,
        account_name=account.display_name or account.username or account.external_id,
        page_id=target.get("pageId") or "",
        status=TargetStatus.PENDING,
        text=target.get("text") or "",
        config=dict(target.get("config") or {}),
        first_comment_text=target.get("firstCommentText") or "",
        media_fit=target.get("mediaFit") == "auto",
    )
