"""Helpers of the recurring series tests: an account, starting a series through the API, and
driving occurrences through the real dispatcher and finalize."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
import time_machine

from core.fields import format_instant
from posts.models import Post, PostStatus, PostTarget, RecurringPost, TargetStatus
from posts.pipeline.dispatcher import dispatch_due
from posts.pipeline.outcomes import finalize_post
from tests.factories.posts import account
from webhooks.models import Event

POSTS = "/api/v1/social-posts"
SERIES = "/api/v1/recurring-posts"


@pytest.fixture
def masto(workspace: Any) -> Any:
    return account(workspace, "MASTODON", display_name="Masto")


def iso(moment: dt.datetime) -> str:
    return format_instant(moment) or ""


def series_body(masto: Any, when: dt.datetime, recurrence: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "Every time",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
        "scheduledAt": iso(when),
        "recurrence": recurrence,
        **extra,
    }


def start(api: Any, masto: Any, when: dt.datetime, recurrence: dict[str, Any], **extra: Any) -> RecurringPost:
    response = api.post(POSTS, series_body(masto, when, recurrence, **extra), format="json")
    assert response.status_code == 201, response.json()
    return RecurringPost.objects.get(id=response.json()["recurringPostId"])


def upcoming(series: RecurringPost) -> list[Post]:
    return list(Post.objects.filter(recurring_post=series, status=PostStatus.SCHEDULED).order_by("occurrence_at"))


def claim_at(moment: dt.datetime) -> int:
    """Run the real dispatcher with the clock at ``moment``."""
    with time_machine.travel(moment, tick=False):
        return dispatch_due(now=moment)


def finish(post: Post, status: str, message: str = "boom") -> None:
    """Every entry of a claimed post ends ``status`` (PUBLISHED or FAILED), then finalize runs."""
    for target in PostTarget.objects.filter(post=post):
        target.status = status
        if status == TargetStatus.PUBLISHED:
            target.platform_post_id = f"remote-{target.id}"
        else:
            target.error_message, target.error_code = message, "content_rejected"
        target.save()
    finalize_post(post.id)


def scheduled_events(workspace_id: str) -> list[dict[str, Any]]:
    rows = Event.objects.filter(workspace_id=workspace_id, name="post.scheduled").order_by("created_at", "id")
    return [json.loads(row.payload)["data"]["post"] for row in rows]
