"""``thread`` on create and on /validate (the same code): stored on the post, shown only on posts
that have one, each item checked with every target platform's counting and media rules, refused
for platforms without threads."""

from __future__ import annotations

from typing import Any

import pytest

from posts.models import Post
from posts.rendering import post_record
from tests.factories.posts import PostFactory, PostTargetFactory, account, uploaded
from tests.posts.conftest import future, iso, targets

URL = "/api/v1/social-posts"


def body(**extra: Any) -> dict[str, Any]:
    return {"contentType": "TEXT", "timezone": "UTC", "text": "The first post", **extra}


@pytest.fixture
def accounts(workspace: Any) -> dict[str, Any]:
    return {p: account(workspace, p) for p in ("TWITTER", "BLUESKY", "THREADS", "MASTODON", "INSTAGRAM")}


ALL_FOUR = ("TWITTER", "BLUESKY", "THREADS", "MASTODON")


def test_create_with_a_thread_stores_it_and_shows_it_on_the_record(api: Any, workspace: Any, accounts: Any) -> None:
    image = uploaded(workspace, "image")
    thread = [{"text": "Second", "mediaUrls": [image]}, {"text": "Third"}]
    response = api.post(
        URL, body(thread=thread, scheduledAt=iso(future()), **targets(accounts, *ALL_FOUR)), format="json"
    )
    assert response.status_code == 201, response.json()
    post = Post.objects.get()
    assert post.thread == [{"text": "Second", "mediaUrls": [image]}, {"text": "Third", "mediaUrls": []}]
    record = api.get(f"{URL}/{post.id}").json()
    assert record == post_record(post)
    assert record["thread"] == post.thread
    assert [entry["threadItems"] for entry in record["platforms"]] == [[], [], [], []]


def test_a_post_without_a_thread_has_no_thread_keys(api: Any, accounts: Any) -> None:
    response = api.post(URL, body(scheduledAt=iso(future()), **targets(accounts, "MASTODON")), format="json")
    record = api.get(f"{URL}/{response.json()['postId']}").json()
    assert "thread" not in record and "threadItems" not in record["platforms"][0]
    assert Post.objects.get().thread == []


@pytest.mark.parametrize(
    ("thread", "message"),
    [
        ([], "thread: Ensure this field has at least 1 elements."),
        ([{"text": f"item {n}"} for n in range(25)], "thread: Ensure this field has no more than 24 elements."),
        ("not a list", 'thread: Expected a list of items but got type "str".'),
        ([{"text": 5, "mediaUrls": "x"}], None),
        ([{"mediaUrls": []}], None),
        ([{"text": "   "}], None),
    ],
)
def test_a_malformed_thread_is_a_400_naming_the_field(api: Any, accounts: Any, thread: Any, message: Any) -> None:
    response = api.post(URL, body(thread=thread, **targets(accounts, "MASTODON")), format="json")
    assert response.status_code == 400, response.json()
    messages = response.json()["message"]
    assert all(m.startswith("thread") for m in messages), messages
    if message:
        assert message in messages, messages
    assert Post.objects.count() == 0


def test_each_item_is_checked_with_each_platforms_counting(api: Any, accounts: Any) -> None:
    url = "https://example.com/" + "a" * 300  # X counts any URL as 23
    emoji = "\U0001f44d\U0001f3fd"  # one grapheme (Bluesky), two code points (Mastodon), weight 2 (X)
    thread = [{"text": url}, {"text": emoji * 300}, {"text": "x" * 281}]
    response = api.post(f"{URL}/validate", body(thread=thread, **targets(accounts, *ALL_FOUR)), format="json")
    assert response.status_code == 200
    issues = response.json()["issues"]
    assert all(i["field"] == "thread" for i in issues)
    assert sorted((i["platform"], i["message"]) for i in issues) == sorted(
        [
            ("BLUESKY", "thread[0]: BLUESKY text is 320 characters; the limit is 300"),
            ("MASTODON", "thread[1]: MASTODON text is 600 characters; the limit is 500"),
            ("THREADS", "thread[1]: THREADS text is 600 characters; the limit is 500"),
            ("TWITTER", "thread[1]: TWITTER text is 600 characters; the limit is 280"),
            ("TWITTER", "thread[2]: TWITTER text is 281 characters; the limit is 280"),
        ]
    )
    # create runs the same code: the same 400
    created = api.post(URL, body(thread=thread, **targets(accounts, *ALL_FOUR)), format="json")
    assert created.status_code == 400
    assert sorted(created.json()["message"]) == sorted(i["message"] for i in issues)


