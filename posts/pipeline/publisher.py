"""One publish attempt of claimed targets (DESIGN.md §5): build the request, call the platform
outside any transaction, write what came back the moment it arrives, classify failures."""

from __future__ import annotations

import datetime as dt
import logging
import random
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import AccountStatus
from accounts.services import account_credentials, account_mark_unauthorized
from core import work
from core.errors import ApplicationError
from media.services import media_resolve
from platforms import registry
from platforms.base import (
    AuthError,
    Credentials,
    ErrorCode,
    MediaItem,
    NotSupported,
    Permanent,
    Platform,
    PlatformClient,
    PlatformError,
    PublishRequest,
    PublishResult,
    ThreadPart,
    UnknownOutcome,
)
from platforms.capabilities import CAPABILITIES
from platforms.http import before_creates
from posts.models import Post, PostTarget
from posts.pipeline import lateness, outcomes, thread_sequence
from posts.pipeline.claims import BOOK_KEY, SENDING_KEY, Claim, claim_started_sending, claim_targets
from posts.pipeline.enqueue import enqueue_targets

logger = logging.getLogger(__name__)

# Waits before each retry (± 20 % jitter): the first retry comes within 30 s (10 s ± 2 s).
BACKOFF_SECONDS = (10.0, 30.0, 90.0, 240.0, 600.0)
UNKNOWN_OUTCOME_MESSAGE = (
    "The platform did not confirm whether the post was created ({detail}). Check the platform before retrying."
)
THREAD_UNKNOWN_MESSAGE = (
    "The platform did not confirm whether thread item {index} was created ({detail}); the items before it are "
    "listed in threadItems. Check the platform before retrying: a retry sends the thread on from item {index}."
)


def publish_targets(target_ids: list[str]) -> int:
    """Claim each due PENDING target of ``target_ids`` (one conditional UPDATE) and run one attempt
    for each claimed. Safe to run any number of times: what is not claimed is left alone.
    Returns how many targets this call attempted."""
    ids = list(dict.fromkeys(target_ids))
    claims = claim_targets(ids, now=timezone.now(), lease=dt.timedelta(seconds=settings.PUBLISH_LEASE_SECONDS))
    if len(claims) < len(ids):
        requeue_early(ids, claims)
    run_attempts(lateness.judge(claims))
    return len(claims)


def run_attempts(claims: list[Claim]) -> None:
    """Run the attempts of ``claims``: their targets (with post and account) read in one query and
    each account's credentials once, then the platform calls side by side (``core.work.gather``, up
    to ``PUBLISH_ATTEMPT_THREADS`` at once, on threads that do nothing but call the platform). What
    comes back is written on this thread as it arrives: the successes that arrived together in one
    fenced statement and one transaction (``outcomes.record``, each post finalized once), anything
    else through the per-target paths below. Each attempt is fenced by its own claim. Every attempt
    runs even if another raises; the first error is re-raised at the end."""
    if not claims:
        return
    errors: list[BaseException] = []
    calls = _prepare_calls(claims, errors)
    work.gather(calls, _call_platform, partial(_write_outcomes, errors=errors), width=settings.PUBLISH_ATTEMPT_THREADS)
    if errors:
        raise errors[0]


class _LeaseRunningOut(Exception):
    """The call was about to start after the first tenth of its lease (it waited for a free slot
    behind the rest of its batch): it is not sent, so no call can outlive its lease."""


class _NotStarted(Exception):
    """The attempt could not record that it starts sending (its claim was taken over, or the write
    failed): its call did not leave."""

    def __init__(self, *, taken_over: bool) -> None:
        super().__init__("taken over" if taken_over else "could not record the start")
        self.taken_over = taken_over


