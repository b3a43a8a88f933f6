"""The sweeper (beat, every ~15 s): nothing stays PUBLISHING, no queued work stays lost.

- A PUBLISHING target whose lease expired lost its worker mid-attempt. If the attempt had not
  recorded that it started sending (``claims.claim_started_sending``, written right before its
  first call that may create something leaves), nothing of it reached the platform: back to
  PENDING and queued, on every platform (after the last attempt: FAILED
  ``platform_unavailable``, never ``unknown_outcome``). Otherwise the platform may or may not
  have the post. Platforms that deduplicate on our key: back to PENDING and queued. Platforms
  where a post can be found by our marker: back to PENDING with "look first", so the next attempt
  looks the post up before it sends anything (not a thread: its replies cannot be found that way).
  Others: FAILED ``unknown_outcome``; a thread keeps the items confirmed before the interruption
  (``thread_items``), so a retry sends it on from there.
- A PENDING target well past its due time and its last queuing with no task alive (Redis lost its
  queue, a worker was killed holding prefetched messages) is queued again, keeping its due time
  (the late policy judges by it); the claim makes duplicates harmless. While the publish queue
  holds a backlog, a target waiting that long is more likely still queued than
  lost: it is queued again only after ``BACKLOG_PATIENCE`` times as long, so that a backlog is not
  multiplied by re-queuing all of it every few seconds (a flood that only slows the draining).
- A post whose entries are all terminal but which is not final (cannot normally happen: both are
  written in one transaction) is finalized.
- Edits and deletes after publishing (``posts.pipeline.after_publishing.recover``): one lost before
  its call left, or a delete (safe to send again), is sent again; an edit that may have reached the
  platform ends FAILED ``unknown_outcome``; a due one whose task was lost is queued again.
- First comments (``posts.pipeline.first_comment.recover``): one whose worker was lost before its
  call left, or mid-call where the platform dedupes on our key, is sent again, else FAILED
  ``unknown_outcome``; a due one whose task was lost is queued again.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from core import work
from platforms.base import ErrorCode, Platform
from platforms.capabilities import CAPABILITIES
from posts.models import FINAL_POST_STATUSES, Post, PostTarget, TargetStatus
from posts.pipeline import after_publishing, first_comment, outcomes, step
from posts.pipeline.claims import BOOK_KEY, SENDING_KEY, UNSENDABLE_POST_STATUSES, Claim, started_sending
from posts.pipeline.enqueue import enqueue_targets, publish_backlog

logger = logging.getLogger(__name__)

INTERRUPTED_MESSAGE = "Publishing was interrupted; check the platform before retrying."
NOT_SENT_MESSAGE = "Publishing was interrupted before anything was sent, on every attempt; retry it."
SWEEP_LIMIT = 2000
BACKLOG_PATIENCE = 10


@dataclass
class SweepReport:
    requeued: list[str] = field(default_factory=list)
    to_lookup: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    finalized: list[str] = field(default_factory=list)
    comments_requeued: list[str] = field(default_factory=list)
    comments_failed: list[str] = field(default_factory=list)
    comments_lost: list[str] = field(default_factory=list)
    actions_requeued: list[str] = field(default_factory=list)
    actions_failed: list[str] = field(default_factory=list)
    actions_lost: list[str] = field(default_factory=list)


def sweep(*, now: dt.datetime | None = None) -> SweepReport:
    """Recover expired leases, re-queue lost tasks, finalize stragglers. Idempotent: a second run
    finds nothing left to do."""
    now = now or timezone.now()
    report = SweepReport()
    _recover_expired_leases(now, report)
    _requeue_lost(now, report)
    _finalize_stragglers(report)
    report.comments_requeued, report.comments_failed, report.comments_lost = first_comment.recover(
        now=now, limit=SWEEP_LIMIT
    )
    report.actions_requeued, report.actions_failed, report.actions_lost = after_publishing.recover(
        now=now, limit=SWEEP_LIMIT
    )
    if report.actions_requeued or report.actions_failed or report.actions_lost:
        logger.info(
            "sweep: edits and deletes requeued=%d failed=%d lost=%d",
            len(report.actions_requeued),
            len(report.actions_failed),
            len(report.actions_lost),
        )
    if report.comments_requeued or report.comments_failed or report.comments_lost:
        logger.info(
            "sweep: first comments requeued=%d failed=%d lost=%d",
            len(report.comments_requeued),
            len(report.comments_failed),
            len(report.comments_lost),
        )
    if report.requeued or report.to_lookup or report.failed or report.lost or report.finalized:
        logger.info(
            "sweep: requeued=%d lookup=%d failed=%d lost=%d finalized=%d",
            len(report.requeued),
            len(report.to_lookup),
            len(report.failed),
            len(report.lost),
            len(report.finalized),
        )
    return report


def _recover_expired_leases(now: dt.datetime, report: SweepReport) -> None:
    expired = list(
        PostTarget.objects.filter(work.lease_expired(now), status=TargetStatus.PUBLISHING).values(
            "id", "post_id", "platform", "lease_until", "attempts", "remote_state", "post__thread"
        )[:SWEEP_LIMIT]
    )
    interrupted: list[outcomes.Published | outcomes.Failed] = []
    for row in expired:
        if row["lease_until"] is None:  # cannot be: the filter asked for an expired lease
            continue
        claim = Claim(
            target_id=row["id"],
            post_id=row["post_id"],
            lease_until=row["lease_until"],
            attempts=row["attempts"],
            platform=row["platform"],
        )
        state: dict[str, Any] = dict(row["remote_state"] or {})
        book: dict[str, Any] = dict(state.pop(BOOK_KEY, None) or {})
        sent = started_sending(book.pop(SENDING_KEY, None), claim.lease_until)
        mode = CAPABILITIES[Platform(row["platform"])].idempotent_publish
        if mode == "lookup" and row["post__thread"]:
            mode = "none"  # a thread item (a reply) cannot be found by the lookups: never guess
        what = step.recovery(sent=sent, resend_safe=mode == "key", can_lookup=mode == "lookup", attempts=claim.attempts)
        if what is step.Recovery.NOT_SENT:
            # Lost before its first create call left, on the last attempt: nothing reached the platform.
            interrupted.append(
                outcomes.Failed(claim, error_code=ErrorCode.PLATFORM_UNAVAILABLE, message=NOT_SENT_MESSAGE)
            )
            continue
        if what is step.Recovery.UNKNOWN:
            interrupted.append(
                outcomes.Failed(claim, error_code=ErrorCode.UNKNOWN_OUTCOME, message=INTERRUPTED_MESSAGE)
            )
            continue
        if what is step.Recovery.LOOKUP:
            book["verify"] = True
        if book:
            state[BOOK_KEY] = book
        if outcomes.release_for_retry(
            claim, next_attempt_at=now, remote_state=state, message="", error_code="", outcome=outcomes.INTERRUPTED
        ):
            (report.to_lookup if what is step.Recovery.LOOKUP else report.requeued).append(claim.target_id)
    failed = outcomes.record(interrupted)
    report.failed.extend(item.claim.target_id for item in interrupted if item.claim.target_id in failed)
    ids = report.requeued + report.to_lookup
    if ids:
        transaction.on_commit(partial(enqueue_targets, ids), robust=True)


# Lost: waited past the cutoff since it fell due and since it was last queued (``updated_at``: the
# dispatcher's staging, a retry's release, this re-queue). ``next_attempt_at`` stays the due time,
# which the late policy measures from: queuing again is no new due time.
_LOST_SQL = """
UPDATE posts_posttarget t SET updated_at = %(now)s
FROM posts_post p
WHERE t.post_id = p.id AND t.status = %(pending)s AND t.lease_until IS NULL
  AND p.status <> ALL(%(unsendable)s)
  AND GREATEST(t.next_attempt_at, t.updated_at) < %(cutoff)s
