"""One publish attempt of claimed targets (DESIGN.md §5): build the request, call the platform
outside any transaction, write what came back the moment it arrives, classify failures."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.errors import AccountDisconnected
from accounts.models import AccountStatus
from accounts.services import account_credentials, account_mark_unauthorized
from core import work
from core.errors import ApplicationError
from media.fitting import MEDIA_FIT_FAILED, variants_nudge, variants_of
from media.fitting import variant_ids_of as variant_ids
from media.models import VariantStatus
from media.services import media_resolve
from platforms import registry
from platforms.base import (
    AuthError,
    Credentials,
    ErrorCode,
    MediaItem,
    NotSupported,
    Platform,
    PlatformClient,
    PlatformError,
    PublishRequest,
    PublishResult,
    ThreadPart,
    UnknownOutcome,
)
from platforms.capabilities import CAPABILITIES
from platforms.media_rules import PostType, post_type_of
from posts.fitting import thread_item_post_type
from posts.models import PostTarget
from posts.pipeline import lateness, outcomes, step, thread_sequence
from posts.pipeline.claims import BOOK_KEY, SENDING_KEY, Claim, claim_targets, claims_started_sending
from posts.pipeline.enqueue import enqueue_targets

logger = logging.getLogger(__name__)

BACKOFF_SECONDS = step.BACKOFF_SECONDS
# mediaFit auto: an entry whose variant is still being made waits this long between looks, at
# most this many times (10 minutes in all), then fails media_fit_failed; a variant queued longer
# than FIT_LOST_TASK_SECONDS is queued again (its message may have been lost).
FIT_WAIT_SECONDS = 5.0
FIT_MAX_WAITS = 120
FIT_LOST_TASK_SECONDS = 120
UNKNOWN_OUTCOME_MESSAGE = (
    "The platform did not confirm whether the post was created ({detail}). Check the platform before retrying."
)
THREAD_UNKNOWN_MESSAGE = (
    "The platform did not confirm whether thread item {index} was created ({detail}); the items before it are "
    "listed in threadItems. Check the platform before retrying: a retry sends the thread on from item {index}."
)


class _PublishStep:
    """Publishing a platform entry as a :mod:`posts.pipeline.step`: claimed with the pipeline's
    one-statement claim (``claims.claim_targets``: the post's status bumped in the same statement),
    read with its post and account in one query, sent side by side, the successes that arrive
    together written in one fenced statement and one transaction (``outcomes.record``)."""

    name = "publish"
    one_by_one = False

    def claim(self, ids: list[str], *, now: dt.datetime) -> list[Claim]:
        return claim_targets(ids, now=now, lease=dt.timedelta(seconds=settings.PUBLISH_LEASE_SECONDS))

    def requeue_early(self, ids: list[str], claims: list[Claim]) -> None:
        requeue_early(ids, claims)

    def prepare(self, claims: list[Claim], errors: list[BaseException]) -> list[_Call]:
        return _prepare_calls(lateness.judge(claims), errors)

    def call(self, call: _Call) -> _Outcome:
        with step.send(call.sending):
            return _call_platform_now(call)

    def write(self, arrived: list[work.Arrived[_Call, _Outcome]], errors: list[BaseException]) -> None:
        _write_outcomes(arrived, errors=errors)


def publish_targets(target_ids: list[str]) -> int:
    """Claim each due PENDING target of ``target_ids`` (one conditional UPDATE) and run one attempt
    for each claimed. Safe to run any number of times: what is not claimed is left alone.
    Returns how many targets this call attempted."""
    return step.run(PUBLISH_STEP, list(target_ids), width=settings.PUBLISH_ATTEMPT_THREADS)


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
    sending: step.Sending = field(init=False)

    def __post_init__(self) -> None:
        # The calls of a batch that leave at the same moment record their start in one statement.
        self.sending = step.Sending(
            self.claim.lease_until, work.Together(claims_started_sending, self.claim), label=self.claim.target_id
        )


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
        except _FitNotReady as exc:
            _wait_for_fit(claim, target, state, book, exc.variant_ids)
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


def _wait_for_fit(
    claim: Claim, target: PostTarget, state: dict[str, Any], book: dict[str, Any], ids: list[str]
) -> None:
    """Back to PENDING for ``FIT_WAIT_SECONDS`` (the attempt given back), at most
    ``FIT_MAX_WAITS`` times; a variant whose task was lost is queued again. Past that the entry
    fails ``media_fit_failed`` rather than sending the original."""
    waits = int(book.get("fitWaits") or 0) + 1
    if waits > FIT_MAX_WAITS:
        _record_failed(
            claim,
            error_code=MEDIA_FIT_FAILED,
            message=f"The media fitted for {target.platform} was not ready after {FIT_MAX_WAITS * FIT_WAIT_SECONDS} s",
        )
        return
    variants_nudge(variant_ids=ids, older_than=dt.timedelta(seconds=FIT_LOST_TASK_SECONDS))
    if outcomes.release_for_retry(
        claim,
        next_attempt_at=timezone.now() + dt.timedelta(seconds=FIT_WAIT_SECONDS),
        remote_state=_with_book(state, {**book, "fitWaits": waits}),
        count_attempt=False,
        outcome=outcomes.WAITING,
    ):
        _requeue(claim.target_id, FIT_WAIT_SECONDS)


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
    if isinstance(exc, step.NotStarted) and exc.taken_over:
        return  # the entry is another holder's now; nothing was sent, nothing is ours to write
    if isinstance(exc, step.LeaseRunningOut | step.NotStarted):
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
        except AccountDisconnected:
            raise _Unsendable(AccountDisconnected.code, "The connected account was disconnected before publishing")
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
        if target.media_fit:
            media = _fitted(target, media)
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
        thread=tuple(_thread_parts(target)),
    )
    return creds, request


class _FitNotReady(Exception):
    """mediaFit auto and a variant of this entry's media is still being made."""

    def __init__(self, variant_ids: list[str]) -> None:
        super().__init__("variants not ready")
        self.variant_ids = variant_ids


def _fitted(
    target: PostTarget, media: tuple[MediaItem, ...], post_type: PostType | None = None
) -> tuple[MediaItem, ...]:
    """The entry's media (or a thread item's, under the item's ``post_type``) with each file
    replaced by its variant for the entry's platform and post type (``media.fitting``): an
    original with no variant, or one that already fits, is sent as it is; a variant still being
    made raises :class:`_FitNotReady` (the entry waits, it never sends the original instead); a
    failed one fails the entry ``media_fit_failed``."""
    post = target.post
    platform = Platform(target.platform)
    if post_type is None:
        post_type = post_type_of(
            platform, content_type=post.content_type, options=target.config or {}, kinds=[m.kind for m in media]
        )
    urls = [m.url for m in media]
    variants = variants_of(
        workspace_id=str(post.workspace_id), urls=urls, platform=platform.value, post_type=post_type.value
    )
    failed = [v for v in variants.values() if v.status == VariantStatus.FAILED]
    if failed:
        reasons = "; ".join(f"{v.original_url}: {v.error}" for v in failed)
        raise _Unsendable(MEDIA_FIT_FAILED, f"The media could not be fitted for {platform.value} ({reasons})")
    waiting = [v for v in variants.values() if v.status == VariantStatus.QUEUED]
    if waiting:
        raise _FitNotReady(
            variant_ids(workspace_id=str(post.workspace_id), urls=urls, platform=platform.value, post_type=post_type)
        )
    fitted = []
    for item in media:
        variant = variants.get(item.url)
        if variant is None or variant.status != VariantStatus.READY or variant.url is None:
            fitted.append(item)
            continue
        fitted.append(
            MediaItem(
                url=variant.url,
                kind=variant.kind,
                mime_type=variant.mime_type,
                size=variant.size,
                alt_text=item.alt_text,
            )
        )
    return tuple(fitted)


def _thread_parts(target: PostTarget) -> list[ThreadPart]:
    """The thread items of the entry's post with their media resolved (none for a post without a
    thread), each item's media fitted for the entry's platform when the entry fits (mediaFit auto)."""
    post = target.post
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
            if target.media_fit:
                item_type = thread_item_post_type(Platform(target.platform), [m.kind for m in media])
                media = _fitted(target, media, item_type)
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
    decision = step.decide(exc, attempts=claim.attempts)
    if decision.verdict is step.Verdict.AUTH:
        _on_auth_error(claim, target, exc)
    elif decision.verdict is step.Verdict.UNKNOWN:
        _on_unknown_outcome(claim, target, exc, state, book, client, creds, request)
    elif decision.verdict is step.Verdict.FAIL:
        _record_failed(claim, error_code=exc.error_code, message=exc.message)
    else:
        _release(claim, decision, state, book)


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
    FAILED with the platform's words once the attempts are used up (``step.retry_or_fail``)."""
    decision = step.retry_or_fail(exc, attempts=claim.attempts, unknown_message=UNKNOWN_OUTCOME_MESSAGE)
    if decision.verdict is step.Verdict.FAIL:
        _record_failed(
            claim, error_code=decision.error_code, message=decision.message, remote_state=_with_book(state, book)
        )
        return
    _release(claim, decision, state, book)


def _release(claim: Claim, decision: step.Decision, state: dict[str, Any], book: dict[str, Any]) -> None:
    if outcomes.release_for_retry(
        claim,
        next_attempt_at=timezone.now() + dt.timedelta(seconds=decision.delay),
        remote_state=_with_book(state, book),
        error_code=decision.error_code,
        message=decision.message,
    ):
        _requeue(claim.target_id, decision.delay)


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


PUBLISH_STEP = _PublishStep()
