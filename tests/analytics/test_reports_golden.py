"""A hand-built data set with every figure computed by hand (see the comments)."""

from __future__ import annotations

import datetime as dt

import pytest

from analytics.api.serializers import WINDOW_REQUIRED
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
        text="Launch day",
        permalink="https://facebook.example/p/fb1",
        thumbnail_url="https://cdn.example/fb1.jpg",
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
        # 1300/3 posts that report views; 550/2; the delta from the unrounded 433.333…
        "avgViewsPerPost": mv(433.33, 275.0, 57.58),
        # Engagement needs views: Bluesky's 7+3+2 count on neither side. FB (10+5+5)+(20) + YT (50+10)
        # = 100 over 1300 views; previous 5/550 = 0.909…; delta (0.07692…/0.00909… − 1) × 100
        "engagementRate": mv(7.69, 0.91, 746.15),
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
                "date": "2026-07-27T00:00:00.000Z",
                "views": 100,
                "likes": 10,
                "comments": 5,
                "shares": 5,
                "followers": 1300,
                "postsCount": 1,
                "engagementRate": 20.0,
            },
            {"date": "2026-08-03T00:00:00.000Z", **empty, "followers": 1300},
            {
                "date": "2026-08-10T00:00:00.000Z",
                "views": 1000,
                "likes": 57,
                "comments": 13,
                "shares": 2,
                "followers": 1300,
                "postsCount": 2,
                "engagementRate": 6.0,  # YT (50+10)/1000; Bluesky (no views) is not counted
            },
            {"date": "2026-08-17T00:00:00.000Z", **empty, "followers": 1300},
            {"date": "2026-08-24T00:00:00.000Z", **empty, "followers": 1400},
            {
                "date": "2026-08-31T00:00:00.000Z",
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
    assert daily["points"][0]["date"] == "2026-08-01T00:00:00.000Z"
    assert daily["points"][0]["followers"] == 1300
    assert daily["points"][29]["followers"] == 1400  # 08-30
    assert sum(p["postsCount"] for p in daily["points"]) == 4
    monthly = api.get(f"/api/v1/analytics/timeseries?{WINDOW}&interval=MONTH").json()
    assert monthly["granularity"] == "MONTHLY"
    assert [(p["date"], p["postsCount"], p["views"]) for p in monthly["points"]] == [
        ("2026-08-01T00:00:00.000Z", 4, 1300)
    ]


def test_platform_breakdown(api, data):
    rows = {r["platform"]: r for r in api.get(f"/api/v1/analytics/platform-breakdown?{WINDOW}").json()["platforms"]}
    assert list(rows) == ["FACEBOOK", "BLUESKY", "YOUTUBE"]  # order of the capabilities table
    facebook = rows["FACEBOOK"]
    assert facebook["views"] == mv(300, 50, 500.0)
    assert facebook["postsCount"] == mv(2, 1, 100.0)
    assert facebook["followers"] == mv(1100, 1000, 10.0)
    assert facebook["engagementRate"] == mv(13.33, 10.0, 33.33)  # 40/300; 5/50; delta from 13.333…
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


def test_platform_breakdown_in_full(api, data):
    """Every row whole. Window [08-01, 08-31 00:00], previous [07-02, 08-01); followers at 08-31
    and at 07-31 (the last instant before ``from``)."""
    body = api.get(f"/api/v1/analytics/platform-breakdown?{WINDOW}").json()
    assert body == {
        "platforms": [
            {
                "platform": "FACEBOOK",
                "views": mv(300, 50, 500.0),  # fb1 100 + fb2 200 (fb3 is 1 s late); fb0 50
                "likes": mv(30, 5, 500.0),
                "comments": mv(5, 0, None),
                "shares": mv(5, 0, None),
                "followers": mv(1100, 1000, 10.0),  # 08-30 count; 07-20 count
                "postsCount": mv(2, 1, 100.0),
                "avgViewsPerPost": mv(150.0, 50.0, 200.0),
                "engagementRate": mv(13.33, 10.0, 33.33),  # (20 + 20)/300; 5/50
                "supportedMetrics": [
                    "views",
                    "likes",
                    "comments",
                    "shares",
                    "followers",
                    "postsCount",
                    "avgViewsPerPost",
                    "engagementRate",
                ],
            },
            {
                "platform": "BLUESKY",
                "views": mv(None, None, None),  # Bluesky reports no views...
                "likes": mv(7, 0, None),
                "comments": mv(3, 0, None),
                "shares": mv(2, 0, None),
                "followers": mv(None, None, None),  # ... and no count of it is known
                "postsCount": mv(1, 0, None),
                "avgViewsPerPost": mv(None, None, None),
                "engagementRate": mv(None, None, None),
                "supportedMetrics": ["likes", "comments", "shares", "followers", "postsCount"],
            },
            {
                "platform": "YOUTUBE",
                "views": mv(1000, 500, 100.0),  # yt1; yt0 (yt-old is before the previous window)
                "likes": mv(50, 0, None),
                "comments": mv(10, 0, None),
                "shares": mv(None, None, None),  # YouTube reports no shares
                "followers": mv(300, None, None),  # its first count is of 08-01
                "postsCount": mv(1, 1, 0.0),
                "avgViewsPerPost": mv(1000.0, 500.0, 100.0),
                "engagementRate": mv(6.0, 0.0, None),  # 60/1000; 0/500, so no delta
                "supportedMetrics": [
                    "views",
                    "likes",
                    "comments",
                    "followers",
                    "postsCount",
                    "avgViewsPerPost",
                    "engagementRate",
                ],
            },
        ]
    }


@pytest.mark.parametrize(("legacy", "granularity"), [("DAY", "DAILY"), ("WEEK", "WEEKLY"), ("MONTH", "MONTHLY")])
def test_legacy_interval_is_an_alias_of_granularity(api, data, legacy, granularity):
    old = api.get(f"/api/v1/analytics/timeseries?{WINDOW}&interval={legacy}")
    new = api.get(f"/api/v1/analytics/timeseries?{WINDOW}&granularity={granularity}")
    assert old.status_code == new.status_code == 200
    assert old.json() == new.json() and old.json()["granularity"] == granularity
    # Both given: granularity, the current name, decides.
    both = api.get(f"/api/v1/analytics/timeseries?{WINDOW}&interval={legacy}&granularity=MONTHLY").json()
    assert both["granularity"] == "MONTHLY" and len(both["points"]) == 1


def test_posts_sorted_by_views_with_nulls_last(api, data):
    body = api.get(f"/api/v1/analytics/posts?{WINDOW}&sortBy=VIEWS&limit=3").json()
    assert body["total"] == 4 and body["page"] == 1 and body["limit"] == 3 and body["hasMore"] is True
    assert [row["platform"] for row in body["posts"]] == ["YOUTUBE", "FACEBOOK", "FACEBOOK"]
    first = body["posts"][0]
    assert first["metrics"] == {
        "views": 1000,
        "likes": 50,
        "comments": 10,
        "shares": None,
        "saves": None,  # figures YouTube does not report
        "clicks": None,
        "impressions": None,
        "reach": None,
        "engagementRate": 6.0,
    }
    assert first["postId"] is None and first["postPlatformId"] is None  # discovered
    assert first["accountName"] == "YT Channel"
    last = api.get(f"/api/v1/analytics/posts?{WINDOW}&sortBy=VIEWS&limit=3&page=2").json()
    assert [row["metrics"]["views"] for row in last["posts"]] == [None]
    linked = api.get(f"/api/v1/analytics/posts?{WINDOW}&sortBy=PUBLISHED_AT&limit=10").json()["posts"][-1]
    assert (linked["postId"], linked["postPlatformId"]) == ("post_1", "pt_1")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("to=2026-08-31", "from: " + WINDOW_REQUIRED),
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


def test_overview_window_edges_are_inclusive_and_the_previous_window_half_open(api, data):
    # [08-31 00:00:00, 08-31 00:00:01]: fb2 at the start and fb3 at the end both count; the
    # previous window [08-30 23:59:59, 08-31 00:00:00) holds nothing (fb2 sits on its open end).
    body = api.get("/api/v1/analytics/overview?from=2026-08-31T00:00:00Z&to=2026-08-31T00:00:01Z").json()
    assert body["postsCount"] == mv(2, 0, None)
    assert body["views"] == mv(1199, 0, None)  # 200 + 999
    # An empty-length window holds the posts published at that very instant.
    body = api.get("/api/v1/analytics/overview?from=2026-08-31T00:00:01Z&to=2026-08-31T00:00:01Z").json()
    assert body["postsCount"] == mv(1, 0, None) and body["views"] == mv(999, 0, None)
    # The same window written with an offset is the same instant range.
    shifted = api.get("/api/v1/analytics/overview?from=2026-08-31T02:00:00%2B02:00&to=2026-08-31T02:00:01%2B02:00")
    assert shifted.json()["postsCount"] == mv(2, 0, None)


def test_overview_with_a_platform_reporting_only_views(api, workspace, data):
    gb = SocialAccountFactory(workspace=workspace, platform="GOOGLE_BUSINESS", display_name="GB Place")
    TrackedPostFactory(account=gb, platform_post_id="gb1", published_at=at("2026-08-20T00:00:00Z"), views=400)
    body = api.get(f"/api/v1/analytics/overview?{WINDOW}&platforms=FACEBOOK&platforms=GOOGLE_BUSINESS").json()
    assert body == {
        "views": mv(700, 50, 1300.0),  # FB 100+200, GB 400; previous FB 50
        "likes": mv(30, 5, 500.0),  # FB only
        "comments": mv(5, 0, None),
        "shares": mv(5, 0, None),
        "followers": mv(1100, 1000, 10.0),  # Google Business reports none
        "postsCount": mv(3, 1, 200.0),
        "avgViewsPerPost": mv(233.33, 50.0, 366.67),  # 700/3; 50/1
        "engagementRate": mv(5.71, 10.0, -42.86),  # (40 + 0)/700; 5/50
        "partialMetrics": ["likes", "comments", "shares", "followers"],
        "lastSyncedAt": None,
    }
    rows = api.get(f"/api/v1/analytics/platform-breakdown?{WINDOW}").json()["platforms"]
    google = next(r for r in rows if r["platform"] == "GOOGLE_BUSINESS")
    assert google["supportedMetrics"] == ["views", "postsCount", "avgViewsPerPost", "engagementRate"]
    assert google["views"] == mv(400, 0, None)
    assert google["likes"] == google["followers"] == mv(None, None, None)
    assert google["engagementRate"] == mv(0.0, None, None)


def test_overview_of_ignored_platforms_only(api, data):
    body = api.get(f"/api/v1/analytics/overview?{WINDOW}&platforms=MASTODON&platforms=TELEGRAM").json()
    assert body["postsCount"] == mv(0, 0, None)
    assert all(body[name] == mv(None, None, None) for name in ("views", "likes", "followers", "engagementRate"))
    assert body["partialMetrics"] == []


def test_timeseries_daily_with_partial_edge_days(api, data):
    # from 07-31 23:59:59 (fb0 sits on it) to 08-02 00:00 (a bucket of one instant)
    body = api.get("/api/v1/analytics/timeseries?from=2026-07-31T23:59:59Z&to=2026-08-02&granularity=DAILY").json()
    assert body == {
        "granularity": "DAILY",
        "points": [
            {
                "date": "2026-07-31T00:00:00.000Z",
                "views": 50,
                "likes": 5,
                "comments": 0,
                "shares": 0,
                "followers": 1000,  # FB's 07-20 count; YouTube's first count is 08-01
                "postsCount": 1,
                "engagementRate": 10.0,  # 5/50
            },
            {
                "date": "2026-08-01T00:00:00.000Z",
                "views": 100,
                "likes": 10,
                "comments": 5,
                "shares": 5,
                "followers": 1300,  # FB 1000 + YT 300
                "postsCount": 1,
                "engagementRate": 20.0,  # 20/100
            },
            {
                "date": "2026-08-02T00:00:00.000Z",
                "views": 0,
                "likes": 0,
                "comments": 0,
                "shares": 0,
                "followers": 1300,
                "postsCount": 0,
                "engagementRate": None,
            },
        ],
    }


def test_timeseries_monthly_calendar_months(api, data):
    body = api.get("/api/v1/analytics/timeseries?from=2026-07-01&to=2026-09-10&granularity=MONTHLY").json()
    assert body == {
        "granularity": "MONTHLY",
        "points": [
            {
                "date": "2026-07-01T00:00:00.000Z",
                # yt-old 07-01 23:59:59 (7777, 1, 1), yt0 (500), fb0 (50, 5)
                "views": 8327,
                "likes": 6,
                "comments": 1,
                "shares": 0,
                "followers": 1000,  # at 07-31: FB 1000
                "postsCount": 3,
                "engagementRate": 0.08,  # 7/8327
            },
            {
                "date": "2026-08-01T00:00:00.000Z",
                # fb1, fb2, fb3 (08-31 00:00:01 is inside this window), yt1, bs1
                "views": 2299,  # 100+200+999+1000
                "likes": 1086,  # 10+20+999+50+7
                "comments": 1017,  # 5+0+999+10+3
                "shares": 1006,  # 5+0+999+2
                "followers": 1400,  # at 08-31: FB 1100 + YT 300
                "postsCount": 5,
                "engagementRate": 134.71,  # FB 20+20+2997, YT 60 = 3097 over 2299 (Bluesky excluded)
            },
            {
                "date": "2026-09-01T00:00:00.000Z",
                "views": 0,
                "likes": 0,
                "comments": 0,
                "shares": 0,
                "followers": 1500,  # at 09-10: FB 1200 (09-05) + YT 300
                "postsCount": 0,
                "engagementRate": None,
            },
        ],
    }


def test_timeseries_buckets_are_utc_whatever_the_offset_of_the_window(api, data):
    # 2026-03-29 is the European spring-forward day; buckets still start at UTC midnights.
    body = api.get(
        "/api/v1/analytics/timeseries?from=2026-03-28T00:00:00%2B01:00&to=2026-03-30T00:00:00%2B02:00"
    ).json()
    assert [p["date"] for p in body["points"]] == [
        "2026-03-27T00:00:00.000Z",
        "2026-03-28T00:00:00.000Z",
        "2026-03-29T00:00:00.000Z",
    ]


def test_timeseries_platform_filter_and_nulls(api, data):
    body = api.get(f"/api/v1/analytics/timeseries?{WINDOW}&granularity=MONTHLY&platforms=BLUESKY").json()
    assert body["points"] == [
        {
            "date": "2026-08-01T00:00:00.000Z",
            "views": None,  # Bluesky reports no views
            "likes": 7,
            "comments": 3,
            "shares": 2,
            "followers": None,  # no Bluesky count known
            "postsCount": 1,
            "engagementRate": None,
        }
    ]


def test_posts_rows_in_full(api, data):
    body = api.get(f"/api/v1/analytics/posts?{WINDOW}").json()
    assert (body["total"], body["page"], body["limit"], body["hasMore"]) == (4, 1, 20, False)
    linked = body["posts"][-1]  # PUBLISHED_AT descending by default: fb1 is the oldest
    assert linked == {
        "id": linked["id"],
        "postId": "post_1",
        "postPlatformId": "pt_1",
        "platform": "FACEBOOK",
        "accountName": "FB Page",
        "publishedAt": "2026-08-01T00:00:00.000Z",
        "text": "Launch day",
        "title": "Launch day",  # Facebook posts have no title: the first line of the text
        "permalink": "https://facebook.example/p/fb1",
        "thumbnailUrl": "https://cdn.example/fb1.jpg",
        "metrics": {
            "views": 100,
            "likes": 10,
            "comments": 5,
            "shares": 5,
            "saves": None,  # not reported by Facebook
            "clicks": None,
            "impressions": None,  # the factory row holds none
            "reach": None,
            "engagementRate": 20.0,
        },
    }
    assert linked["id"].startswith("tp")
    bluesky = body["posts"][1]
    assert bluesky["title"] is None  # no text, no title
    assert bluesky["metrics"] == {
        "views": None,
        "likes": 7,
        "comments": 3,
        "shares": 2,
        "saves": None,
        "clicks": None,
        "impressions": None,
        "reach": None,
        "engagementRate": None,
    }


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("PUBLISHED_AT", ["fb2", "bs1", "yt1", "fb1"]),
        ("VIEWS", ["yt1", "fb2", "fb1", "bs1"]),  # 1000, 200, 100, null last
        ("LIKES", ["yt1", "fb2", "fb1", "bs1"]),  # 50, 20, 10, 7
        ("COMMENTS", ["yt1", "fb1", "bs1", "fb2"]),  # 10, 5, 3, 0
        ("SHARES", ["fb1", "bs1", "fb2", "yt1"]),  # 5, 2, 0, null last
        ("ENGAGEMENT_RATE", ["fb1", "fb2", "yt1", "bs1"]),  # 20 %, 10 %, 6 %, null last
    ],
)
def test_posts_sort_orders(api, data, sort, expected):
    from analytics.models import TrackedPost

    names = dict(TrackedPost.objects.values_list("id", "platform_post_id"))
    rows = api.get(f"/api/v1/analytics/posts?{WINDOW}&sortBy={sort}").json()["posts"]
    assert [names[r["id"]] for r in rows] == expected


