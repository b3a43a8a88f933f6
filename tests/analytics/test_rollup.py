"""The daily rollup stays equal to the sums of TrackedPost through every kind of write (insert,
upsert, bulk update, update moving a post to another day, delete by cascade), and the reports
that read it for whole days answer exactly what a scan of the posts answers at day edges."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.models import Count, Q, Sum
from django.utils import timezone

from analytics import reports
from analytics.models import AnalyticsDailyRollup, TrackedPost
from tests.factories.analytics import SocialAccountFactory, TrackedPostFactory

pytestmark = pytest.mark.django_db

DAY = dt.datetime(2026, 3, 10, tzinfo=dt.UTC)


def _rollup(workspace_id: str) -> dict[tuple[str, dt.date], tuple[int, ...]]:
    rows = AnalyticsDailyRollup.objects.filter(workspace_id=workspace_id).exclude(posts=0)
    return {
        (r.platform, r.day): (r.posts, r.view_posts, r.views, r.likes, r.comments, r.shares)
        for r in rows.order_by("platform", "day")
    }


def _recomputed(workspace_id: str) -> dict[tuple[str, dt.date], tuple[int, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT platform, (published_at AT TIME ZONE 'UTC')::date, COUNT(*), COUNT(views),
                      COALESCE(SUM(views), 0), COALESCE(SUM(likes), 0), COALESCE(SUM(comments), 0),
                      COALESCE(SUM(shares), 0)
               FROM analytics_trackedpost WHERE workspace_id = %s GROUP BY 1, 2""",
            [workspace_id],
        )
        return {(row[0], row[1]): tuple(int(v) for v in row[2:]) for row in cursor.fetchall()}


def test_rollup_follows_every_write(workspace):
    youtube = SocialAccountFactory(workspace=workspace, platform="YOUTUBE")
    bluesky = SocialAccountFactory(workspace=workspace, platform="BLUESKY")
    first = TrackedPostFactory(account=youtube, published_at=DAY + dt.timedelta(hours=23), views=10, likes=2)
    TrackedPostFactory(account=youtube, published_at=DAY + dt.timedelta(hours=1), views=None, likes=5)
    TrackedPostFactory(account=bluesky, published_at=DAY, likes=1, comments=4, shares=3)
    assert _rollup(workspace.id) == {
        ("BLUESKY", DAY.date()): (1, 0, 0, 1, 4, 3),
        ("YOUTUBE", DAY.date()): (2, 1, 10, 7, 0, 0),
    }

    # The import's upsert: one row updated, one inserted.
    now = timezone.now()
    upserts = [
        TrackedPost(
            workspace_id=workspace.id,
            account=youtube,
            platform="YOUTUBE",
            platform_post_id=pid,
            published_at=published_at,
            refresh_until=now,
            views=views,
            likes=1,
        )
        for pid, published_at, views in [(first.platform_post_id, first.published_at, 100), ("new", DAY, 7)]
    ]
    TrackedPost.objects.bulk_create(
        upserts, update_conflicts=True, unique_fields=["account", "platform_post_id"], update_fields=["views", "likes"]
    )
    assert _rollup(workspace.id)[("YOUTUBE", DAY.date())] == (3, 2, 107, 7, 0, 0)

    # The refresh's bulk_update, and a post moving to the next day.
    first.views, first.likes = 50, 9
    TrackedPost.objects.bulk_update([first], ["views", "likes"])
    TrackedPost.objects.filter(pk=first.pk).update(published_at=DAY + dt.timedelta(days=1))
    assert _rollup(workspace.id) == _recomputed(workspace.id)
    assert _rollup(workspace.id)[("YOUTUBE", (DAY + dt.timedelta(days=1)).date())] == (1, 1, 50, 9, 0, 0)

    # Disconnecting an account deletes its rows (cascade), and its sums with them.
    bluesky.delete()
    assert _rollup(workspace.id) == _recomputed(workspace.id)
    assert all(platform == "YOUTUBE" for platform, _ in _rollup(workspace.id))


