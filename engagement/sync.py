"""The comment sync: every published entry on a platform that reads comments (``comment_actions``
has "read") is a :class:`~engagement.models.CommentSource`, read by a Celery task per account on
the cadence of its post's age (``engagement.cadence``) and on demand (``POST /comments/sync``).

- **Sources** are found by beat (:func:`sources_discover`): entries published within the last
  ``TRACK_DAYS`` days without one, and one review feed per Google Business account. Nothing in the
  publishing pipeline waits for the inbox.
- **Queuing** (:func:`syncs_queue_due`): the sources due before beat's next run, each queued once
  (``queued_at``; queued again only if its task was lost for ``QUEUED_PATIENCE``): a task of its
  account with a countdown to the second it falls due, so a read waits for its due time, not for
  the next tick; one task covers the account's sources due within ``CLAIM_AHEAD`` of it (its sync
  reads them together). A task that arrives earlier claims only what is due by then.
- **A sync** (:func:`sync_account`) claims the account's due sources a chunk at a time with a lease
  (``core.work.claim``: two syncs of one account never read the same source), reads each outside
  any transaction, side by side on the worker's threads, and writes each source's comments in one
  transaction as it arrives: upserted by ``(account, platform id)`` (so reading twice stores
  nothing twice), replies linked to their parents, ``answered`` set where the account's own reply
  is under a comment. The cursor's write is fenced by the lease.
- **Incremental**: a pass asks for comments created at or after ``since`` (the newest one a
  finished pass saw; the client filters or drops older ones) and follows the platform's page
  cursors to the end. Once a day a pass reads everything (``since`` none): comments that pass no
  longer finds are marked deleted, and the platform's counts of older comments are refreshed.
- **Budget** (``engagement.budget``): when the account's scheduled sources want more reads an
  hour than ``HEADROOM`` of its ``comment_reads_per_hour`` (:func:`engagement.cadence.demand`,
  counted once per sync in one query), every next due time is stretched by the same factor
  (:func:`engagement.cadence.stretch`), so the reads spread evenly over the hour. Each page read
  still spends one of the budget (the hard limit); a pass that runs out keeps its page cursor and
  resumes in the next hour. A platform that answers rate limited holds every read of the account until its
  ``retry_at``. The token rejected: the account is marked unauthorized and its sources wait for it
  to be connected again.
- **Events** (:func:`comments_announce`): after the writes, every comment of the account that was
  never announced (``received_at`` null, not the account's own, not deleted) is named in
  ``comment.received`` events (at most ``ANNOUNCE_BATCH`` comments each), marked by the same
  statement that selects it, in one transaction: one event per comment, ever. A sync run twice
  announces nothing the second time.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import redis
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from accounts.models import AccountStatus, SocialAccount
from accounts.services import account_credentials, account_mark_unauthorized
from core import bulk, metrics, work
from core.redis import get_redis
from engagement import budget, cadence
from engagement.enqueue import enqueue_syncs, enqueue_syncs_at
from engagement.models import Comment, CommentSource, SyncStatus
from engagement.records import COMMENT_COLUMNS, comment_record
from platforms import registry
from platforms.base import (
    AuthError,
    CommentPage,
    Credentials,
    NotSupported,
    Permanent,
    Platform,
    PlatformClient,
    PlatformError,
    QuotaExhausted,
    RateLimited,
    RemoteComment,
    UnknownOutcome,
)
from platforms.capabilities import CAPABILITIES
from posts.models import PostTarget, TargetStatus
from webhooks.events import emit_events

logger = logging.getLogger(__name__)

RECEIVED_EVENT = "comment.received"
TRACK_DAYS = 90  # entries published this long ago are still tracked (read on demand after 30 days)
SYNC_LEASE = dt.timedelta(minutes=10)
CLAIM_CHUNK = 25  # sources claimed at a time: each chunk's lease covers its reads alone
# A sync also reads the account's sources due this soon after it starts, with those due now, so an
# account's reads come together in one task instead of one task per source. Each next read is
# planned from when the source was due, not from when it was read, so reading one early does not
# make its reads more frequent.
CLAIM_AHEAD = dt.timedelta(seconds=30)
MAX_PAGES_PER_PASS = 20  # pages of one source in one run (a longer pass resumes at its cursor)
FULL_PASS_EVERY = dt.timedelta(hours=24)
QUEUED_PATIENCE = dt.timedelta(minutes=10)
RETRY_AFTER = dt.timedelta(minutes=5)  # a source whose read failed transiently
ANNOUNCE_BATCH = 100
ANNOUNCE_LIMIT = 2000  # comments named per sync (the rest by the next one)
DISCOVER_LIMIT = 5000
QUEUE_LIMIT = 20000
SYNC_COOLDOWN_SECONDS = 600


def reading_platforms() -> list[str]:
    """Platforms whose comment API the sync reads."""
    return [p.value for p, caps in CAPABILITIES.items() if "read" in caps.comment_actions]


def _review_platforms() -> list[str]:
    """Platforms whose comments are reviews of the account itself (a location), not of its posts."""
    return [p for p in reading_platforms() if p == Platform.GOOGLE_BUSINESS.value]


def _entry_platforms() -> list[str]:
    reviews = set(_review_platforms())
    return [p for p in reading_platforms() if p not in reviews]


# --- finding and queuing sources ------------------------------------------------------------------


def sources_discover(
    *, now: dt.datetime | None = None, workspace_id: str | None = None, within: dt.timedelta | None = None
) -> int:
    """Track every published entry of the last ``TRACK_DAYS`` days (only those published ``within``
    that long, when given) on a platform whose comments are read, and every Google Business
    account's reviews, that has no source yet (first due as :func:`engagement.cadence.first_due`
    says). Idempotent: a source exists once per entry (and once per review feed); a second run
    creates none. Returns how many it created."""
    now = now or timezone.now()
    horizon = dt.timedelta(days=TRACK_DAYS) if within is None else min(within, dt.timedelta(days=TRACK_DAYS))
    entries = PostTarget.objects.filter(
        status=TargetStatus.PUBLISHED,
        published_at__gte=now - horizon,
        platform__in=_entry_platforms(),
        account__status=AccountStatus.ACTIVE,
    ).exclude(platform_post_id="")
    if workspace_id is not None:
        entries = entries.filter(post__workspace_id=workspace_id)
    entries = entries.filter(~Exists(CommentSource.objects.filter(target_id=OuterRef("pk"))))
    rows = [
        CommentSource(
            workspace_id=workspace,
            account_id=account_id,
            platform=platform,
            target_id=target_id,
            platform_post_id=platform_post_id,
            published_at=published_at,
            next_due_at=cadence.first_due(published_at=published_at, now=now),
        )
        for target_id, workspace, account_id, platform, platform_post_id, published_at in entries.values_list(
            "id", "post__workspace_id", "account_id", "platform", "platform_post_id", "published_at"
        )[:DISCOVER_LIMIT]
    ]
    feeds = SocialAccount.objects.filter(platform__in=_review_platforms(), status=AccountStatus.ACTIVE)
    if workspace_id is not None:
        feeds = feeds.filter(workspace_id=workspace_id)
    feeds = feeds.filter(~Exists(CommentSource.objects.filter(account_id=OuterRef("pk"), target__isnull=True)))
    rows += [
        CommentSource(workspace_id=workspace, account_id=account_id, platform=platform, next_due_at=now)
        for account_id, workspace, platform in feeds.values_list("id", "workspace_id", "platform")[:DISCOVER_LIMIT]
    ]
    created = CommentSource.objects.bulk_create(rows, ignore_conflicts=True)
    return len(created)


# Beat looks at the entries published in the last RECENT only (an index range of minutes), and over
# the whole TRACK_DAYS once an hour (entries it missed: published while beat was down, or on a
# platform whose comments became readable since).
RECENT = dt.timedelta(minutes=15)
FULL_DISCOVERY_EVERY_SECONDS = 3600


def sources_discover_due(*, now: dt.datetime | None = None) -> int:
    """Beat's discovery: the recent entries every run, everything once an hour (a Redis mark shared
    by every beat; without Redis, everything)."""
    try:
        whole = bool(get_redis().set("engagement:discover-all", "1", nx=True, ex=FULL_DISCOVERY_EVERY_SECONDS))
    except redis.RedisError:  # Redis unreachable: the wider look is the safe one
        logger.warning("comment discovery: Redis unreachable, looking at every tracked day")
        whole = True
    return sources_discover(now=now, within=None if whole else RECENT)


def _due(now: dt.datetime, *, by: dt.datetime | None = None) -> QuerySet[CommentSource]:
    """Sources nobody holds now, due by ``by`` (now when not given)."""
    return CommentSource.objects.filter(
        work.lease_free(now),
        next_due_at__lte=by or now,
        account__status=AccountStatus.ACTIVE,
        platform__in=reading_platforms(),
    )


def syncs_queue_due(*, now: dt.datetime | None = None, ahead: dt.timedelta | None = None) -> int:
    """Queue the syncs of the sources due now or within ``ahead`` (default: until beat's next run,
    ``COMMENT_SYNC_INTERVAL_SECONDS``), after commit: a task of the source's account with a
    countdown to the second its due time falls in (none when it is due already), one task per
    account for the sources due within ``CLAIM_AHEAD`` of it (:func:`_wakeups`). A source is queued once (``queued_at``); one queued ``QUEUED_PATIENCE`` ago
    whose task never came is queued again. Idempotent: a second run finds nothing new to queue.
    Returns how many accounts it queued."""
    now = now or timezone.now()
    if ahead is None:
        ahead = dt.timedelta(seconds=settings.COMMENT_SYNC_INTERVAL_SECONDS)
    with transaction.atomic():
        waiting = _due(now, by=now + ahead).filter(Q(queued_at__isnull=True) | Q(queued_at__lt=now - QUEUED_PATIENCE))
        rows = list(
            waiting.order_by("next_due_at")
            .select_for_update(skip_locked=True, of=("self",))
            .values_list("id", "account_id", "next_due_at")[:QUEUE_LIMIT]
        )
        if not rows:
            return 0
        CommentSource.objects.filter(id__in=[source_id for source_id, _, _ in rows]).update(queued_at=now)
        # next_due_at is set on every row the filter took (``next_due_at__lte``).
        wakeups = _wakeups([(account_id, due or now) for _, account_id, due in rows], now=now)
        transaction.on_commit(partial(enqueue_syncs_at, wakeups), robust=True)
    return len({account_id for account_id, _ in wakeups})


def _wakeups(due: list[tuple[str, dt.datetime]], *, now: dt.datetime) -> list[tuple[str, float]]:
    """``(account, countdown in seconds)`` for each account, in order of due time: 0 for sources
    due already; otherwise the end of the second the first one falls due in. A wakeup covers the
    account's sources due within ``CLAIM_AHEAD`` after it (its sync claims them too), so the next
    wakeup of that account is for the first source past that."""
    wakeups: dict[tuple[str, float], None] = {}
    covered_until: dict[str, float] = {}
    for account_id, due_at in sorted(due, key=lambda pair: pair[1]):
        ahead = (due_at - now).total_seconds()
        covered = covered_until.get(account_id)
        if covered is not None and ahead <= covered:
            continue
        countdown = float(math.ceil(ahead)) if ahead > 0 else 0.0
        wakeups[(account_id, countdown)] = None
        covered_until[account_id] = countdown + CLAIM_AHEAD.total_seconds()
    return list(wakeups)


@dataclass(frozen=True)
class SyncRequest:
    queued: bool
    cooldown_seconds_remaining: int


def comments_sync_request(*, workspace_id: str) -> SyncRequest:
    """``POST /comments/sync``: every tracked source of the workspace (entries of the last
    ``TRACK_DAYS`` days, older than their scheduled period included, and the review feeds) due now,
    its accounts' syncs queued after commit; at most once per ``SYNC_COOLDOWN_SECONDS`` per
    workspace (kept in Redis, shared by every web process). The reads still spend each account's
    budget."""
    key = f"engagement:sync-cooldown:{workspace_id}"
    redis = get_redis()
    if not redis.set(key, "1", nx=True, ex=SYNC_COOLDOWN_SECONDS):
        return SyncRequest(queued=False, cooldown_seconds_remaining=max(1, int(redis.ttl(key))))
    now = timezone.now()
    sources_discover(now=now, workspace_id=workspace_id)
    with transaction.atomic():
        sources = CommentSource.objects.filter(
            workspace_id=workspace_id, account__status=AccountStatus.ACTIVE, platform__in=reading_platforms()
        )
        accounts = list(sources.order_by().values_list("account_id", flat=True).distinct())
        sources.update(next_due_at=now, queued_at=now)
        transaction.on_commit(partial(enqueue_syncs, accounts), robust=True)
    return SyncRequest(queued=True, cooldown_seconds_remaining=SYNC_COOLDOWN_SECONDS)


# --- one account's sync ---------------------------------------------------------------------------


@dataclass
class SyncReport:
    sources: int = 0
    pages: int = 0
    comments: int = 0
    announced: int = 0
    cut_short: int = 0  # passes with more pages than one run reads (read on in the same sync)
    stopped: str = ""  # why the sync stopped before every due source was read: budget, rate_limited, unauthorized


@dataclass(frozen=True)
class _Source:
    """A claimed source and how its pass reads it."""

    id: str
    lease_until: dt.datetime
    target_id: str | None
    post_id: str | None
    workspace_id: str
    account_id: str
    platform: str
    platform_post_id: str
    published_at: dt.datetime | None
    since: dt.datetime | None  # what this pass asks for (None: everything)
    cursor: str  # where it starts ("" at the beginning)
    full: bool  # a pass over everything (since None)
    resumed: bool  # continues a pass an earlier run cut short
    pass_newest: dt.datetime | None
    claimed_at: dt.datetime  # before its pass read anything
    stretch: float = 1.0  # the account's factor on every interval (engagement.cadence.stretch)
    due_at: dt.datetime | None = None  # when this read was due (the next one is planned from it)


def _next_due(source: _Source, *, now: dt.datetime) -> dt.datetime | None:
    """When a source read at ``now`` is next due: one interval after it was due, read early
    (``CLAIM_AHEAD``) or late, so a worker's lag does not stretch every interval and the reads keep
    the rate the account's budget was planned for; from ``now`` once it fell a whole interval
    behind (the missed reads are dropped, not caught up in a burst)."""
    planned = cadence.next_due(published_at=source.published_at, synced_at=source.due_at or now, factor=source.stretch)
    if planned is not None and planned <= now:
        return cadence.next_due(published_at=source.published_at, synced_at=now, factor=source.stretch)
    return planned


@dataclass
class _Pass:
    comments: list[RemoteComment] = field(default_factory=list)
    cursor: str = ""
    pages: int = 0
    finished: bool = False
    out_of_budget: bool = False
    error: PlatformError | None = None
    unsupported: bool = False


def sync_account(*, account_id: str, now: dt.datetime | None = None) -> SyncReport:
    """Read the account's due sources (chunk by chunk, each claimed with a lease), store what they
    hold and announce the new comments. Safe to run any number of times and side by side: a source
    another run holds is skipped, and what was already stored or announced is not stored or
    announced again."""
    report = SyncReport()
    now = now or timezone.now()
    account = SocialAccount.objects.filter(id=account_id).first()
    if account is None:
        return report
    sources = CommentSource.objects.filter(account_id=account_id)
    if account.status != AccountStatus.ACTIVE or "read" not in CAPABILITIES[Platform(account.platform)].comment_actions:
        sources.update(queued_at=None)  # nothing to read now; it is queued again once it can be
        return report
    held = budget.held_until(account_id)
    if held is not None and held > now:
        sources.filter(next_due_at__lt=held).update(next_due_at=held, queued_at=None)
        report.stopped = "rate_limited"
        return report
    try:
        creds = account_credentials(account=account)  # the row just read: no second read
    except AuthError as exc:
        account_mark_unauthorized(account_id=account_id, reason=exc.message)
        sources.update(queued_at=None)
        report.stopped = "unauthorized"
        return report
    except Exception:
        sources.update(queued_at=None)
        raise
    client = registry.get_client(account.platform)
    listings = CAPABILITIES[Platform(account.platform)].comment_listings
    factor = cadence.stretch(account_demand(account_id, now=now, listings=listings), budget.limit_of(account.platform))
    while not report.stopped:
        cut_short = report.cut_short
        claimed = _claim(account_id, now=timezone.now(), stretch=factor)
        if not claimed:
            break
        report.sources += len(claimed)
        gather_errors: list[BaseException] = []
        work.gather(
            claimed,
            partial(_read, client, creds),
            partial(_write_passes, report=report, errors=gather_errors),
            width=settings.COMMENT_SYNC_THREADS,
        )
        if gather_errors:
            raise gather_errors[0]
        if len(claimed) < CLAIM_CHUNK and report.cut_short == cut_short:
            break  # everything due was read (what falls due later has its own wakeup): no claim finds more
    report.announced = comments_announce(account_id=account_id)
    return report


def account_demand(account_id: str, *, now: dt.datetime, listings: int = 1) -> float:
    """The reads an hour the account's scheduled sources want at the unstretched cadence
    (:func:`engagement.cadence.demand`, ``listings`` calls a read), from one aggregate query: its
    sources with a due time, counted by the band of their post's age, and its review feed."""
    bands: dict[str, Count] = {}
    younger: dt.timedelta | None = None
    for index, edge in enumerate(cadence.band_edges()):
        band = Q(published_at__gt=now - edge)
        if younger is not None:
            band &= Q(published_at__lte=now - younger)
        bands[f"band{index}"] = Count("id", filter=band)
        younger = edge
    counts = CommentSource.objects.filter(account_id=account_id, next_due_at__isnull=False).aggregate(
        reviews=Count("id", filter=Q(published_at__isnull=True)), **bands
    )
    per_band = [int(counts[f"band{index}"]) for index in range(len(bands))]
    return cadence.demand(per_band=per_band, reviews=int(counts["reviews"]), listings=listings)