RETURNING t.id
"""


def _requeue_lost(now: dt.datetime, report: SweepReport) -> None:
    waited = settings.PUBLISH_LOST_TASK_SECONDS * (BACKLOG_PATIENCE if publish_backlog() else 1)
    cutoff = now - dt.timedelta(seconds=waited)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            _LOST_SQL,
            {
                "now": now,
                "cutoff": cutoff,
                "pending": TargetStatus.PENDING.value,
                "unsendable": UNSENDABLE_POST_STATUSES,
            },
        )
        ids = [row[0] for row in cursor.fetchall()]
        if ids:
            transaction.on_commit(partial(enqueue_targets, ids), robust=True)
    report.lost.extend(ids)


def _finalize_stragglers(report: SweepReport) -> None:
    targets = PostTarget.objects.filter(post_id=OuterRef("id"))
    open_posts = (
        Post.objects.exclude(status__in=[*FINAL_POST_STATUSES, *UNSENDABLE_POST_STATUSES])
        .filter(updated_at__lt=timezone.now() - dt.timedelta(seconds=settings.PUBLISH_LOST_TASK_SECONDS))
        .filter(Exists(targets))
        .exclude(Exists(targets.filter(status__in=[TargetStatus.PENDING, TargetStatus.PUBLISHING])))
        .values_list("id", flat=True)[:SWEEP_LIMIT]
    )
    for post_id in list(open_posts):
        if outcomes.finalize_post(post_id):
            report.finalized.append(post_id)
