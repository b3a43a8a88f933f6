"""PATCH /social-posts/{id}: change a DRAFT or SCHEDULED post."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.errors import BadRequest, ValidationFailed
from media.services import media_mark_referenced
from posts.models import Post, PostStatus, PostTarget
from posts.payloads import CONNECTION_FIELDS
from posts.selectors import post_get_for_update
from posts.services.creation import build_targets, payload_of
from posts.validation import PostPlan, build_plan

PAST_TOLERANCE = dt.timedelta(minutes=1)
_POST_FIELDS = (
    "contentType",
    "text",
    "timezone",
    "scheduledAt",
    "thumbnailUrl",
    "thumbnailTimestampMs",
    "latePolicy",
    "maxLatenessSeconds",
)
# Without ``platforms`` the targets stay (texts and configs are updated in place), so media and
# account choices cannot change; the alt texts of the post's media can (the published CLI edits
# them alone).
_IGNORED_WITHOUT_PLATFORMS = frozenset({"mediaUrls", *CONNECTION_FIELDS.values()})


@transaction.atomic
def post_update(*, workspace_id: str, post_id: str, changes: dict[str, Any], now: dt.datetime | None = None) -> Post:
    """Apply ``changes`` (validated by ``PostUpdateInput``; omitted fields keep their values) to
    a DRAFT or SCHEDULED post, under the post's row lock (so never after the dispatcher's claim);
    else 400 ``post_not_editable``. Sending ``platforms`` rebuilds every target and config from
    this request alone, and the media only when ``mediaUrls`` comes with it (omitted: the stored
    media stay, ``[]`` removes them); ``mediaUrls`` without it is ignored. ``mediaAltTexts``
    relabels the media the post will have (at most one per item), with or without ``platforms``. Rules relating two fields are checked on
    the post as it will be after the change. A
    SCHEDULED post keeps passing the full create validation; a draft's waits for publish. Moving
    a SCHEDULED post more than a minute into the past is refused."""
    post = post_get_for_update(workspace_id=workspace_id, post_id=post_id)
    if post.status not in (PostStatus.DRAFT, PostStatus.SCHEDULED):
        raise BadRequest("Cannot edit post in current state", code="post_not_editable")
    now = now or timezone.now()
    if post.status == PostStatus.SCHEDULED and "scheduledAt" in changes:
        when = changes["scheduledAt"]
        if when is None:
            raise ValidationFailed(["scheduledAt: a scheduled post needs a time (use unschedule to make it a draft)"])
        if when < now - PAST_TOLERANCE:
            raise BadRequest("The new scheduled time is in the past", code="scheduled_time_in_past")
    data = _merged(post, changes)
    plan = build_plan(workspace_id=workspace_id, data=data, full=post.status == PostStatus.SCHEDULED)
    plan.raise_if_invalid()
    scheduled_at = plan.scheduled_at
    if post.status == PostStatus.DRAFT and scheduled_at is not None and scheduled_at <= now:
        scheduled_at = None  # a draft keeps only a future date
    rebuild = "platforms" in changes
    if rebuild:
        PostTarget.objects.filter(post=post).delete()
        build_targets(post, plan)
        post.media_urls, post.media_alt_texts = plan.media_urls, plan.media_alt_texts
        media_mark_referenced(workspace_id=workspace_id, urls=plan.media_urls)
    else:
        _update_targets_in_place(post, plan)
        post.media_alt_texts = plan.media_alt_texts
    post.content_type = plan.content_type
    post.text = plan.text
    post.timezone = plan.timezone
    post.scheduled_at = scheduled_at
    post.thumbnail_url = plan.thumbnail_url
    post.thumbnail_timestamp_ms = plan.thumbnail_timestamp_ms
    post.late_policy, post.max_lateness_seconds = plan.late_policy, plan.max_lateness_seconds
    post.first_comment = plan.first_comment
    post.save()
    return Post.objects.prefetch_related("targets").get(pk=post.pk)


def _merged(post: Post, changes: dict[str, Any]) -> dict[str, Any]:
    current = payload_of(post)
    if "latePolicy" in changes and "maxLatenessSeconds" not in changes:
        current["maxLatenessSeconds"] = None  # a new policy starts from its own default limit
    if "platforms" in changes:
        data = {name: current[name] for name in _POST_FIELDS}
        if "mediaUrls" not in changes:
            # The media stay unless ``mediaUrls`` is sent (``[]`` removes them): the published CLI
            # sends the targets with ``mediaAltTexts`` for the stored media, never their URLs.
            data["mediaUrls"] = current["mediaUrls"]
            data["mediaAltTexts"] = current["mediaAltTexts"]
        if "thread" in current:  # a change keeps the thread (and checks it against the new platforms)
            data["thread"] = current["thread"]
        for kept in ("firstComment", "platformFirstComments"):  # as the thread: kept, checked against the new platforms
            if kept in current:
                data[kept] = current[kept]
        data.update(changes)
        return data
    data = dict(current)
    data.update({k: v for k, v in changes.items() if k not in _IGNORED_WITHOUT_PLATFORMS})
    return data


def _update_targets_in_place(post: Post, plan: PostPlan) -> None:
    by_account = {t.account_id: t for t in PostTarget.objects.filter(post=post)}
    for target_plan in plan.targets:
        row = by_account.get(target_plan.account.id)
        if row is None:
            continue
        wanted = (target_plan.text, target_plan.config, target_plan.first_comment_text)
        if (row.text, row.config, row.first_comment_text) == wanted:
            continue  # unchanged: its updatedAt stays
        row.text, row.config, row.first_comment_text = wanted
        row.save(update_fields=["text", "config", "first_comment_text", "updated_at"])


__all__ = ["PAST_TOLERANCE", "post_update"]
