"""Reads of the analytics app other than the reports (see ``analytics.reports``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Max, Value
from django.db.models.functions import Coalesce, NullIf

from accounts.models import SocialAccount
from analytics.metrics import analytics_platforms
from analytics.models import AccountSyncState, SyncStatus, TrackedPost
from analytics.reports import Window, tracked_posts
from analytics.services import HISTORY, has_analytics
from core.fields import format_instant
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES


def last_synced_at(*, workspace_id: str) -> dt.datetime | None:
    return AccountSyncState.objects.filter(workspace_id=workspace_id).aggregate(at=Max("last_synced_at"))["at"]


def sync_status(*, workspace_id: str) -> dict[str, Any]:
    """Both shapes of CONTRACT.md §8 in one body: ``platforms`` (what the published clients read)
    and ``accounts`` (kept for earlier callers), one row per account with analytics."""
    accounts = SocialAccount.objects.filter(workspace_id=workspace_id).order_by("connected_at", "id")
    states = {s.account_id: s for s in AccountSyncState.objects.filter(workspace_id=workspace_id)}
    platforms = []
    horizons = []
    for account in accounts:
        if not has_analytics(account.platform):
            continue
        state = states.get(account.id)
        imported_at = state.history_imported_at if state else None
        if imported_at:
            horizons.append(imported_at - HISTORY)
        platforms.append(
            {
                "platform": account.platform,
                "connectionId": account.id,
                "accountName": account.display_name or account.username,
                "status": state.status if state else SyncStatus.IDLE,
                "lastSyncedAt": format_instant(state.last_synced_at) if state else None,
                "lastErrorMessage": (state.last_error_message or None) if state else None,
                # The import reads the 180 days before it ran: that is how far back history reaches.
                "historyHorizonAt": format_instant(imported_at - HISTORY) if imported_at else None,
                "lastDiscoveryAt": format_instant(imported_at),
                "needsAnalyticsReconnect": needs_analytics_reconnect(account),
            }
        )
    return {
        "accountGroupId": workspace_id,
        "syncInProgress": any(r["status"] in (SyncStatus.QUEUED, SyncStatus.SYNCING) for r in platforms),
        "lastSyncedAt": format_instant(last_synced_at(workspace_id=workspace_id)),
        "historyHorizonAt": format_instant(min(horizons)) if horizons else None,
        "platforms": platforms,
        "accounts": [
            {
                "accountId": row["connectionId"],
                "platform": row["platform"],
                "status": row["status"],
                "lastSyncedAt": row["lastSyncedAt"],
                "lastErrorMessage": row["lastErrorMessage"],
            }
            for row in platforms
        ],
    }


def needs_analytics_reconnect(account: SocialAccount) -> bool:
    """True when the scopes the account granted are known and lack one analytics needs (accounts
    connected without OAuth scopes, e.g. an app password, never need it)."""
    granted = set(account.scopes or [])
    required = CAPABILITIES[Platform(account.platform)].analytics_scopes
    return bool(granted) and not required <= granted


def post_row(tracked: TrackedPost) -> dict[str, Any]:
    engagement = getattr(tracked, "engagement", None)
    return {
        "id": tracked.id,
        "postId": tracked.post_id,
        "postPlatformId": tracked.target_id,
        "platform": tracked.platform,
        "accountName": tracked.account.display_name or tracked.account.username,
        "publishedAt": format_instant(tracked.published_at),
        "text": tracked.text,
        "title": post_title(tracked),
        "permalink": tracked.permalink,
        "thumbnailUrl": tracked.thumbnail_url,
        "metrics": {
            "views": tracked.views,
            "likes": tracked.likes,
            "comments": tracked.comments,
            "shares": tracked.shares,
            "saves": tracked.saves,
            "clicks": tracked.clicks,
            "impressions": tracked.impressions,
            "reach": tracked.reach,
            "engagementRate": None if engagement is None else round(engagement, 2),
        },
    }


TITLE_MAX_LENGTH = 100


def post_title(tracked: TrackedPost) -> str | None:
    """The platform's title of the post where it has one, else the first line of its text (at
    most 100 characters), or None for a post without either."""
    if tracked.title:
        return tracked.title
    first_line = next((line.strip() for line in tracked.text.splitlines() if line.strip()), "")
    return first_line[:TITLE_MAX_LENGTH] or None


def top_posts(
    *, workspace_id: str, requested: list[str] | None, window: Window, sort_by: str, limit: int
) -> list[TrackedPost]:
    """The best ``limit`` rows of the posts report (same window, filter and order), in one query
    read in order on the sort's index (``tracked_ws_<figure>_sort``)."""
    return list(tracked_posts(workspace_id=workspace_id, requested=requested, window=window, sort_by=sort_by)[:limit])


def discovered_posts(
    *, workspace_id: str, requested: list[str] | None, window: Window, limit: int
) -> list[dict[str, Any]]:
    """The posts the import found on the workspace's accounts that were not published through
    this service (no target), newest first, in one query on ``tracked_ws_discovered``, as the
    report's rows. Read as plain rows (a page is up to 1,000 of them: no model instances)."""
    rows = (
        TrackedPost.objects.filter(
            workspace_id=workspace_id,
            platform__in=analytics_platforms(requested),
            target_id__isnull=True,
            published_at__gte=window.start,
            published_at__lte=window.end,
        )
        .order_by("-published_at", "-id")
        .values_list(
            "id",
            "platform",
            "published_at",
            "text",
            "thumbnail_url",
            "permalink",
            Coalesce(NullIf("account__display_name", Value("")), "account__username"),
        )[:limit]
    )
    return [
        {
            "id": id_,
            "platform": platform,
            "publishedAt": format_instant(published_at),
            "text": text,
            "thumbnailUrl": thumbnail_url,
            "permalink": permalink,
            "accountName": account_name,
        }
        for id_, platform, published_at, text, thumbnail_url, permalink, account_name in rows
    ]
