"""The queries behind the analytics endpoints. Everything is scoped to one workspace and
answered from indexed columns; no platform is called during a request.

Windows are inclusive: posts published in [from, to]. The previous window has the same length
and ends just before ``from``: [from − (to − from), from)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Count, F, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce, TruncDay

from accounts.models import SocialAccount
from analytics.metrics import (
    COUNTERS,
    VIEW_PLATFORMS,
    Totals,
    analytics_platforms,
    avg_views,
    engagement_rate,
    metric_value,
    reported,
    round2,
    supported_metrics,
)
from analytics.models import AnalyticsDailyRollup, FollowerSnapshot, TrackedPost, engagement_rate_expression
from core.pagination import Page

EARLIEST = dt.datetime.min.replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class Window:
    """Instants are kept in UTC: every day, week and month boundary is a UTC one."""

    start: dt.datetime
    end: dt.datetime

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", self.start.astimezone(dt.UTC))
        object.__setattr__(self, "end", self.end.astimezone(dt.UTC))

    @property
    def previous(self) -> Window:
        """The window of equal length just before this one, cut short at year 1 (a window that
        starts early in the calendar has no full predecessor)."""
        length = self.end - self.start
        start = self.start - length if self.start - EARLIEST > length else EARLIEST
        return Window(start=start, end=self.start)


def present_platforms(*, workspace_id: str, requested: list[str] | None) -> list[str]:
    """The selected platforms: requested (or all with analytics) that the workspace has."""
    candidates = analytics_platforms(requested)
    have = set(SocialAccount.objects.filter(workspace_id=workspace_id).values_list("platform", flat=True).distinct())
    # The rollup has a row per platform and day with posts: far fewer to read than the posts.
    rollup = AnalyticsDailyRollup.objects.filter(workspace_id=workspace_id, posts__gt=0)
    have |= set(rollup.values_list("platform", flat=True).distinct())
    return [p for p in candidates if p in have]


_ON_VIEW_PLATFORMS = Q(platform__in=VIEW_PLATFORMS)


def _aggregate_fields() -> dict[str, Any]:
    """The sums over TrackedPost rows (a NULL figure counts as 0)."""
    # Aliases must not shadow the model's columns, hence the ``sum_`` prefix.
    fields: dict[str, Any] = {f"sum_{name}": Sum(name) for name in COUNTERS}
    fields["posts"] = Count("id")
    fields["view_posts"] = Count("id", filter=Q(views__isnull=False))
    engaged = sum((Coalesce(F(name), Value(0)) for name in ("likes", "comments", "shares")), Value(0))
    fields["engaged"] = Sum(engaged, filter=_ON_VIEW_PLATFORMS)
    return fields


def _rollup_fields() -> dict[str, Any]:
    """The same sums over AnalyticsDailyRollup rows."""
    fields: dict[str, Any] = {f"sum_{name}": Sum(name) for name in ("posts", "view_posts", *COUNTERS)}
    fields["engaged"] = Sum(F("likes") + F("comments") + F("shares"), filter=_ON_VIEW_PLATFORMS)
    return fields


def _unprefixed(row: dict[str, Any]) -> dict[str, Any]:
    return {key.removeprefix("sum_"): value for key, value in row.items()}


def _totals_from_row(row: dict[str, Any], platforms: list[str]) -> Totals:
    values = {name: (row.get(name) or 0) if reported(platforms, name) else None for name in COUNTERS}
    return Totals(
        posts=row.get("posts") or 0, view_posts=row.get("view_posts") or 0, engaged=row.get("engaged") or 0, **values
    )


_SUMS = ("posts", "view_posts", "engaged", *COUNTERS)
_DAY = dt.timedelta(days=1)
_TICK = dt.timedelta(microseconds=1)


@dataclass(frozen=True)
class Split:
    """A window cut into whole UTC days [first_day, end_day) answered from the rollup and the
    edge ranges of published_at [low, high) answered from the posts themselves (``high`` None:
    no upper bound, for a window that ends on the last instant of year 9999)."""

    first_day: dt.date | None
    end_day: dt.date | None
    edges: tuple[tuple[dt.datetime, dt.datetime | None], ...]


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)


def split_window(window: Window, *, inclusive_end: bool) -> Split:
    """Timestamps have microsecond resolution, so ``<= end`` equals ``< end + 1µs``."""
    start = window.start.astimezone(dt.UTC)
    end = window.end.astimezone(dt.UTC)
    stop: dt.datetime | None
    try:
        stop = end + _TICK if inclusive_end else end
    except OverflowError:
        stop = None  # ``end`` is the last representable instant: nothing is later
    start_day = _midnight(start.date())
    try:
        first: dt.datetime | None = start_day if start == start_day else start_day + _DAY
    except OverflowError:
        first = None  # ``start`` is inside 9999-12-31: no whole day follows
    last = _midnight((end if stop is None else stop).date())
    if first is None or first >= last:
        return Split(None, None, ((start, stop),) if stop is None or start < stop else ())
    edges = tuple((a, b) for a, b in ((start, first), (last, stop)) if b is None or a < b)
    return Split(first.date(), last.date(), edges)


def _edge_posts(
    workspace_id: str, platforms: list[str], low: dt.datetime, high: dt.datetime | None
) -> QuerySet[TrackedPost]:
    qs = TrackedPost.objects.filter(workspace_id=workspace_id, platform__in=platforms, published_at__gte=low)
    return qs if high is None else qs.filter(published_at__lt=high)


def _grouped(qs: QuerySet[Any], by: tuple[str, ...], sums: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per ``by`` group, or one row for the whole set when ``by`` is empty."""
    if not by:
        return [qs.aggregate(**sums)]
    return list(qs.values(*by).annotate(**sums).order_by())