def _claim(account_id: str, *, now: dt.datetime, stretch: float = 1.0) -> list[_Source]:
    lease_until = now + SYNC_LEASE
    ids = work.claim(
        _due(now, by=now + CLAIM_AHEAD).filter(account_id=account_id),
        lease_until=lease_until,
        limit=CLAIM_CHUNK,
        order_by=("next_due_at", "id"),
        queued_at=None,
    )
    claimed = []
    rows = CommentSource.objects.filter(id__in=ids, lease_until=lease_until).values(
        "id", "target_id", "target__post_id", "workspace_id", "account_id", "platform", "platform_post_id",
        "published_at", "page_cursor", "pass_since", "full_synced_at", "since", "pass_newest", "next_due_at",
    )  # fmt: skip
    for row in rows:
        resumed = bool(row["page_cursor"])
        if resumed:
            since = row["pass_since"]
        else:
            full = row["full_synced_at"] is None or now - row["full_synced_at"] >= FULL_PASS_EVERY
            since = None if full else row["since"]
        claimed.append(
            _Source(
                id=row["id"],
                lease_until=lease_until,
                target_id=row["target_id"],
                post_id=row["target__post_id"],
                workspace_id=row["workspace_id"],
                account_id=row["account_id"],
                platform=row["platform"],
                platform_post_id=row["platform_post_id"],
                published_at=row["published_at"],
                since=since,
                cursor=row["page_cursor"],
                full=since is None,
                resumed=resumed,
                pass_newest=row["pass_newest"],
                claimed_at=now,
                stretch=stretch,
                due_at=row["next_due_at"],
            )
        )
    return sorted(claimed, key=lambda s: ids.index(s.id))