def test_each_items_media_follows_the_platforms_media_rules(api: Any, workspace: Any, accounts: Any) -> None:
    images = [uploaded(workspace, "image") for _ in range(5)]
    video = uploaded(workspace, "video")
    document = uploaded(workspace, "document")
    thread = [{"text": "five images", "mediaUrls": images}, {"text": "mixed", "mediaUrls": [images[0], video]}]
    thread.append({"text": "a pdf", "mediaUrls": [document]})
    response = api.post(f"{URL}/validate", body(thread=thread, **targets(accounts, *ALL_FOUR)), format="json")
    found = {(i["platform"], i["message"]) for i in response.json()["issues"]}
    for platform in ("TWITTER", "BLUESKY", "MASTODON"):
        assert (platform, f"thread[0]: {platform} accepts at most 4 images") in found
        assert (platform, f"thread[1]: {platform} does not mix images and videos in one post") in found
    assert not any(p == "THREADS" and m.startswith(("thread[0]", "thread[1]")) for p, m in found)
    for platform in ALL_FOUR:
        assert (platform, f"thread[2]: {platform} does not accept DOCUMENT posts") in found
    foreign = "https://elsewhere.example/nothing.jpg"
    missing = api.post(
        URL, body(thread=[{"text": "x", "mediaUrls": [foreign]}], **targets(accounts, "MASTODON")), format="json"
    )
    assert missing.status_code == 400 and missing.json()["code"] == "media_not_found"
    assert foreign in missing.json()["message"][0] and missing.json()["message"][0].startswith("thread[0].mediaUrls")


def test_a_thread_is_refused_for_a_platform_without_threads(api: Any, workspace: Any, accounts: Any) -> None:
    image = uploaded(workspace, "image")
    payload = body(
        contentType="IMAGE", mediaUrls=[image], thread=[{"text": "more"}], **targets(accounts, "MASTODON", "INSTAGRAM")
    )
    response = api.post(URL, payload, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == [
        "thread: INSTAGRAM does not publish threads (only TWITTER, BLUESKY, MASTODON, THREADS)"
    ]
    check = api.post(f"{URL}/validate", payload, format="json").json()
    assert check["issues"] == [
        {
            "platform": "INSTAGRAM",
            "field": "thread",
            "message": "thread: INSTAGRAM does not publish threads (only TWITTER, BLUESKY, MASTODON, THREADS)",
        }
    ]
    # a draft postpones the platform rules to publish, where the same 400 comes back
    draft = api.post(URL, {**payload, "saveAsDraft": True}, format="json")
    assert draft.status_code == 201
    published = api.post(f"{URL}/{draft.json()['postId']}/publish", {}, format="json")
    assert published.status_code == 400 and "INSTAGRAM does not publish threads" in published.json()["message"][0]


def test_a_thread_is_not_for_a_recurring_series(api: Any, accounts: Any) -> None:
    payload = body(
        thread=[{"text": "more"}],
        scheduledAt=iso(future()),
        recurrence={"frequency": "DAILY"},
        **targets(accounts, "MASTODON"),
    )
    response = api.post(URL, payload, format="json")
    assert response.status_code == 400
    assert "thread: a recurring series cannot publish a thread" in response.json()["message"]


def test_a_change_keeps_the_thread_and_checks_it_against_new_platforms(api: Any, accounts: Any) -> None:
    created = api.post(
        URL, body(thread=[{"text": "more"}], scheduledAt=iso(future()), **targets(accounts, "MASTODON")), format="json"
    )
    post_id = created.json()["postId"]
    changed = api.patch(f"{URL}/{post_id}", {"text": "Edited"}, format="json")
    assert changed.status_code == 200 and changed.json()["thread"] == [{"text": "more", "mediaUrls": []}]
    refused = api.patch(f"{URL}/{post_id}", targets(accounts, "INSTAGRAM"), format="json")
    assert refused.status_code == 400
    moved = api.patch(f"{URL}/{post_id}", targets(accounts, "BLUESKY"), format="json")
    assert moved.status_code == 200 and moved.json()["thread"] == [{"text": "more", "mediaUrls": []}]
    ignored = api.patch(f"{URL}/{post_id}", {"thread": [{"text": "new"}]}, format="json")
    assert ignored.status_code == 200 and ignored.json()["thread"] == [{"text": "more", "mediaUrls": []}]


def test_results_list_every_thread_item_id_only_for_a_thread(api: Any, workspace: Any) -> None:
    post = PostFactory(workspace=workspace, status="COMPLETED", thread=[{"text": "2/", "mediaUrls": []}])
    items = [
        {"platformPostId": "m1", "postUrl": "https://m.test/@me/m1", "publishedAt": "", "cid": ""},
        {"platformPostId": "m2", "postUrl": "https://m.test/@me/m2", "publishedAt": "", "cid": ""},
    ]
    target = PostTargetFactory(
        post=post, platform="MASTODON", status="PUBLISHED", platform_post_id="m1", thread_items=items
    )
    [result] = api.get(f"{URL}/{post.id}/results").json()["results"]
    assert result["platformId"] == target.id and result["platformPostId"] == "m1"
    assert result["threadItems"] == [
        {"platformPostId": "m1", "postUrl": "https://m.test/@me/m1"},
        {"platformPostId": "m2", "postUrl": "https://m.test/@me/m2"},
    ]
    plain = PostFactory(workspace=workspace, status="COMPLETED")
    PostTargetFactory(post=plain, platform="MASTODON", status="PUBLISHED", platform_post_id="m3")
    [result] = api.get(f"{URL}/{plain.id}/results").json()["results"]
    assert "threadItems" not in result