class _Unsendable(Exception):
    def __init__(self, error_code: str, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


@dataclass
class _Call:
    """A claimed target ready to be sent: what the platform call needs, read beforehand."""

    claim: Claim
    target: PostTarget
    state: dict[str, Any]
    book: dict[str, Any]
    client: PlatformClient
    creds: Credentials
    request: PublishRequest
    confirmed: list[dict[str, str]]  # a thread: the items the platform confirmed in earlier attempts
    started: bool = False  # recorded that this attempt started sending (claims.claim_started_sending)


@dataclass(frozen=True)
class _Outcome:
    """What the platform call of a :class:`_Call` answered (``found`` when the verify lookup found
    the post)."""

    result: PublishResult
    found: bool = False


def _prepare_calls(claims: list[Claim], errors: list[BaseException]) -> list[_Call]:
    """The claimed targets with their post and account in one query, credentials once per account;
    a target that cannot be sent is recorded here and left out."""
    ids = [claim.target_id for claim in claims]
    targets = {t.id: t for t in PostTarget.objects.select_related("post", "account").filter(id__in=ids)}
    credentials: dict[str, Credentials] = {}
    calls: list[_Call] = []
    for claim in claims:
        target = targets.get(claim.target_id)
        if target is None:
            continue
        state: dict[str, Any] = dict(target.remote_state or {})
        book: dict[str, Any] = dict(state.pop(BOOK_KEY, None) or {})
        book.pop(SENDING_KEY, None)  # an earlier attempt's; this one records its own
        try:
            creds, request = _prepare(target, credentials)
        except _Unsendable as exc:
            _record_failed(claim, error_code=exc.error_code, message=exc.message)
            continue
        except AuthError as exc:
            _on_auth_error(claim, target, exc)
            continue
        except PlatformError as exc:
            _on_error(claim, target, exc, state, book, None, None, None)
            continue
        except Exception as exc:
            logger.exception("preparing the publish attempt of %s raised", claim.target_id)
            errors.append(exc)
            continue
        client = registry.get_client(target.platform)
        confirmed = [dict(item) for item in target.thread_items or []]
        calls.append(_Call(claim, target, state, book, client, creds, request, confirmed))
    return calls


def _call_platform(call: _Call) -> _Outcome:
    """The platform side of one attempt; never touches the database itself (the record that it
    starts sending is written on the gathering thread). A call starts only within the first tenth
    of its lease: the lease is sized for one call from its claim (``PUBLISH_LEASE_SECONDS``), and
    only a call that starts about then is covered by it."""
    if call.claim.lease_until - timezone.now() < dt.timedelta(seconds=settings.PUBLISH_LEASE_SECONDS * 0.9):
        raise _LeaseRunningOut
    with before_creates(partial(_start_sending, call)):
        return _call_platform_now(call)


def _start_sending(call: _Call) -> None:
    """Right before the attempt's first call that may create something leaves: record, fenced,
    that it starts sending. Until then a lost worker has sent nothing (the sweeper retries the
    entry); from then on it may have. Raises ``_NotStarted`` (the call does not leave) when the
    record could not be written."""
    if call.started:
        return
    try:
        recorded = work.on_caller_thread(partial(claim_started_sending, call.claim))
    except Exception as exc:
        logger.warning("could not record that %s starts sending: %s", call.claim.target_id, exc)
        raise _NotStarted(taken_over=False) from exc
    if not recorded:
        raise _NotStarted(taken_over=True)
    call.started = True


def _call_platform_now(call: _Call) -> _Outcome:
    if call.request.thread:
        if call.book.get("verify"):  # never set for a thread (see _on_unknown_outcome): do not guess
            raise UnknownOutcome("the last attempt of this thread was interrupted")
        return _Outcome(
            result=thread_sequence.publish_next(call.client, call.creds, call.request, call.state, call.confirmed)
        )
    if call.book.get("verify"):
        # The last attempt may have created the post (worker lost mid-call): look before sending.
        found = call.client.lookup(call.creds, call.request)
        if found is not None and found.platform_post_id:
            return _Outcome(result=found, found=True)
        call.book.pop("verify", None)
    return _Outcome(result=call.client.publish(call.creds, call.request, call.state))


def _write_outcomes(arrived: list[work.Arrived[_Call, _Outcome]], *, errors: list[BaseException]) -> None:
    """Write what the platform calls in ``arrived`` ended with: the successes in one go, the rest
    one by one."""
    published = [
        outcomes.Published(
            claim=answer.item.claim,
            platform_post_id=answer.value.result.platform_post_id,
            url=answer.value.result.url,
            published_at=answer.value.result.published_at,
            draft_fallback=answer.value.result.draft_fallback,
            thread_items=_thread_items_of(answer.item, answer.value.result),
        )
        for answer in arrived
        if answer.value is not None
        and (answer.value.found or answer.value.result.done)
        and answer.value.result.platform_post_id
    ]
    if published:
        try:
            outcomes.record(published)
        except Exception as exc:
            logger.exception("recording %d published targets raised", len(published))
            errors.append(exc)
    written = {item.claim.target_id for item in published}
    for answer in arrived:
        if answer.item.claim.target_id in written:
            continue
        try:
            _finish_attempt(answer.item, answer.value, answer.error)
        except Exception as exc:
            logger.exception("publish attempt of %s raised", answer.item.claim.target_id)
            errors.append(exc)


def _finish_attempt(call: _Call, outcome: _Outcome | None, exc: BaseException | None) -> None:
    """Every path of one attempt after its platform call ends in a fenced write."""
    claim, target, state, book = call.claim, call.target, call.state, call.book
    client, creds, request = call.client, call.creds, call.request
    if isinstance(exc, _NotStarted) and exc.taken_over:
        return  # the entry is another holder's now; nothing was sent, nothing is ours to write
    if isinstance(exc, _LeaseRunningOut | _NotStarted):
        # Nothing was sent: back to PENDING due now, the attempt given back, its last error kept.
        if outcomes.release_for_retry(
            claim,
            next_attempt_at=timezone.now(),
            remote_state=_with_book(state, book),
            error_code=target.error_code,
            message=target.error_message,
            count_attempt=False,
            outcome=outcomes.NOT_SENT,
        ):
            _requeue(claim.target_id, 0.0)
        return
    if isinstance(exc, PlatformError):
        _on_error(claim, target, exc, state, book, client, creds, request)
        return
    if isinstance(exc, NotSupported):
        _record_failed(
            claim,
            error_code=ErrorCode.INVALID_REQUEST,
            message=f"Publishing is not available on {target.platform}",
        )
        return
    if exc is not None:  # a bug or an unreadable answer after sending: the post may exist
        logger.error(
            "publish of %s raised an unclassified error", claim.target_id, exc_info=(type(exc), exc, exc.__traceback__)
        )
        _on_error(
            claim,
            target,
            UnknownOutcome(f"unexpected error: {type(exc).__name__}"),
            state,
            book,
            client,
            creds,
            request,
        )
        return
    assert outcome is not None
    result = outcome.result
    if outcome.found or result.done:
        _record_result(claim, result, thread_items=_thread_items_of(call, result))
        return
    thread_items = _thread_items_of(call, result)
    stepped = thread_items is not None and len(thread_items) > len(call.confirmed)
    # A thread item just confirmed: the next one goes out at once (after this write); a flow
    # waiting on the platform is polled again.
    delay = 0.0 if stepped else max(result.poll_after, 0.5)
    next_state = {**result.state, BOOK_KEY: book} if book else dict(result.state)
    if outcomes.release_for_retry(
        claim,
        next_attempt_at=timezone.now() + dt.timedelta(seconds=delay),
        remote_state=next_state,
        count_attempt=False,
        thread_items=thread_items,
        outcome=outcomes.WAITING,
    ):
        _requeue(claim.target_id, delay)


def _thread_items_of(call: _Call, result: PublishResult) -> list[dict[str, str]] | None:
    """The confirmed items to write for a thread (None for a post without one)."""
    if not call.request.thread:
        return None
    return [dict(item) for item in result.thread_items]


def _prepare(target: PostTarget, credentials: dict[str, Credentials]) -> tuple[Credentials, PublishRequest]:
    """The credentials and the request of ``target``; ``credentials`` keeps each account's for the
    rest of the batch (read, and refreshed when due, once per account)."""
    post = target.post
    account = target.account
    if account is None:
        raise _Unsendable(ErrorCode.INVALID_REQUEST, "The connected account was removed before publishing")
    if account.status == AccountStatus.UNAUTHORIZED:
        reason = f": {account.unauthorized_reason}" if account.unauthorized_reason else ""
        raise _Unsendable(ErrorCode.AUTH_EXPIRED, f"The account is unauthorized{reason}. Reconnect it and retry.")
    creds = credentials.get(account.id)
    if creds is None:
        try:
            creds = account_credentials(account=account)
        except ApplicationError:
            raise _Unsendable(ErrorCode.INVALID_REQUEST, "The connected account was removed before publishing")
        credentials[account.id] = creds
    media: tuple[MediaItem, ...] = ()
    if post.media_urls:
        try:
            infos = media_resolve(workspace_id=str(post.workspace_id), urls=list(post.media_urls))
        except ApplicationError as exc:
            raise _Unsendable(ErrorCode.MEDIA_REJECTED, str(getattr(exc, "message", exc)))
        alts = list(post.media_alt_texts or [])
        media = tuple(
            MediaItem(
                url=info.url,
                kind=info.kind,
                mime_type=info.mime_type,
                size=info.size,
                alt_text=alts[index] if index < len(alts) else "",
            )
            for index, info in enumerate(infos)
        )
    options = dict(target.config or {})
    if post.thumbnail_timestamp_ms is not None:
        options.setdefault("thumbnailTimestampMs", post.thumbnail_timestamp_ms)
    request = PublishRequest(
        target_id=target.id,
        content_type=post.content_type,
        text=target.text,
        media=media,
        options=options,
        thumbnail_url=post.thumbnail_url,
        thread=tuple(_thread_parts(post)),
    )
    return creds, request


def _thread_parts(post: Post) -> list[ThreadPart]:
    """The thread items of ``post`` with their media resolved (none for a post without a thread)."""
    parts: list[ThreadPart] = []
    for item in post.thread or []:
        urls = list(item.get("mediaUrls") or [])
        media: tuple[MediaItem, ...] = ()
        if urls:
            try:
                infos = media_resolve(workspace_id=str(post.workspace_id), urls=urls)
            except ApplicationError as exc:
                raise _Unsendable(ErrorCode.MEDIA_REJECTED, str(getattr(exc, "message", exc)))
            media = tuple(MediaItem(url=i.url, kind=i.kind, mime_type=i.mime_type, size=i.size) for i in infos)
        parts.append(ThreadPart(text=str(item.get("text") or ""), media=media))
    return parts


def _record_result(claim: Claim, result: PublishResult, *, thread_items: list[dict[str, str]] | None = None) -> None:
    if not result.platform_post_id:
        _record_failed(
            claim,
            error_code=ErrorCode.UNKNOWN_OUTCOME,
            message=UNKNOWN_OUTCOME_MESSAGE.format(detail="the platform answered without a post id"),
        )
        return
    outcomes.record(
        [
            outcomes.Published(
                claim,
                platform_post_id=result.platform_post_id,
                url=result.url,
                published_at=result.published_at,
                draft_fallback=result.draft_fallback,
                thread_items=thread_items,
            )
        ]
    )


def _record_failed(claim: Claim, *, error_code: str, message: str, remote_state: dict[str, Any] | None = None) -> None:
    outcomes.record([outcomes.Failed(claim, error_code=error_code, message=message, remote_state=remote_state)])


def _on_auth_error(claim: Claim, target: PostTarget, exc: PlatformError) -> None:
    _record_failed(claim, error_code=exc.error_code, message=exc.message)
    if target.account_id:
        account_mark_unauthorized(account_id=target.account_id, reason=exc.message)


def _on_error(
    claim: Claim,
    target: PostTarget,
    exc: PlatformError,
    state: dict[str, Any],
    book: dict[str, Any],
    client: PlatformClient | None,
    creds: Credentials | None,
    request: PublishRequest | None,
) -> None:
    if isinstance(exc, AuthError):
        _on_auth_error(claim, target, exc)
    elif isinstance(exc, UnknownOutcome):
        _on_unknown_outcome(claim, target, exc, state, book, client, creds, request)
    elif isinstance(exc, Permanent) or type(exc) is PlatformError:
        _record_failed(claim, error_code=exc.error_code, message=exc.message)
    else:  # RateLimited, QuotaExhausted, Transient
        _retry_or_fail(claim, exc, state, book)


def _on_unknown_outcome(
    claim: Claim,
    target: PostTarget,
    exc: PlatformError,
    state: dict[str, Any],
    book: dict[str, Any],
    client: PlatformClient | None,
    creds: Credentials | None,
    request: PublishRequest | None,
) -> None:
    """Never re-send blindly: re-send only where the platform deduplicates on our key; otherwise
    look the post up, and re-send once only if the platform says it does not exist. A thread item
    cannot be looked up reliably (replies are not on the timelines the lookups read), so a thread
    on such a platform ends FAILED ``unknown_outcome`` with the items confirmed before it."""
    if CAPABILITIES[Platform(target.platform)].idempotent_publish == "key" or client is None:
        _retry_or_fail(claim, exc, state, book)
        return
    if target.post.thread:
        index = len(target.thread_items or [])
        _record_failed(
            claim,
            error_code=ErrorCode.UNKNOWN_OUTCOME,
            message=THREAD_UNKNOWN_MESSAGE.format(index=index, detail=exc.message),
            remote_state=_with_book(state, book),
        )
        return
    assert creds is not None and request is not None
    try:
        found = client.lookup(creds, request)
    except NotSupported:
        _record_failed(
            claim,
            error_code=ErrorCode.UNKNOWN_OUTCOME,
            message=UNKNOWN_OUTCOME_MESSAGE.format(detail=exc.message),
            remote_state=_with_book(state, book),
        )
        return
    except PlatformError as lookup_error:
        logger.info("lookup of %s failed (%s); will look again", claim.target_id, lookup_error.message)
        _retry_or_fail(claim, exc, state, {**book, "verify": True})
        return
    if found is not None and found.platform_post_id:
        _record_result(claim, found)
    elif book.get("unknown_retried"):
        _record_failed(
            claim,
            error_code=ErrorCode.UNKNOWN_OUTCOME,
            message=UNKNOWN_OUTCOME_MESSAGE.format(detail=exc.message),
            remote_state=_with_book(state, book),
        )
    else:
        # The platform may still be processing the first request: look again before the re-send.
        _retry_or_fail(claim, exc, state, {**book, "unknown_retried": True, "verify": True})


def _retry_or_fail(claim: Claim, exc: PlatformError, state: dict[str, Any], book: dict[str, Any]) -> None:
    """Back to PENDING with backoff and jitter (never before the platform's ``retry_at``), or
    FAILED with the platform's words once the attempts are used up."""
    if claim.attempts >= settings.PUBLISH_MAX_ATTEMPTS:
        message = exc.message
        if isinstance(exc, UnknownOutcome):
            message = UNKNOWN_OUTCOME_MESSAGE.format(detail=exc.message)
        _record_failed(claim, error_code=exc.error_code, message=message, remote_state=_with_book(state, book))
        return
    now = timezone.now()
    delay = work.backoff_seconds(claim.attempts, BACKOFF_SECONDS)
    if exc.retry_at is not None:
        delay = max(delay, (exc.retry_at - now).total_seconds() + random.uniform(0.0, 1.0))
    if outcomes.release_for_retry(
        claim,
        next_attempt_at=now + dt.timedelta(seconds=delay),
        remote_state=_with_book(state, book),
        error_code=exc.error_code,
        message=exc.message,
    ):
        _requeue(claim.target_id, delay)


def _with_book(state: dict[str, Any], book: dict[str, Any]) -> dict[str, Any]:
    return {**state, BOOK_KEY: book} if book else dict(state)


def _requeue(target_id: str, delay: float) -> None:
    """Queue the next attempt with a countdown; a wait longer than the countdown limit is left to
    the sweeper, which queues PENDING targets once they are due (no long ETA tasks)."""
    if delay <= settings.PUBLISH_MAX_COUNTDOWN_SECONDS:
        transaction.on_commit(lambda: enqueue_targets([target_id], countdown=delay), robust=True)


def requeue_early(target_ids: list[str], claimed: list[Claim]) -> None:
    """A task that arrived before its target was due (clock skew, a countdown rounded down) puts it
    back with the remaining countdown instead of dropping it until the sweeper notices."""
    owned = {c.target_id for c in claimed}
    rest = [t for t in target_ids if t not in owned]
    if not rest:
        return
    now = timezone.now()
    early = PostTarget.objects.filter(id__in=rest, status="PENDING", next_attempt_at__gt=now).values_list(
        "id", "next_attempt_at"
    )
    for target_id, due_at in early:
        if due_at is None:
            continue
        delay = (due_at - now).total_seconds() + 0.05
        if delay <= settings.PUBLISH_MAX_COUNTDOWN_SECONDS:
            enqueue_targets([target_id], countdown=delay)