def _read(client: PlatformClient, creds: Credentials, source: _Source) -> _Pass:
    """One source's pass (or as much of it as this run may read), on a worker thread: no database."""
    result = _Pass(cursor=source.cursor)
    while result.pages < MAX_PAGES_PER_PASS:
        if not budget.take(source.account_id, source.platform):
            result.out_of_budget = True
            return result
        try:
            page: CommentPage = client.list_comments(
                creds, source.platform_post_id, since=source.since, cursor=result.cursor
            )
        except PlatformError as exc:
            result.error = exc
            return result
        except NotSupported:
            result.unsupported = True
            return result
        result.pages += 1
        result.comments.extend(page.comments)
        result.cursor = page.cursor
        if not page.cursor:
            result.finished = True
            return result
    return result


def _write_passes(
    arrived: list[work.Arrived[_Source, _Pass]], *, report: SyncReport, errors: list[BaseException]
) -> None:
    for answer in arrived:
        source = answer.item
        if answer.error is not None:
            logger.error(
                "comment sync of source %s raised", source.id, exc_info=(type(answer.error), answer.error, None)
            )
            _release(source, next_due_at=timezone.now() + RETRY_AFTER, status=SyncStatus.FAILED, message="unexpected")
            errors.append(answer.error)
            continue
        result = answer.value
        assert result is not None
        try:
            _store(source, result, report)
        except Exception as exc:
            logger.exception("storing the comments of source %s raised", source.id)
            errors.append(exc)


