"""The first comment of an entry: one more platform step (``posts.pipeline.step``) after the post
is live, on columns of its own (``COLUMNS``), so that the entry's status and the post's final event
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
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from accounts.errors import AccountDisconnected
from accounts.models import AccountStatus
from accounts.services import account_credentials, account_mark_unauthorized
from core import work
from core.errors import ApplicationError
from platforms import registry
from platforms.base import (
    Credentials,
    ErrorCode,
    NotSupported,
    Platform,
    PlatformClient,
    PlatformError,
    PostRef,
    PublishRequest,
    PublishResult,
    ReplyTo,
    UnknownOutcome,
)
from platforms.capabilities import CAPABILITIES
from posts.models import CommentStatus, Post, PostTarget
from posts.pipeline import step
from posts.pipeline.claims import SENDING_KEY
from posts.pipeline.enqueue import enqueue_first_comments
from posts.rendering import post_record
from webhooks.events import emit_event

logger = logging.getLogger(__name__)

PUBLISHED_EVENT = "post.first_comment.published"
FAILED_EVENT = "post.first_comment.failed"
UNKNOWN_MESSAGE = "The platform did not confirm whether the comment was created ({detail}). Check the post."
INTERRUPTED_MESSAGE = "Sending the comment was interrupted; check the post for it."
NOT_SENT_MESSAGE = "Sending the comment was interrupted before anything was sent, on every attempt; retry it."


def comment_key(target_id: str) -> str:
    """The comment's idempotency key / record key: never the entry's own, nor a thread item's."""
    return f"{target_id}.comment"


# A comment claimed by this worker until ``lease_until`` (the fencing token of its writes).
CommentClaim = step.RowClaim

# The comment's work on the entry's row: its own status, due time, lease and attempts; the start of
# sending is recorded in ``first_comment`` (under ``SENDING_KEY``).
COLUMNS = step.StepColumns(
    table="posts_posttarget",
    status="comment_status",
    due="comment_due_at",
    lease="comment_lease_until",
    attempts="comment_attempts",
    pending=CommentStatus.PENDING.value,
    sending=CommentStatus.SENDING.value,
    start_expression=f"first_comment = first_comment || jsonb_build_object('{SENDING_KEY}', %(marker)s::text)",
)


def queue_scheduled(scheduled: list[tuple[str, dt.datetime]], *, now: dt.datetime) -> None:
    """In the caller's transaction, the one whose write recorded the entries PUBLISHED and, in the
    same statement, scheduled their first comments (``outcomes.record``: PENDING, due
    ``delaySeconds`` after ``now``, once per entry): queue each ``(target id, due at)`` after
    commit, with a countdown to its time."""
    for target_id, due_at in scheduled:
        _queue_at(target_id, max((due_at - now).total_seconds(), 0.0))


class _CommentStep:
    """The first comment as a platform step: each claimed just before its call (one by one), so
    its lease covers that call alone, never a wait behind the others of the batch."""

    name = "first_comment"
    one_by_one = True

    def claim(self, ids: list[str], *, now: dt.datetime) -> list[CommentClaim]:
        return _claim(ids, now=now)

    def requeue_early(self, ids: list[str], claims: list[CommentClaim]) -> None:
        """A task that arrived before its comment was due is queued again with the remaining
        countdown instead of being left to the sweeper."""
        for target_id, delay in step.early(COLUMNS, ids, claims):
            enqueue_first_comments([target_id], countdown=delay)

    def prepare(self, claims: list[CommentClaim], errors: list[BaseException]) -> list[_Call]:
        return step.each(claims, _prepare, errors=errors, name=lambda claim: f"first comment of {claim.target_id}")

    def call(self, call: _Call) -> PublishResult:
        with step.send(call.sending):
            return call.client.comment(call.creds, call.request, call.state)

    def write(self, arrived: list[work.Arrived[_Call, PublishResult]], errors: list[BaseException]) -> None:
        step.each(
            arrived,
            lambda answer: _finish(answer.item, answer.value, answer.error),
            errors=errors,
            name=lambda answer: f"first comment of {answer.item.claim.target_id}",
        )


@dataclass
class _Call:
    claim: CommentClaim
    target: PostTarget
    client: PlatformClient
    creds: Credentials
    request: PublishRequest
    state: dict[str, Any]
    sending: step.Sending


def send_first_comments(target_ids: list[str]) -> int:
    """Claim each due PENDING comment of ``target_ids`` and send it once (``step.run``). Safe to
    run any number of times: what is not claimed is left alone (one that arrived early is queued
    again for its time). Returns how many this call attempted."""
    return step.run(COMMENT_STEP, list(target_ids), width=1)


def _claim(target_ids: list[str], *, now: dt.datetime) -> list[CommentClaim]:
    return step.claim_rows(COLUMNS, target_ids, now=now)


