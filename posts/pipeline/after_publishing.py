"""Edits and deletes of published entries on their platforms: platform steps
(``posts.pipeline.step``) on :class:`~posts.models.PostTargetAction` rows.

- An action is claimed with a conditional UPDATE (PENDING and due → SENDING, attempts + 1, lease),
  and only when no earlier action of its entry is still open: an entry's edits and its delete reach
  the platform one after the other, in the order they were asked for.
- Before the call, the attempt records (fenced) that it starts sending: every request of an edit or
  a delete changes something, so it is recorded before the client is even called.
- The call runs outside any transaction. Its outcome is written fenced by the lease in one
  transaction with the post's row lock (post before entries, the pipeline's lock order): the
  action DONE or FAILED, the entry changed with it (an edit's new text or title, a delete's
  ``unpublished_at``), and, when it was the last open action of its request, the request's one event
  (``post.updated`` / ``post.unpublished``) naming every entry's outcome, SKIPPED ones included.
- Transient errors and rate limits: back to PENDING with backoff. An unknown outcome: a delete is
  tried again (deleting what is already gone counts as done, so it cannot happen twice); an edit is
  tried again only where the platform reads one post (capabilities' ``post_lookup``), else it ends
  FAILED ``unknown_outcome``.
- **Lookup first**: an attempt after one that started sending and never ended (its ``sending``
  marker is still there) reads the post first (``PlatformClient.fetch_post``, outside any
  transaction like the call itself): a delete whose post is gone is DONE with nothing sent; an edit
  whose post already has the requested text and title is DONE with nothing sent; otherwise the call
  is sent (an edit that sets the same values again is harmless; a read does not show a post's media,
  so a media edit is always sent again, resuming from its ``state``). Where the platform has no such
  read (NotSupported) a delete is sent again and an edit ends FAILED ``unknown_outcome``.
- **Media the platform processes**: an edit answered ``done=False`` (new media still being
  processed, nothing changed on the post yet) goes back to PENDING with the answer's ``state``,
  due after its ``poll_after``, its attempt not counted and its start of sending cleared (the
  attempt ended with an answer); the next attempt calls the platform with that state.
- The sweeper (:func:`recover`): an expired lease whose attempt had not started sending is sent
  again; one that had is tried again (looked up first) for a delete, and for an edit where the
  platform reads one post; an edit elsewhere ends FAILED ``unknown_outcome``. A due action whose
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
from django.db.models import F
from django.utils import timezone

from accounts.errors import AccountDisconnected
from accounts.models import AccountStatus
from accounts.services import account_credentials, account_mark_unauthorized
from core import work
from core.errors import ApplicationError
from media.services import media_resolve
from platforms import registry
from platforms.base import (
    Credentials,
    EditRequest,
    EditResult,
    ErrorCode,
    MediaItem,
    NotSupported,
    Platform,
    PlatformClient,
    PlatformError,
    RemotePost,
    UnknownOutcome,
)
from platforms.capabilities import CAPABILITIES
from posts.models import ActionKind, ActionStatus, Post, PostTarget, PostTargetAction
from posts.pipeline import step
from posts.pipeline.enqueue import enqueue_actions
from posts.rendering import post_record
from posts.validation import TITLE_KEYS
from webhooks.events import emit_event

logger = logging.getLogger(__name__)

EVENTS = {ActionKind.EDIT: "post.updated", ActionKind.DELETE: "post.unpublished"}
OPEN = (ActionStatus.PENDING, ActionStatus.SENDING)
UNKNOWN_EDIT_MESSAGE = (
    "The platform did not confirm whether the edit was made ({detail}). Check the post on the platform; "
    "send the edit again to be sure."
)
INTERRUPTED_EDIT_MESSAGE = "Sending the edit was interrupted; check the post on the platform."
NO_LOOKUP_MESSAGE = "the last attempt was interrupted and the platform offers no read of the post to check it"
NOT_SENT_MESSAGE = "Sending was interrupted before anything was sent, on every attempt; ask again."

COLUMNS = step.StepColumns(
    table="posts_posttargetaction",
    status="status",
    due="due_at",
    lease="lease_until",
    attempts="attempts",
    pending=ActionStatus.PENDING.value,
    sending=ActionStatus.SENDING.value,
    start_expression="sending = %(marker)s",
    claimable=(
        "NOT EXISTS (SELECT 1 FROM posts_posttargetaction e WHERE e.target_id = r.target_id"
        " AND e.status IN ('PENDING', 'SENDING') AND (e.created_at, e.id) < (r.created_at, r.id))"
    ),
)


@dataclass
class _Call:
    claim: step.RowClaim
    action: PostTargetAction
    client: PlatformClient
    creds: Credentials
    sending: step.Sending
    request: EditRequest | None  # an edit's (None for a delete)
    # An earlier attempt started sending and never ended: look the post up before sending.
    verify: bool = False


class _ActionStep:
    name = "after_publishing"
    one_by_one = False

    def claim(self, ids: list[str], *, now: dt.datetime) -> list[step.RowClaim]:
        return step.claim_rows(COLUMNS, ids, now=now)

    def requeue_early(self, ids: list[str], claims: list[step.RowClaim]) -> None:
        """An action that arrived before its time is queued again for it; one waiting behind an
        earlier action of its entry is queued when that one ends (:func:`_write`)."""
        for action_id, delay in step.early(COLUMNS, ids, claims):
            enqueue_actions([action_id], countdown=delay)

    def prepare(self, claims: list[step.RowClaim], errors: list[BaseException]) -> list[_Call]:
        actions = {
            a.id: a
            for a in PostTargetAction.objects.select_related("target", "target__post", "target__account").filter(
                id__in=[c.target_id for c in claims]
            )
        }
        return step.each(
            [(claim, actions[claim.target_id]) for claim in claims if claim.target_id in actions],
            lambda pair: _prepare(*pair),
            errors=errors,
            name=lambda pair: f"preparing action {pair[0].target_id}",
        )

    def call(self, call: _Call) -> EditResult | None:
        with step.send(call.sending):
            if call.verify:
                settled = _look_up(call)
                if settled is not None:
                    return settled.result
            call.sending.start()  # every request of an edit or a delete changes something
            if call.request is None:
                call.client.delete(call.creds, call.action.target.platform_post_id)
                return None
            return call.client.edit(call.creds, call.request)

    def write(self, arrived: list[work.Arrived[_Call, EditResult | None]], errors: list[BaseException]) -> None:
        step.each(
            arrived,
            lambda answer: _finish(answer.item, answer.value, answer.error),
            errors=errors,
            name=lambda answer: f"action {answer.item.claim.target_id}",
        )


ACTION_STEP = _ActionStep()


def run_actions(action_ids: list[str]) -> int:
    """Claim each due PENDING action of ``action_ids`` and send it once (``step.run``). Safe to run
    any number of times. Returns how many this call attempted."""
    return step.run(ACTION_STEP, list(action_ids), width=settings.PUBLISH_ATTEMPT_THREADS)


def media_of(post: Post) -> dict[str, Any]:
    """A post's media as an edit names them: ``{contentType, mediaUrls, mediaAltTexts}``."""
    return media_value(post.content_type, list(post.media_urls or []), list(post.media_alt_texts or []))


