"""Reads of the analytics app other than the reports (see ``analytics.reports``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import Max

from accounts.models import SocialAccount
from analytics.models import AccountSyncState, SyncStatus, TrackedPost
from analytics.services import has_analytics
from core.fields import format_instant


def last_synced_at(*, workspace_id: str) -> dt.datetime | None:
    return AccountSyncState.objects.filter(workspace_id=workspace_id).aggregate(at=Max("last_synced_at"))["at"]


def sync_status(*, workspace_id: str) -> dict[str, Any]:
    accounts = SocialAccount.objects.filter(workspace_id=workspace_id).order_by("connected_at", "id")
    states = {s.account_id: s for s in AccountSyncState.objects.filter(workspace_id=workspace_id)}
    rows = []
    for account in accounts:
        if not has_analytics(account.platform):
            continue
        state = states.get(account.id)
        rows.append(
            {
                "accountId": account.id,
                "platform": account.platform,
                "status": state.status if state else SyncStatus.IDLE,
                "lastSyncedAt": format_instant(state.last_synced_at) if state else None,
                "lastErrorMessage": (state.last_error_message or None) if state else None,
            }
        )
    return {
        "syncInProgress": any(r["status"] in (SyncStatus.QUEUED, SyncStatus.SYNCING) for r in rows),
        "lastSyncedAt": format_instant(last_synced_at(workspace_id=workspace_id)),
        "accounts": rows,
    }


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
        "permalink": tracked.permalink,
        "thumbnailUrl": tracked.thumbnail_url,
        "metrics": {
            "views": tracked.views,
            "likes": tracked.likes,
            "comments": tracked.comments,
            "shares": tracked.shares,
            "engagementRate": None if engagement is None else round(engagement, 2),
        },
    }
