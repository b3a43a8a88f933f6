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


# Engagement rate needs views: only these platforms' likes, comments and shares count towards it.
VIEW_PLATFORMS: tuple[str, ...] = tuple(p.value for p in ANALYTICS_PLATFORMS if "views" in CAPABILITIES[p].metrics)


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
    view_posts: int = 0  # posts whose views are known
    engaged: int = 0  # likes + comments + shares on platforms that report views

    def counter(self, name: str) -> int | None:
        return getattr(self, name)  # type: ignore[no-any-return]


def reported(platforms: Iterable[str], metric: str) -> bool:
    return any(metric in supported_metrics(p) for p in platforms)


def round2(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def avg_views(totals: Totals) -> float | None:
    """Unrounded (rounding happens once, on output)."""
    if totals.views is None or totals.view_posts == 0:
        return None
    return totals.views / totals.view_posts


def engagement_rate(totals: Totals) -> float | None:
    """(likes + comments + shares) / views × 100 over the platforms that report views: a platform
    without views (a partial metric) adds nothing to either side. Unrounded."""
    if not totals.views:
        return None
    return totals.engaged / totals.views * 100


def delta_percent(value: float | None, previous: float | None) -> float | None:
    if value is None or previous is None or previous == 0:
        return None
    return round2((value - previous) / previous * 100)


def metric_value(value: float | None, previous: float | None) -> dict[str, float | None]:
    """The delta is computed from the unrounded figures, then everything is rounded to 2 places."""
    return {"value": round2(value), "previousValue": round2(previous), "deltaPercent": delta_percent(value, previous)}