def media_value(content_type: str, urls: list[str], alt_texts: list[str]) -> dict[str, Any]:
    """``{contentType, mediaUrls, mediaAltTexts}``, the alt texts cut to the files and without
    trailing blanks (so "no alt text" compares equal however it was said)."""
    alts = [str(a) for a in alt_texts[: len(urls)]]
    while alts and not alts[-1]:
        alts.pop()
    return {"contentType": content_type, "mediaUrls": [str(u) for u in urls], "mediaAltTexts": alts}


def live_media(target: PostTarget, post: Post) -> dict[str, Any]:
    """The media live on an entry's platform: its own where they differ from the post's (a media
    edit it did not take, or not yet), else the post's."""
    own = target.media or {}
    if own:
        return media_value(
            str(own.get("contentType") or post.content_type),
            list(own.get("mediaUrls") or []),
            list(own.get("mediaAltTexts") or []),
        )
    return media_of(post)


def edit_request(action: PostTargetAction) -> EditRequest:
    """What the platform is asked to change: only the fields the action changes. A media edit also
    carries the text the post keeps (its caption goes with its media on some platforms) and the
    files as they are (``mediaFit`` does not apply to an edit); ``content_type`` is what the entry
    is live as (a text message or a caption is edited with different calls). Raises
    ApplicationError when the new media are no longer in storage."""
    target = action.target
    post = target.post
    changes = action.changes or {}
    items = target.thread_items or []
    text = changes.get("text")
    media: tuple[MediaItem, ...] | None = None
    if "media" in changes:
        media = _media_items(str(post.workspace_id), changes["media"] or {})
        if text is None:
            text = target.text
    return EditRequest(
        target_id=target.id,
        platform_post_id=target.platform_post_id,
        text=text,
        title=changes.get("title"),
        media=media,
        options=dict(target.config or {}),
        content_type=live_media(target, post)["contentType"],
        cid=str(items[0].get("cid") or "") if items else "",
        state=dict(action.state or {}),
    )