def test_rollup_is_per_workspace(workspace, other_workspace):
    TrackedPostFactory(account=SocialAccountFactory(workspace=workspace, platform="YOUTUBE"), published_at=DAY, views=3)
    other = SocialAccountFactory(workspace=other_workspace, platform="YOUTUBE")
    TrackedPostFactory(account=other, published_at=DAY, views=4)
    assert _rollup(workspace.id) == {("YOUTUBE", DAY.date()): (1, 1, 3, 0, 0, 0)}
    assert _rollup(other_workspace.id) == {("YOUTUBE", DAY.date()): (1, 1, 4, 0, 0, 0)}


def _scanned(workspace_id: str, window: reports.Window, *, inclusive_end: bool) -> tuple[int, int | None]:
    end = Q(published_at__lte=window.end) if inclusive_end else Q(published_at__lt=window.end)
    qs = TrackedPost.objects.filter(end, workspace_id=workspace_id, published_at__gte=window.start)
    row = qs.aggregate(posts=Count("id"), views=Sum("views"))
    return row["posts"], row["views"] or 0


@pytest.mark.parametrize("inclusive_end", [True, False])
def test_window_edges_at_midnight_and_inside_days(workspace, inclusive_end):
    account = SocialAccountFactory(workspace=workspace, platform="YOUTUBE")
    tick = dt.timedelta(microseconds=1)
    moments = [DAY - tick, DAY, DAY + tick, DAY + dt.timedelta(hours=12), DAY + dt.timedelta(days=1) - tick]
    moments += [DAY + dt.timedelta(days=1), DAY + dt.timedelta(days=2), DAY + dt.timedelta(days=3, hours=5)]
    for index, moment in enumerate(moments):
        TrackedPostFactory(account=account, published_at=moment, views=10**index)
    bounds = [*moments, DAY + dt.timedelta(days=3), DAY - dt.timedelta(days=1)]
    checked = 0
    for start in bounds:
        for end in bounds:
            if end < start:
                continue
            window = reports.Window(start=start, end=end)
            got = reports.totals(
                workspace_id=workspace.id, platforms=["YOUTUBE"], window=window, inclusive_end=inclusive_end
            )
            assert (got.posts, got.views) == _scanned(workspace.id, window, inclusive_end=inclusive_end), window
            checked += 1
    assert checked == 55


def test_whole_days_are_read_from_the_rollup(workspace):
    account = SocialAccountFactory(workspace=workspace, platform="YOUTUBE")
    TrackedPostFactory(account=account, published_at=DAY + dt.timedelta(hours=3), views=5)
    # A rollup row no post backs shows that whole days come from the rollup, edges from the posts.
    AnalyticsDailyRollup.objects.filter(workspace_id=workspace.id, day=DAY.date()).update(views=1000)
    whole = reports.Window(start=DAY, end=DAY + dt.timedelta(days=1))
    partial = reports.Window(start=DAY + dt.timedelta(hours=1), end=DAY + dt.timedelta(days=1))
    assert reports.totals(workspace_id=workspace.id, platforms=["YOUTUBE"], window=whole).views == 1000
    assert reports.totals(workspace_id=workspace.id, platforms=["YOUTUBE"], window=partial).views == 5
    points = reports.timeseries(workspace_id=workspace.id, requested=None, window=whole, granularity="DAILY")
    assert [(p["date"], p["views"]) for p in points] == [(DAY, 1000), (DAY + dt.timedelta(days=1), 0)]


def test_posts_page_total_counts_the_window(workspace):
    account = SocialAccountFactory(workspace=workspace, platform="YOUTUBE")
    for hours in (-1, 0, 5, 30, 49, 60):
        TrackedPostFactory(account=account, published_at=DAY + dt.timedelta(hours=hours), views=hours + 1)
    window = reports.Window(start=DAY, end=DAY + dt.timedelta(hours=49))
    page = reports.tracked_posts_page(
        workspace_id=workspace.id, requested=None, window=window, sort_by="VIEWS", limit=2, offset=2
    )
    assert page.total == 4
    assert [p.views for p in page.items] == [6, 1]
    assert page.has_more is False
    last = reports.tracked_posts_page(
        workspace_id=workspace.id, requested=["BLUESKY"], window=window, sort_by="VIEWS", limit=2, offset=0
    )
    assert (last.total, last.items, last.has_more) == (0, [], False)
