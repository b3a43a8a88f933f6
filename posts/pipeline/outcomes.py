"""Writing what a publish attempt learned, fenced by the claim's lease: a write whose lease was
taken over (the sweeper recovered the target) changes nothing. Terminal writes and the post's
final status (with its one event) share one transaction, under the post's row lock."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, F, Q, prefetch_related_objects
from django.utils import timezone

from core import bulk, metrics, work
from posts.models import CommentStatus, Post, PostStatus, PostTarget, TargetStatus
from posts.pipeline import first_comment, hooks
from posts.pipeline.claims import Claim
from posts.rendering import post_record
from webhooks.events import emit_events

FINAL_EVENT = {
    PostStatus.COMPLETED: "post.published",
    PostStatus.PARTIAL_FAILURE: "post.partially_failed",
    PostStatus.FAILED: "post.failed",
}
TERMINAL_TARGET_STATUSES = (TargetStatus.PUBLISHED, TargetStatus.FAILED)

# One log line per attempt outcome of a platform publish (``log_attempt``), each naming the post,
# the entry, its platform, the attempt's number, the outcome and the wait before the next attempt.
attempt_logger = logging.getLogger("posts.pipeline.attempts")
PUBLISHED = "published"  # the platform has the post (or the thread)
FAILED = "failed"  # final: the entry is FAILED with the platform's words
RETRYING = "retrying"  # failed, another attempt comes after a backoff
WAITING = "waiting"  # a multi-step flow (or a thread's next item) goes on; no attempt spent
NOT_SENT = "not_sent"  # nothing left (the lease ran short, or its start could not be recorded)
INTERRUPTED = "interrupted"  # the sweeper found the attempt's lease expired (a worker was lost)
SUPERSEDED = "superseded"  # its lease was taken over: the outcome was not written
_ATTEMPT_LINES = {
    PUBLISHED: (logging.INFO, "attempt succeeded"),
    FAILED: (logging.WARNING, "attempt failed for good"),
    RETRYING: (logging.WARNING, "attempt failed, retrying in {delay} s"),
    WAITING: (logging.INFO, "attempt waiting on the platform, next step in {delay} s"),
    NOT_SENT: (logging.INFO, "attempt not sent, queued again in {delay} s"),
    INTERRUPTED: (logging.WARNING, "attempt interrupted (lease expired), retrying in {delay} s"),
    SUPERSEDED: (logging.INFO, "attempt outcome not written: the entry was taken over"),
}


@dataclass(frozen=True)
class Published:
    """What a successful attempt of ``claim`` learned from the platform."""

    claim: Claim
    platform_post_id: str
    url: str
    published_at: dt.datetime | None
    draft_fallback: bool = False
    thread_items: list[dict[str, str]] | None = None  # a thread: every item, in order (None: no thread)


@dataclass(frozen=True)
class Failed:
    """An attempt of ``claim`` that ends the target as FAILED with the platform's message and the
    normalized errorCode; ``remote_state`` (when given) is kept for whoever looks at it next."""

    claim: Claim
    error_code: str
    message: str
    remote_state: dict[str, Any] | None = None


# The fenced update of every target of the batch (one row per target, passed as one JSON array)
# and, in the same statement, the entry counts of the posts it touched as they are after it (the
# caller holds those posts' row locks, so no sibling entry changes in between). A published row
# takes the remote id and clears the error; a failed one keeps what it had besides its error and,
# when given, its remote state. A row published with a first comment (the post's, or its platform's
# platformFirstComments text) has that comment scheduled by the same write (PENDING, due ``delaySeconds`` from now; once per entry: only while
# it has none), so the entry and its comment's schedule commit together (``first_comment``); the
# comments scheduled here come back with their due times, to be queued.
_RECORD_SQL = """
WITH v AS (
    SELECT * FROM jsonb_to_recordset(%(rows)s::jsonb) AS v(
        id text, lease_until timestamptz, status text, platform_post_id text, post_url text,
        published_at timestamptz, draft_fallback boolean, error_code text, error_message text,
        remote_state jsonb, thread_items jsonb)
),
done AS (
    UPDATE posts_posttarget t
    SET status = v.status,
        platform_post_id = COALESCE(v.platform_post_id, t.platform_post_id),
        post_url = COALESCE(v.post_url, t.post_url),
        published_at = COALESCE(v.published_at, t.published_at),
        tiktok_draft_fallback = COALESCE(v.draft_fallback, t.tiktok_draft_fallback),
        error_code = v.error_code, error_message = v.error_message,
        remote_state = COALESCE(v.remote_state, t.remote_state),
        thread_items = COALESCE(v.thread_items, t.thread_items),
        comment_status = CASE WHEN v.status = %(published)s AND t.comment_status = ''
                              AND (p.first_comment <> '{}'::jsonb OR t.first_comment_text <> '')
                              THEN %(comment_pending)s ELSE t.comment_status END,
        comment_due_at = CASE WHEN v.status = %(published)s AND t.comment_status = ''
                              AND (p.first_comment <> '{}'::jsonb OR t.first_comment_text <> '')
                              THEN %(now)s + make_interval(secs => COALESCE((p.first_comment->>'delaySeconds')::int, 0))
                              ELSE t.comment_due_at END,
        lease_until = NULL, next_attempt_at = NULL, updated_at = %(now)s
    FROM v, posts_post p
    WHERE t.id = v.id AND p.id = t.post_id AND t.status = %(publishing)s AND t.lease_until = v.lease_until
    RETURNING t.id, t.post_id, t.status, t.platform, t.error_code, t.comment_due_at,
              t.status = %(published)s AND t.comment_status = %(comment_pending)s AND t.comment_due_at
                  = %(now)s + make_interval(secs => COALESCE((p.first_comment->>'delaySeconds')::int, 0))
                  AS comment_scheduled
)
SELECT t.post_id, array_agg(done.id) FILTER (WHERE done.id IS NOT NULL), count(*),
       count(*) FILTER (WHERE COALESCE(done.status, t.status) = %(published)s),
       count(*) FILTER (WHERE COALESCE(done.status, t.status) = %(failed)s),
       array_agg(done.platform) FILTER (WHERE done.status = %(published)s),
       array_agg(ARRAY[done.platform, done.error_code]) FILTER (WHERE done.status = %(failed)s),
       array_agg(done.id) FILTER (WHERE done.comment_scheduled),
       array_agg(done.comment_due_at) FILTER (WHERE done.comment_scheduled)
