"""Writing what a publish attempt learned, fenced by the claim's lease: a write whose lease was
taken over (the sweeper recovered the target) changes nothing. Terminal writes and the post's
final status (with its one event) share one transaction, under the post's row lock."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, F, Q, prefetch_related_objects
from django.db.models.sql import UpdateQuery
from django.utils import timezone

from core import metrics
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from posts.pipeline import hooks
from posts.pipeline.claims import TARGET_TABLE, Claim

FINAL_EVENT = {
    PostStatus.COMPLETED: "post.published",
    PostStatus.PARTIAL_FAILURE: "post.partially_failed",
    PostStatus.FAILED: "post.failed",
}
TERMINAL_TARGET_STATUSES = (TargetStatus.PUBLISHED, TargetStatus.FAILED)


def _owned(claim: Claim) -> Any:
    return PostTarget.objects.filter(id=claim.target_id, status=TargetStatus.PUBLISHING, lease_until=claim.lease_until)


def record_published(
    claim: Claim,
    *,
    platform_post_id: str,
    url: str,
    published_at: dt.datetime | None,
    draft_fallback: bool = False,
) -> bool:
    """PUBLISHING → PUBLISHED with the remote id, and finalize the post if it was the last entry.
    False when this attempt no longer owns the target."""
    changes: dict[str, Any] = {
        "status": TargetStatus.PUBLISHED,
        "platform_post_id": platform_post_id,
        "post_url": url,
        "published_at": published_at or timezone.now(),
        "tiktok_draft_fallback": draft_fallback,
        "error_message": "",
        "error_code": "",
        "lease_until": None,
        "next_attempt_at": None,
        "remote_state": {},
    }
    return _finish(claim, changes, published=True)


@dataclass(frozen=True)
class Published:
    """What a successful attempt of ``claim`` learned from the platform."""

    claim: Claim
    platform_post_id: str
    url: str
    published_at: dt.datetime | None
    draft_fallback: bool = False


# The fenced update and, in the same statement, the entry counts of the posts it touched as they
# are after it (the caller holds those posts' row locks, so no sibling entry changes in between).
_PUBLISH_MANY_SQL = f"""
WITH done AS (
    UPDATE {TARGET_TABLE} t
    SET status = %s, platform_post_id = v.platform_post_id, post_url = v.post_url, published_at = v.published_at,
        tiktok_draft_fallback = v.draft_fallback, error_message = '', error_code = '', lease_until = NULL,
        next_attempt_at = NULL, remote_state = '{{}}'::jsonb, updated_at = %s
    FROM (VALUES {{values}}) AS v(id, lease_until, platform_post_id, post_url, published_at, draft_fallback)
    WHERE t.id = v.id AND t.status = %s AND t.lease_until = v.lease_until
    RETURNING t.id, t.post_id, t.status, t.platform
)
SELECT t.post_id, array_agg(done.id) FILTER (WHERE done.id IS NOT NULL), count(*),
       count(*) FILTER (WHERE COALESCE(done.status, t.status) = %s),
       count(*) FILTER (WHERE COALESCE(done.status, t.status) = %s),
       array_agg(done.platform) FILTER (WHERE done.id IS NOT NULL)
