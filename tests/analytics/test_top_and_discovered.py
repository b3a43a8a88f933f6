"""``GET /analytics/top-posts`` and ``GET /analytics/discovered-posts``, as the published CLI's
``analytics top`` and ``analytics discovered`` call them: ``from``, ``to``, ``limit``, optionally
``sortBy`` and repeated ``platforms``; they read ``posts`` (CONTRACT.md §8)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from analytics import selectors
from analytics.api.serializers import WINDOW_REQUIRED
from analytics.models import TrackedPost
from analytics.reports import SORT_FIELDS, Window
from tests.factories.analytics import SocialAccountFactory, TrackedPostFactory

pytestmark = pytest.mark.django_db

WINDOW = "from=2026-08-01&to=2026-08-31"  # [08-01 00:00, 08-31 00:00], as the other reports
TOP = "/api/v1/analytics/top-posts"
DISCOVERED = "/api/v1/analytics/discovered-posts"


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture
def data(workspace: Any, other_workspace: Any) -> dict[str, TrackedPost]:
    fb = SocialAccountFactory(workspace=workspace, platform="FACEBOOK", display_name="FB Page")
    yt = SocialAccountFactory(workspace=workspace, platform="YOUTUBE", display_name="YT Channel")
    bs = SocialAccountFactory(workspace=workspace, platform="BLUESKY", display_name="", username="bs.example")
    post = TrackedPostFactory
    rows = {
        # published through us: ranked by top-posts, never "discovered"
        "fb1": post(
            account=fb,
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
        ),
        "fb2": post(account=fb, published_at=at("2026-08-31T00:00:00Z"), views=200, likes=20, comments=0, shares=0),
        "yt1": post(
            account=yt,
            published_at=at("2026-08-10T12:00:00Z"),
            views=1000,
            likes=50,
            comments=10,
            shares=None,
            text="How we ship\nA long description",
            title="How we ship",
            permalink="https://youtube.example/watch?v=yt1",
            thumbnail_url="https://cdn.example/yt1.jpg",
        ),
        "bs1": post(
            account=bs,
            published_at=at("2026-08-15T08:00:00Z"),
            views=None,
            likes=7,
            comments=3,
            shares=2,
            text="Bluesky thoughts",
            permalink="https://bsky.example/post/bs1",
        ),
        # outside the window on either side, with figures that would otherwise win
        "fb3": post(account=fb, published_at=at("2026-08-31T00:00:01Z"), views=9999, likes=999),
        "fb0": post(account=fb, published_at=at("2026-07-31T23:59:59Z"), views=5000, likes=500),
    }
    # Another workspace's post, the best of all, inside the window: never shown here.
    stranger = SocialAccountFactory(workspace=other_workspace, platform="FACEBOOK", display_name="Stranger")
    rows["x1"] = post(account=stranger, published_at=at("2026-08-10T00:00:00Z"), views=10**6, likes=10**5)
    return rows


def metrics(**given: Any) -> dict[str, Any]:
    names = ("views", "likes", "comments", "shares", "saves", "clicks", "impressions", "reach", "engagementRate")
    return {name: given.get(name) for name in names}


# --- top-posts -------------------------------------------------------------------------------


def test_top_posts_as_the_cli_asks_best_by_views_first(api: Any, data: dict[str, TrackedPost]) -> None:
    response = api.get(f"{TOP}?{WINDOW}&limit=3")
    assert response.status_code == 200, response.content
    assert response.json() == {
        "posts": [
            {
                "id": data["yt1"].id,
                "postId": None,
                "postPlatformId": None,
                "platform": "YOUTUBE",
                "accountName": "YT Channel",
                "publishedAt": "2026-08-10T12:00:00.000Z",
                "text": "How we ship\nA long description",
                "title": "How we ship",
                "permalink": "https://youtube.example/watch?v=yt1",
                "thumbnailUrl": "https://cdn.example/yt1.jpg",
                "metrics": metrics(views=1000, likes=50, comments=10, engagementRate=6.0),  # 60/1000
            },
            {
                "id": data["fb2"].id,
                "postId": None,
                "postPlatformId": None,
                "platform": "FACEBOOK",
                "accountName": "FB Page",
                "publishedAt": "2026-08-31T00:00:00.000Z",  # on the inclusive end of the window
                "text": "",
                "title": None,
                "permalink": "",
                "thumbnailUrl": "",
                "metrics": metrics(views=200, likes=20, comments=0, shares=0, engagementRate=10.0),
            },
            {
                "id": data["fb1"].id,
                "postId": "post_1",
                "postPlatformId": "pt_1",
                "platform": "FACEBOOK",
                "accountName": "FB Page",
                "publishedAt": "2026-08-01T00:00:00.000Z",  # on the inclusive start
                "text": "Launch day",
                "title": "Launch day",
                "permalink": "https://facebook.example/p/fb1",
                "thumbnailUrl": "https://cdn.example/fb1.jpg",
                "metrics": metrics(views=100, likes=10, comments=5, shares=5, engagementRate=20.0),
            },
        ]
    }


def test_top_posts_default_limit_is_ten(api: Any, workspace: Any) -> None:
    account = SocialAccountFactory(workspace=workspace, platform="YOUTUBE")
    for views in range(12):
        TrackedPostFactory(account=account, views=views)
    rows = api.get(f"{TOP}?{WINDOW}").json()["posts"]
    assert [r["metrics"]["views"] for r in rows] == list(range(11, 1, -1))


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("VIEWS", ["yt1", "fb2", "fb1", "bs1"]),  # 1000, 200, 100, null last
        ("LIKES", ["yt1", "fb2", "fb1", "bs1"]),  # 50, 20, 10, 7
        ("COMMENTS", ["yt1", "fb1", "bs1", "fb2"]),  # 10, 5, 3, 0
        ("SHARES", ["fb1", "bs1", "fb2", "yt1"]),  # 5, 2, 0, null last
        ("ENGAGEMENT_RATE", ["fb1", "fb2", "yt1", "bs1"]),  # 20 %, 10 %, 6 %, null last
        ("PUBLISHED_AT", ["fb2", "bs1", "yt1", "fb1"]),
    ],
)
def test_top_posts_sort_by_each_metric_of_the_posts_report(
    api: Any, data: dict[str, TrackedPost], sort: str, expected: list[str]
) -> None:
    names = {row.id: name for name, row in data.items()}
    top = api.get(f"{TOP}?{WINDOW}&sortBy={sort}&limit=50").json()
    assert [names[r["id"]] for r in top["posts"]] == expected
    # Exactly the items, and the order, of the posts report's first page for the same query.
    page = api.get(f"/api/v1/analytics/posts?{WINDOW}&sortBy={sort}&limit=2").json()
    assert api.get(f"{TOP}?{WINDOW}&sortBy={sort}&limit=2").json() == {"posts": page["posts"]}


def test_top_posts_sort_choices_are_the_posts_reports() -> None:
    from analytics.api.serializers import PostsQuery, TopPostsQuery

    assert list(TopPostsQuery().fields["sortBy"].choices) == list(PostsQuery().fields["sortBy"].choices)
    assert list(TopPostsQuery().fields["sortBy"].choices) == list(SORT_FIELDS)


def test_top_posts_platforms_repeated_or_bracketed(api: Any, data: dict[str, TrackedPost]) -> None:
    names = {row.id: name for name, row in data.items()}
    repeated = api.get(f"{TOP}?{WINDOW}&platforms=BLUESKY&platforms=FACEBOOK&sortBy=LIKES").json()["posts"]
    assert [names[r["id"]] for r in repeated] == ["fb2", "fb1", "bs1"]
    bracketed = api.get(f"{TOP}?{WINDOW}&platforms[0]=YOUTUBE&platforms[1]=MASTODON").json()["posts"]
    assert [names[r["id"]] for r in bracketed] == ["yt1"]  # MASTODON has no analytics: ignored
    assert api.get(f"{TOP}?{WINDOW}&platforms=TELEGRAM").json() == {"posts": []}


def test_top_posts_of_an_empty_window(api: Any, data: dict[str, TrackedPost]) -> None:
    assert api.get(f"{TOP}?from=2026-01-01&to=2026-01-31").json() == {"posts": []}


# --- discovered-posts ------------------------------------------------------------------------


def test_discovered_posts_as_the_cli_asks_newest_first(api: Any, data: dict[str, TrackedPost]) -> None:
    response = api.get(f"{DISCOVERED}?{WINDOW}&limit=200")
    assert response.status_code == 200, response.content
    # fb1 was published through us; fb0 and fb3 are outside the window; x1 is another workspace's.
    assert response.json() == {
        "posts": [
            {
                "id": data["fb2"].id,
                "platform": "FACEBOOK",
                "publishedAt": "2026-08-31T00:00:00.000Z",
                "text": "",
                "thumbnailUrl": "",
                "permalink": "",
                "accountName": "FB Page",
            },
            {
                "id": data["bs1"].id,
                "platform": "BLUESKY",
                "publishedAt": "2026-08-15T08:00:00.000Z",
                "text": "Bluesky thoughts",
                "thumbnailUrl": "",
                "permalink": "https://bsky.example/post/bs1",
                "accountName": "bs.example",  # no display name: the username
            },
            {
                "id": data["yt1"].id,
                "platform": "YOUTUBE",
                "publishedAt": "2026-08-10T12:00:00.000Z",
                "text": "How we ship\nA long description",
                "thumbnailUrl": "https://cdn.example/yt1.jpg",
                "permalink": "https://youtube.example/watch?v=yt1",
                "accountName": "YT Channel",
            },
        ]
    }


def test_discovered_posts_limit_default_and_ties(api: Any, workspace: Any) -> None:
    account = SocialAccountFactory(workspace=workspace, platform="THREADS")
    same = at("2026-08-20T10:00:00Z")
    made = [TrackedPostFactory(account=account, published_at=same) for _ in range(3)]
    rows = api.get(f"{DISCOVERED}?{WINDOW}").json()["posts"]
    assert [r["id"] for r in rows] == sorted((p.id for p in made), reverse=True)  # same instant: id descending
    assert len(api.get(f"{DISCOVERED}?{WINDOW}&limit=2").json()["posts"]) == 2


def test_discovered_posts_default_limit_is_200(api: Any, workspace: Any) -> None:
    account = SocialAccountFactory(workspace=workspace, platform="THREADS")
    TrackedPost.objects.bulk_create(
        TrackedPost(
            workspace=workspace,
            account=account,
            platform="THREADS",
            platform_post_id=f"r{n}",
            published_at=at("2026-08-01T00:00:00Z") + dt.timedelta(minutes=n),
            refresh_until=at("2027-01-01T00:00:00Z"),
        )
        for n in range(201)
    )
    rows = api.get(f"{DISCOVERED}?{WINDOW}").json()["posts"]
    assert len(rows) == 200 and rows[0]["publishedAt"] == "2026-08-01T03:20:00.000Z"  # the 201st minute
    assert len(api.get(f"{DISCOVERED}?{WINDOW}&limit=1000").json()["posts"]) == 201


def test_discovered_posts_platforms(api: Any, data: dict[str, TrackedPost]) -> None:
    names = {row.id: name for name, row in data.items()}
    rows = api.get(f"{DISCOVERED}?{WINDOW}&platforms=YOUTUBE&platforms=BLUESKY").json()["posts"]
    assert [names[r["id"]] for r in rows] == ["bs1", "yt1"]
    rows = api.get(f"{DISCOVERED}?{WINDOW}&platforms[]=FACEBOOK").json()["posts"]
    assert [names[r["id"]] for r in rows] == ["fb2"]


# --- errors, access, isolation ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "query", "message"),
    [
        (TOP, "to=2026-08-31", "from: " + WINDOW_REQUIRED),
        (TOP, "from=2026-08-01", "to: " + WINDOW_REQUIRED),
        (TOP, "from=yesterday&to=2026-08-01", "from: must be an ISO 8601 date-time or a date (YYYY-MM-DD)"),
        (TOP, "from=2026-08-31&to=2026-08-01", "to: must not be earlier than from"),
        (TOP, f"{WINDOW}&from=2026-07-01", "from must be given once"),
        (TOP, f"{WINDOW}&limit=0", "limit: Ensure this value is greater than or equal to 1."),
        (TOP, f"{WINDOW}&limit=51", "limit: Ensure this value is less than or equal to 50."),
        (TOP, f"{WINDOW}&limit=ten", "limit: must be an integer"),
        (TOP, f"{WINDOW}&sortBy=RANDOM", 'sortBy: "RANDOM" is not a valid choice.'),
        (TOP, f"{WINDOW}&platforms=MYSPACE", 'platforms[0]: "MYSPACE" is not a valid choice.'),
        (TOP, f"{WINDOW}&page=2", "property page should not exist"),
        (DISCOVERED, "to=2026-08-31", "from: " + WINDOW_REQUIRED),
        (DISCOVERED, "from=2026-02-30&to=2026-03-01", "from: must be an ISO 8601 date-time or a date (YYYY-MM-DD)"),
        (DISCOVERED, "from=2026-08-31T00:00:01Z&to=2026-08-31T00:00:00Z", "to: must not be earlier than from"),
        (DISCOVERED, f"{WINDOW}&limit=0", "limit: Ensure this value is greater than or equal to 1."),
        (DISCOVERED, f"{WINDOW}&limit=1001", "limit: Ensure this value is less than or equal to 1000."),
        (DISCOVERED, f"{WINDOW}&platforms=MYSPACE", 'platforms[0]: "MYSPACE" is not a valid choice.'),
        (DISCOVERED, f"{WINDOW}&sortBy=VIEWS", "property sortBy should not exist"),
    ],
)
def test_bad_queries_are_400(api: Any, path: str, query: str, message: str) -> None:
    response = api.get(f"{path}?{query}")
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["statusCode"] == 400 and body["error"] == "Bad Request"
    assert message in body["message"], body["message"]


@pytest.mark.parametrize("path", [TOP, DISCOVERED])
@pytest.mark.parametrize(
    "window",
    [
        "from=9999-12-30&to=9999-12-31T23:59:59.999999Z",
        "from=0001-01-01&to=0001-01-01",
        "from=0001-01-01&to=9999-12-31T23:59:59.999999Z",
    ],
)
def test_windows_at_the_ends_of_the_calendar(api: Any, data: dict[str, TrackedPost], path: str, window: str) -> None:
    response = api.get(f"{path}?{window}")
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("path", [TOP, DISCOVERED])
def test_anonymous_is_401(anon: Any, path: str) -> None:
    response = anon.get(f"{path}?{WINDOW}")
    assert response.status_code == 401
    assert response.json()["message"] == "API key is invalid or missing"


@pytest.mark.parametrize("path", [TOP, DISCOVERED])
def test_a_role_without_analytics_read_is_403(client_for: Any, monkeypatch: Any, path: str) -> None:
    from workspaces.roles import ROLE_PERMISSIONS

    monkeypatch.setitem(ROLE_PERMISSIONS, "viewer", ROLE_PERMISSIONS["viewer"] - {"analytics.read"})
    response = client_for("viewer").get(f"{path}?{WINDOW}")
    assert response.status_code == 403
    body = response.json()
    assert (body["code"], body["requiredPermission"], body["role"]) == ("permission_denied", "analytics.read", "viewer")


@pytest.mark.parametrize("role", ["admin", "editor", "contributor", "viewer"])
def test_every_role_reads_both(client_for: Any, data: dict[str, TrackedPost], role: str) -> None:
    client = client_for(role)
    assert len(client.get(f"{TOP}?{WINDOW}").json()["posts"]) == 4
    assert len(client.get(f"{DISCOVERED}?{WINDOW}").json()["posts"]) == 3


@pytest.mark.parametrize("path", [TOP, DISCOVERED])
def test_another_workspace_header_is_refused(api: Any, other_workspace: Any, path: str) -> None:
    response = api.get(f"{path}?{WINDOW}", HTTP_X_WORKSPACE_ID=other_workspace.id)
    assert response.status_code == 403 and response.json()["code"] == "workspace_access_denied"


def test_the_other_workspace_sees_only_its_own(client_for: Any, other_workspace: Any, data: Any) -> None:
    stranger = client_for("viewer", ws=other_workspace)
    assert [r["id"] for r in stranger.get(f"{TOP}?{WINDOW}").json()["posts"]] == [data["x1"].id]
    assert [r["id"] for r in stranger.get(f"{DISCOVERED}?{WINDOW}").json()["posts"]] == [data["x1"].id]


# --- queries and indexes ---------------------------------------------------------------------


@pytest.mark.parametrize("path", [TOP, DISCOVERED])
def test_a_fixed_number_of_queries_whatever_the_rows(api: Any, workspace: Any, path: str) -> None:
    accounts = [SocialAccountFactory(workspace=workspace, platform=p) for p in ("FACEBOOK", "THREADS", "LINKEDIN")]

    def count() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert api.get(f"{path}?{WINDOW}&limit=50").status_code == 200
        return len(captured.captured_queries)

    TrackedPostFactory(account=accounts[0], views=1)
    api.get(f"{path}?{WINDOW}")  # the key is read (and kept) once
    one = count()
    for index in range(12):
        TrackedPostFactory(account=accounts[index % 3], views=index)
    assert count() == one


def _plan(sql: str) -> str:
    # On a table this small the planner would as well scan and sort; with both off it takes the
    # plan the reports rely on at scale, if one exists. SET LOCAL lasts as long as its transaction.
    with transaction.atomic(), connection.cursor() as db:
        db.execute("SET LOCAL enable_seqscan = off")
        db.execute("SET LOCAL enable_sort = off")
        db.execute("EXPLAIN " + sql)
        return "\n".join(row[0] for row in db.fetchall())


WINDOW_OBJECT = Window(start=at("2026-08-01T00:00:00Z"), end=at("2026-08-31T00:00:00Z"))


@pytest.mark.parametrize(
    ("sort", "index"),
    [
        ("VIEWS", "tracked_ws_views_sort"),
        ("LIKES", "tracked_ws_likes_sort"),
        ("ENGAGEMENT_RATE", "tracked_ws_engagement_sort"),
    ],
)
def test_top_posts_read_in_order_on_the_sort_index(data: Any, workspace: Any, sort: str, index: str) -> None:
    with CaptureQueriesContext(connection) as ctx:
        selectors.top_posts(workspace_id=workspace.id, requested=None, window=WINDOW_OBJECT, sort_by=sort, limit=10)
    (query,) = ctx.captured_queries
    plan = _plan(query["sql"])
    assert index in plan and "Sort" not in plan, plan


def test_discovered_posts_read_in_order_on_their_partial_index(data: Any, workspace: Any) -> None:
    with CaptureQueriesContext(connection) as ctx:
        selectors.discovered_posts(workspace_id=workspace.id, requested=None, window=WINDOW_OBJECT, limit=200)
    (query,) = ctx.captured_queries
    plan = _plan(query["sql"])
    assert "tracked_ws_discovered" in plan and "Sort" not in plan, plan
