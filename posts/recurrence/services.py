"""Writes of recurring series: start, pause, resume, delete, and the reactions to the pipeline
(an occurrence claimed or finished), to the deletion of an upcoming post and to the removal of an
account. Every one is idempotent: run twice, the world changes once."""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.errors import BadRequest, ValidationFailed
from core.fields import format_instant
from posts.models import (
    FINAL_POST_STATUSES,
    PauseReason,
    Post,
    PostStatus,
    PostTarget,
    RecurringPost,
    RecurringStatus,
    TargetStatus,
)
from posts.recurrence.occurrences import (
    SeriesBroken,
    create_occurrence,
    delete_upcoming,
    describe_removed,
    live_accounts,
    lock_series,
    pause_locked,
    removed_targets,
    template_targets,
)
from posts.recurrence.rules import Rule, effective_weekdays, local_date

if TYPE_CHECKING:  # a type only: posts.validation reads the payload shapes, which include the recurrence's
    from posts.validation import PostPlan

logger = logging.getLogger(__name__)

FAILURE_LIMIT = 3
# Template key: occurrences before this instant do not count toward the failure streak (set on resume).
STREAK_FROM = "failureStreakFrom"
IN_FLIGHT = (PostStatus.SCHEDULED, PostStatus.PENDING, PostStatus.PUBLISHING)


# --- start -----------------------------------------------------------------------------------


def series_start(*, post: Post, plan: PostPlan) -> RecurringPost:
    """Start a series whose first occurrence is ``post`` (just created SCHEDULED by post_create, in
    its transaction): 400 listing every rule broken (draft, no future scheduledAt, TIKTOK, endsOn
    before the first post), else the ACTIVE series with ``post`` linked as occurrence 1."""
    recurrence = plan.recurrence or {}
    _check_start(post, plan, recurrence)
    starts_at = post.scheduled_at
    assert starts_at is not None  # checked above
    targets = list(post.targets.all())
    series = RecurringPost.objects.create(
        workspace_id=post.workspace_id,
        status=RecurringStatus.ACTIVE,
        frequency=recurrence["frequency"],
        interval=recurrence.get("interval") or 1,
        weekdays=effective_weekdays(
            recurrence["frequency"], recurrence.get("weekdays") or [], starts_at, plan.timezone
        ),
        starts_at=starts_at,
        timezone=plan.timezone,
        ends_on=recurrence.get("endsOn"),
        max_occurrences=recurrence.get("maxOccurrences"),
        next_occurrence_at=starts_at,
        occurrence_count=1,
        created_by_id=post.created_by_id,
        template={
            "contentType": plan.content_type,
            "text": plan.text,
            "mediaUrls": list(plan.media_urls),
            "mediaAltTexts": list(plan.media_alt_texts),
            "thumbnailUrl": plan.thumbnail_url,
            "thumbnailTimestampMs": plan.thumbnail_timestamp_ms,
            "latePolicy": plan.late_policy,
            "maxLatenessSeconds": plan.max_lateness_seconds,
            **({"firstComment": dict(plan.first_comment)} if plan.first_comment else {}),
            "targets": [
                {
                    "platform": t.platform,
                    "accountId": t.account_id,
                    "accountName": t.account_name,
                    "pageId": t.page_id,
                    "text": t.text,
                    "config": t.config,
                    # only when set, so the templates of other series are unchanged
                    **({"firstCommentText": t.first_comment_text} if t.first_comment_text else {}),
                    **({"mediaFit": "auto"} if t.media_fit else {}),
                }
                for t in targets
            ],
        },
    )
    post.recurring_post, post.occurrence_at = series, post.scheduled_at
    post.save(update_fields=["recurring_post", "occurrence_at", "updated_at"])
    return series


def _check_start(post: Post, plan: PostPlan, recurrence: dict[str, Any]) -> None:
    problems: list[str] = []
    if plan.save_as_draft:
        problems.append("recurrence: a recurring series cannot be saved as a draft (saveAsDraft)")
    elif post.status != PostStatus.SCHEDULED or post.scheduled_at is None:
        problems.append("scheduledAt: a recurring series needs a future scheduledAt (its first occurrence)")
    platforms = {t.platform for t in plan.targets} | {s["platform"] for s in plan.skipped}
    if "TIKTOK" in platforms:
        problems.append("recurrence: TIKTOK posts cannot recur; remove TIKTOK from platforms")
    first_day = _first_local_day(plan)
    if first_day is None and plan.scheduled_at is not None:
        problems.append(f"scheduledAt: too far in the future for a recurring series in {plan.timezone}")
    ends_on = recurrence.get("endsOn")
    if ends_on is not None and first_day is not None and ends_on < first_day:
        problems.append(f"recurrence.endsOn: is before the first post ({first_day.isoformat()} in {plan.timezone})")
    if problems:
        raise ValidationFailed(problems)


