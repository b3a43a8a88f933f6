"""Property: for any data set and window, every report agrees with a plain Python model of the
spec computed from the posts themselves, and so with each other: overview totals (and their
previous window) = the per-post rows = the sum of the timeseries points = the sum of the
breakdown rows; each timeseries bucket holds exactly its posts; followers agree everywhere.

The reports read whole UTC days from the trigger-kept daily rollup and the edge days from the
posts, so the data is aimed at the seams: posts at the window edges and 1 µs either side, at UTC
midnights and 1 µs either side, at the edges of the previous window; windows starting and ending
on midnights or anywhere, given in time zones with DST; rows updated, moved to other days and
deleted after insertion (the triggers must follow every write)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import SocialAccount
from analytics import reports
from analytics.metrics import supported_metrics
from analytics.models import TrackedPost
from tests.factories.analytics import FollowerSnapshotFactory, SocialAccountFactory, TrackedPostFactory

pytestmark = pytest.mark.django_db

BASE = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)  # a Thursday
DAY = dt.timedelta(days=1)
TICK = dt.timedelta(microseconds=1)
PLATFORMS = ["FACEBOOK", "YOUTUBE", "BLUESKY", "PINTEREST", "GOOGLE_BUSINESS"]
IGNORED = ["MASTODON", "TELEGRAM"]
PLATFORMS_IN_SPEC_ORDER = ["FACEBOOK", "BLUESKY", "PINTEREST", "YOUTUBE", "GOOGLE_BUSINESS"]  # PlatformType order
COUNTERS = ("views", "likes", "comments", "shares")
ZONES = [dt.UTC, ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York"), ZoneInfo("Asia/Kolkata")]

metric = st.one_of(st.none(), st.integers(min_value=0, max_value=10_000))
nudge = st.sampled_from([-TICK, dt.timedelta(0), TICK])
# Where a post is published: anywhere, or on a seam (relative to the window drawn for the example).
anchor = st.sampled_from(["free", "start", "end", "previous_start", "midnight", "midnight"])
post_strategy = st.tuples(
    st.sampled_from(PLATFORMS),
    anchor,
    st.integers(min_value=0, max_value=100 * 24 * 3600 * 10**6),  # µs after BASE
    nudge,
    st.tuples(metric, metric, metric, metric),
)
edit_strategy = st.tuples(
    st.integers(min_value=0, max_value=30),
    st.sampled_from(["figures", "move", "delete"]),
    st.integers(min_value=-3, max_value=3),
    st.tuples(metric, metric, metric, metric),
)
# Window bounds: midnights (± 1 µs) or any microsecond.
bound = st.one_of(
    st.tuples(st.integers(min_value=0, max_value=80), nudge).map(lambda t: BASE + t[0] * DAY + t[1]),
    st.integers(min_value=0, max_value=80 * 24 * 3600 * 10**6).map(lambda us: BASE + dt.timedelta(microseconds=us)),
)


@dataclass
class Row:
    platform: str
    published_at: dt.datetime
    views: int | None
    likes: int | None
    comments: int | None
    shares: int | None
    pk: str = field(default="")


def _reports(platform: str, name: str) -> bool:
    return name in supported_metrics(platform)


def _expected(rows: list[Row], selected: list[str], low: dt.datetime, high: dt.datetime, inclusive: bool) -> dict:
    """The spec's figures for posts published in [low, high] (or [low, high))."""
    inside = [r for r in rows if r.platform in selected and low <= r.published_at and r.published_at <= high]
    if not inclusive:
        inside = [r for r in inside if r.published_at < high]
    result: dict = {"postsCount": len(inside)}
    for name in COUNTERS:
        reported = any(_reports(p, name) for p in selected)
        result[name] = sum(getattr(r, name) or 0 for r in inside) if reported else None
    known_views = [r for r in inside if r.views is not None]
    views = result["views"]
    result["avgViewsPerPost"] = views / len(known_views) if views is not None and known_views else None
    # Engagement needs views: only the platforms that report them count, on both sides.
    engaged = sum((r.likes or 0) + (r.comments or 0) + (r.shares or 0) for r in inside if _reports(r.platform, "views"))
    result["engagementRate"] = engaged / views * 100 if views else None
    return result


def _followers(snapshots: list[tuple[str, str, dt.date, int]], selected: list[str], at: dt.datetime) -> int | None:
    if not any(_reports(p, "followers") for p in selected):
        return None
    latest: dict[str, tuple[dt.date, int]] = {}
    for account_id, platform, day, count in snapshots:
        known = platform in selected and _reports(platform, "followers") and day <= at.astimezone(dt.UTC).date()
        if known and (account_id not in latest or latest[account_id][0] < day):
            latest[account_id] = (day, count)
    return sum(count for _, count in latest.values()) if latest else None