def _add(into: dict[str, Any], row: dict[str, Any]) -> None:
    for key in _SUMS:
        value = row.get(key)
        if value is not None:
            into[key] = (into.get(key) or 0) + value


def _split_sums(
    workspace_id: str, platforms: list[str], window: Window, inclusive_end: bool, by: tuple[str, ...]
) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The sums of the window's posts grouped by ``by`` (columns both tables share)."""
    split = split_window(window, inclusive_end=inclusive_end)
    found: dict[tuple[Any, ...], dict[str, Any]] = defaultdict(dict)
    if split.first_day is not None:
        rollup = AnalyticsDailyRollup.objects.filter(
            workspace_id=workspace_id, platform__in=platforms, day__gte=split.first_day, day__lt=split.end_day
        )
        for row in _grouped(rollup, by, _rollup_fields()):
            _add(found[tuple(row[k] for k in by)], _unprefixed(row))
    for low, high in split.edges:  # one range per query: each is a tight scan of (workspace, published_at)
        qs = _edge_posts(workspace_id, platforms, low, high)
        for row in _grouped(qs, by, _aggregate_fields()):
            _add(found[tuple(row[k] for k in by)], _unprefixed(row))
    return found


def totals(*, workspace_id: str, platforms: list[str], window: Window, inclusive_end: bool = True) -> Totals:
    found = _split_sums(workspace_id, platforms, window, inclusive_end, ())
    return _totals_from_row(found.get((), {}), platforms)


def totals_by_platform(
    *, workspace_id: str, platforms: list[str], window: Window, inclusive_end: bool = True
) -> dict[str, Totals]:
    found = _split_sums(workspace_id, platforms, window, inclusive_end, ("platform",))
    return {p: _totals_from_row(found.get((p,), {}), [p]) for p in platforms}


# Each account's latest snapshot on or before a day, summed per platform.
_LATEST_FOLLOWERS_SQL = """
    SELECT platform, SUM(count) FROM (
        SELECT DISTINCT ON (account_id) account_id, platform, count
        FROM analytics_followersnapshot
        WHERE workspace_id = %s AND day <= %s AND platform = ANY(%s)
        ORDER BY account_id, day DESC
    ) latest GROUP BY platform
"""


def followers_by_platform(*, workspace_id: str, platforms: list[str], at: dt.datetime | None) -> dict[str, int]:
    """Latest known follower count at instant ``at``, summed over each platform's accounts
    (nothing is known before year 1: ``at`` None)."""
    with_followers = [p for p in platforms if "followers" in supported_metrics(p)]
    if not with_followers or at is None:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_LATEST_FOLLOWERS_SQL, [workspace_id, at.date(), with_followers])
        return {platform: int(total) for platform, total in cursor.fetchall()}


def followers_total(*, workspace_id: str, platforms: list[str], at: dt.datetime | None) -> int | None:
    if not reported(platforms, "followers"):
        return None
    counts = followers_by_platform(workspace_id=workspace_id, platforms=platforms, at=at)
    return sum(counts.values()) if counts else None