def _first_local_day(plan: PostPlan) -> dt.date | None:
    """The local date of the first occurrence; None when there is none, or when it lies past the
    last day the calendar can hold (year 9999) in the series' time zone."""
    if plan.scheduled_at is None:
        return None
    try:
        return local_date(plan.scheduled_at, plan.timezone)
    except OverflowError:
        return None


# --- API transitions -------------------------------------------------------------------------


@transaction.atomic
def series_pause(*, workspace_id: str, series_id: str) -> RecurringPost:
    """ACTIVE → PAUSED (pauseReason USER): occurrences stop and the upcoming scheduled post is
    deleted; an occurrence already claimed for publishing goes out. A series that is not ACTIVE is
    returned unchanged. 404 for other workspaces."""
    series = lock_series(series_id=series_id, workspace_id=workspace_id, post_statuses=[PostStatus.SCHEDULED])
    if series.status == RecurringStatus.ACTIVE:
        pause_locked(series, reason=PauseReason.USER)
    return series


@transaction.atomic
def series_resume(*, workspace_id: str, series_id: str, now: dt.datetime | None = None) -> RecurringPost:
    """PAUSED → ACTIVE from the first occurrence after now (missed ones are never published; that
    occurrence is created SCHEDULED with post.scheduled), or → ENDED when the rule has none left.
    Accounts removed meanwhile are dropped from the series; 400 ``connection_not_found`` when none
    is left, 400 ``media_not_found`` when its media is gone. The failure streak starts afresh. A
    series that is not PAUSED is returned unchanged. 404 for other workspaces."""
    series = lock_series(series_id=series_id, workspace_id=workspace_id)
    if series.status != RecurringStatus.PAUSED:
        return series
    now = now or timezone.now()
    _drop_removed_accounts(series)
    series.pause_reason = None
    series.template = {**(series.template or {}), STREAK_FROM: format_instant(now)}
    series.consecutive_failures = 0
    following = _first_free_after(series, now)
    if following is None:
        series.status, series.next_occurrence_at = RecurringStatus.ENDED, None
        series.save()
        return series
    series.status, series.next_occurrence_at = RecurringStatus.ACTIVE, following
    try:
        created = create_occurrence(series, following)
    except SeriesBroken as exc:
        raise BadRequest(exc.message, code=exc.code) from exc
    if created is not None:
        series.occurrence_count += 1
    series.save()
    return series


def _drop_removed_accounts(series: RecurringPost) -> None:
    accounts = live_accounts(series)
    removed = removed_targets(series, accounts)
    if not removed:
        return
    kept = [t for t in template_targets(series) if t.get("accountId") in accounts]
    if not kept:
        raise BadRequest(
            f"{describe_removed(removed)}; no account of this series is left, so it cannot resume",
            code="connection_not_found",
        )
    series.template = {**(series.template or {}), "targets": kept}


@transaction.atomic
def series_delete(*, workspace_id: str, series_id: str) -> None:
    """Stop and remove the series: its upcoming scheduled post is deleted; posts already published
    (or being published) are kept, without their link to the series. 404 for other workspaces."""
    series = lock_series(series_id=series_id, workspace_id=workspace_id, post_statuses=IN_FLIGHT)
    delete_upcoming(series)
    series.delete()


# --- reactions -------------------------------------------------------------------------------


@contextlib.contextmanager
def _guarded(what: str, series_id: str) -> Iterator[None]:
    """A savepoint whose failure is logged and swallowed: a series problem must never roll back
    the pipeline's claim or finalize around it."""
    try:
        with transaction.atomic():
            yield
    except Exception:
        logger.exception("recurring series %s: %s failed", series_id, what)


def _first_free_after(series: RecurringPost, after: dt.datetime) -> dt.datetime | None:
    """The first occurrence after ``after`` that no other post of the series holds (an
    unscheduled occurrence stays with the series as a draft and keeps its occurrence time, so
    the unique constraint would refuse a second post for it), or None when the rule has ended or
    the series has made its ``maxOccurrences``."""
    taken = set(
        Post.objects.filter(recurring_post=series, occurrence_at__gt=after)
        .exclude(status=PostStatus.SCHEDULED)
        .values_list("occurrence_at", flat=True)
    )
    if series.max_occurrences is not None and series.occurrence_count >= series.max_occurrences:
        return None
    free = (at for at in Rule.of(series).instants() if at > after and at not in taken)
    return next(free, None)