def test_posts_filter_and_pages(api, data):
    only = api.get(f"/api/v1/analytics/posts?{WINDOW}&platforms=BLUESKY&platforms=MASTODON").json()
    assert only["total"] == 1 and [r["platform"] for r in only["posts"]] == ["BLUESKY"]
    beyond = api.get(f"/api/v1/analytics/posts?{WINDOW}&page=3&limit=2").json()
    assert beyond == {"posts": [], "total": 4, "page": 3, "limit": 2, "hasMore": False}
    second = api.get(f"/api/v1/analytics/posts?{WINDOW}&page=2&limit=2").json()
    assert len(second["posts"]) == 2 and second["hasMore"] is False
    bracketed = api.get(f"/api/v1/analytics/posts?{WINDOW}&platforms[0]=YOUTUBE&platforms[1]=BLUESKY").json()
    assert bracketed["total"] == 2


ENDPOINTS = ["overview", "timeseries", "platform-breakdown", "posts"]


@pytest.mark.parametrize(
    ("endpoint", "query", "message"),
    [
        ("overview", "from=2026-08-01", "to: " + WINDOW_REQUIRED),
        ("overview", "from=yesterday&to=2026-08-01", "from: must be an ISO 8601 date-time or a date (YYYY-MM-DD)"),
        ("overview", "from=2026-02-30&to=2026-03-01", "from: must be an ISO 8601 date-time or a date (YYYY-MM-DD)"),
        ("overview", f"{WINDOW}&from=2026-07-01", "from must be given once"),
        ("timeseries", "from=2026-08-31T00:00:01Z&to=2026-08-31T00:00:00Z", "to: must not be earlier than from"),
        ("timeseries", f"{WINDOW}&granularity=HOURLY", 'granularity: "HOURLY" is not a valid choice.'),
        ("timeseries", f"{WINDOW}&interval=YEAR", 'interval: "YEAR" is not a valid choice.'),
        ("timeseries", f"{WINDOW}&bucket=DAY", "property bucket should not exist"),
        ("platform-breakdown", "from=2026-08-31&to=2026-08-01", "to: must not be earlier than from"),
        ("platform-breakdown", f"{WINDOW}&granularity=DAILY", "property granularity should not exist"),
        ("posts", f"{WINDOW}&page=0", "page: Ensure this value is greater than or equal to 1."),
        ("posts", f"{WINDOW}&limit=101", "limit: Ensure this value is less than or equal to 100."),
        ("posts", f"{WINDOW}&limit=0", "limit: Ensure this value is greater than or equal to 1."),
        ("posts", f"{WINDOW}&sortBy=RANDOM", 'sortBy: "RANDOM" is not a valid choice.'),
        ("posts", f"{WINDOW}&offset=20", "property offset should not exist"),
        ("sync-status", "verbose=1", "property verbose should not exist"),
    ],
)
def test_every_endpoint_validates_its_query(api, endpoint, query, message):
    response = api.get(f"/api/v1/analytics/{endpoint}?{query}")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["statusCode"] == 400 and body["error"] == "Bad Request"
    assert message in body["message"], body["message"]


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize(
    "window",
    [
        "from=9999-12-30&to=9999-12-31T23:59:59.999999Z",
        "from=9999-12-31T12:00:00Z&to=9999-12-31T23:59:59.999999Z",
        "from=0001-01-01&to=0001-01-09",
        "from=0001-01-01&to=0001-01-01",
    ],
)
def test_windows_at_the_ends_of_the_calendar(api, data, endpoint, window):
    """Found by probing: these overflowed Python's date range into a 500."""
    response = api.get(f"/api/v1/analytics/{endpoint}?{window}")
    assert response.status_code == 200, response.content
    if endpoint == "timeseries":
        weekly = api.get(f"/api/v1/analytics/timeseries?{window}&granularity=WEEKLY")
        monthly = api.get(f"/api/v1/analytics/timeseries?{window}&granularity=MONTHLY")
        assert weekly.status_code == monthly.status_code == 200
        assert monthly.json()["points"][-1]["date"][:7] in ("9999-12", "0001-01")