def _prepare(claim: CommentClaim) -> _Call | None:
    """Read what the comment's call needs; a comment that cannot be sent is written here (None)."""
    target = PostTarget.objects.select_related("post", "account").filter(id=claim.target_id).first()
    if target is None:
        return None
    text = target.first_comment_text or str((target.post.first_comment or {}).get("text") or "")
    state: dict[str, Any] = dict((target.first_comment or {}).get("state") or {})
    account = target.account
    if account is None:
        fail(claim, ErrorCode.INVALID_REQUEST, "The connected account was removed before the comment was sent")
        return None
    if account.status == AccountStatus.UNAUTHORIZED:
        fail(claim, ErrorCode.AUTH_EXPIRED, "The account is unauthorized. Reconnect it; the comment was not sent.")
        return None
    try:
        creds = account_credentials(account=account)
    except AccountDisconnected:
        fail(claim, AccountDisconnected.code, "The connected account was disconnected before the comment was sent")
        return None
    except ApplicationError:
        fail(claim, ErrorCode.INVALID_REQUEST, "The connected account was removed before the comment was sent")
        return None
    except PlatformError as exc:
        _on_error(claim, target, exc, state)
        return None
    on = PostRef(target.platform_post_id, _cid_of(target))
    request = PublishRequest(
        target_id=comment_key(target.id), content_type="TEXT", text=text, reply_to=ReplyTo(root=on, parent=on)
    )
    sending = step.Sending(claim.lease_until, partial(_record_start, claim), label=f"the comment of {claim.target_id}")
    return _Call(claim, target, registry.get_client(target.platform), creds, request, state, sending)


def _finish(call: _Call, result: PublishResult | None, exc: BaseException | None) -> None:
    """Every path of one attempt after its call ends in a fenced write."""
    claim, target, state = call.claim, call.target, call.state
    if isinstance(exc, step.NotStarted) and exc.taken_over:
        return  # another holder's now; nothing was sent
    if isinstance(exc, step.LeaseRunningOut | step.NotStarted):
        retry(claim, delay=0.0, state=state, count_attempt=False)  # nothing was sent: again, at once
        return
    if isinstance(exc, PlatformError):
        _on_error(claim, target, exc, state)
        return
    if isinstance(exc, NotSupported):
        fail(claim, ErrorCode.INVALID_REQUEST, f"{target.platform} has no comment API")
        return
    if exc is not None:  # a bug or an unreadable answer after sending: the comment may exist
        logger.error(
            "first comment of %s raised an unclassified error",
            claim.target_id,
            exc_info=(type(exc), exc, exc.__traceback__),
        )
        _on_error(claim, target, UnknownOutcome(f"unexpected error: {type(exc).__name__}"), state)
        return
    assert result is not None
    record_result(claim, result)


def _record_start(claim: CommentClaim) -> bool:
    return step.record_start(COLUMNS, claim)


def _start_sending(claim: CommentClaim) -> None:
    """Right before the comment's call leaves: record, fenced, that this attempt starts sending
    (until then a lost worker has sent nothing). Raises ``step.NotStarted`` (the call does not
    leave) when the claim was taken over or the record could not be written."""
    step.Sending(claim.lease_until, partial(_record_start, claim), label=claim.target_id).start()


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
    decision = step.decide(exc, attempts=claim.attempts, unknown_message=UNKNOWN_MESSAGE)
    if decision.verdict is step.Verdict.UNKNOWN:
        if CAPABILITIES[Platform(target.platform)].idempotent_publish == "key":
            # re-sent under the same key: the platform dedupes it
            decision = step.retry_or_fail(exc, attempts=claim.attempts, unknown_message=UNKNOWN_MESSAGE)
        else:
            decision = step.Decision(step.Verdict.FAIL, ErrorCode.UNKNOWN_OUTCOME, decision.message)
    if decision.verdict is step.Verdict.RETRY:
        retry(claim, delay=decision.delay, state=state, error_code=decision.error_code)
        return
    fail(claim, decision.error_code, decision.message)
    if decision.verdict is step.Verdict.AUTH and target.account_id:
        account_mark_unauthorized(account_id=target.account_id, reason=exc.message)


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
    return PostTarget.objects.filter(**step.fenced_filter(COLUMNS, claim))


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
    states: dict[str, dict[str, Any]] = {}
    rows: list[step.Expired] = []
    for target_id, platform, lease_until, attempts, result in expired:
        if lease_until is None:  # cannot be: the filter asked for an expired lease
            continue
        result = result or {}
        states[target_id] = dict(result.get("state") or {})
        rows.append(
            step.Expired(
                claim=CommentClaim(target_id=target_id, lease_until=lease_until, attempts=attempts),
                sent=step.started_sending(result.get(SENDING_KEY), lease_until),
                resend_safe=CAPABILITIES[Platform(platform)].idempotent_publish == "key",
                can_lookup=False,  # a comment is not found by the publish lookups
            )
        )
    recovered = step.recover_expired(
        rows,
        release=lambda claim: retry(claim, delay=0.0, state=states[claim.target_id]),
        fail=fail,
        interrupted_message=INTERRUPTED_MESSAGE,
        not_sent_message=NOT_SENT_MESSAGE,
    )
    lost = step.requeue_lost(COLUMNS, now=now, limit=limit, touched=COLUMNS.due, enqueue=enqueue_first_comments)
    return recovered.requeued, recovered.failed, lost


COMMENT_STEP = _CommentStep()