def _store(source: _Source, result: _Pass, report: SyncReport) -> None:
    """Write one pass: its comments, then the source's cursor and next due time (fenced)."""
    now = timezone.now()
    report.pages += result.pages
    report.comments += len(result.comments)
    metrics.comment_reads_recorded(platform=source.platform, outcome="ok", count=result.pages)
    if result.out_of_budget:
        metrics.comment_reads_recorded(platform=source.platform, outcome="budget")
    if result.error is not None:
        outcome = "rate_limited" if isinstance(result.error, RateLimited | QuotaExhausted) else "failed"
        metrics.comment_reads_recorded(platform=source.platform, outcome=outcome)
    with transaction.atomic():
        seen, new, own_parents = _upsert(source, result.comments, now)
        deleted = 0
        if result.finished and source.full and not source.resumed:
            deleted = _mark_missing_deleted(source, seen, now)
        if new or deleted:  # no comment came or went: no link and no answer can have changed
            _link_and_answer(source, new=new, own_parents=own_parents, deleted=bool(deleted))
        seen_dates = [c.created_at for c in result.comments]
        if source.pass_newest is not None:
            seen_dates.append(source.pass_newest)
        newest = max(seen_dates, default=None)
        changes: dict[str, Any] = {"lease_until": None, "updated_at": now}
        error = result.error
        if result.finished:
            changes.update(
                since=max([d for d in (newest, source.since) if d is not None], default=None),
                page_cursor="",
                pass_since=None,
                pass_newest=None,
                last_synced_at=now,
                next_due_at=_next_due(source, now=now),
                status=SyncStatus.IDLE,
                error_code="",
                error_message="",
            )
            if source.full and not source.resumed:
                changes["full_synced_at"] = now
        else:
            # Cut short: the pass resumes where it stopped, asking for what it asked for.
            changes.update(page_cursor=result.cursor, pass_since=source.since, pass_newest=newest)
        if result.unsupported:
            changes.update(next_due_at=None, page_cursor="", status=SyncStatus.FAILED, error_code="not_supported")
        elif error is not None:
            changes.update(
                status=SyncStatus.FAILED, error_code=str(error.error_code), error_message=error.message[:2000]
            )
            if isinstance(error, RateLimited | QuotaExhausted):
                until = error.retry_at or now + RETRY_AFTER
                changes["next_due_at"] = until
                report.stopped = "rate_limited"
            elif isinstance(error, AuthError):
                report.stopped = "unauthorized"
            elif _transient(error):
                changes["next_due_at"] = now + RETRY_AFTER
            else:
                changes["next_due_at"] = cadence.next_due(
                    published_at=source.published_at, synced_at=now, factor=source.stretch
                )
        elif result.out_of_budget:
            changes["next_due_at"] = budget.next_window(now)
            report.stopped = "budget"
        elif not result.finished:
            changes["next_due_at"] = now  # more pages than one run reads: on with it at the next claim
            report.cut_short += 1
        CommentSource.objects.filter(id=source.id, lease_until=source.lease_until).update(**changes)
    if isinstance(result.error, RateLimited | QuotaExhausted):
        budget.hold(source.account_id, result.error.retry_at or now + RETRY_AFTER, now=now)
    if isinstance(result.error, AuthError):
        account_mark_unauthorized(account_id=source.account_id, reason=result.error.message)