def _media_items(workspace_id: str, media: dict[str, Any]) -> tuple[MediaItem, ...]:
    urls = list(media.get("mediaUrls") or [])
    if not urls:
        return ()
    alts = list(media.get("mediaAltTexts") or [])
    return tuple(
        MediaItem(
            url=info.url,
            kind=info.kind,
            mime_type=info.mime_type,
            size=info.size,
            alt_text=alts[index] if index < len(alts) else "",
        )
        for index, info in enumerate(media_resolve(workspace_id=workspace_id, urls=urls))
    )


class _CannotLookUp(Exception):
    """An edit that may have reached the platform, which offers no read of the post to check it."""


@dataclass(frozen=True)
class _Settled:
    """The lookup found the action already done on the platform (``result``: an edit's answer)."""

    result: EditResult | None


def _look_up(call: _Call) -> _Settled | None:
    """Read the post before sending again after an attempt that may have reached the platform:
    settled when the platform already shows the action done, None when the call is to be sent.
    NotSupported: a delete is sent again (a post already gone counts as deleted); an edit cannot be
    re-sent blindly, so it ends ``unknown_outcome``."""
    action, target = call.action, call.action.target
    try:
        found = call.client.fetch_post(call.creds, target.platform_post_id)
    except NotSupported:
        if action.kind == ActionKind.DELETE:
            return None
        raise _CannotLookUp from None
    if action.kind == ActionKind.DELETE:
        return _Settled(None) if found is None else None
    if found is not None and _already_edited(action, found):
        return _Settled(EditResult(url=found.permalink))
    return None


def _already_edited(action: PostTargetAction, found: RemotePost) -> bool:
    """Whether the post on the platform already has every value the edit sets (never known of a
    media edit: a read does not show the media, and setting them again is harmless)."""
    changes = action.changes or {}
    if "media" in changes:
        return False
    if "text" in changes and found.text.strip() != str(changes["text"] or "").strip():
        return False
    return not ("title" in changes and found.title.strip() != str(changes["title"] or "").strip())


def _prepare(claim: step.RowClaim, action: PostTargetAction) -> _Call | None:
    target = action.target
    account = target.account
    if account is None:
        _write(claim, ActionStatus.FAILED, error_code=ErrorCode.INVALID_REQUEST, message="The account was removed")
        return None
    if account.status == AccountStatus.UNAUTHORIZED:
        _write(
            claim,
            ActionStatus.FAILED,
            error_code=ErrorCode.AUTH_EXPIRED,
            message="The account is unauthorized. Reconnect it and ask again.",
        )
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
    request = None
    if action.kind == ActionKind.EDIT:
        try:
            request = edit_request(action)
        except ApplicationError as exc:
            message = f"The new media could not be read: {getattr(exc, 'message', exc)}"
            _write(claim, ActionStatus.FAILED, error_code=ErrorCode.MEDIA_REJECTED, message=message)
            return None
    sending = step.Sending(
        claim.lease_until, partial(step.record_start, COLUMNS, claim), label=f"action {claim.target_id}"
    )
    # The row was read after the claim, so a marker here is an earlier attempt's that never ended.
    verify = bool(action.sending)
    return _Call(claim, action, registry.get_client(target.platform), creds, sending, request, verify)


