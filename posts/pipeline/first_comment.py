"""The first comment of an entry: one more step after the post is live, with the publish attempt's
rules (DESIGN.md §5) on columns of its own, so that the entry's status and the post's final event
never wait for it.

- Scheduled by the very statement that records the entry PUBLISHED (``outcomes.record``): PENDING,
  due ``delaySeconds`` later; queued after commit (:func:`queue_scheduled`; a delay past the
  countdown limit is left to the sweeper, which queues due comments: no long ETA tasks).
- Claimed with a conditional UPDATE (PENDING and due → SENDING, attempts + 1, lease set); the lease
  is the fencing token of every later write, so a worker whose lease was taken over writes nothing.
- The platform call runs outside any transaction; its answer is written the moment it arrives,
  fenced, with ``post.first_comment.published`` or ``post.first_comment.failed`` through the outbox
  in the same transaction (exactly once: only the write that changed the row emits).
- Right before the comment's call leaves, the attempt records (fenced) that it starts sending: a
  worker lost before that sent nothing, and the sweeper sends the comment again on every platform.
- An unknown outcome is never re-sent blindly: only where the platform deduplicates on our key
  (``idempotent_publish == "key"``: Bluesky's record key, Mastodon's ``Idempotency-Key``, the entry
  id and ``.comment``) is it sent again; elsewhere the comment ends FAILED ``unknown_outcome``.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from accounts.models import AccountStatus
from accounts.services import account_credentials, account_mark_unauthorized
from core import work
from core.errors import ApplicationError
from platforms import registry
from platforms.base import (
    AuthError,
    ErrorCode,
    NotSupported,
    Permanent,
    Platform,
    PlatformError,
    PostRef,
    PublishRequest,
    PublishResult,
    ReplyTo,
    UnknownOutcome,
)
from platforms.capabilities import CAPABILITIES
from platforms.http import before_creates
from posts.models import CommentStatus, Post, PostTarget
from posts.pipeline.claims import SENDING_KEY, started_sending
from posts.pipeline.enqueue import enqueue_first_comments
from posts.rendering import post_record
from webhooks.events import emit_event

logger = logging.getLogger(__name__)

PUBLISHED_EVENT = "post.first_comment.published"
FAILED_EVENT = "post.first_comment.failed"
BACKOFF_SECONDS = (10.0, 30.0, 90.0, 240.0, 600.0)
UNKNOWN_MESSAGE = "The platform did not confirm whether the comment was created ({detail}). Check the post."
INTERRUPTED_MESSAGE = "Sending the comment was interrupted; check the post for it."
NOT_SENT_MESSAGE = "Sending the comment was interrupted before anything was sent, on every attempt; retry it."


def comment_key(target_id: str) -> str:
    """The comment's idempotency key / record key: never the entry's own, nor a thread item's."""
    return f"{target_id}.comment"


@dataclass(frozen=True)
class CommentClaim:
    """A comment this worker owns until ``lease_until`` (the fencing token of its writes)."""

    target_id: str
    lease_until: dt.datetime
    attempts: int


_CLAIM_SQL = """
UPDATE posts_posttarget
SET comment_status = %(sending)s, comment_lease_until = %(lease)s, comment_attempts = comment_attempts + 1
WHERE id = ANY(%(ids)s) AND comment_status = %(pending)s AND comment_due_at <= %(now)s
RETURNING id, comment_attempts
"""

_STARTED_SENDING_SQL = """
UPDATE posts_posttarget
SET first_comment = first_comment || jsonb_build_object(%(key)s, %(marker)s::text)
WHERE id = %(id)s AND comment_status = %(sending)s AND comment_lease_until = %(lease)s
"""


class _NotStarted(Exception):
    """The comment's call did not leave: its claim was taken over, or recording that it starts
    sending failed."""


def queue_scheduled(scheduled: list[tuple[str, dt.datetime]], *, now: dt.datetime) -> None:
    """In the caller's transaction, the one whose write recorded the entries PUBLISHED and, in the
    same statement, scheduled their first comments (``outcomes.record``: PENDING, due
    ``delaySeconds`` after ``now``, once per entry): queue each ``(target id, due at)`` after
    commit, with a countdown to its time."""
    for target_id, due_at in scheduled:
        _queue_at(target_id, max((due_at - now).total_seconds(), 0.0))