def _transient(error: PlatformError) -> bool:
    return not isinstance(error, Permanent | UnknownOutcome) and type(error) is not PlatformError


def _release(source: _Source, *, next_due_at: dt.datetime, status: str, message: str) -> None:
    CommentSource.objects.filter(id=source.id, lease_until=source.lease_until).update(
        lease_until=None, next_due_at=next_due_at, status=status, error_message=message, updated_at=timezone.now()
    )


def _clip(value: str, size: int) -> str:
    return (value or "")[:size]


def _upsert(source: _Source, comments: list[RemoteComment], now: dt.datetime) -> tuple[set[str], set[str], set[str]]:
    """Insert the comments not stored yet and refresh those stored before whose platform values
    changed (text, counts, hidden, author): one read of what is stored, then one statement, or none
    when nothing is new or changed (an incremental pass sees its newest comment again, and most of
    a full pass is as it was). The account's own comments are stored as already announced. Returns
    the platform ids seen, those of them not stored before ("seen" alone does not mean anything
    came), and the parents the new replies of the account's own answer."""
    rows: dict[str, dict[str, Any]] = {}
    for remote in comments:
        if not remote.platform_comment_id:
            continue
        rows[_clip(remote.platform_comment_id, 255)] = {
            "platform_comment_id": _clip(remote.platform_comment_id, 255),
            "platform_post_id": _clip(remote.platform_post_id or source.platform_post_id, 255),
            "parent_platform_id": _clip(remote.parent_id, 255),
            "author_id": _clip(remote.author.id, 255),
            "author_name": _clip(remote.author.name, 255),
            "author_handle": _clip(remote.author.handle, 255),
            "author_avatar_url": _clip(remote.author.avatar_url, 2000),
            "text": remote.text or "",
            "created_at": remote.created_at,
            "like_count": remote.like_count,
            "reply_count": remote.reply_count,
            "hidden": remote.hidden,
            "permalink": _clip(remote.permalink, 2000),
            "from_account": remote.from_account,
            "rating": remote.rating if remote.rating is not None and 1 <= remote.rating <= 5 else None,
            "received_at": now if remote.from_account else None,
        }
    if not rows:
        return set(), set(), set()
    compared = list(REFRESHED_FIELDS)
    if not CAPABILITIES[Platform(source.platform)].comment_hidden_listed:
        compared.remove("hidden")  # the listing cannot say (X): the inbox keeps what it set
    stored = {
        values[0]: values[1:]
        for values in Comment.objects.filter(
            account_id=source.account_id, platform_comment_id__in=list(rows)
        ).values_list("platform_comment_id", *compared)
    }
    new = set(rows) - set(stored)
    written = [
        Comment(
            workspace_id=source.workspace_id,
            account_id=source.account_id,
            platform=source.platform,
            post_id=source.post_id,
            target_id=source.target_id,
            updated_at=now,
            **rows[key],
        )
        for key in sorted(rows)
        if key not in stored or stored[key] != tuple(rows[key][name] for name in compared)
    ]
    bulk.insert(written, unique_fields=["account", "platform_comment_id"], update_fields=[*compared, "updated_at"])
    own_parents = {rows[key]["parent_platform_id"] for key in new if rows[key]["from_account"]} - {""}
    return set(rows), new, own_parents


