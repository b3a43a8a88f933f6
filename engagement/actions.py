"""Replies, hides, unhides, deletes and likes of comments: platform steps
(``posts.pipeline.step``) on :class:`~engagement.models.CommentAction` rows, the same shape as
publishing, the first comment and the edits and deletes after publishing.

- Claimed with a conditional UPDATE (PENDING and due → SENDING, attempts + 1, lease), and only when
  no earlier action of the same comment is still open: a comment's actions reach the platform one
  after the other, in the order they were asked for.
- Before the call leaves, the attempt records (fenced) that it starts sending; the call runs
  outside any transaction; its outcome is written fenced by the lease in one transaction with the
  comment's change (a reply stored as the account's own comment and the comment ``answered``; hidden
  or shown; deleted with its replies) and its one event (``comment.replied``, ``comment.hidden``,
  ``comment.unhidden``, ``comment.deleted``, ``comment.liked``, or ``comment.action_failed``).
- Transient errors and rate limits: back to PENDING with backoff (5 attempts). Hide, unhide, delete
  and like are idempotent at the platform (setting a state twice, deleting what is gone and liking
  twice are harmless), so an unknown outcome is simply tried again. A reply is sent again under the
  same key where the platform deduplicates on it (``idempotent_publish == "key"``: Mastodon's
  ``Idempotency-Key``, Bluesky's record key); elsewhere it is **looked up first** where the platform
  reads comments: the next attempt lists the post's comments (outside any transaction) and a reply
  of the account's with the same text under the same comment, not already known here, settles it
  DONE with nothing sent; otherwise it is sent. A platform without a comment read: FAILED
  ``unknown_outcome``.
- The sweeper (:func:`recover`, ``step.recover_expired``): an expired lease whose attempt had not
  started sending is sent again; one that had is re-sent or looked up as above; a due action whose
  task was lost is queued again.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from accounts.errors import AccountDisconnected
from accounts.models import AccountStatus, SocialAccount
from accounts.services import account_credentials, account_mark_unauthorized
from core import metrics, work
from core.errors import ApplicationError
from engagement.enqueue import enqueue_actions
from engagement.models import ActionKind, ActionStatus, Comment, CommentAction
from engagement.records import ACTION_COLUMNS, COMMENT_COLUMNS, action_record, comment_record
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
    RemoteComment,
    ReplyTo,
    UnknownOutcome,
)
from platforms.capabilities import CAPABILITIES
from posts.pipeline import step
from webhooks.events import emit_event

logger = logging.getLogger(__name__)

DONE_EVENTS = {
    ActionKind.REPLY: "comment.replied",
    ActionKind.HIDE: "comment.hidden",
    ActionKind.UNHIDE: "comment.unhidden",
    ActionKind.DELETE: "comment.deleted",
    ActionKind.LIKE: "comment.liked",
}
FAILED_EVENT = "comment.action_failed"
UNKNOWN_MESSAGE = "The platform did not confirm whether the reply was posted ({detail}). Check the comment."
INTERRUPTED_MESSAGE = "Sending was interrupted; check the comment on the platform before asking again."
NOT_SENT_MESSAGE = "Sending was interrupted before anything was sent, on every attempt; ask again."
NO_LOOKUP_MESSAGE = "the last attempt was interrupted and the platform offers no read of its comments to check it"
LOOKUP_PAGES = 10  # pages of the post's comments a lookup reads at most
LOOKUP_MARGIN = dt.timedelta(minutes=5)  # platform clocks: a reply may be stamped a little before it was asked

COLUMNS = step.StepColumns(
    table="engagement_commentaction",
    status="status",
    due="due_at",
    lease="lease_until",
    attempts="attempts",
    pending=ActionStatus.PENDING.value,
    sending=ActionStatus.SENDING.value,
    start_expression="sending = %(marker)s",
    claimable=(
        "NOT EXISTS (SELECT 1 FROM engagement_commentaction e WHERE e.comment_id = r.comment_id"
        " AND e.status IN ('PENDING', 'SENDING') AND (e.created_at, e.id) < (r.created_at, r.id))"
    ),
)


def reply_key(action_id: str) -> str:
    """The reply's idempotency key (record key) at the platform: the action's id, never reused."""
    return action_id


@dataclass
class _Call:
    claim: step.RowClaim
    action: CommentAction
    comment: Comment
    client: PlatformClient
    creds: Credentials
    sending: step.Sending
    # An earlier attempt of a reply started sending and never ended: look the reply up first.
    verify: bool = False
    known_replies: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Found:
    """The lookup found the reply on the platform: DONE with nothing sent."""

    reply: RemoteComment


class _CannotLookUp(Exception):
    """A reply that may have reached a platform whose comments cannot be read to check it."""


Answer = PublishResult | _Found | None


class _ActionStep:
    name = "comment_actions"
    one_by_one = False

    def claim(self, ids: list[str], *, now: dt.datetime) -> list[step.RowClaim]:
        return step.claim_rows(COLUMNS, ids, now=now)

    def requeue_early(self, ids: list[str], claims: list[step.RowClaim]) -> None:
        """An action that arrived before its time is queued again for it; one waiting behind an
        earlier action of its comment is queued when that one ends (:func:`_write`)."""
        for action_id, delay in step.early(COLUMNS, ids, claims):
            enqueue_actions([action_id], countdown=delay)

    def prepare(self, claims: list[step.RowClaim], errors: list[BaseException]) -> list[_Call]:
        actions = {
            a.id: a
            for a in CommentAction.objects.select_related("comment", "comment__account").filter(
                id__in=[c.target_id for c in claims]
            )
        }
        return step.each(
            [(claim, actions[claim.target_id]) for claim in claims if claim.target_id in actions],
            lambda pair: _prepare(*pair),
            errors=errors,
            name=lambda pair: f"preparing comment action {pair[0].target_id}",
        )

    def call(self, call: _Call) -> Answer:
        with step.send(call.sending):
            if call.verify:
                found = _look_up_reply(call)
                if found is not None:
                    return _Found(found)
            call.sending.start()  # every request of an action changes something
            action, comment = call.action, call.comment
            kind = ActionKind(action.kind)
            if kind == ActionKind.REPLY:
                return call.client.reply_comment(call.creds, reply_request(action, comment), dict(action.state or {}))
            if kind in (ActionKind.HIDE, ActionKind.UNHIDE):
                call.client.set_comment_hidden(call.creds, comment.platform_comment_id, kind == ActionKind.HIDE)
            elif kind == ActionKind.DELETE:
                call.client.delete_comment(
                    call.creds, comment.platform_comment_id, parent_id=comment.parent_platform_id
                )
            else:
                call.client.like_comment(call.creds, comment.platform_comment_id)
            return None

    def write(self, arrived: list[work.Arrived[_Call, Answer]], errors: list[BaseException]) -> None:
        step.each(
            arrived,
            lambda answer: _finish(answer.item, answer.value, answer.error),
            errors=errors,
            name=lambda answer: f"comment action {answer.item.claim.target_id}",
        )


ACTION_STEP = _ActionStep()


def run_comment_actions(action_ids: list[str]) -> int:
    """Claim each due PENDING action of ``action_ids`` and send it once (``step.run``). Safe to run
    any number of times. Returns how many this call attempted."""
    return step.run(ACTION_STEP, list(action_ids), width=settings.PUBLISH_ATTEMPT_THREADS)


def reply_request(action: CommentAction, comment: Comment) -> PublishRequest:
    """The reply as the platform client takes it: under the comment, in the thread of its post (a
    Google Business review: no post)."""
    return PublishRequest(
        target_id=reply_key(action.id),
        content_type="TEXT",
        text=action.text,
        reply_to=ReplyTo(root=PostRef(comment.platform_post_id), parent=PostRef(comment.platform_comment_id)),
    )


def _prepare(claim: step.RowClaim, action: CommentAction) -> _Call | None:
    comment = action.comment
    account = comment.account
    if account.status == AccountStatus.UNAUTHORIZED:
        message = "The account is unauthorized. Reconnect it and ask again."
        _write(claim, ActionStatus.FAILED, error_code=ErrorCode.AUTH_EXPIRED, message=message)
        return None
    try:
        creds = account_credentials(account=account)
    except AccountDisconnected:
        _write(claim, ActionStatus.FAILED, error_code=AccountDisconnected.code, message="The account was disconnected")
        return None
    except ApplicationError:
        _write(claim, ActionStatus.FAILED, error_code=ErrorCode.INVALID_REQUEST, message="The account was removed")
        return None
    except PlatformError as exc:
        _on_error(claim, action, exc)
        return None
    sending = step.Sending(
        claim.lease_until, partial(step.record_start, COLUMNS, claim), label=f"comment action {claim.target_id}"
    )
    # The row was read after the claim: a marker here is an earlier attempt's that never ended.
    verify = action.kind == ActionKind.REPLY and bool(action.sending)
    known: frozenset[str] = frozenset()
    if verify:
        known = frozenset(
            Comment.objects.filter(account_id=account.id, from_account=True).values_list(
                "platform_comment_id", flat=True
            )
        )
    client = registry.get_client(comment.platform)
    return _Call(claim, action, comment, client, creds, sending, verify, known)


def _look_up_reply(call: _Call) -> RemoteComment | None:
    """The account's reply to the comment with the action's text, written since the action was
    asked for and not one this service already knows, among the post's comments; None when there is
    none (the reply is to be sent). A platform without a comment read cannot check: the reply is
    never re-sent blindly (:class:`_CannotLookUp`)."""
    action, comment = call.action, call.comment
    if "read" not in CAPABILITIES[Platform(comment.platform)].comment_actions:
        raise _CannotLookUp
    parents = {comment.platform_comment_id, comment.parent_platform_id} - {""}
    since = action.created_at - LOOKUP_MARGIN
    cursor = ""
    for _ in range(LOOKUP_PAGES):
        try:
            page = call.client.list_comments(call.creds, comment.platform_post_id, since=since, cursor=cursor)
        except NotSupported:
            raise _CannotLookUp from None
        for remote in page.comments:
            if (
                remote.from_account
                and remote.parent_id in parents
                and remote.platform_comment_id not in call.known_replies
                and remote.text.strip() == action.text.strip()
            ):
                return remote
        cursor = page.cursor
        if not cursor:
            break
    return None


def _finish(call: _Call, answer: Answer, exc: BaseException | None) -> None:
    claim, action = call.claim, call.action
    if isinstance(exc, step.NotStarted) and exc.taken_over:
        return
    if isinstance(exc, step.LeaseRunningOut | step.NotStarted):
        _release(claim, delay=0.0, count_attempt=False, keep_marker=True)
        return
    if isinstance(exc, PlatformError):
        _on_error(claim, action, exc)
        return
    if isinstance(exc, _CannotLookUp):
        message = UNKNOWN_MESSAGE.format(detail=NO_LOOKUP_MESSAGE)
        _write(claim, ActionStatus.FAILED, error_code=ErrorCode.UNKNOWN_OUTCOME, message=message)
        return
    if isinstance(exc, NotSupported):
        message = f"{call.comment.platform} cannot {action.kind.lower()} this comment through its API"
        _write(claim, ActionStatus.FAILED, error_code=ErrorCode.INVALID_REQUEST, message=message)
        return
    if exc is not None:
        logger.error("comment action %s raised an unclassified error", claim.target_id, exc_info=(type(exc), exc, None))
        _on_error(claim, action, UnknownOutcome(f"unexpected error: {type(exc).__name__}"))
        return
    if isinstance(answer, _Found):
        found = answer.reply
        _write(claim, ActionStatus.DONE, reply=(found.platform_comment_id, found.permalink, found.created_at))
        return
    if isinstance(answer, PublishResult):
        if not answer.done:
            # A multi-step reply (a Threads reply container): resume it, without using up an attempt.
            _release(claim, delay=max(answer.poll_after, 0.5), state=dict(answer.state), count_attempt=False)
            return
        if not answer.platform_post_id:
            message = UNKNOWN_MESSAGE.format(detail="answered without an id")
            _write(claim, ActionStatus.FAILED, error_code=ErrorCode.UNKNOWN_OUTCOME, message=message)
            return
        _write(claim, ActionStatus.DONE, reply=(answer.platform_post_id, answer.url, answer.published_at))
        return
    _write(claim, ActionStatus.DONE)


def _on_error(claim: step.RowClaim, action: CommentAction, exc: PlatformError) -> None:
    decision = step.decide(exc, attempts=claim.attempts, unknown_message=UNKNOWN_MESSAGE)
    keep_marker = False
    if decision.verdict is step.Verdict.UNKNOWN:
        if _resend_safe(action) or _can_look_up(action):
            # Sent again under the same key, idempotent by nature, or looked up first (the marker stays).
            decision = step.retry_or_fail(exc, attempts=claim.attempts, unknown_message=UNKNOWN_MESSAGE)
            keep_marker = True
        else:
            decision = step.Decision(step.Verdict.FAIL, ErrorCode.UNKNOWN_OUTCOME, decision.message)
    if decision.verdict is step.Verdict.RETRY:
        _release(
            claim,
            delay=decision.delay,
            error_code=decision.error_code,
            message=decision.message,
            keep_marker=keep_marker,
        )
        return
    _write(claim, ActionStatus.FAILED, error_code=decision.error_code, message=decision.message)
    if decision.verdict is step.Verdict.AUTH:
        account_mark_unauthorized(account_id=action.comment.account_id, reason=exc.message)


def _resend_safe(action: CommentAction) -> bool:
    """Sending the action again cannot do it twice."""
    if action.kind != ActionKind.REPLY:
        return True  # hide/unhide set a state, a delete of what is gone is done, a second like is harmless
    return CAPABILITIES[Platform(action.comment.platform)].idempotent_publish == "key"


def _can_look_up(action: CommentAction) -> bool:
    return "read" in CAPABILITIES[Platform(action.comment.platform)].comment_actions


def _release(
    claim: step.RowClaim,
    *,
    delay: float,
    error_code: str = "",
    message: str = "",
    count_attempt: bool = True,
    state: dict[str, Any] | None = None,
    keep_marker: bool = False,
) -> bool:
    """SENDING → PENDING due in ``delay`` seconds, fenced; queued after commit. The "started
    sending" marker stays only where the outcome of the attempt is unknown (``keep_marker``): the
    next attempt then looks the reply up before sending it again."""
    now = timezone.now()
    changes: dict[str, Any] = {
        "status": ActionStatus.PENDING,
        "due_at": now + dt.timedelta(seconds=delay),
        "lease_until": None,
        "error_code": str(error_code),
        "error_message": message[:4000],
        "updated_at": now,
    }
    if not keep_marker:
        changes["sending"] = ""
    if state is not None:
        changes["state"] = state
    if not count_attempt:
        changes["attempts"] = F("attempts") - 1
    with transaction.atomic():
        if not CommentAction.objects.filter(**step.fenced_filter(COLUMNS, claim)).update(**changes):
            return False
        _queue([claim.target_id], delay)
    return True


def _write(
    claim: step.RowClaim,
    status: ActionStatus,
    *,
    reply: tuple[str, str, dt.datetime | None] | None = None,
    error_code: str = "",
    message: str = "",
) -> bool:
    """The terminal write of an action, fenced, in one transaction with the comment's change and
    its one event; the comment's next action (one waiting behind it) is queued after commit. False
    when the claim was taken over (nothing written, nothing emitted)."""
    now = timezone.now()
    with transaction.atomic():
        changed = CommentAction.objects.filter(**step.fenced_filter(COLUMNS, claim)).update(
            status=status,
            lease_until=None,
            due_at=None,
            finished_at=now,
            error_code=str(error_code),
            error_message=message[:4000],
            updated_at=now,
        )
        if not changed:
            return False
        action = CommentAction.objects.select_related("comment", "comment__account").get(id=claim.target_id)
        reply_row: dict[str, Any] | None = None
        if status == ActionStatus.DONE:
            reply_id = _apply(action, reply, now)
            if reply_id is not None:
                reply_row = Comment.objects.filter(id=reply_id).values(*COMMENT_COLUMNS).first()
        comment_row = Comment.objects.filter(id=action.comment_id).values(*COMMENT_COLUMNS).get()
        action_row = CommentAction.objects.filter(id=action.id).values(*ACTION_COLUMNS).get()
        data: dict[str, Any] = {"comment": comment_record(comment_row), "action": action_record(action_row)}
        if reply_row is not None:
            data["reply"] = comment_record(reply_row)
        name = DONE_EVENTS[ActionKind(action.kind)] if status == ActionStatus.DONE else FAILED_EVENT
        emit_event(workspace_id=str(action.workspace_id), name=name, data=data)
        following = (
            CommentAction.objects.filter(comment_id=action.comment_id, status=ActionStatus.PENDING)
            .order_by("created_at", "id")
            .values_list("id", flat=True)
            .first()
        )
        if following:
            _queue([following], 0.0)
    metrics.comment_action_recorded(kind=action.kind, outcome="done" if status == ActionStatus.DONE else "failed")
    return True


def _apply(action: CommentAction, reply: tuple[str, str, dt.datetime | None] | None, now: dt.datetime) -> str | None:
    """The comment as the DONE action left it; a reply's own comment row (its id returned)."""
    comment = action.comment
    kind = ActionKind(action.kind)
    comments = Comment.objects.filter(id=comment.id)
    if kind == ActionKind.REPLY and reply is not None:
        reply_id = _store_reply(action, comment, reply, now)
        CommentAction.objects.filter(id=action.id).update(reply_id=reply_id)
        comments.update(answered=True, updated_at=now)
        return reply_id
    if kind in (ActionKind.HIDE, ActionKind.UNHIDE):
        comments.update(hidden=kind == ActionKind.HIDE, updated_at=now)
    elif kind == ActionKind.DELETE:
        _delete_with_replies(comment, now)
    return None