def send_first_comments(target_ids: list[str]) -> int:
    """Claim each due PENDING comment of ``target_ids`` and send it once. Each is claimed just
    before its call, so its lease covers that call alone, never a wait behind the others of the
    batch. Safe to run any number of times: what is not claimed is left alone (one that arrived
    early is queued again for its time). Returns how many this call attempted."""
    ids = list(dict.fromkeys(target_ids))
    errors: list[BaseException] = []
    attempted = 0
    for target_id in ids:
        claims = _claim([target_id], now=timezone.now())
        if not claims:
            _requeue_early(target_id)
            continue
        attempted += 1
        try:
            _attempt(claims[0])
        except Exception as exc:
            logger.exception("first comment of %s raised", target_id)
            errors.append(exc)
    if errors:
        raise errors[0]
    return attempted


def _requeue_early(target_id: str) -> None:
    """A task that arrived before its comment was due (clock skew, a countdown rounded down) puts
    it back with the remaining countdown instead of leaving it to the sweeper."""
    now = timezone.now()
    due_at = (
        PostTarget.objects.filter(id=target_id, comment_status=CommentStatus.PENDING, comment_due_at__gt=now)
        .values_list("comment_due_at", flat=True)
        .first()
    )
    if due_at is not None:
        delay = (due_at - now).total_seconds() + 0.05
        if delay <= settings.PUBLISH_MAX_COUNTDOWN_SECONDS:
            enqueue_first_comments([target_id], countdown=delay)


def _claim(target_ids: list[str], *, now: dt.datetime) -> list[CommentClaim]:
    if not target_ids:
        return []
    lease_until = now + dt.timedelta(seconds=settings.PUBLISH_LEASE_SECONDS)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            _CLAIM_SQL,
            {
                "ids": target_ids,
                "now": now,
                "lease": lease_until,
                "sending": CommentStatus.SENDING.value,
                "pending": CommentStatus.PENDING.value,
            },
        )
        rows = cursor.fetchall()
    return [CommentClaim(target_id=row[0], lease_until=lease_until, attempts=row[1]) for row in rows]


def _attempt(claim: CommentClaim) -> None:
    """One attempt: read, call the platform outside any transaction, write what came back fenced."""
    target = PostTarget.objects.select_related("post", "account").filter(id=claim.target_id).first()
    if target is None:
        return
    text = target.first_comment_text or str((target.post.first_comment or {}).get("text") or "")
    state: dict[str, Any] = dict((target.first_comment or {}).get("state") or {})
    account = target.account
    if account is None:
        fail(claim, ErrorCode.INVALID_REQUEST, "The connected account was removed before the comment was sent")
        return
    if account.status == AccountStatus.UNAUTHORIZED:
        fail(claim, ErrorCode.AUTH_EXPIRED, "The account is unauthorized. Reconnect it; the comment was not sent.")
        return
    try:
        creds = account_credentials(account=account)
    except ApplicationError:
        fail(claim, ErrorCode.INVALID_REQUEST, "The connected account was removed before the comment was sent")
        return
    except PlatformError as exc:
        _on_error(claim, target, exc, state)
        return
    on = PostRef(target.platform_post_id, _cid_of(target))
    request = PublishRequest(
        target_id=comment_key(target.id), content_type="TEXT", text=text, reply_to=ReplyTo(root=on, parent=on)
    )
    client = registry.get_client(target.platform)
    try:
        with before_creates(partial(_start_sending, claim)):
            result = client.comment(creds, request, state)
    except _NotStarted:
        return
    except PlatformError as exc:
        _on_error(claim, target, exc, state)
        return
    except NotSupported:
        fail(claim, ErrorCode.INVALID_REQUEST, f"{target.platform} has no comment API")
        return
    except Exception as exc:  # a bug or an unreadable answer after sending: the comment may exist
        logger.exception("first comment of %s raised an unclassified error", claim.target_id)
        _on_error(claim, target, UnknownOutcome(f"unexpected error: {type(exc).__name__}"), state)
        return
    record_result(claim, result)