# What a sync refreshes of a comment it stored before (the platform's current values); a comment
# whose values changed gets a new updated_at with them.
REFRESHED_FIELDS = (
    "text",
    "like_count",
    "reply_count",
    "hidden",
    "permalink",
    "author_name",
    "author_handle",
    "author_avatar_url",
    "parent_platform_id",
)


def _scope(source: _Source) -> QuerySet[Comment]:
    """The comments a source holds: its entry's, or the account's reviews."""
    if source.target_id is not None:
        return Comment.objects.filter(target_id=source.target_id)
    return Comment.objects.filter(account_id=source.account_id, target__isnull=True)


def _link_and_answer(source: _Source, *, new: set[str], own_parents: set[str], deleted: bool) -> None:
    """After a pass stored the ``new`` comments (platform ids): each new reply gets its parent, and
    each reply stored before its parent gets it now that the parent is new; a new comment or
    ``own_parents`` (those a new reply of the account's own answers) with a reply of the account's
    own under it is ``answered``; after a pass marked comments deleted, one no longer with such a
    reply is not. Each statement touches the rows the pass changed, not the whole post's."""
    scope = _scope(source)
    if new:
        parent = Comment.objects.filter(
            account_id=OuterRef("account_id"), platform_comment_id=OuterRef("parent_platform_id")
        )
        orphans = scope.filter(parent__isnull=True).exclude(parent_platform_id="")
        orphans.filter(Q(platform_comment_id__in=new) | Q(parent_platform_id__in=new)).update(
            parent_id=Subquery(parent.values("id")[:1])
        )
    own_reply = Comment.objects.filter(parent_id=OuterRef("pk"), from_account=True, deleted_at__isnull=True)
    if new or own_parents:
        candidates = scope.filter(answered=False, platform_comment_id__in=new | own_parents)
        candidates.filter(Exists(own_reply)).update(answered=True)
    if deleted:
        scope.filter(answered=True).filter(~Exists(own_reply)).update(answered=False)