def _store_reply(
    action: CommentAction, comment: Comment, reply: tuple[str, str, dt.datetime | None], now: dt.datetime
) -> str:
    """The reply as a comment of the account's own under ``comment`` (a sync that found it first
    already stored it: that row is kept and linked). Never announced by ``comment.received``."""
    platform_id, permalink, created_at = reply
    account: SocialAccount = comment.account
    row, created = Comment.objects.get_or_create(
        account_id=comment.account_id,
        platform_comment_id=platform_id[:255],
        defaults={
            "workspace_id": comment.workspace_id,
            "platform": comment.platform,
            "post_id": comment.post_id,
            "target_id": comment.target_id,
            "platform_post_id": comment.platform_post_id,
            "parent_id": comment.id,
            "parent_platform_id": comment.platform_comment_id,
            "author_id": account.external_id[:255],
            "author_name": account.display_name[:255],
            "author_handle": account.username[:255],
            "author_avatar_url": account.avatar_url,
            "text": action.text,
            "created_at": created_at or now,
            "permalink": (permalink or "")[:2000],
            "from_account": True,
            "received_at": now,
        },
    )
    if not created:
        # A Google Business review has one reply: replacing it keeps its id, with the new text.
        Comment.objects.filter(id=row.id).update(
            text=action.text, deleted_at=None, from_account=True, parent_id=comment.id, updated_at=now
        )
    return row.id