ALL = [*(f"{e}?{WINDOW}" for e in ENDPOINTS), "sync-status"]


@pytest.mark.parametrize("path", [*ALL, "sync"])
def test_every_endpoint_answers_401_without_a_valid_key(anon, path):
    call = anon.post if path == "sync" else anon.get
    response = call(f"/api/v1/analytics/{path}")
    assert response.status_code == 401
    assert response.json()["message"] == "API key is invalid or missing"


@pytest.mark.parametrize("path", [*ALL, "sync"])
def test_every_endpoint_requires_analytics_read(client_for, monkeypatch, path):
    # Every role holds analytics.read today: take it from one to see the check itself.
    from workspaces.roles import ROLE_PERMISSIONS

    monkeypatch.setitem(ROLE_PERMISSIONS, "viewer", ROLE_PERMISSIONS["viewer"] - {"analytics.read"})
    viewer = client_for("viewer")
    response = viewer.post(f"/api/v1/analytics/{path}") if path == "sync" else viewer.get(f"/api/v1/analytics/{path}")
    assert response.status_code == 403
    body = response.json()
    assert (body["code"], body["requiredPermission"], body["role"]) == ("permission_denied", "analytics.read", "viewer")


@pytest.mark.parametrize("path", [*ALL, "sync"])
def test_another_workspace_is_out_of_reach(api, other_workspace, path):
    headers = {"HTTP_X_WORKSPACE_ID": other_workspace.id}
    response = (
        api.post(f"/api/v1/analytics/{path}", **headers)
        if path == "sync"
        else api.get(f"/api/v1/analytics/{path}", **headers)
    )
    assert response.status_code == 403 and response.json()["code"] == "workspace_access_denied"


