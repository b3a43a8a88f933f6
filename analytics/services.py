"""Writes of the analytics app: tracking published posts, the 180-day import on connect, the
scheduled refresh and the on-demand sync. Platform calls happen outside transactions; each
batch of results is written at once."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from celery import current_app as app
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import SocialAccount
from accounts.services import account_fresh_credentials, account_mark_unauthorized
from analytics.models import AccountSyncState, FollowerSnapshot, SyncStatus, TrackedPost
from core import bulk
from core.redis import get_redis
from platforms.base import AuthError, Metrics, NotSupported, Platform, PlatformError, RemotePost
from platforms.capabilities import ANALYTICS_PLATFORMS
from platforms.registry import get_client
from posts.models import PostTarget

logger = logging.getLogger(__name__)

HISTORY = dt.timedelta(days=180)
METRICS_BATCH = 100
SYNC_COOLDOWN_SECONDS = 600
_ANALYTICS = {p.value for p in ANALYTICS_PLATFORMS}


def has_analytics(platform: str) -> bool:
    return platform in _ANALYTICS


def track_published_target(*, target_id: str) -> None:
    """Start tracking a target that has just been published (figures stay NULL until the first
    refresh). Idempotent: tracking the same target twice keeps one row."""
    target = PostTarget.objects.select_related("post").filter(id=target_id).first()
    if target is None or target.account_id is None or not target.platform_post_id:
        return
    if not has_analytics(target.platform):
        return
    published_at = target.published_at or timezone.now()
    TrackedPost.objects.update_or_create(
        account_id=target.account_id,
        platform_post_id=target.platform_post_id,
        defaults={
            "workspace_id": target.post.workspace_id,
            "platform": target.platform,
            "post_id": target.post_id,
            "target_id": target.id,
            "published_at": published_at,
            "text": target.text[:5000],
            "title": _target_title(target),
            "permalink": target.post_url,
            "refresh_until": published_at + HISTORY,
        },
    )


def track_published_targets(*, target_ids: list[str], targets: list[PostTarget] | None = None) -> None:
    """:func:`track_published_target` for several targets in two statements: one read, one
    ``INSERT … ON CONFLICT (account, platform_post_id) DO UPDATE`` (so the rollup triggers run once
    for the batch, not once per target). Same rows, same idempotence. ``targets``: rows of some of
    them as the caller read them after their PUBLISHED write in its transaction, each with its post;
    only the others are read (none at all when every one is given)."""
    now = timezone.now()
    wanted = set(target_ids)
    given = {target.id: target for target in targets or () if target.id in wanted}
    rest = [target_id for target_id in target_ids if target_id not in given]
    read = list(PostTarget.objects.select_related("post").filter(id__in=rest)) if rest else []
    rows: dict[tuple[str, str], TrackedPost] = {}
    for target in sorted([*given.values(), *read], key=lambda target: target.id):
        if target.account_id is None or not target.platform_post_id or not has_analytics(target.platform):
            continue
        published_at = target.published_at or now
        rows[(target.account_id, target.platform_post_id)] = TrackedPost(
            account_id=target.account_id,
            platform_post_id=target.platform_post_id,
            workspace_id=target.post.workspace_id,
            platform=target.platform,
            post_id=target.post_id,
            target_id=target.id,
            published_at=published_at,
            text=target.text[:5000],
            title=_target_title(target),
            permalink=target.post_url,
            refresh_until=published_at + HISTORY,
        )
    if rows:
        bulk.insert(
            [rows[key] for key in sorted(rows)],
            unique_fields=["account", "platform_post_id"],
            update_fields=[
                "workspace",
                "platform",
                "post_id",
                "target_id",
                "published_at",
                "text",
                "title",
                "permalink",
                "refresh_until",
            ],
        )


def _state(account: SocialAccount) -> AccountSyncState:
    state, _ = AccountSyncState.objects.get_or_create(account=account, defaults={"workspace_id": account.workspace_id})
    return state


def _set_state(account_id: str, **changes: object) -> None:
    AccountSyncState.objects.filter(account_id=account_id).update(**changes, updated_at=timezone.now())


@dataclass(frozen=True)
class SyncOutcome:
    posts: int
    followers: int | None


METRIC_FIELDS = ("views", "likes", "comments", "shares", "saves", "clicks", "impressions", "reach")
# Config keys of a target that hold the platform's title of the post (YouTube, Pinterest, LinkedIn document).
TITLE_CONFIG_KEYS = ("videoTitle", "title", "documentTitle")


def _metric_fields(metrics: Metrics) -> dict[str, int | None]:
    return {name: getattr(metrics, name) for name in METRIC_FIELDS}


def _target_title(target: PostTarget) -> str:
    if target.platform not in ("YOUTUBE", "PINTEREST", "LINKEDIN"):
        return ""
    config = target.config or {}
    return next((str(config[key])[:300] for key in TITLE_CONFIG_KEYS if config.get(key)), "")


def _record_followers(account: SocialAccount, count: int | None) -> None:
    if count is None:
        return
    FollowerSnapshot.objects.update_or_create(
        account=account,
        day=timezone.now().date(),
        defaults={"workspace_id": account.workspace_id, "platform": account.platform, "count": count},
    )


def _upsert_remote_posts(account: SocialAccount, remote: list[RemotePost]) -> int:
    if not remote:
        return 0
    ids = [r.platform_post_id for r in remote]
    ours = {
        t.platform_post_id: t
        for t in PostTarget.objects.filter(account_id=account.id, platform_post_id__in=ids).only(
            "id", "post_id", "platform_post_id"
        )
    }
    now = timezone.now()
    rows = []
    for item in remote:
        target = ours.get(item.platform_post_id)
        rows.append(
            TrackedPost(
                workspace_id=account.workspace_id,
                account=account,
                platform=account.platform,
                platform_post_id=item.platform_post_id,
                post_id=target.post_id if target else None,
                target_id=target.id if target else None,
                published_at=item.published_at,
                text=item.text[:5000],
                title=item.title[:300],
                permalink=item.permalink,
                thumbnail_url=item.thumbnail_url,
                refresh_until=item.published_at + HISTORY,
                last_refreshed_at=now,
                **_metric_fields(item.metrics),
            )
        )
    TrackedPost.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["account", "platform_post_id"],
        update_fields=[*METRIC_FIELDS, "last_refreshed_at", "permalink", "thumbnail_url"],
    )
    return len(rows)


def _run_sync(account_id: str, *, import_history: bool) -> SyncOutcome | None:
    """Import (the last 180 days) or refresh (rows still inside their 180 days) one account."""
    account = SocialAccount.objects.filter(id=account_id).first()
    if account is None or account.status == "disconnected" or not has_analytics(account.platform):
        return None  # a disconnected account keeps its figures but has no token to refresh them
    _state(account)
    _set_state(account_id, status=SyncStatus.SYNCING)
    client = get_client(Platform(account.platform))
    try:
        creds = account_fresh_credentials(account_id=account_id)
        if import_history:
            count = _upsert_remote_posts(account, client.list_recent_posts(creds, timezone.now() - HISTORY))
        # Some listings carry no figures: read them for every row still inside its 180 days.
        try:
            refreshed = _refresh_rows(account, client, creds)
        except NotSupported:
            refreshed = 0
        if not import_history:
            count = refreshed
        try:
            followers = client.fetch_followers(creds)
        except NotSupported:
            followers = None
        _record_followers(account, followers)
    except AuthError as exc:
        account_mark_unauthorized(account_id=account_id, reason=exc.message)
        _set_state(account_id, status=SyncStatus.FAILED, last_error_message=exc.message[:1000])
        return None
    except PlatformError as exc:
        _set_state(account_id, status=SyncStatus.FAILED, last_error_message=exc.message[:1000])
        logger.warning("analytics sync of %s failed: %s", account_id, exc.error_code)
        return None
    except Exception:
        if not SocialAccount.objects.filter(id=account_id).exists():
            return None  # deleted while syncing (its workspace went): its analytics are gone with it
        _set_state(account_id, status=SyncStatus.FAILED, last_error_message="The refresh failed unexpectedly")
        raise
    changes: dict[str, object] = {"status": SyncStatus.IDLE, "last_synced_at": timezone.now(), "last_error_message": ""}
    if import_history:
        changes["history_imported_at"] = timezone.now()
    _set_state(account_id, **changes)
    return SyncOutcome(posts=count, followers=followers)


def _refresh_rows(account: SocialAccount, client: object, creds: object) -> int:
    rows = list(
        TrackedPost.objects.filter(account=account, refresh_until__gt=timezone.now()).values_list(
            "id", "platform_post_id"
        )
    )
    refreshed = 0
    for start in range(0, len(rows), METRICS_BATCH):
        chunk = rows[start : start + METRICS_BATCH]
        metrics = client.fetch_post_metrics(creds, [remote_id for _, remote_id in chunk])  # type: ignore[attr-defined]
        now = timezone.now()
        updates = []
        for row_id, remote_id in chunk:
            if remote_id in metrics:
                updates.append(TrackedPost(id=row_id, last_refreshed_at=now, **_metric_fields(metrics[remote_id])))
        TrackedPost.objects.bulk_update(updates, [*METRIC_FIELDS, "last_refreshed_at"])
        refreshed += len(updates)
    return refreshed


def import_account_history(*, account_id: str) -> SyncOutcome | None:
    """The account's posts of the last 180 days with their figures, and its follower count.
    Idempotent: importing twice upserts the same rows."""
    return _run_sync(account_id, import_history=True)


def refresh_account(*, account_id: str) -> SyncOutcome | None:
    """Fresh figures for the account's rows still inside their 180 days (rows past it keep their
    last numbers) and today's follower count. Idempotent."""
    return _run_sync(account_id, import_history=False)


