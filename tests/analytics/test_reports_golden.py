"""A hand-built data set with every figure computed by hand (see the comments)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.factories.analytics import FollowerSnapshotFactory, SocialAccountFactory, TrackedPostFactory

pytestmark = pytest.mark.django_db

WINDOW = "from=2026-08-01&to=2026-08-31"


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture
def data(workspace, other_workspace):
    fb = SocialAccountFactory(workspace=workspace, platform="FACEBOOK", display_name="FB Page")
    yt = SocialAccountFactory(workspace=workspace, platform="YOUTUBE", display_name="YT Channel")
    bs = SocialAccountFactory(workspace=workspace, platform="BLUESKY", display_name="BS Handle")
    SocialAccountFactory(workspace=workspace, platform="MASTODON")
    post = TrackedPostFactory
    # current window [08-01 00:00, 08-31 00:00]
    post(
        account=fb,
        platform_post_id="fb1",
        published_at=at("2026-08-01T00:00:00Z"),
        views=100,
        likes=10,
        comments=5,
        shares=5,
        post_id="post_1",
        target_id="pt_1",
    )
    post(
        account=fb,
        platform_post_id="fb2",
        published_at=at("2026-08-31T00:00:00Z"),
        views=200,
        likes=20,
        comments=0,
        shares=0,
    )
    post(
        account=fb,
        platform_post_id="fb3",
        published_at=at("2026-08-31T00:00:01Z"),
        views=999,
        likes=999,
        comments=999,
        shares=999,
    )  # just outside
    post(
        account=yt,
        platform_post_id="yt1",
        published_at=at("2026-08-10T12:00:00Z"),
        views=1000,
        likes=50,
        comments=10,
        shares=None,
    )
    post(
        account=bs,
        platform_post_id="bs1",
        published_at=at("2026-08-15T08:00:00Z"),
        views=None,
        likes=7,
        comments=3,
        shares=2,
    )
    # previous window [07-02 00:00, 08-01 00:00)
    post(
        account=fb,
        platform_post_id="fb0",
        published_at=at("2026-07-31T23:59:59Z"),
        views=50,
        likes=5,
        comments=0,
        shares=0,
    )
    post(
        account=yt,
        platform_post_id="yt0",
        published_at=at("2026-07-02T00:00:00Z"),
        views=500,
        likes=0,
        comments=0,
        shares=None,
    )
    post(
        account=yt,
        platform_post_id="yt-old",
        published_at=at("2026-07-01T23:59:59Z"),
        views=7777,
        likes=1,
        comments=1,
        shares=None,
    )  # before the previous window
    FollowerSnapshotFactory(account=fb, day=dt.date(2026, 7, 20), count=1000)
    FollowerSnapshotFactory(account=fb, day=dt.date(2026, 8, 30), count=1100)
    FollowerSnapshotFactory(account=fb, day=dt.date(2026, 9, 5), count=1200)
    FollowerSnapshotFactory(account=yt, day=dt.date(2026, 8, 1), count=300)
    # another workspace's data never counts
    stranger = SocialAccountFactory(workspace=other_workspace, platform="FACEBOOK")
    post(
        account=stranger,
        platform_post_id="x1",
        published_at=at("2026-08-10T00:00:00Z"),
        views=5,
        likes=5,
        comments=5,
        shares=5,
    )
    FollowerSnapshotFactory(account=stranger, day=dt.date(2026, 8, 1), count=5)


def mv(value, previous, delta):
    return {"value": value, "previousValue": previous, "deltaPercent": delta}


def test_overview(api, data):
    body = api.get(f"/api/v1/analytics/overview?{WINDOW}").json()
    assert body == {
        # views 100+200+1000 = 1300 vs 50+500 = 550 → +136.36 %
        "views": mv(1300, 550, 136.36),
        # likes 10+20+50+7 = 87 vs 5 → +1640 %
        "likes": mv(87, 5, 1640.0),
        "comments": mv(18, 0, None),  # 5+0+10+3; previous 0 → no delta
        "shares": mv(7, 0, None),  # 5+0+2 (YouTube does not report shares)
        "followers": mv(1400, 1000, 40.0),  # FB 1100 + YT 300 at 08-31; FB 1000 at 07-31
        "postsCount": mv(4, 2, 100.0),
        "avgViewsPerPost": mv(433.33, 275.0, 57.57),  # 1300/3 posts that report views; 550/2
        "engagementRate": mv(8.62, 0.91, 847.25),  # (87+18+7)/1300; 5/550
        "partialMetrics": ["views", "shares", "avgViewsPerPost", "engagementRate"],
        "lastSyncedAt": None,
    }


def test_overview_for_platforms_without_views(api, data):
    body = api.get(f"/api/v1/analytics/overview?{WINDOW}&platforms=BLUESKY&platforms=MASTODON").json()
    assert body["views"] == mv(None, None, None)
    assert body["avgViewsPerPost"] == mv(None, None, None)
    assert body["engagementRate"] == mv(None, None, None)
    assert body["likes"] == mv(7, 0, None)
    assert body["shares"] == mv(2, 0, None)
    assert body["followers"] == mv(None, None, None)  # no Bluesky snapshot known
    assert body["postsCount"] == mv(1, 0, None)
    assert body["partialMetrics"] == []


def test_timeseries_weekly(api, data):
    body = api.get(f"/api/v1/analytics/timeseries?{WINDOW}&granularity=WEEKLY").json()
    empty = {"views": 0, "likes": 0, "comments": 0, "shares": 0, "postsCount": 0, "engagementRate": None}
    assert body == {
        "granularity": "WEEKLY",
        "points": [
            # ISO weeks from Monday; 08-01 is a Saturday
            {
                "date": "2026-07-27T00:00:00Z",
                "views": 100,
                "likes": 10,
                "comments": 5,
                "shares": 5,
                "followers": 1300,
                "postsCount": 1,
                "engagementRate": 20.0,
            },
            {"date": "2026-08-03T00:00:00Z", **empty, "followers": 1300},
            {
                "date": "2026-08-10T00:00:00Z",
                "views": 1000,
                "likes": 57,
                "comments": 13,
                "shares": 2,
                "followers": 1300,
                "postsCount": 2,
                "engagementRate": 7.2,
            },
            {"date": "2026-08-17T00:00:00Z", **empty, "followers": 1300},
            {"date": "2026-08-24T00:00:00Z", **empty, "followers": 1400},
            {
                "date": "2026-08-31T00:00:00Z",
                "views": 200,
                "likes": 20,
                "comments": 0,
                "shares": 0,
                "followers": 1400,
                "postsCount": 1,
                "engagementRate": 10.0,
            },
        ],
    }


def test_timeseries_daily_and_monthly_and_legacy_interval(api, data):
    daily = api.get(f"/api/v1/analytics/timeseries?{WINDOW}").json()
    assert daily["granularity"] == "DAILY"
    assert len(daily["points"]) == 31  # 08-01 … 08-31
    assert daily["points"][0]["date"] == "2026-08-01T00:00:00Z"
    assert daily["points"][0]["followers"] == 1300
    assert daily["points"][29]["followers"] == 1400  # 08-30
    assert sum(p["postsCount"] for p in daily["points"]) == 4
    monthly = api.get(f"/api/v1/analytics/timeseries?{WINDOW}&interval=MONTH").json()
    assert monthly["granularity"] == "MONTHLY"
    assert [(p["date"], p["postsCount"], p["views"]) for p in monthly["points"]] == [("2026-08-01T00:00:00Z", 4, 1300)]


def test_platform_breakdown(api, data):
    rows = {r["platform"]: r for r in api.get(f"/api/v1/analytics/platform-breakdown?{WINDOW}").json()["platforms"]}
    assert list(rows) == ["FACEBOOK", "BLUESKY", "YOUTUBE"]  # order of the capabilities table
    facebook = rows["FACEBOOK"]
    assert facebook["views"] == mv(300, 50, 500.0)
    assert facebook["postsCount"] == mv(2, 1, 100.0)
    assert facebook["followers"] == mv(1100, 1000, 10.0)
    assert facebook["engagementRate"] == mv(13.33, 10.0, 33.3)  # 40/300; 5/50
    assert facebook["supportedMetrics"] == [
        "views",
        "likes",
        "comments",
        "shares",
        "followers",
        "postsCount",
        "avgViewsPerPost",
        "engagementRate",
    ]
    youtube = rows["YOUTUBE"]
    assert youtube["shares"] == mv(None, None, None)
    assert youtube["views"] == mv(1000, 500, 100.0)
    assert rows["BLUESKY"]["views"] == mv(None, None, None)
    assert rows["BLUESKY"]["likes"] == mv(7, 0, None)


def test_posts_sorted_by_views_with_nulls_last(api, data):
    body = api.get(f"/api/v1/analytics/posts?{WINDOW}&sortBy=VIEWS&limit=3").json()
    assert body["total"] == 4 and body["page"] == 1 and body["limit"] == 3 and body["hasMore"] is True
    assert [row["platform"] for row in body["posts"]] == ["YOUTUBE", "FACEBOOK", "FACEBOOK"]
    first = body["posts"][0]
    assert first["metrics"] == {"views": 1000, "likes": 50, "comments": 10, "shares": None, "engagementRate": 6.0}
    assert first["postId"] is None and first["postPlatformId"] is None  # discovered
    assert first["accountName"] == "YT Channel"
    last = api.get(f"/api/v1/analytics/posts?{WINDOW}&sortBy=VIEWS&limit=3&page=2").json()
    assert [row["metrics"]["views"] for row in last["posts"]] == [None]
    linked = api.get(f"/api/v1/analytics/posts?{WINDOW}&sortBy=PUBLISHED_AT&limit=10").json()["posts"][-1]
    assert (linked["postId"], linked["postPlatformId"]) == ("post_1", "pt_1")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("to=2026-08-31", "from: This field is required."),
        ("from=2026-08-31&to=2026-08-01", "to: must not be earlier than from"),
        (f"{WINDOW}&platforms=MYSPACE", 'platforms[0]: "MYSPACE" is not a valid choice.'),
        (f"{WINDOW}&colour=red", "property colour should not exist"),
    ],
)
def test_window_validation(api, query, message):
    response = api.get(f"/api/v1/analytics/overview?{query}")
    assert response.status_code == 400
    assert message in response.json()["message"]


def test_breakdown_tolerates_platforms_and_requires_analytics_read(api, anon, data):
    assert api.get(f"/api/v1/analytics/platform-breakdown?{WINDOW}&platforms=FACEBOOK").status_code == 200
    assert anon.get(f"/api/v1/analytics/overview?{WINDOW}").status_code == 401


def test_daily_window_too_long_is_400(api):
    response = api.get("/api/v1/analytics/timeseries?from=2000-01-01&to=2026-01-01")
    assert response.status_code == 400


@pytest.mark.parametrize("report", ["overview", "platform-breakdown"])
def test_window_early_in_the_calendar_has_a_shortened_previous_window(api, data, report):
    """The previous window of 0676..2000 would start before year 1 (found by the fuzz tests: 500)."""
    response = api.get(f"/api/v1/analytics/{report}?from=0676-01-01&to=2000-01-01")
    assert response.status_code == 200, response.content