def test_other_workspaces_see_none_of_it(client_for, other_workspace, data):
    stranger = client_for("viewer", ws=other_workspace)
    overview = stranger.get(f"/api/v1/analytics/overview?{WINDOW}").json()
    assert overview["postsCount"]["value"] == 1 and overview["views"]["value"] == 5  # only its own x1
    assert overview["followers"]["value"] == 5
    posts = stranger.get(f"/api/v1/analytics/posts?{WINDOW}").json()
    assert posts["total"] == 1 and posts["posts"][0]["platform"] == "FACEBOOK"
    rows = stranger.get(f"/api/v1/analytics/platform-breakdown?{WINDOW}").json()["platforms"]
    assert [r["platform"] for r in rows] == ["FACEBOOK"]
    assert stranger.get("/api/v1/analytics/sync-status").json()["accounts"][0]["platform"] == "FACEBOOK"
    assert len(stranger.get("/api/v1/analytics/sync-status").json()["accounts"]) == 1


def test_no_platform_is_called_while_answering(api, data, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a platform client was asked for during a request")

    monkeypatch.setattr("platforms.registry.get_client", refuse)
    monkeypatch.setattr("analytics.services.get_client", refuse)
    for path in ALL:
        assert api.get(f"/api/v1/analytics/{path}").status_code == 200, path
    for granularity in ("DAILY", "WEEKLY", "MONTHLY"):
        assert api.get(f"/api/v1/analytics/timeseries?{WINDOW}&granularity={granularity}").status_code == 200
    assert api.post("/api/v1/analytics/sync", {}, format="json").status_code == 202  # queues, calls nothing


def test_a_report_without_its_window_names_both_ends_and_their_format(api):
    """The spec requires from and to (no default window): the 400 says what to send."""
    body = api.get("/api/v1/analytics/overview").json()
    assert body["statusCode"] == 400
    hint = (
        "This field is required: the window is from=<start>&to=<end>, each an ISO 8601 date-time or a date "
        "(YYYY-MM-DD, midnight UTC), e.g. from=2026-08-01&to=2026-08-31."
    )
    assert sorted(body["message"]) == [f"from: {hint}", f"to: {hint}"]