# A refresh queued or running for longer than this was lost (a broker outage after the commit, a
# killed worker): the account is due again rather than stuck out of the schedule for good.
STUCK_AFTER = dt.timedelta(hours=1)


def accounts_due_for_refresh(*, older_than: dt.timedelta) -> list[str]:
    now = timezone.now()
    accounts = SocialAccount.objects.filter(platform__in=list(_ANALYTICS), status="active")
    busy = Q(
        sync_state__status__in=[SyncStatus.QUEUED, SyncStatus.SYNCING], sync_state__updated_at__gt=now - STUCK_AFTER
    )
    stale = accounts.exclude(sync_state__last_synced_at__gt=now - older_than).exclude(busy)
    return list(stale.order_by("id").values_list("id", flat=True))


def queue_due_refreshes(*, older_than: dt.timedelta) -> int:
    """Mark every due account QUEUED and queue its refresh once the mark is committed, so the next
    beat run does not queue it again while it waits. Idempotent: a second run finds none due."""
    with transaction.atomic():
        due = accounts_due_for_refresh(older_than=older_than)
        _mark_queued(due)
        transaction.on_commit(lambda: _queue_refreshes(due), robust=True)
    return len(due)


def _mark_queued(account_ids: list[str]) -> None:
    """Two statements whatever the number of accounts: create the missing states, then mark all."""
    owners = SocialAccount.objects.filter(id__in=account_ids).order_by("id").values_list("id", "workspace_id")
    missing = [AccountSyncState(account_id=a, workspace_id=w) for a, w in owners]
    AccountSyncState.objects.bulk_create(missing, ignore_conflicts=True)
    queued = AccountSyncState.objects.filter(account_id__in=account_ids)
    queued.update(status=SyncStatus.QUEUED, updated_at=timezone.now())