def _finish(call: _Call, result: EditResult | None, exc: BaseException | None) -> None:
    claim, action = call.claim, call.action
    if isinstance(exc, step.NotStarted) and exc.taken_over:
        return
    if isinstance(exc, step.LeaseRunningOut | step.NotStarted):
        _release(claim, delay=0.0, count_attempt=False)
        return
    if isinstance(exc, PlatformError):
        _on_error(claim, action, exc)
        return
    if isinstance(exc, _CannotLookUp):
        message = UNKNOWN_EDIT_MESSAGE.format(detail=NO_LOOKUP_MESSAGE)
        _write(claim, ActionStatus.FAILED, error_code=ErrorCode.UNKNOWN_OUTCOME, message=message)
        return
    if isinstance(exc, NotSupported):
        verb = "edit" if action.kind == ActionKind.EDIT else "delete"
        message = f"{action.target.platform} cannot {verb} a published post through its API"
        _write(claim, ActionStatus.FAILED, error_code=ErrorCode.INVALID_REQUEST, message=message)
        return
    if exc is not None:
        logger.error("action %s raised an unclassified error", claim.target_id, exc_info=(type(exc), exc, None))
        _on_error(claim, action, UnknownOutcome(f"unexpected error: {type(exc).__name__}"))
        return
    if result is not None and not result.done:
        # New media still processed by the platform, nothing changed yet: asked again later with
        # the answer's state (no upload twice), the attempt not counted, its start cleared.
        _release(
            claim,
            delay=max(result.poll_after, 0.5),
            count_attempt=False,
            state=dict(result.state),
            clear_start=True,
        )
        return
    _write(claim, ActionStatus.DONE, result=result)


def _on_error(claim: step.RowClaim, action: PostTargetAction, exc: PlatformError) -> None:
    decision = step.decide(exc, attempts=claim.attempts, unknown_message=UNKNOWN_EDIT_MESSAGE)
    if decision.verdict is step.Verdict.UNKNOWN:
        # Deleting what is gone counts as done; an edit is looked up before it is sent again.
        if action.kind == ActionKind.DELETE or _can_look_up(action.target.platform):
            decision = step.retry_or_fail(exc, attempts=claim.attempts, unknown_message=UNKNOWN_EDIT_MESSAGE)
        else:
            decision = step.Decision(step.Verdict.FAIL, ErrorCode.UNKNOWN_OUTCOME, decision.message)
    if decision.verdict is step.Verdict.RETRY:
        _release(claim, delay=decision.delay, error_code=decision.error_code, message=decision.message)
        return
    _write(claim, ActionStatus.FAILED, error_code=decision.error_code, message=decision.message)
    if decision.verdict is step.Verdict.AUTH and action.target.account_id:
        account_mark_unauthorized(account_id=action.target.account_id, reason=exc.message)


def _can_look_up(platform: str) -> bool:
    return CAPABILITIES[Platform(platform)].post_lookup


def _release(
    claim: step.RowClaim,
    *,
    delay: float,
    error_code: str = "",
    message: str = "",
    count_attempt: bool = True,
    state: dict[str, Any] | None = None,
    clear_start: bool = False,
) -> bool:
    """SENDING → PENDING due in ``delay`` seconds, fenced; queued after commit. ``state``: what the
    platform asked to resume from; ``clear_start``: the attempt ended with an answer that changed
    nothing on the post, so the next one need not look it up first."""
    now = timezone.now()
    changes: dict[str, Any] = {
        "status": ActionStatus.PENDING,
        "due_at": now + dt.timedelta(seconds=delay),
        "lease_until": None,
        "error_code": str(error_code),
        "error_message": message[:4000],
        "updated_at": now,
    }
    if not count_attempt:
        changes["attempts"] = F("attempts") - 1
    if state is not None:
        changes["state"] = state
    if clear_start:
        changes["sending"] = ""
    with transaction.atomic():
        if not PostTargetAction.objects.filter(**step.fenced_filter(COLUMNS, claim)).update(**changes):
            return False
        _queue([claim.target_id], delay)
    return True