def _advance(series: RecurringPost, *, after: dt.datetime) -> None:
    """With the series locked: schedule the first free occurrence after ``after``, or END the
    series when there is none; a template that cannot make an occurrence pauses the series instead."""
    following = _first_free_after(series, after)
    if following is None:
        series.status, series.next_occurrence_at = RecurringStatus.ENDED, None
        series.save(update_fields=["status", "next_occurrence_at", "updated_at"])
        return
    try:
        with transaction.atomic():
            created = create_occurrence(series, following)
    except SeriesBroken as exc:
        pause_locked(series, reason=exc.reason, error=exc.message)
        return
    series.next_occurrence_at = following
    if created is not None:
        series.occurrence_count += 1
    series.save(update_fields=["next_occurrence_at", "occurrence_count", "updated_at"])


def series_occurrences_claimed(*, post_ids: list[str], now: dt.datetime | None = None) -> None:
    """The dispatcher claimed these posts (in its transaction): for each that is the current
    occurrence of an ACTIVE series, the next occurrence is created (first one after the claimed
    occurrence, or after now when the claim came late: a late dispatcher never bursts out stale
    occurrences), or the series ENDS. Claiming the same post again changes nothing."""
    rows = list(
        Post.objects.filter(id__in=post_ids, recurring_post__isnull=False)
        .order_by("recurring_post_id", "occurrence_at")
        .values_list("recurring_post_id", "occurrence_at")
    )
    now = now or timezone.now()
    for series_id, occurrence_at in rows:
        with _guarded("scheduling the next occurrence", series_id):
            series = lock_series(series_id=series_id)
            current = series.next_occurrence_at
            if series.status != RecurringStatus.ACTIVE or occurrence_at is None:
                continue
            if current is not None and occurrence_at < current:
                continue  # already moved past this occurrence
            _advance(series, after=max(occurrence_at, now))


def series_post_finished(*, post_id: str, status: str) -> None:
    """An occurrence reached COMPLETED, PARTIAL_FAILURE or FAILED (in finalize's transaction).
    The failure streak is recounted from the finished occurrences (so a retried occurrence is
    never counted twice); at 3 FAILED occurrences in a row an ACTIVE series pauses itself with
    CONSECUTIVE_FAILURES. lastError holds the latest failure; a COMPLETED occurrence clears it."""
    series_id = Post.objects.filter(id=post_id).values_list("recurring_post_id", flat=True).first()
    if not series_id:
        return
    with _guarded("recording an occurrence's outcome", series_id):
        series = lock_series(series_id=series_id)
        if status == PostStatus.COMPLETED:
            series.last_error = ""
        elif status in FINAL_POST_STATUSES:
            series.last_error = _failure_summary(post_id) or series.last_error
        series.consecutive_failures = _failure_streak(series)
        series.save(update_fields=["last_error", "consecutive_failures", "updated_at"])
        if series.consecutive_failures >= FAILURE_LIMIT and series.status == RecurringStatus.ACTIVE:
            pause_locked(series, reason=PauseReason.CONSECUTIVE_FAILURES)


def _failure_summary(post_id: str) -> str:
    failed = PostTarget.objects.filter(post_id=post_id, status=TargetStatus.FAILED).order_by("created_at", "id")
    return "; ".join(f"{t.platform}: {t.error_message or t.error_code or 'failed'}" for t in failed)[:4000]


def _failure_streak(series: RecurringPost) -> int:
    finished = Post.objects.filter(recurring_post=series, status__in=FINAL_POST_STATUSES)
    since = parse_datetime(str((series.template or {}).get(STREAK_FROM) or ""))
    if since is not None:
        finished = finished.filter(occurrence_at__gte=since)
    latest = finished.order_by("-occurrence_at").values_list("status", flat=True)[:FAILURE_LIMIT]
    return sum(1 for _ in itertools.takewhile(lambda s: s == PostStatus.FAILED, latest))


NEVER_WENT_OUT = (PostStatus.SCHEDULED, PostStatus.DRAFT)


def upcoming_post_deleted(*, post: Post) -> None:
    """``post`` (locked by the caller) is about to be deleted. An occurrence that never went out
    (SCHEDULED, or unscheduled into a DRAFT) stops counting toward occurrenceCount and
    maxOccurrences. When it is the upcoming occurrence of an ACTIVE series, that occurrence is
    skipped and the next one scheduled at once (or the series ENDS). Posts that went out change
    nothing."""
    if post.recurring_post_id is None or post.status not in NEVER_WENT_OUT or post.occurrence_at is None:
        return
    series = lock_series(series_id=post.recurring_post_id)
    series.occurrence_count = max(0, series.occurrence_count - 1)
    series.save(update_fields=["occurrence_count", "updated_at"])
    _move_on_from(series, post)