FROM posts_posttarget t LEFT JOIN done ON done.id = t.id
WHERE t.post_id IN (SELECT post_id FROM done)
GROUP BY t.post_id
"""


def log_attempt(claim: Claim, outcome: str, *, delay: float | None = None, error_code: str = "") -> None:
    """The attempt's one line: its message says what happened and when the next attempt comes;
    its fields name the post, the entry (``entry_id``), the platform, the attempt, the outcome,
    the delay (``retry_in_s``) and the errorCode."""
    level, template = _ATTEMPT_LINES[outcome]
    if not attempt_logger.isEnabledFor(level):
        return  # nothing is put together for a line no handler would see
    seconds = None if delay is None else round(max(delay, 0.0), 1)
    message = template.format(delay=f"{seconds:g}" if seconds is not None else "-")
    attempt_logger.log(
        level,
        "publish %s: entry %s of post %s on %s, attempt %d%s",
        message,
        claim.target_id,
        claim.post_id,
        claim.platform or "?",
        claim.attempts,
        f" ({error_code})" if error_code else "",
        extra={
            "post_id": claim.post_id,
            "entry_id": claim.target_id,
            "platform": claim.platform,
            "attempt": claim.attempts,
            "outcome": outcome,
            "retry_in_s": seconds,
            "error_code": error_code,
        },
    )


def _log_recorded(items: Sequence[Published | Failed], owned: set[str]) -> None:
    for item in items:
        if item.claim.target_id not in owned:
            log_attempt(item.claim, SUPERSEDED)
        elif isinstance(item, Published):
            log_attempt(item.claim, PUBLISHED)
        else:
            log_attempt(item.claim, FAILED, error_code=item.error_code)


def record(items: Sequence[Published | Failed]) -> set[str]:
    """:func:`_record`, and each item's attempt line once the transaction it is part of commits
    (an item whose lease was taken over is logged as such)."""
    owned = _record(items)
    if items:
        transaction.on_commit(partial(_log_recorded, list(items), owned))
    return owned


def _record(items: Sequence[Published | Failed]) -> set[str]:
    """End the attempts of ``items`` (one or many: one path) in one transaction: their posts locked
    in id order (the pipeline's lock order, post before targets), one fenced UPDATE for every
    target (PUBLISHING → PUBLISHED or FAILED, conditioned on its claim's lease) that also returns
    the entry counts of the posts it touched, each post finalized once with its one event through
    the outbox, the first comments of published entries scheduled by that same UPDATE (queued after
    commit), and the published targets handed to analytics. A target whose lease was taken
    over changes nothing. Returns the ids of the targets written."""
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
        with connection.cursor() as cursor:
            cursor.execute(_RECORD_SQL, _record_params(live, now=now))
            rows = sorted(cursor.fetchall())
        owned = {target_id for row in rows for target_id in row[1] or ()}
        if not owned:
            return owned
        published_on = [platform for row in rows for platform in row[5] or ()]
        failed_with = [(pair[0], pair[1]) for row in rows for pair in row[6] or ()]
        transaction.on_commit(lambda: _count_recorded(published_on, failed_with))
        finished = _finalize_many_locked([(posts[row[0]], (row[2], row[3], row[4])) for row in rows])
        published = sorted(item.claim.target_id for item in live if isinstance(item, Published))
        published = [target_id for target_id in published if target_id in owned]
        # The first comments follow the entries they go under: scheduled by the PUBLISHED write.
        first_comment.queue_scheduled(
            [(target_id, due_at) for row in rows for target_id, due_at in zip(row[7] or (), row[8] or (), strict=True)],
            now=now,
        )
        if published:
            # Last before the commit: tracking updates the analytics rollup rows (one per workspace,
            # platform and day, shared by every publisher), so their lock is held the shortest time.
            # A finished post's entries were just read for its event (after this write): tracking
            # takes those instead of reading them again.
            wanted = set(published)
            read = [target for post_id in finished for target in posts[post_id].targets.all() if target.id in wanted]
            hooks.on_targets_published(target_ids=published, targets=read)
    return owned


def _record_params(items: list[Published | Failed], *, now: dt.datetime) -> dict[str, Any]:
    """The rows of :data:`_RECORD_SQL` (a key left out: the target keeps its value)."""
    rows: list[dict[str, Any]] = []
    for item in items:
        row: dict[str, Any] = {"id": item.claim.target_id, "lease_until": item.claim.lease_until}
        if isinstance(item, Published):
            row.update(
                status=TargetStatus.PUBLISHED.value,
                platform_post_id=item.platform_post_id,
                post_url=item.url,
                published_at=item.published_at or now,
                draft_fallback=item.draft_fallback,
                error_code="",
                error_message="",
                remote_state={},
                thread_items=item.thread_items,
            )
        else:
            row.update(
                status=TargetStatus.FAILED.value,
                error_code=item.error_code,
                error_message=item.message[:4000],
                remote_state=item.remote_state,
            )
        rows.append(row)
    return {
        "rows": bulk.rows_param(rows),
        "now": now,
        "publishing": TargetStatus.PUBLISHING.value,
        "published": TargetStatus.PUBLISHED.value,
        "failed": TargetStatus.FAILED.value,
        "comment_pending": CommentStatus.PENDING.value,
    }


def _count_recorded(published_on: list[str], failed_with: list[tuple[str, str]]) -> None:
    metrics.publishes_recorded(platforms=published_on)
    for platform, error_code in failed_with:
        metrics.publish_recorded(platform=platform, error_code=error_code)


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
    emit_events([(str(post.workspace_id), name, {"post": post_record(post)}) for post, name in finished])


def release_for_retry(
    claim: Claim,
    *,
    next_attempt_at: dt.datetime,
    remote_state: dict[str, Any],
    error_code: str = "",
    message: str = "",
    count_attempt: bool = True,
    thread_items: list[dict[str, str]] | None = None,
    outcome: str = RETRYING,
) -> bool:
    """PUBLISHING → PENDING, due at ``next_attempt_at``, keeping ``remote_state`` so the next attempt
    resumes. ``count_attempt`` False (a multi-step flow waiting on the platform) gives the attempt
    back: polling rounds do not use up the retry budget. ``thread_items`` (a thread: the items
    confirmed so far) is written in the same fenced statement, so an item is on record before the
    next is sent. ``outcome`` names the attempt's end in its log line (written once the release
    commits, with the wait before the next attempt)."""
    changes: dict[str, Any] = {
        "status": TargetStatus.PENDING,
        "next_attempt_at": next_attempt_at,
        "remote_state": remote_state,
        "error_code": error_code,
        "error_message": message[:4000],
        "updated_at": timezone.now(),
    }
    if not count_attempt:
        changes["attempts"] = F("attempts") - 1
    if thread_items is not None:
        changes["thread_items"] = thread_items
    publishing = PostTarget.objects.filter(id=claim.target_id, status=TargetStatus.PUBLISHING)
    released = bool(work.release(publishing, lease_until=claim.lease_until, **changes))
    delay = (next_attempt_at - changes["updated_at"]).total_seconds()
    said = outcome if released else SUPERSEDED
    line = partial(
        log_attempt,
        claim,
        said,
        delay=None if said == SUPERSEDED else delay,
        error_code=error_code if said == RETRYING else "",
    )
    transaction.on_commit(line)
    return released