def _write(
    claim: step.RowClaim,
    status: ActionStatus,
    *,
    result: EditResult | None = None,
    error_code: str = "",
    message: str = "",
) -> bool:
    """The terminal write of an action, fenced, under its post's row lock: the action, the entry it
    changed, and, when it closes its request, the request's one event. The next action of the
    entry (one waiting behind it) is queued after commit. False when taken over."""
    now = timezone.now()
    with transaction.atomic():
        post_id = PostTarget.objects.filter(actions__id=claim.target_id).values_list("post_id", flat=True).first()
        if post_id is None:
            return False
        post = Post.objects.select_for_update(no_key=True).filter(id=post_id).first()
        if post is None:
            return False
        changed = PostTargetAction.objects.filter(**step.fenced_filter(COLUMNS, claim)).update(
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
        action = PostTargetAction.objects.select_related("target").get(id=claim.target_id)
        _apply(action, status, result, now, post)
        close_request(post, action.request_id, action.kind)
        following = (
            PostTargetAction.objects.filter(target_id=action.target_id, status=ActionStatus.PENDING)
            .order_by("created_at", "id")
            .values_list("id", flat=True)
            .first()
        )
        if following:
            _queue([following], 0.0)
    return True


def _apply(
    action: PostTargetAction, status: ActionStatus, result: EditResult | None, now: dt.datetime, post: Post
) -> None:
    """The entry as the action left it (its row always written: its record's stamp changes). After
    a media edit the entry follows the post's media again, or keeps the new ones as its own where
    the post's have changed since."""
    target = action.target
    fields = ["last_action_at", "updated_at"]
    target.last_action_at = now
    if status == ActionStatus.DONE and action.kind == ActionKind.DELETE:
        target.unpublished_at = now
        fields.append("unpublished_at")
    if status == ActionStatus.DONE and action.kind == ActionKind.EDIT:
        changes = action.changes or {}
        if "text" in changes:
            target.text = str(changes["text"])
            fields.append("text")
        title_key = TITLE_KEYS.get(target.platform)
        if "title" in changes and title_key:
            target.config = {**(target.config or {}), title_key: changes["title"]}
            fields.append("config")
        if "media" in changes:
            new_media = dict(changes["media"] or {})
            target.media = {} if new_media == media_of(post) else new_media
            fields.append("media")
        if result is not None and result.url:
            target.post_url = result.url
            fields.append("post_url")
    target.save(update_fields=fields)


def close_request(post: Post, request_id: str, kind: str) -> bool:
    """With ``post`` locked: if no action of the request is open, emit its one event naming every
    entry's outcome. Only the write that closed the last open action gets here with none open, so
    the event is emitted once."""
    actions = list(PostTargetAction.objects.filter(request_id=request_id).select_related("target"))
    if any(a.status in OPEN for a in actions):
        return False
    fresh = Post.objects.prefetch_related("targets").get(id=post.id)
    emit_event(
        workspace_id=str(post.workspace_id),
        name=EVENTS[ActionKind(kind)],
        data={"post": post_record(fresh), "requestId": request_id, "entries": [outcome_of(a) for a in actions]},
    )
    return True


def outcome_of(action: PostTargetAction) -> dict[str, Any]:
    """One entry's outcome in a ``post.updated`` / ``post.unpublished`` event."""
    return {
        "platformId": action.target_id,
        "platform": action.target.platform,
        "status": action.status,
        "fields": sorted(action.changes or {}),
        "reason": action.reason or None,
        "errorCode": action.error_code or None,
        "errorMessage": action.error_message or None,
    }


def _queue(action_ids: list[str], delay: float) -> None:
    if delay <= settings.PUBLISH_MAX_COUNTDOWN_SECONDS:
        transaction.on_commit(partial(enqueue_actions, list(action_ids), countdown=delay), robust=True)


# --- the sweeper's part ----------------------------------------------------------------------


def recover(*, now: dt.datetime, limit: int) -> tuple[list[str], list[str], list[str]]:
    """Actions whose worker was lost (lease expired): sent again when nothing had left; tried again,
    looked up first, for a delete, or for an edit where the platform reads one post; an edit that
    may have reached a platform without that read ends FAILED ``unknown_outcome``. Due PENDING
    actions whose task was lost are queued again. Returns (re-queued, failed, lost)."""
    expired = PostTargetAction.objects.filter(status=ActionStatus.SENDING, lease_until__lt=now).values_list(
        "id", "kind", "lease_until", "attempts", "sending", "target__platform"
    )[:limit]
    rows = [
        step.Expired(
            claim=step.RowClaim(target_id=action_id, lease_until=lease_until, attempts=attempts),
            sent=step.started_sending(marker, lease_until),
            resend_safe=kind == ActionKind.DELETE,
            can_lookup=_can_look_up(platform),
        )
        for action_id, kind, lease_until, attempts, marker, platform in expired
        if lease_until is not None  # always: the filter asked for an expired lease
    ]
    # LOOKUP: the marker stays, so the next attempt reads the post before sending (_look_up).
    recovered = step.recover_expired(
        rows,
        release=lambda claim: _release(claim, delay=0.0),
        fail=lambda claim, code, message: _write(claim, ActionStatus.FAILED, error_code=code, message=message),
        interrupted_message=INTERRUPTED_EDIT_MESSAGE,
        not_sent_message=NOT_SENT_MESSAGE,
    )
    lost = step.requeue_lost(COLUMNS, now=now, limit=limit, touched="updated_at", enqueue=enqueue_actions)
    return recovered.requeued, recovered.failed, lost