FROM {TARGET_TABLE} t LEFT JOIN done ON done.id = t.id
WHERE t.post_id IN (SELECT post_id FROM done)
GROUP BY t.post_id
"""
_VALUES_ROW = "(%s, %s::timestamptz, %s, %s, %s::timestamptz, %s::boolean)"


def record_published_many(items: list[Published]) -> set[str]:
    """:func:`record_published` for several attempts in one transaction: their posts locked in id
    order (the pipeline's lock order, post before targets), one fenced UPDATE for every target that
    also returns the entry counts of the posts it touched, each post finalized once and their
    events written together. A target whose lease was taken over changes nothing, exactly as
    alone. Returns the ids of the targets written."""
    if not items:
        return set()
    post_ids = sorted({item.claim.post_id for item in items})
    with transaction.atomic():
        posts = {
            post.id: post for post in Post.objects.select_for_update(no_key=True).filter(id__in=post_ids).order_by("id")
        }
        live = [item for item in items if item.claim.post_id in posts]
        if not live:
            return set()
        now = timezone.now()
        params: list[Any] = [TargetStatus.PUBLISHED.value, now]
        for item in live:
            params += [
                item.claim.target_id,
                item.claim.lease_until,
                item.platform_post_id,
                item.url,
                item.published_at or now,
                item.draft_fallback,
            ]
        params += [TargetStatus.PUBLISHING.value, TargetStatus.PUBLISHED.value, TargetStatus.FAILED.value]
        sql = _PUBLISH_MANY_SQL.replace("{values}", ", ".join([_VALUES_ROW] * len(live)))
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = sorted(cursor.fetchall())
        owned = {target_id for row in rows for target_id in row[1] or ()}
        if not owned:
            return owned
        platforms = [platform for row in rows for platform in row[5] or ()]
        transaction.on_commit(lambda: metrics.publishes_recorded(platforms=platforms))
        _finalize_many_locked([(posts[row[0]], (row[2], row[3], row[4])) for row in rows])
        # Last before the commit: tracking updates the analytics rollup rows (one per workspace,
        # platform and day, shared by every publisher), so their lock is held the shortest time.
        hooks.on_targets_published(target_ids=sorted(owned))
    return owned


def record_failed(claim: Claim, *, error_code: str, message: str, remote_state: dict[str, Any] | None = None) -> bool:
    """PUBLISHING → FAILED with the platform's message and the normalized errorCode; finalize."""
    changes: dict[str, Any] = {
        "status": TargetStatus.FAILED,
        "error_code": error_code,
        "error_message": message[:4000],
        "lease_until": None,
        "next_attempt_at": None,
    }
    if remote_state is not None:
        changes["remote_state"] = remote_state
    return _finish(claim, changes, published=False)


def _finish(claim: Claim, changes: dict[str, Any], *, published: bool) -> bool:
    with transaction.atomic():
        post = Post.objects.select_for_update(no_key=True).filter(id=claim.post_id).first()
        if post is None:
            return False
        changes["updated_at"] = timezone.now()
        counts = _update_owned_and_count(claim, changes)
        if counts is None:
            return False
        platform, error_code = counts[3], str(changes.get("error_code", ""))
        transaction.on_commit(lambda: metrics.publish_recorded(platform=platform, error_code=error_code))
        if published:
            hooks.on_target_published(target_id=claim.target_id)
        finalize_locked(post, counts=counts[:3])
    return True


_COUNT_AFTER_UPDATE_SQL = """
WITH done AS ({update} RETURNING id, status, platform)
SELECT (SELECT count(*) FROM done), (SELECT min(platform) FROM done),
       count(t.id),
       count(t.id) FILTER (WHERE COALESCE(done.status, t.status) = %s),
       count(t.id) FILTER (WHERE COALESCE(done.status, t.status) = %s)
FROM {table} t LEFT JOIN done ON done.id = t.id
WHERE t.post_id = %s
"""


def _update_owned_and_count(claim: Claim, changes: dict[str, Any]) -> tuple[int, int, int, str] | None:
    """The fenced update of ``_owned(claim)`` and the post's entry counts after it, in one round
    trip (the caller holds the post's row lock, so no sibling entry changes in between). None when
    this attempt no longer owns the target; else (total, published, failed, the target's platform)."""
    query = UpdateQuery(PostTarget)
    query.add_update_values(changes)
    query.add_q(Q(id=claim.target_id, status=TargetStatus.PUBLISHING, lease_until=claim.lease_until))
    update_sql, update_params = query.get_compiler(connection=connection).as_sql()
    sql = _COUNT_AFTER_UPDATE_SQL.format(update=update_sql, table=PostTarget._meta.db_table)
    params = (*update_params, TargetStatus.PUBLISHED.value, TargetStatus.FAILED.value, claim.post_id)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        owned, platform, total, published, failed = cursor.fetchone()
    if not owned:
        return None
    return total, published, failed, platform


def finalize_locked(post: Post, *, counts: tuple[int, int, int] | None = None) -> str | None:
    """With ``post`` locked by the caller: if every entry is PUBLISHED or FAILED and the post is not
    already final, set COMPLETED / PARTIAL_FAILURE / FAILED and emit exactly one event, in the
    caller's transaction. ``counts`` (total, published, failed), when the caller already read them
    under the same lock, saves the count query. Returns the event name emitted, or None."""
    if post.status in FINAL_EVENT:
        return None
    if counts is None:
        aggregated = PostTarget.objects.filter(post_id=post.id).aggregate(
            total=Count("id"),
            published=Count("id", filter=Q(status=TargetStatus.PUBLISHED)),
            failed=Count("id", filter=Q(status=TargetStatus.FAILED)),
        )
        counts = (aggregated["total"], aggregated["published"], aggregated["failed"])
    names = _finalize_many_locked([(post, counts)])
    return names.get(post.id)


def _final_status(counts: tuple[int, int, int]) -> PostStatus | None:
    total, published, failed = counts
    if total == 0 or published + failed < total:
        return None
    if published == total:
        return PostStatus.COMPLETED
    if failed == total:
        return PostStatus.FAILED
    return PostStatus.PARTIAL_FAILURE


def _finalize_many_locked(posts: list[tuple[Post, tuple[int, int, int]]]) -> dict[str, str]:
    """:func:`finalize_locked` of several locked posts with their counts: one UPDATE per final
    status, their entries read once for the events' records, then each post's one event and its
    recurrence hook (only a post of a series has one to run). Returns post id → event name."""
    finals = [
        (post, status) for post, counts in posts if post.status not in FINAL_EVENT and (status := _final_status(counts))
    ]
    if not finals:
        return {}
    now = timezone.now()
    by_status: dict[PostStatus, list[str]] = {}
    for post, status in finals:
        by_status.setdefault(status, []).append(post.id)
    for status, ids in by_status.items():
        Post.objects.filter(id__in=ids).update(status=status, finished_at=now, updated_at=now)
    for post, status in finals:
        post.status, post.finished_at, post.updated_at = status, now, now
    prefetch_related_objects([post for post, _ in finals], "targets")  # the events' records, one query
    _emit_post_events([(post, FINAL_EVENT[status]) for post, status in finals])
    names: dict[str, str] = {}
    for post, status in finals:
        names[post.id] = FINAL_EVENT[status]
        if post.recurring_post_id:
            hooks.on_post_finished(post_id=post.id, status=status)
    return names


def finalize_post(post_id: str) -> str | None:
    """Finalize ``post_id`` under its row lock if all its entries are terminal (sweeper safety net)."""
    with transaction.atomic():
        post = Post.objects.select_for_update(no_key=True).filter(id=post_id).first()
        if post is None:
            return None
        return finalize_locked(post)


def _emit_post_events(finished: list[tuple[Post, str]]) -> None:
    """Each finished post's one event, written together (one query per table, not per post)."""
    from posts.rendering import post_record
    from webhooks.events import emit_events

    emit_events([(str(post.workspace_id), name, {"post": post_record(post)}) for post, name in finished])


def release_for_retry(
    claim: Claim,
    *,
    next_attempt_at: dt.datetime,
    remote_state: dict[str, Any],
    error_code: str = "",
    message: str = "",
    count_attempt: bool = True,
) -> bool:
    """PUBLISHING → PENDING, due at ``next_attempt_at``, keeping ``remote_state`` so the next attempt
    resumes. ``count_attempt`` False (a multi-step flow waiting on the platform) gives the attempt
    back: polling rounds do not use up the retry budget."""
    changes: dict[str, Any] = {
        "status": TargetStatus.PENDING,
        "lease_until": None,
        "next_attempt_at": next_attempt_at,
        "remote_state": remote_state,
        "error_code": error_code,
        "error_message": message[:4000],
        "updated_at": timezone.now(),
    }
    if not count_attempt:
        changes["attempts"] = F("attempts") - 1
    return bool(_owned(claim).update(**changes))