def _start_sending(claim: CommentClaim) -> None:
    """Right before the comment's call leaves: record, fenced, that this attempt starts sending
    (until then a lost worker has sent nothing). Raises ``_NotStarted`` (the call does not leave)
    when the claim was taken over or the record could not be written: the sweeper, finding no
    record once the lease runs out, sends the comment again."""
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                _STARTED_SENDING_SQL,
                {
                    "key": SENDING_KEY,
                    "marker": claim.lease_until.isoformat(),
                    "id": claim.target_id,
                    "sending": CommentStatus.SENDING.value,
                    "lease": claim.lease_until,
                },
            )
            recorded = cursor.rowcount == 1
    except Exception as exc:
        logger.warning("could not record that the comment of %s starts sending: %s", claim.target_id, exc)
        raise _NotStarted from exc
    if not recorded:
        raise _NotStarted


def _cid_of(target: PostTarget) -> str:
    """Bluesky's content id of the post, where a thread kept it (else the client reads it)."""
    items = target.thread_items or []
    return str(items[0].get("cid") or "") if items else ""


def record_result(claim: CommentClaim, result: PublishResult) -> bool:
    """Write what a comment call answered, fenced by ``claim``: the comment's id (PUBLISHED), a
    flow to resume (PENDING with its state, the attempt given back), or FAILED ``unknown_outcome``
    for an answer without an id. False when the claim was taken over (nothing written)."""
    if not result.done:
        # A multi-step flow (a Threads reply container): resume it, without using up an attempt.
        return retry(claim, delay=max(result.poll_after, 0.5), state=dict(result.state), count_attempt=False)
    if result.platform_post_id:
        return _write(claim, CommentStatus.PUBLISHED, {"platformCommentId": result.platform_post_id})
    return fail(claim, ErrorCode.UNKNOWN_OUTCOME, UNKNOWN_MESSAGE.format(detail="answered without an id"))


def _on_error(claim: CommentClaim, target: PostTarget, exc: PlatformError, state: dict[str, Any]) -> None:
    if isinstance(exc, AuthError):
        fail(claim, exc.error_code, exc.message)
        if target.account_id:
            account_mark_unauthorized(account_id=target.account_id, reason=exc.message)
    elif isinstance(exc, UnknownOutcome):
        if CAPABILITIES[Platform(target.platform)].idempotent_publish == "key":
            _retry_or_fail(claim, exc, state)  # re-sent under the same key: the platform dedupes it
        else:
            fail(claim, ErrorCode.UNKNOWN_OUTCOME, UNKNOWN_MESSAGE.format(detail=exc.message))
    elif isinstance(exc, Permanent) or type(exc) is PlatformError:
        fail(claim, exc.error_code, exc.message)
    else:  # RateLimited, QuotaExhausted, Transient: nothing was created
        _retry_or_fail(claim, exc, state)


def _retry_or_fail(claim: CommentClaim, exc: PlatformError, state: dict[str, Any]) -> None:
    if claim.attempts >= settings.PUBLISH_MAX_ATTEMPTS:
        message = UNKNOWN_MESSAGE.format(detail=exc.message) if isinstance(exc, UnknownOutcome) else exc.message
        fail(claim, exc.error_code, message)
        return
    delay = work.backoff_seconds(claim.attempts, BACKOFF_SECONDS)
    if exc.retry_at is not None:
        delay = max(delay, (exc.retry_at - timezone.now()).total_seconds() + random.uniform(0.0, 1.0))
    retry(claim, delay=delay, state=state, error_code=exc.error_code)


def fail(claim: CommentClaim, error_code: str, message: str) -> bool:
    """SENDING → FAILED with ``post.first_comment.failed``, fenced by ``claim``."""
    return _write(claim, CommentStatus.FAILED, {"errorCode": str(error_code), "errorMessage": message[:4000]})


def retry(
    claim: CommentClaim,
    *,
    delay: float,
    state: dict[str, Any],
    error_code: str = "",
    count_attempt: bool = True,
) -> bool:
    """SENDING → PENDING, due in ``delay`` seconds, keeping ``state`` (a flow under way), fenced;
    queued after commit. ``count_attempt`` False gives the attempt back (a polling round)."""
    now = timezone.now()
    kept: dict[str, Any] = {"state": state} if state else {}
    if error_code:
        kept["lastErrorCode"] = str(error_code)
    changes: dict[str, Any] = {
        "comment_status": CommentStatus.PENDING,
        "comment_due_at": now + dt.timedelta(seconds=delay),
        "comment_lease_until": None,
        "first_comment": kept,
        "updated_at": now,
    }
    if not count_attempt:
        changes["comment_attempts"] = F("comment_attempts") - 1
    with transaction.atomic():
        if not _fenced(claim).update(**changes):
            return False
        _queue_at(claim.target_id, delay)
    return True