def _delete_with_replies(comment: Comment, now: dt.datetime) -> None:
    """The comment and every reply under it are gone (the platforms remove a comment's replies
    with it); a deleted reply of the account's own no longer makes its parent ``answered``."""
    level = [comment.id]
    for _ in range(20):  # the deepest nesting a platform keeps is far less
        if not level:
            break
        Comment.objects.filter(id__in=level, deleted_at__isnull=True).update(deleted_at=now, updated_at=now)
        level = list(Comment.objects.filter(parent_id__in=level, deleted_at__isnull=True).values_list("id", flat=True))
    if comment.parent_id is not None and comment.from_account:
        own_reply = Comment.objects.filter(parent_id=OuterRef("pk"), from_account=True, deleted_at__isnull=True)
        Comment.objects.filter(id=comment.parent_id, answered=True).filter(~Exists(own_reply)).update(
            answered=False, updated_at=now
        )


def _queue(action_ids: list[str], delay: float) -> None:
    if delay <= settings.PUBLISH_MAX_COUNTDOWN_SECONDS:
        transaction.on_commit(partial(enqueue_actions, list(action_ids), countdown=delay), robust=True)


# --- the sweeper's part ---------------------------------------------------------------------------


def recover(*, now: dt.datetime | None = None, limit: int = 2000) -> tuple[list[str], list[str], list[str]]:
    """Actions whose worker was lost (lease expired): sent again when nothing had left, or where
    sending again cannot do it twice; a reply that may have reached a platform is looked up first
    where the platform reads comments (the marker stays), else FAILED ``unknown_outcome``. Due
    PENDING actions whose task was lost are queued again. Returns (re-queued, failed, lost)."""
    now = now or timezone.now()
    expired = CommentAction.objects.filter(status=ActionStatus.SENDING, lease_until__lt=now).values_list(
        "id", "kind", "lease_until", "attempts", "sending", "comment__platform"
    )[:limit]
    rows = []
    for action_id, kind, lease_until, attempts, marker, platform in expired:
        if lease_until is None:  # cannot be: the filter asked for an expired lease
            continue
        caps = CAPABILITIES[Platform(platform)]
        rows.append(
            step.Expired(
                claim=step.RowClaim(target_id=action_id, lease_until=lease_until, attempts=attempts),
                sent=step.started_sending(marker, lease_until),
                resend_safe=kind != ActionKind.REPLY or caps.idempotent_publish == "key",
                can_lookup="read" in caps.comment_actions,
            )
        )
    recovered = step.recover_expired(
        rows,
        release=lambda claim: _release(claim, delay=0.0, keep_marker=True),
        fail=lambda claim, code, message: _write(claim, ActionStatus.FAILED, error_code=code, message=message),
        interrupted_message=INTERRUPTED_MESSAGE,
        not_sent_message=NOT_SENT_MESSAGE,
    )
    lost = step.requeue_lost(COLUMNS, now=now, limit=limit, touched="updated_at", enqueue=enqueue_actions)
    return recovered.requeued, recovered.failed, lost
