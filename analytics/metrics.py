"""Which figures each platform reports, and the arithmetic every report shares."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from platforms.base import Platform
from platforms.capabilities import ANALYTICS_PLATFORMS, CAPABILITIES

COUNTERS = ("views", "likes", "comments", "shares")
ALL_METRICS = ("views", "likes", "comments", "shares", "followers", "postsCount", "avgViewsPerPost", "engagementRate")


def supported_metrics(platform: str) -> list[str]:
    caps = CAPABILITIES[Platform(platform)]
    supported = [m for m in COUNTERS if m in caps.metrics]
    if caps.followers:
        supported.append("followers")
    supported.append("postsCount")
    if "views" in caps.metrics:
        supported.append("avgViewsPerPost")
        supported.append("engagementRate")
    return supported


def analytics_platforms(requested: Iterable[str] | None) -> list[str]:
    """The requested platforms that have analytics (MASTODON and TELEGRAM are ignored); all of
    them when none are requested."""
    allowed = [p.value for p in Platform if p in ANALYTICS_PLATFORMS]  # the spec's PlatformType order
    if not requested:
        return allowed
    wanted = set(requested)
    return [p for p in allowed if p in wanted]


@dataclass(frozen=True)
class Totals:
    posts: int = 0
    views: int | None = None
    likes: int | None = None
    comments: int | None = None
    shares: int | None = None
    view_posts: int = 0  # posts on platforms that report views

    def counter(self, name: str) -> int | None:
        return getattr(self, name)  # type: ignore[no-any-return]


def reported(platforms: Iterable[str], metric: str) -> bool:
    return any(metric in supported_metrics(p) for p in platforms)


def round2(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def avg_views(totals: Totals) -> float | None:
    if totals.views is None or totals.view_posts == 0:
        return None
    return round2(totals.views / totals.view_posts)


def engagement_rate(totals: Totals) -> float | None:
    if not totals.views:
        return None
    engaged = sum(v or 0 for v in (totals.likes, totals.comments, totals.shares))
    return round2(engaged / totals.views * 100)


def delta_percent(value: float | None, previous: float | None) -> float | None:
    if value is None or previous in (None, 0):
        return None
    assert previous is not None
    return round2((value - previous) / previous * 100)


def metric_value(value: float | None, previous: float | None) -> dict[str, float | None]:
    return {"value": value, "previousValue": previous, "deltaPercent": delta_percent(value, previous)}