def _fenced(claim: CommentClaim) -> QuerySet[PostTarget]:
    return PostTarget.objects.filter(
        id=claim.target_id, comment_status=CommentStatus.SENDING, comment_lease_until=claim.lease_until
    )


def _write(claim: CommentClaim, status: CommentStatus, result: dict[str, Any]) -> bool:
    """The terminal write of a comment and its one event, in one transaction; a claim that was
    taken over writes nothing and emits nothing."""
    now = timezone.now()
    with transaction.atomic():
        changed = _fenced(claim).update(
            comment_status=status,
            comment_due_at=None,
            comment_lease_until=None,
            first_comment=result,
            updated_at=now,
        )
        if not changed:
            return False
        post = Post.objects.get(targets__id=claim.target_id)
        emit_event(
            workspace_id=str(post.workspace_id),
            name=PUBLISHED_EVENT if status == CommentStatus.PUBLISHED else FAILED_EVENT,
            data=event_data(post, claim.target_id),
        )
    return True


def event_data(post: Post, target_id: str) -> dict[str, Any]:
    """``{post, platformId, platform, firstComment}``: the post's record, the entry the comment is under, and
    the comment's result (as the entry's ``firstComment``)."""
    record = post_record(post)
    entry = next(e for e in record["platforms"] if e["id"] == target_id)
    return {
        "post": record,
        "platformId": target_id,
        "platform": entry["platform"],
        "firstComment": entry.get("firstComment") or {},
    }


def _queue_at(target_id: str, delay: float) -> None:
    """Queue the comment's task after commit, with a countdown; a wait past the countdown limit is
    left to the sweeper (no long ETA tasks)."""
    if delay <= settings.PUBLISH_MAX_COUNTDOWN_SECONDS:
        transaction.on_commit(partial(enqueue_first_comments, [target_id], countdown=delay), robust=True)


# --- the sweeper's part ----------------------------------------------------------------------


def recover(*, now: dt.datetime, limit: int) -> tuple[list[str], list[str], list[str]]:
    """Comments whose worker was lost (lease expired): sent again when it was lost before the call
    left, or where the platform dedupes on our key (attempts left), else FAILED
    ``unknown_outcome`` with their event. And due
    PENDING comments whose task was lost, queued again. Returns (re-queued, failed, lost)."""
    expired = list(
        PostTarget.objects.filter(comment_status=CommentStatus.SENDING, comment_lease_until__lt=now).values_list(
            "id", "platform", "comment_lease_until", "comment_attempts", "first_comment"
        )[:limit]
    )
    requeued: list[str] = []
    failed: list[str] = []
    for target_id, platform, lease_until, attempts, result in expired:
        if lease_until is None:  # cannot be: the filter asked for an expired lease
            continue
        claim = CommentClaim(target_id=target_id, lease_until=lease_until, attempts=attempts)
        result = result or {}
        state = dict(result.get("state") or {})
        sent = started_sending(result.get(SENDING_KEY), lease_until)
        keyed = CAPABILITIES[Platform(platform)].idempotent_publish == "key"
        if (keyed or not sent) and attempts < settings.PUBLISH_MAX_ATTEMPTS:
            if retry(claim, delay=0.0, state=state):
                requeued.append(target_id)
        elif not sent:
            if fail(claim, ErrorCode.PLATFORM_UNAVAILABLE, NOT_SENT_MESSAGE):
                failed.append(target_id)
        elif fail(claim, ErrorCode.UNKNOWN_OUTCOME, INTERRUPTED_MESSAGE):
            failed.append(target_id)
    cutoff = now - dt.timedelta(seconds=settings.PUBLISH_LOST_TASK_SECONDS)
    with transaction.atomic():
        lost = list(
            PostTarget.objects.filter(comment_status=CommentStatus.PENDING, comment_due_at__lt=cutoff)
            .select_for_update(skip_locked=True)
            .values_list("id", flat=True)[:limit]
        )
        if lost:
            PostTarget.objects.filter(id__in=lost, comment_status=CommentStatus.PENDING).update(comment_due_at=now)
            transaction.on_commit(partial(enqueue_first_comments, lost), robust=True)
    return requeued, failed, lost