def _mark_missing_deleted(source: _Source, seen: set[str], now: dt.datetime) -> int:
    """A pass over everything that no longer finds a comment stored before it began: gone from the
    platform (a reply stored meanwhile, by an action, may not be listed yet). Returns how many."""
    missing = _scope(source).filter(deleted_at__isnull=True, first_seen_at__lt=source.claimed_at)
    return int(missing.exclude(platform_comment_id__in=seen).update(deleted_at=now, updated_at=now))


# --- comment.received -----------------------------------------------------------------------------


def comments_announce(*, account_id: str) -> int:
    """Name every comment of the account never announced (not the account's own, not deleted) in
    ``comment.received`` events of at most ``ANNOUNCE_BATCH`` comments, oldest first; each comment
    is marked (``received_at``) by the statement that picks it, in the events' transaction, so no
    comment is ever named twice, whatever runs side by side. Returns how many it named."""
    now = timezone.now()
    with transaction.atomic():
        pending = (
            Comment.objects.filter(
                account_id=account_id, received_at__isnull=True, from_account=False, deleted_at__isnull=True
            )
            .order_by("created_at", "id")
            .select_for_update(skip_locked=True)
            .values_list("id", flat=True)[:ANNOUNCE_LIMIT]
        )
        ids = list(pending)
        if not ids:
            return 0
        Comment.objects.filter(id__in=ids, received_at__isnull=True).update(received_at=now)
        rows = {row["id"]: row for row in Comment.objects.filter(id__in=ids).values("workspace_id", *COMMENT_COLUMNS)}
        ordered = [rows[i] for i in ids if i in rows]
        first = ordered[0]
        events = [
            (
                str(first["workspace_id"]),
                RECEIVED_EVENT,
                {
                    "accountId": account_id,
                    "platform": first["platform"],
                    "comments": [comment_record(row) for row in ordered[start : start + ANNOUNCE_BATCH]],
                },
            )
            for start in range(0, len(ordered), ANNOUNCE_BATCH)
        ]
        emit_events(events)
    metrics.comments_received(platform=first["platform"], count=len(ordered))
    return len(ordered)
