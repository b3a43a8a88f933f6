from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from posts.models import Post, PostRecord
from posts.rendering import post_record
from tests.factories.posts import PostFactory, PostTargetFactory, uploaded

URL = "/api/v1/social-posts"
# the page (count, posts, their stamps and stored records) in one query; the key was read by the
# warm-up request and is kept by the process (workspaces.key_cache)
QUERIES = 1
QUERIES_RENDERING = 4


def make(workspace: Any, created: dt.datetime, **kwargs: Any) -> Post:
    post = PostFactory(workspace=workspace, **kwargs)
    Post.objects.filter(pk=post.pk).update(created_at=created)
    post.refresh_from_db()
    return post


@pytest.fixture
def base() -> dt.datetime:
    return timezone.now().replace(microsecond=0) - dt.timedelta(days=10)


def ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.json()
    return [p["id"] for p in response.json()["posts"]]


def test_body_whole_and_pagination(api: Any, workspace: Any, other_workspace: Any, base: dt.datetime) -> None:
    posts = [make(workspace, base + dt.timedelta(hours=i)) for i in range(3)]
    PostTargetFactory(post=posts[2], platform="BLUESKY")
    make(other_workspace, base)
    response = api.get(URL, {"limit": 2})
    assert response.json() == {"posts": [post_record(posts[2]), post_record(posts[1])], "total": 3, "hasMore": True}
    response = api.get(URL, {"limit": 2, "offset": 2})
    assert response.json() == {"posts": [post_record(posts[0])], "total": 3, "hasMore": False}
    assert api.get(URL, {"offset": 5}).json() == {"posts": [], "total": 3, "hasMore": False}


