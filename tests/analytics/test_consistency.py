"""Property: for any window, the overview totals equal the sum of the per-post rows, of the
timeseries points and of the breakdown rows."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import SocialAccount
from analytics import reports
from tests.factories.analytics import SocialAccountFactory, TrackedPostFactory

pytestmark = pytest.mark.django_db

BASE = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
PLATFORMS = ["FACEBOOK", "YOUTUBE", "BLUESKY", "PINTEREST", "GOOGLE_BUSINESS"]
metric = st.one_of(st.none(), st.integers(min_value=0, max_value=10_000))
post_strategy = st.tuples(
    st.sampled_from(PLATFORMS), st.integers(min_value=0, max_value=120 * 24 * 3600), metric, metric, metric, metric
)


def _value(block: dict, name: str) -> int:
    return block[name]["value"] or 0


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    posts=st.lists(post_strategy, max_size=25),
    start_offset=st.integers(min_value=0, max_value=60 * 24 * 3600),
    length=st.integers(min_value=0, max_value=70 * 24 * 3600),
    granularity=st.sampled_from(["DAILY", "WEEKLY", "MONTHLY"]),
)
def test_totals_agree_everywhere(workspace, posts, start_offset, length, granularity):
    SocialAccount.objects.filter(workspace=workspace).delete()  # each example starts empty
    accounts = {
        p: SocialAccountFactory(workspace=workspace, platform=p, external_id=f"{p}-{workspace.id}") for p in PLATFORMS
    }
    for index, (platform, offset, views, likes, comments, shares) in enumerate(posts):
        supported = reports.supported_metrics(platform)
        TrackedPostFactory(
            account=accounts[platform],
            platform_post_id=f"p{index}",
            published_at=BASE + dt.timedelta(seconds=offset),
            views=views if "views" in supported else None,
            likes=likes if "likes" in supported else None,
            comments=comments if "comments" in supported else None,
            shares=shares if "shares" in supported else None,
        )
    window = reports.Window(
        start=BASE + dt.timedelta(seconds=start_offset), end=BASE + dt.timedelta(seconds=start_offset + length)
    )
    overview = reports.overview(workspace_id=workspace.id, requested=None, window=window)
    rows = list(reports.tracked_posts(workspace_id=workspace.id, requested=None, window=window, sort_by="VIEWS"))
    points = reports.timeseries(workspace_id=workspace.id, requested=None, window=window, granularity=granularity)
    breakdown = reports.platform_breakdown(workspace_id=workspace.id, window=window)

    assert overview["postsCount"]["value"] == len(rows) == sum(p["postsCount"] for p in points)
    assert overview["postsCount"]["value"] == sum(r["postsCount"]["value"] for r in breakdown)
    for name in ("views", "likes", "comments", "shares"):
        total = _value(overview, name)
        assert total == sum(getattr(r, name) or 0 for r in rows), name
        assert total == sum(p[name] or 0 for p in points), name
        assert total == sum(_value(r, name) for r in breakdown), name