def metric_block(
    current: Totals, previous: Totals, followers: tuple[int | None, int | None], platforms: list[str]
) -> dict[str, Any]:
    block = {name: metric_value(current.counter(name), previous.counter(name)) for name in COUNTERS}
    block["followers"] = metric_value(*followers) if reported(platforms, "followers") else metric_value(None, None)
    block["postsCount"] = metric_value(current.posts, previous.posts)
    block["avgViewsPerPost"] = metric_value(avg_views(current), avg_views(previous))
    block["engagementRate"] = metric_value(engagement_rate(current), engagement_rate(previous))
    return block


def partial_metrics(platforms: list[str]) -> list[str]:
    names = [*COUNTERS, "followers", "avgViewsPerPost", "engagementRate"]
    return [m for m in names if reported(platforms, m) and not all(m in supported_metrics(p) for p in platforms)]


def _end_of_previous(window: Window) -> dt.datetime | None:
    """The last instant before ``from``; None when ``from`` is the first instant of year 1."""
    try:
        return window.start - _TICK
    except OverflowError:
        return None


def overview(*, workspace_id: str, requested: list[str] | None, window: Window) -> dict[str, Any]:
    platforms = present_platforms(workspace_id=workspace_id, requested=requested)
    current = totals(workspace_id=workspace_id, platforms=platforms, window=window)
    previous = totals(workspace_id=workspace_id, platforms=platforms, window=window.previous, inclusive_end=False)
    followers = (
        followers_total(workspace_id=workspace_id, platforms=platforms, at=window.end),
        followers_total(workspace_id=workspace_id, platforms=platforms, at=_end_of_previous(window)),
    )
    body = metric_block(current, previous, followers, platforms)
    body["partialMetrics"] = partial_metrics(platforms)
    return body


def platform_breakdown(*, workspace_id: str, window: Window) -> list[dict[str, Any]]:
    platforms = present_platforms(workspace_id=workspace_id, requested=None)
    current = totals_by_platform(workspace_id=workspace_id, platforms=platforms, window=window)
    previous = totals_by_platform(
        workspace_id=workspace_id, platforms=platforms, window=window.previous, inclusive_end=False
    )
    now_followers = followers_by_platform(workspace_id=workspace_id, platforms=platforms, at=window.end)
    before_followers = followers_by_platform(
        workspace_id=workspace_id, platforms=platforms, at=_end_of_previous(window)
    )
    rows = []
    for platform in platforms:
        followers = (now_followers.get(platform), before_followers.get(platform))
        row: dict[str, Any] = {"platform": platform}
        row.update(metric_block(current[platform], previous[platform], followers, [platform]))
        row["supportedMetrics"] = supported_metrics(platform)
        rows.append(row)
    return rows


# --- timeseries ------------------------------------------------------------------------------


def bucket_start(moment: dt.datetime, granularity: str) -> dt.datetime:
    """The UTC start of the bucket holding ``moment``: its day, ISO week (Monday) or month."""
    moment = moment.astimezone(dt.UTC)
    day = dt.datetime(moment.year, moment.month, moment.day, tzinfo=dt.UTC)
    if granularity == "WEEKLY":
        return day - dt.timedelta(days=day.weekday())
    if granularity == "MONTHLY":
        return day.replace(day=1)
    return day