@dataclass(frozen=True)
class SyncRequest:
    queued: bool
    cooldown_seconds_remaining: int


def sync_request(*, workspace_id: str) -> SyncRequest:
    """Queue an immediate refresh of every analytics account of the workspace, at most once per
    10 minutes per workspace (shared through Redis across web processes)."""
    key = f"analytics:sync-cooldown:{workspace_id}"
    redis = get_redis()
    if not redis.set(key, "1", nx=True, ex=SYNC_COOLDOWN_SECONDS):
        return SyncRequest(queued=False, cooldown_seconds_remaining=max(1, int(redis.ttl(key))))
    account_ids = list(
        SocialAccount.objects.filter(workspace_id=workspace_id, platform__in=list(_ANALYTICS))
        .exclude(status="disconnected")
        .values_list("id", flat=True)
    )
    with transaction.atomic():
        _mark_queued(account_ids)
        transaction.on_commit(lambda: _queue_refreshes(account_ids), robust=True)
    return SyncRequest(queued=True, cooldown_seconds_remaining=SYNC_COOLDOWN_SECONDS)


def _queue_refreshes(account_ids: list[str]) -> None:
    for account_id in account_ids:
        queue_refresh(account_id)


def queue_refresh(account_id: str) -> None:
    app.send_task("analytics.refresh_account", args=[account_id])