def upcoming_post_unscheduled(*, post: Post) -> None:
    """``post`` (locked by the caller) is about to become an undated draft: when it is the upcoming
    occurrence of an ACTIVE series, the series moves on to the next occurrence at once, as when
    it is deleted (the draft keeps its link to the series, and still counts as an occurrence)."""
    if post.recurring_post_id is None or post.status != PostStatus.SCHEDULED or post.occurrence_at is None:
        return
    _move_on_from(lock_series(series_id=post.recurring_post_id), post)


def upcoming_post_sent_now(*, post: Post) -> None:
    """``post`` (locked by the caller) is SCHEDULED and about to be published now, ahead of its
    time: when it is the upcoming occurrence of an ACTIVE series, the series schedules the next
    occurrence at once, as the dispatcher's claim would have (the post keeps its occurrence)."""
    if post.recurring_post_id is None or post.status != PostStatus.SCHEDULED or post.occurrence_at is None:
        return
    _move_on_from(lock_series(series_id=post.recurring_post_id), post)


def _move_on_from(series: RecurringPost, post: Post) -> None:
    if post.status != PostStatus.SCHEDULED or post.occurrence_at is None:
        return
    if series.status != RecurringStatus.ACTIVE or series.next_occurrence_at != post.occurrence_at:
        return
    _advance(series, after=max(post.occurrence_at, timezone.now()))


@transaction.atomic
def series_account_removed(*, workspace_id: str, account_id: str) -> int:
    """The account is being removed: every ACTIVE series of the workspace that publishes to it
    pauses itself (pauseReason CONNECTION_REMOVED, lastError naming the account) and its upcoming
    post is deleted. Returns how many series paused; a second call pauses none."""
    ids = list(
        RecurringPost.objects.filter(
            workspace_id=workspace_id,
            status=RecurringStatus.ACTIVE,
            template__targets__contains=[{"accountId": account_id}],
        )
        .order_by("id")
        .values_list("id", flat=True)
    )
    paused = 0
    for series_id in ids:
        series = lock_series(series_id=series_id, post_statuses=[PostStatus.SCHEDULED])
        if series.status != RecurringStatus.ACTIVE:
            continue
        gone = [t for t in template_targets(series) if t.get("accountId") == account_id]
        pause_locked(series, reason=PauseReason.CONNECTION_REMOVED, error=describe_removed(gone))
        paused += 1
    return paused


STALL_GRACE = dt.timedelta(minutes=5)


def series_repair_stalled(*, now: dt.datetime | None = None) -> int:
    """Safety net for a series left ACTIVE with no upcoming post (a hook that failed and was
    logged): schedule its first occurrence after now, or END it. Idempotent: a repaired series
    has its SCHEDULED post and is not picked again. Returns how many series were repaired."""
    now = now or timezone.now()
    stalled = (
        RecurringPost.objects.filter(status=RecurringStatus.ACTIVE)
        .filter(Q(next_occurrence_at__isnull=True) | Q(next_occurrence_at__lt=now - STALL_GRACE))
        .exclude(occurrences__status=PostStatus.SCHEDULED)
        .values_list("id", flat=True)
    )
    repaired = 0
    for series_id in list(stalled[:500]):
        with _guarded("repairing a stalled series", series_id), transaction.atomic():
            series = lock_series(series_id=series_id)
            has_upcoming = Post.objects.filter(recurring_post_id=series_id, status=PostStatus.SCHEDULED).exists()
            if series.status != RecurringStatus.ACTIVE or has_upcoming:
                continue
            _advance(series, after=now)
            repaired += 1
    return repaired


# --- the mediaFit a template did not keep --------------------------------------------------


def series_media_fit_backfill() -> int:
    """Series started before a template kept each platform's mediaFit: their first post's entries
    fitted (``media_fit``) but the template has no ``mediaFit``, so later occurrences were sent
    unfitted. Gives each such template platform ``mediaFit: "auto"`` where an entry of the series'
    posts on that account fits. Idempotent: a template that has it already is left as it is, so
    run twice it changes nothing more. Returns how many series changed."""
    fitted: dict[str, set[str]] = {}
    for series_id, account_id in (
        PostTarget.objects.filter(media_fit=True, post__recurring_post__isnull=False)
        .values_list("post__recurring_post_id", "account_id")
        .distinct()
    ):
        fitted.setdefault(series_id, set()).add(account_id)
    changed = 0
    for series_id, accounts in fitted.items():
        with transaction.atomic():
            series = RecurringPost.objects.select_for_update(no_key=True).filter(id=series_id).first()
            if series is None:
                continue
            targets = template_targets(series)
            if not any(t.get("accountId") in accounts and t.get("mediaFit") != "auto" for t in targets):
                continue
            series.template = {
                **(series.template or {}),
                "targets": [{**t, "mediaFit": "auto"} if t.get("accountId") in accounts else t for t in targets],
            }
            series.save(update_fields=["template", "updated_at"])
            changed += 1
    return changed