def next_bucket(start: dt.datetime, granularity: str) -> dt.datetime | None:
    """The start of the following bucket; None past the end of year 9999."""
    try:
        if granularity == "WEEKLY":
            return start + dt.timedelta(days=7)
        if granularity == "MONTHLY":
            return (start.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
        return start + dt.timedelta(days=1)
    except OverflowError:
        return None


def _bucket_end(start: dt.datetime, granularity: str, window: Window) -> dt.datetime:
    """The last instant of the bucket, capped at the window's end."""
    following = next_bucket(start, granularity)
    return window.end if following is None else min(following - _TICK, window.end)


def timeseries(
    *, workspace_id: str, requested: list[str] | None, window: Window, granularity: str
) -> list[dict[str, Any]]:
    platforms = present_platforms(workspace_id=workspace_id, requested=requested)
    starts: list[dt.datetime] = []
    cursor_start: dt.datetime | None = bucket_start(window.start, granularity)
    while cursor_start is not None and cursor_start <= window.end:
        starts.append(cursor_start)
        cursor_start = next_bucket(cursor_start, granularity)
    sums = _bucket_sums(workspace_id, platforms, window, granularity)
    followers = _followers_at_bucket_ends(workspace_id, platforms, window, starts, granularity)
    points = []
    for index, start in enumerate(starts):
        row = sums.get(start, {})
        bucket = _totals_from_row(row, platforms)
        points.append(
            {
                "date": start,
                **{name: bucket.counter(name) for name in COUNTERS},
                "followers": followers[index],
                "postsCount": bucket.posts,
                "engagementRate": round2(engagement_rate(bucket)),
            }
        )
    return points


def _bucket_sums(
    workspace_id: str, platforms: list[str], window: Window, granularity: str
) -> dict[dt.datetime, dict[str, Any]]:
    """Per-day sums (rollup for whole days, posts for the edges) folded into their buckets."""
    split = split_window(window, inclusive_end=True)
    result: dict[dt.datetime, dict[str, Any]] = defaultdict(dict)
    if split.first_day is not None:
        rollup = AnalyticsDailyRollup.objects.filter(
            workspace_id=workspace_id, platform__in=platforms, day__gte=split.first_day, day__lt=split.end_day
        )
        for day_row in rollup.values("day").annotate(**_rollup_fields()).order_by():
            row: dict[str, Any] = dict(day_row)
            _add(result[bucket_start(_midnight(row["day"]), granularity)], _unprefixed(row))
    for low, high in split.edges:
        qs = _edge_posts(workspace_id, platforms, low, high)
        day = TruncDay("published_at", tzinfo=dt.UTC)
        for edge_row in qs.annotate(edge_day=day).values("edge_day").annotate(**_aggregate_fields()).order_by():
            edge: dict[str, Any] = dict(edge_row)
            _add(result[bucket_start(edge["edge_day"].astimezone(dt.UTC), granularity)], _unprefixed(edge))
    return dict(result)


def _followers_at_bucket_ends(
    workspace_id: str, platforms: list[str], window: Window, starts: list[dt.datetime], granularity: str
) -> list[int | None]:
    """The latest known count at each bucket's end (capped at ``to``), forward-filled per account
    from one read of the snapshots."""
    if not reported(platforms, "followers") or not starts:
        return [None] * len(starts)
    with_followers = [p for p in platforms if "followers" in supported_metrics(p)]
    ends = [_bucket_end(s, granularity, window).date() for s in starts]
    snapshots = (
        FollowerSnapshot.objects.filter(workspace_id=workspace_id, platform__in=with_followers, day__lte=ends[-1])
        .order_by("account_id", "day")
        .values_list("account_id", "day", "count")
    )
    per_account: dict[str, list[tuple[dt.date, int]]] = defaultdict(list)
    for account_id, day, count in snapshots.iterator(chunk_size=5000):
        per_account[account_id].append((day, count))
    totals_at: list[int | None] = [None] * len(ends)
    for series in per_account.values():
        position = -1
        for index, end in enumerate(ends):
            while position + 1 < len(series) and series[position + 1][0] <= end:
                position += 1
            if position >= 0:
                totals_at[index] = (totals_at[index] or 0) + series[position][1]
    return totals_at


# --- per-post rows ---------------------------------------------------------------------------

SORT_FIELDS = {
    "VIEWS": "views",
    "LIKES": "likes",
    "COMMENTS": "comments",
    "SHARES": "shares",
    "ENGAGEMENT_RATE": "engagement",
    "PUBLISHED_AT": "published_at",
}


def tracked_posts(
    *, workspace_id: str, requested: list[str] | None, window: Window, sort_by: str
) -> QuerySet[TrackedPost]:
    platforms = analytics_platforms(requested)
    qs = (
        TrackedPost.objects.filter(workspace_id=workspace_id, platform__in=platforms)
        .filter(published_at__gte=window.start, published_at__lte=window.end)
        .select_related("account")
        .annotate(engagement=engagement_rate_expression())
    )
    field = SORT_FIELDS[sort_by]
    return qs.order_by(F(field).desc(nulls_last=True), F("published_at").desc(), F("id").desc())


def tracked_posts_page(
    *, workspace_id: str, requested: list[str] | None, window: Window, sort_by: str, limit: int, offset: int
) -> Page:
    """A page of :func:`tracked_posts`; the total is counted from the rollup (whole days) and the
    edge days, the same rows a COUNT over the window would find, without reading them all."""
    total = totals(workspace_id=workspace_id, platforms=analytics_platforms(requested), window=window).posts
    qs = tracked_posts(workspace_id=workspace_id, requested=requested, window=window, sort_by=sort_by)
    items = list(qs[offset : offset + limit]) if offset < total else []
    return Page(items=items, total=total, has_more=offset + len(items) < total)