def test_oldest_is_exact_reverse_with_ties(api: Any, workspace: Any, base: dt.datetime) -> None:
    for i in range(6):
        make(workspace, base + dt.timedelta(hours=i // 3))  # ties of three
    newest = ids(api.get(URL))
    oldest = ids(api.get(URL, {"sortOrder": "OLDEST"}))
    assert oldest == list(reversed(newest)) and len(newest) == 6
    assert ids(api.get(URL, {"sortOrder": "NEWEST"})) == newest


def test_filters(api: Any, workspace: Any, base: dt.datetime) -> None:
    draft = make(workspace, base, status="DRAFT")
    scheduled = make(workspace, base, status="SCHEDULED", scheduled_at=base + dt.timedelta(days=20))
    failed = make(workspace, base + dt.timedelta(days=2), status="FAILED")
    PostTargetFactory(post=failed, platform="TWITTER")
    PostTargetFactory(post=draft, platform="BLUESKY")
    assert set(ids(api.get(URL, {"statuses": ["DRAFT", "FAILED"]}))) == {draft.id, failed.id}
    assert ids(api.get(URL + "?status=SCHEDULED")) == [scheduled.id]
    assert set(ids(api.get(URL + "?statuses[0]=DRAFT&statuses[1]=SCHEDULED"))) == {draft.id, scheduled.id}
    assert set(ids(api.get(URL + "?platforms[]=TWITTER&platforms[]=BLUESKY"))) == {draft.id, failed.id}
    # scheduledAt bounds scheduled posts, createdAt the never-scheduled ones; both inclusive
    day = (base + dt.timedelta(days=20)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert ids(api.get(URL, {"startDate": day, "endDate": day})) == [scheduled.id]
    assert set(ids(api.get(URL, {"endDate": base.strftime("%Y-%m-%dT%H:%M:%SZ")}))) == {draft.id}
    bare = (base + dt.timedelta(days=1)).date().isoformat()
    assert set(ids(api.get(URL, {"startDate": bare}))) == {scheduled.id, failed.id}


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("?foo=1", "property foo should not exist"),
        ("?limit=0", "limit"),
        ("?limit=101", "limit"),
        ("?offset=-1", "offset"),
        ("?sortOrder=SIDEWAYS", "sortOrder"),
        ("?statuses=NOPE", "statuses"),
        ("?platforms=MYSPACE", "platforms"),
        ("?startDate=yesterday", "startDate"),
        ("?startDate=2026-02-01&endDate=2026-01-01", "endDate"),
        ("?limit=1&limit=2", "limit"),
    ],
)
def test_bad_query(api: Any, query: str, fragment: str) -> None:
    response = api.get(URL + query)
    assert response.status_code == 400
    assert any(fragment in m for m in response.json()["message"]), response.json()


def test_empty_json_body_on_get(api: Any, workspace: Any, base: dt.datetime) -> None:
    make(workspace, base)
    response = api.generic("GET", URL, "", content_type="application/json")
    assert response.status_code == 200 and response.json()["total"] == 1


def test_permissions(client_for: Any, anon: Any) -> None:
    assert client_for("viewer").get(URL).status_code == 200
    assert anon.get(URL).status_code == 401


@pytest.mark.parametrize("size", [1, 100])
def test_fixed_query_count(
    api: Any, workspace: Any, base: dt.datetime, size: int, django_assert_max_num_queries: Any
) -> None:
    image = uploaded(workspace, "image")
    for i in range(size):
        post = make(workspace, base + dt.timedelta(minutes=i), media_urls=[image], content_type="IMAGE")
        PostTargetFactory(post=post, platform="MASTODON")
        PostTargetFactory(post=post, platform="BLUESKY")
    api.get(URL)  # the key is read once and kept, for both sizes
    PostRecord.objects.all().delete()
    query = {"limit": size, "platforms": "MASTODON", "startDate": "2000-01-01"}
    # No record stored yet: the page, the rows of its posts, their previews, the store.
    with django_assert_max_num_queries(QUERIES_RENDERING) as captured:
        response = api.get(URL, query)
    assert len(response.json()["posts"]) == size
    assert len(captured.captured_queries) == QUERIES_RENDERING
    # Every record stored and current: the page alone.
    with django_assert_max_num_queries(QUERIES) as captured:
        again = api.get(URL, query)
    assert again.content == response.content
    assert len(captured.captured_queries) == QUERIES


def test_list_body_is_byte_for_byte_the_model_rendering(api: Any, workspace: Any, base: dt.datetime) -> None:
    """The list renders from ``.values()`` rows: the same bytes as rendering the model instances
    (media and previews, per-platform config fields, blanks as null, timestamps, entry order)."""
    from rest_framework.renderers import JSONRenderer

    image = uploaded(workspace, "image")
    rich = make(
        workspace,
        base,
        media_urls=[image, "https://elsewhere.invalid/x.png"],
        media_alt_texts=["alt é 🚀"],
        content_type="IMAGE",
        scheduled_at=base + dt.timedelta(days=1),
        thumbnail_url="https://elsewhere.invalid/t.png",
    )
    PostTargetFactory(post=rich, platform="YOUTUBE", config={"videoTitle": "T", "tags": ["a", "b"]})
    PostTargetFactory(
        post=rich,
        platform="TIKTOK",
        status="PUBLISHED",
        platform_post_id="r1",
        post_url="https://t.invalid/1",
        published_at=base,
        tiktok_draft_fallback=True,
    )
    PostTargetFactory(post=rich, platform="MASTODON", status="FAILED", error_message="no", error_code="x")
    PostTargetFactory(post=rich, platform="PINTEREST", config={})
    plain = make(workspace, base + dt.timedelta(hours=1), text="")
    make(workspace, base + dt.timedelta(hours=2), status="DRAFT")
    PostTargetFactory(post=plain, platform="BLUESKY")

    from posts.models import PostTarget
    from posts.rendering import TARGET_ORDER

    assert list(TARGET_ORDER) == list(PostTarget._meta.ordering)  # the entries' order of post.targets.all()
    response = api.get(URL)
    models = list(Post.objects.filter(workspace=workspace).order_by("-created_at", "-id"))
    expected = JSONRenderer().render({"posts": [post_record(p) for p in models], "total": 3, "hasMore": False})
    assert response.content == expected
    # The get renders from the same rows: the same bytes as the model instance's record.
    for post in models:
        assert api.get(f"{URL}/{post.id}").content == JSONRenderer().render(post_record(post))
    # Instants with sub-millisecond parts are truncated like isoformat's milliseconds.
    Post.objects.filter(pk=plain.pk).update(scheduled_at=base.replace(microsecond=999), updated_at=base)
    plain.refresh_from_db()
    record = api.get(f"{URL}/{plain.id}").json()
    assert record["scheduledAt"] == post_record(plain)["scheduledAt"] == base.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    assert record["updatedAt"] == base.strftime("%Y-%m-%dT%H:%M:%S.000Z")