def _r2(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _delta(value: float | None, previous: float | None) -> float | None:
    return None if value is None or not previous else round((value - previous) / previous * 100, 2)


def _bucket(moment: dt.datetime, granularity: str) -> dt.datetime:
    day = moment.astimezone(dt.UTC).date()
    if granularity == "WEEKLY":
        day -= dt.timedelta(days=day.isoweekday() - 1)  # ISO weeks start on Monday
    elif granularity == "MONTHLY":
        day = day.replace(day=1)
    return dt.datetime.combine(day, dt.time.min, tzinfo=dt.UTC)


def _following(start: dt.datetime, granularity: str) -> dt.datetime:
    if granularity == "MONTHLY":
        return start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
    return start + (7 * DAY if granularity == "WEEKLY" else DAY)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    posts=st.lists(post_strategy, max_size=25),
    edits=st.lists(edit_strategy, max_size=6),
    followers=st.lists(
        st.tuples(st.sampled_from(PLATFORMS), st.integers(min_value=-10, max_value=90), st.integers(0, 10**6)),
        max_size=8,
    ),
    bounds=st.tuples(bound, bound),
    zone=st.sampled_from(ZONES),
    requested=st.one_of(st.none(), st.lists(st.sampled_from(PLATFORMS + IGNORED), unique=True, max_size=4)),
    granularity=st.sampled_from(["DAILY", "WEEKLY", "MONTHLY"]),
)
def test_reports_agree_with_the_model_and_each_other(
    workspace, posts, edits, followers, bounds, zone, requested, granularity
):
    SocialAccount.objects.filter(workspace=workspace).delete()  # each example starts empty (cascade)
    start, end = sorted(bounds)
    length = end - start
    accounts = {
        p: SocialAccountFactory(workspace=workspace, platform=p, external_id=f"{p}-{workspace.id}")
        for p in PLATFORMS + IGNORED
    }
    places = {"start": start, "end": end, "previous_start": start - length}
    rows: list[Row] = []
    for index, (platform, where, offset_us, shift, figures) in enumerate(posts):
        if where == "free":
            moment = BASE + dt.timedelta(microseconds=offset_us)
        elif where == "midnight":
            moment = BASE + (offset_us // (24 * 3600 * 10**6)) * DAY + shift
        else:
            moment = places[where] + shift
        supported = [v if _reports(platform, name) else None for name, v in zip(COUNTERS, figures, strict=True)]
        row = Row(platform, moment, *supported)
        row.pk = TrackedPostFactory(
            account=accounts[platform],
            platform_post_id=f"p{index}",
            published_at=moment,
            **dict(zip(COUNTERS, supported, strict=True)),
        ).pk
        rows.append(row)
    # Writes after insertion, the way the refresh and other code paths make them.
    for target, action, days, figures in edits:
        if not rows:
            break
        row = rows[target % len(rows)]
        if action == "delete":
            TrackedPost.objects.filter(pk=row.pk).delete()
            rows.remove(row)
        elif action == "move":
            row.published_at += days * DAY
            TrackedPost.objects.filter(pk=row.pk).update(published_at=row.published_at)
        else:
            values = [v if _reports(row.platform, n) else None for n, v in zip(COUNTERS, figures, strict=True)]
            for name, value in zip(COUNTERS, values, strict=True):
                setattr(row, name, value)
            TrackedPost.objects.bulk_update(
                [TrackedPost(pk=row.pk, **dict(zip(COUNTERS, values, strict=True)))], COUNTERS
            )
    snapshots = []
    for platform, day_index, count in followers:
        account = accounts[platform]
        day = (BASE + day_index * DAY).date()
        if not any(s[0] == account.id and s[2] == day for s in snapshots):
            FollowerSnapshotFactory(account=account, day=day, count=count)
            snapshots.append((account.id, platform, day, count))

    # Everything the reports are handed is in ``zone``; the buckets and days are still UTC ones.
    window = reports.Window(start=start.astimezone(zone), end=end.astimezone(zone))
    ws = workspace.id
    selected = [p for p in PLATFORMS if not requested or p in requested]
    previous_end = start - TICK

    # overview = the model, for the window and the one of equal length just before it
    overview = reports.overview(workspace_id=ws, requested=requested, window=window)
    now = _expected(rows, selected, start, end, inclusive=True)
    before = _expected(rows, selected, start - length, start, inclusive=False)
    for name in (*COUNTERS, "postsCount", "avgViewsPerPost", "engagementRate"):
        assert overview[name] == {
            "value": _r2(now[name]),
            "previousValue": _r2(before[name]),
            "deltaPercent": _delta(now[name], before[name]),
        }, name
    followers_now = _followers(snapshots, selected, end)
    followers_before = _followers(snapshots, selected, previous_end)
    assert overview["followers"] == {
        "value": followers_now,
        "previousValue": followers_before,
        "deltaPercent": _delta(followers_now, followers_before),
    }

    # per-post rows: the window's posts, and a page total counted from the rollup that matches
    listed = list(reports.tracked_posts(workspace_id=ws, requested=requested, window=window, sort_by="VIEWS"))
    assert sorted(t.pk for t in listed) == sorted(
        r.pk for r in rows if r.platform in selected and start <= r.published_at <= end
    )
    page = reports.tracked_posts_page(
        workspace_id=ws, requested=requested, window=window, sort_by="PUBLISHED_AT", limit=100, offset=0
    )
    assert page.total == len(listed) == now["postsCount"]
    for name in COUNTERS:
        assert (now[name] or 0) == sum(getattr(t, name) or 0 for t in listed), name

    # timeseries: one point per UTC bucket from the bucket of ``from`` to the bucket of ``to``,
    # each summing exactly its posts; followers the latest known at the bucket end (capped at to)
    points = reports.timeseries(workspace_id=ws, requested=requested, window=window, granularity=granularity)
    starts = [_bucket(start, granularity)]
    while _following(starts[-1], granularity) <= end:
        starts.append(_following(starts[-1], granularity))
    assert [p["date"] for p in points] == starts
    for point in points:
        low = max(point["date"], start)
        high = min(_following(point["date"], granularity) - TICK, end)
        bucket = _expected(rows, selected, low, high, inclusive=True)
        assert point["postsCount"] == bucket["postsCount"], point["date"]
        for name in COUNTERS:
            assert point[name] == bucket[name], (point["date"], name)
        assert point["engagementRate"] == _r2(bucket["engagementRate"]), point["date"]
        assert point["followers"] == _followers(snapshots, selected, high), point["date"]
    assert sum(p["postsCount"] for p in points) == now["postsCount"]
    for name in COUNTERS:
        assert sum(p[name] or 0 for p in points) == (now[name] or 0), name
    assert points[-1]["followers"] == followers_now

    # The reports against each other directly, not only through the model.
    assert overview["postsCount"]["value"] == len(listed) == sum(p["postsCount"] for p in points)
    for name in COUNTERS:
        value = overview[name]["value"]
        assert (value or 0) == sum(getattr(t, name) or 0 for t in listed) == sum(p[name] or 0 for p in points), name

    # platform-breakdown (every platform; ``platforms`` does not apply): its rows add up to the
    # overview of every platform, and each row is the model for its platform alone
    breakdown = reports.platform_breakdown(workspace_id=ws, window=window)
    assert [r["platform"] for r in breakdown] == PLATFORMS_IN_SPEC_ORDER
    every = _expected(rows, PLATFORMS, start, end, inclusive=True)
    assert sum(r["postsCount"]["value"] for r in breakdown) == every["postsCount"]
    for name in COUNTERS:
        assert sum(r[name]["value"] or 0 for r in breakdown) == (every[name] or 0), name
    if set(selected) == set(PLATFORMS):  # the overview covers what the breakdown's rows cover
        assert overview["postsCount"]["value"] == sum(r["postsCount"]["value"] for r in breakdown)
        for name in COUNTERS:
            assert (overview[name]["value"] or 0) == sum(r[name]["value"] or 0 for r in breakdown), name
    for row in breakdown:
        alone = _expected(rows, [row["platform"]], start, end, inclusive=True)
        alone_before = _expected(rows, [row["platform"]], start - length, start, inclusive=False)
        for name in (*COUNTERS, "postsCount", "avgViewsPerPost", "engagementRate"):
            assert row[name]["value"] == _r2(alone[name]), (row["platform"], name)
            assert row[name]["previousValue"] == _r2(alone_before[name]), (row["platform"], name)
        assert row["followers"]["value"] == _followers(snapshots, [row["platform"]], end)
    with_followers = [r["followers"]["value"] for r in breakdown if r["followers"]["value"] is not None]
    assert (sum(with_followers) if with_followers else None) == _followers(snapshots, PLATFORMS, end)
