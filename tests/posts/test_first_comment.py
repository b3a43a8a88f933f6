"""``firstComment`` on create, PATCH and /validate (the same code): stored on the post, shown only on
posts that have one, its text checked with each target platform's comment limit as that platform
counts text, refused for platforms without a comment API, malformed values a 400 naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from posts.models import Post
from posts.rendering import post_record
from tests.factories.posts import PostFactory, PostTargetFactory, account, uploaded
from tests.posts.conftest import future, iso, targets

URL = "/api/v1/social-posts"
PLATFORMS = ("TWITTER", "BLUESKY", "MASTODON", "LINKEDIN", "TIKTOK", "PINTEREST", "FACEBOOK")


def body(**extra: Any) -> dict[str, Any]:
    return {"contentType": "TEXT", "timezone": "UTC", "text": "The post", **extra}


@pytest.fixture
def accounts(workspace: Any) -> dict[str, Any]:
    return {p: account(workspace, p) for p in PLATFORMS}


def test_create_stores_the_first_comment_and_shows_it_with_each_entrys_result(api: Any, accounts: Any) -> None:
    comment = {"text": "Link in the first comment: https://example.com", "delaySeconds": 120}
    payload = body(firstComment=comment, scheduledAt=iso(future()), **targets(accounts, "MASTODON", "BLUESKY"))
    response = api.post(URL, payload, format="json")
    assert response.status_code == 201, response.json()
    post = Post.objects.get()
    assert post.first_comment == comment
    record = api.get(f"{URL}/{post.id}").json()
    assert record == post_record(post)
    assert record["firstComment"] == comment
    assert [e["firstComment"] for e in record["platforms"]] == [{"status": "PENDING", "platformCommentId": None}] * 2


def test_delay_defaults_to_zero(api: Any, accounts: Any) -> None:
    payload = body(firstComment={"text": "hi"}, scheduledAt=iso(future()), **targets(accounts, "MASTODON"))
    assert api.post(URL, payload, format="json").status_code == 201
    assert Post.objects.get().first_comment == {"text": "hi", "delaySeconds": 0}


def test_a_post_without_a_first_comment_has_no_first_comment_keys(api: Any, accounts: Any) -> None:
    response = api.post(URL, body(scheduledAt=iso(future()), **targets(accounts, "MASTODON")), format="json")
    record = api.get(f"{URL}/{response.json()['postId']}").json()
    assert "firstComment" not in record and "firstComment" not in record["platforms"][0]
    assert Post.objects.get().first_comment == {}


@pytest.mark.parametrize(
    ("comment", "message"),
    [
        ("first!", "firstComment: Invalid data. Expected a dictionary, but got str."),
        ({"delaySeconds": 5}, "firstComment.text: This field is required."),
        ({"text": "   "}, "firstComment.text: a first comment needs text"),
        ({"text": 5}, None),
        (
            {"text": "x", "delaySeconds": -1},
            "firstComment.delaySeconds: Ensure this value is greater than or equal to 0.",
        ),
        (
            {"text": "x", "delaySeconds": 3601},
            "firstComment.delaySeconds: Ensure this value is less than or equal to 3600.",
        ),
        ({"text": "x", "delaySeconds": "soon"}, None),
        ({"text": "x", "delaySeconds": 1.5}, None),
    ],
)
def test_a_malformed_first_comment_is_a_400_naming_the_field(
    api: Any, accounts: Any, comment: Any, message: str | None
) -> None:
    payload = body(firstComment=comment, **targets(accounts, "MASTODON"))
    response = api.post(URL, payload, format="json")
    assert response.status_code == 400, response.json()
    messages = response.json()["message"]
    assert all(m.startswith("firstComment") for m in messages), messages
    if message:
        assert message in messages, messages
    # /validate runs the same code and lists the same issues
    check = api.post(f"{URL}/validate", payload, format="json")
    assert check.status_code == 200 and check.json()["valid"] is False
    assert sorted(i["message"] for i in check.json()["issues"]) == sorted(messages)
    assert all(i["field"].startswith("firstComment") for i in check.json()["issues"])
    assert Post.objects.count() == 0


def test_the_text_is_checked_with_each_platforms_comment_limit_and_counting(api: Any, accounts: Any) -> None:
    emoji = "\U0001f44d\U0001f3fd"  # one grapheme (Bluesky), two code points (Mastodon), weight 2 (X)
    payload = body(firstComment={"text": emoji * 200}, **targets(accounts, "TWITTER", "BLUESKY", "MASTODON"))
    response = api.post(f"{URL}/validate", payload, format="json")
    assert response.status_code == 200
    issues = sorted((i["platform"], i["field"], i["message"]) for i in response.json()["issues"])
    assert issues == [
        ("TWITTER", "firstComment", "firstComment: TWITTER comment is 400 characters; the limit is 280"),
    ]
    longer = body(firstComment={"text": emoji * 301}, **targets(accounts, "TWITTER", "BLUESKY", "MASTODON"))
    found = {i["platform"] for i in api.post(f"{URL}/validate", longer, format="json").json()["issues"]}
    assert found == {"TWITTER", "BLUESKY", "MASTODON"}
    # create runs the same code: the same 400
    created = api.post(URL, longer, format="json")
    assert created.status_code == 400 and len(created.json()["message"]) == 3
    fits = body(firstComment={"text": "a" * 1250}, **targets(accounts, "LINKEDIN"))
    assert api.post(f"{URL}/validate", fits, format="json").json()["issues"] == []
    over = body(firstComment={"text": "a" * 1251}, **targets(accounts, "LINKEDIN"))
    assert [i["message"] for i in api.post(f"{URL}/validate", over, format="json").json()["issues"]] == [
        "firstComment: LINKEDIN comment is 1251 characters; the limit is 1250"
    ]


@pytest.mark.parametrize("platform", ["TIKTOK", "PINTEREST"])
def test_a_platform_without_a_comment_api_is_refused_by_name(
    api: Any, workspace: Any, accounts: Any, platform: str
) -> None:
    video = uploaded(workspace, "video")
    payload = body(
        contentType="VIDEO",
        mediaUrls=[video],
        firstComment={"text": "first"},
        **targets(accounts, "MASTODON", platform),
        **(
            {"pinterestConfigs": [{"connectionId": accounts["PINTEREST"].id, "boardId": "b1"}]}
            if platform == "PINTEREST"
            else {}
        ),
    )
    expected = (
        f"firstComment: {platform} has no comment API (only TWITTER, BLUESKY, MASTODON, THREADS, LINKEDIN, "
        "INSTAGRAM, FACEBOOK, YOUTUBE)"
    )
    response = api.post(URL, payload, format="json")
    assert response.status_code == 400
    assert expected in response.json()["message"]
    issues = api.post(f"{URL}/validate", payload, format="json").json()["issues"]
    assert {"platform": platform, "field": "firstComment", "message": expected} in issues
    # a draft postpones the platform rules to publish, where the same 400 comes back
    draft = api.post(URL, {**payload, "saveAsDraft": True}, format="json")
    assert draft.status_code == 201
    published = api.post(f"{URL}/{draft.json()['postId']}/publish", {}, format="json")
    assert published.status_code == 400 and expected in published.json()["message"]


def test_patch_sets_changes_keeps_and_removes_the_first_comment(api: Any, accounts: Any) -> None:
    created = api.post(URL, body(scheduledAt=iso(future()), **targets(accounts, "MASTODON")), format="json")
    post_id = created.json()["postId"]
    added = api.patch(f"{URL}/{post_id}", {"firstComment": {"text": "added", "delaySeconds": 5}}, format="json")
    assert added.status_code == 200, added.json()
    assert added.json()["firstComment"] == {"text": "added", "delaySeconds": 5}
    kept = api.patch(f"{URL}/{post_id}", {"text": "Edited"}, format="json")
    assert kept.json()["firstComment"] == {"text": "added", "delaySeconds": 5}
    moved = api.patch(f"{URL}/{post_id}", targets(accounts, "BLUESKY"), format="json")
    assert moved.status_code == 200 and moved.json()["firstComment"] == {"text": "added", "delaySeconds": 5}
    refused = api.patch(f"{URL}/{post_id}", targets(accounts, "TIKTOK"), format="json")
    assert refused.status_code == 400
    removed = api.patch(f"{URL}/{post_id}", {"firstComment": None}, format="json")
    assert removed.status_code == 200 and "firstComment" not in removed.json()
    assert Post.objects.get(id=post_id).first_comment == {}


def test_results_answer_each_entrys_comment_only_for_a_post_with_one(api: Any, workspace: Any) -> None:
    post = PostFactory(workspace=workspace, status="COMPLETED", first_comment={"text": "hi", "delaySeconds": 0})
    published = PostTargetFactory(
        post=post,
        platform="MASTODON",
        status="PUBLISHED",
        platform_post_id="m1",
        comment_status="PUBLISHED",
        first_comment={"platformCommentId": "m2"},
    )
    failed = PostTargetFactory(
        post=post,
        platform="BLUESKY",
        status="PUBLISHED",
        platform_post_id="b1",
        comment_status="FAILED",
        first_comment={"errorCode": "unknown_outcome", "errorMessage": "timed out"},
    )
    results = {r["platformId"]: r for r in api.get(f"{URL}/{post.id}/results").json()["results"]}
    assert results[published.id]["firstComment"] == {"status": "PUBLISHED", "platformCommentId": "m2"}
    assert results[failed.id]["firstComment"] == {
        "status": "FAILED",
        "platformCommentId": None,
        "errorCode": "unknown_outcome",
    }
    plain = PostFactory(workspace=workspace, status="COMPLETED")
    PostTargetFactory(post=plain, platform="MASTODON", status="PUBLISHED", platform_post_id="m3")
    [result] = api.get(f"{URL}/{plain.id}/results").json()["results"]
    assert "firstComment" not in result


def test_a_story_takes_no_first_comment(api: Any, workspace: Any, accounts: Any) -> None:
    image = uploaded(workspace, "image")
    page = accounts["FACEBOOK"]
    payload = body(
        contentType="IMAGE",
        mediaUrls=[image],
        firstComment={"text": "first"},
        facebookConfigs=[{"pageId": page.page_id, "postType": "STORY"}],
        **targets(accounts, "FACEBOOK"),
    )
    issues = api.post(f"{URL}/validate", payload, format="json").json()["issues"]
    assert issues == [
        {
            "platform": "FACEBOOK",
            "field": "firstComment",
            "message": "firstComment: FACEBOOK stories cannot be commented on (postType STORY)",
        }
    ]
    feed = {**payload, "facebookConfigs": [{"pageId": page.page_id, "postType": "FEED"}]}
    assert api.post(f"{URL}/validate", feed, format="json").json()["issues"] == []
