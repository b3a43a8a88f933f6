"""``platformFirstComments: [{platform, text}]`` on create, PATCH and /validate (one code path): each
entry's comment is its platform's text when given, else the post's ``firstComment.text``; each text
is checked against its own platform's comment limit and comment API; an item for a platform the post
does not target is ignored as ``platformTexts`` items are; the record shows the list only when set."""

from __future__ import annotations

from typing import Any

import pytest

from posts.models import Post, PostTarget
from posts.rendering import post_record
from tests.factories.posts import account, uploaded
from tests.posts.conftest import future, iso, targets

URL = "/api/v1/social-posts"
PLATFORMS = ("TWITTER", "BLUESKY", "MASTODON", "LINKEDIN", "TIKTOK", "FACEBOOK")
NO_API = "has no comment API (only TWITTER, BLUESKY, MASTODON, THREADS, LINKEDIN, INSTAGRAM, FACEBOOK, YOUTUBE)"


def body(**extra: Any) -> dict[str, Any]:
    return {"contentType": "TEXT", "timezone": "UTC", "text": "The post", **extra}


@pytest.fixture
def accounts(workspace: Any) -> dict[str, Any]:
    return {p: account(workspace, p) for p in PLATFORMS}


def comment_texts(post_id: str) -> dict[str, str]:
    return dict(PostTarget.objects.filter(post_id=post_id).values_list("platform", "first_comment_text"))


def validate(api: Any, payload: dict[str, Any]) -> list[dict[str, Any]]:
    response = api.post(f"{URL}/validate", payload, format="json")
    assert response.status_code == 200, response.json()
    return list(response.json()["issues"])


def test_each_entry_gets_its_platforms_text_or_the_posts_and_the_record_shows_both(api: Any, accounts: Any) -> None:
    payload = body(
        scheduledAt=iso(future()),
        firstComment={"text": "The post's comment", "delaySeconds": 45},
        platformFirstComments=[{"platform": "BLUESKY", "text": "Bluesky's own comment"}],
        **targets(accounts, "MASTODON", "BLUESKY"),
    )
    assert validate(api, payload) == []
    response = api.post(URL, payload, format="json")
    assert response.status_code == 201, response.json()
    post = Post.objects.get()
    assert comment_texts(post.id) == {"MASTODON": "", "BLUESKY": "Bluesky's own comment"}
    record = api.get(f"{URL}/{post.id}").json()
    assert record == post_record(post)
    assert record["firstComment"] == {"text": "The post's comment", "delaySeconds": 45}
    assert record["platformFirstComments"] == [{"platform": "BLUESKY", "text": "Bluesky's own comment"}]
    pending = {"status": "PENDING", "platformCommentId": None}
    assert [(e["platform"], e["firstComment"]) for e in record["platforms"]] == [
        ("MASTODON", pending),
        ("BLUESKY", pending),
    ]
    # the list answers in the order of the entries, whatever the request's order
    listed = api.get(URL).json()["posts"][0]
    assert listed["platformFirstComments"] == record["platformFirstComments"]


def test_overrides_alone_comment_only_on_their_platforms_and_show_no_first_comment(api: Any, accounts: Any) -> None:
    payload = body(
        scheduledAt=iso(future()),
        platformFirstComments=[{"platform": "MASTODON", "text": "Only here"}],
        **targets(accounts, "MASTODON", "BLUESKY"),
    )
    response = api.post(URL, payload, format="json")
    assert response.status_code == 201, response.json()
    post = Post.objects.get()
    assert post.first_comment == {}
    record = api.get(f"{URL}/{post.id}").json()
    assert "firstComment" not in record
    assert record["platformFirstComments"] == [{"platform": "MASTODON", "text": "Only here"}]
    entries = {e["platform"]: e for e in record["platforms"]}
    assert entries["MASTODON"]["firstComment"] == {"status": "PENDING", "platformCommentId": None}
    assert "firstComment" not in entries["BLUESKY"]  # no comment goes under it
    results = {r["platform"]: r for r in api.get(f"{URL}/{post.id}/results").json()["results"]}
    assert "firstComment" in results["MASTODON"] and "firstComment" not in results["BLUESKY"]


def test_a_post_without_overrides_has_no_platform_first_comments_key(api: Any, accounts: Any) -> None:
    payload = body(scheduledAt=iso(future()), firstComment={"text": "hi"}, **targets(accounts, "MASTODON"))
    post_id = api.post(URL, payload, format="json").json()["postId"]
    record = api.get(f"{URL}/{post_id}").json()
    assert "platformFirstComments" not in record and record["firstComment"] == {"text": "hi", "delaySeconds": 0}
    for empty in ([], None):
        again = api.post(URL, {**payload, "platformFirstComments": empty}, format="json")
        assert again.status_code == 201, again.json()
        assert "platformFirstComments" not in api.get(f"{URL}/{again.json()['postId']}").json()


def test_an_item_for_a_platform_not_targeted_is_ignored_as_platform_texts_are(
    api: Any, workspace: Any, accounts: Any
) -> None:
    payload = body(
        scheduledAt=iso(future()),
        platformTexts=[{"platform": "TIKTOK", "text": "not targeted either"}],
        platformFirstComments=[
            {"platform": "TIKTOK", "text": "not targeted: TIKTOK has no comment API, and it does not matter"},
            {"platform": "TWITTER", "text": "skipped: no valid connection"},
            {"platform": "MASTODON", "text": "used"},
        ],
        platforms=["MASTODON", "TWITTER"],
        mastodonConnectionIds=[accounts["MASTODON"].id],
        twitterConnectionIds=["acc_nobody"],
    )
    assert validate(api, payload) == []
    response = api.post(URL, payload, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["skippedPlatforms"] == [{"platform": "TWITTER", "reason": "No valid connection found"}]
    post_id = response.json()["postId"]
    assert comment_texts(post_id) == {"MASTODON": "used"}
    assert api.get(f"{URL}/{post_id}").json()["platformFirstComments"] == [{"platform": "MASTODON", "text": "used"}]


@pytest.mark.parametrize(
    ("comments", "message"),
    [
        ("first!", 'platformFirstComments: Expected a list of items but got type "str".'),
        ([{"text": "x"}], "platformFirstComments[0].platform: This field is required."),
        ([{"platform": "MYSPACE", "text": "x"}], None),
        ([{"platform": "MASTODON"}], "platformFirstComments[0].text: This field is required."),
        ([{"platform": "MASTODON", "text": ""}], "platformFirstComments[0].text: This field may not be blank."),
        ([{"platform": "MASTODON", "text": " \n"}], "platformFirstComments[0].text: a first comment needs text"),
        ([{"platform": "MASTODON", "text": 5}], None),
        (
            [{"platform": "MASTODON", "text": "a"}, {"platform": "MASTODON", "text": "b"}],
            "platformFirstComments: must name each platform once",
        ),
        ([{"platform": "MASTODON", "text": "x"}] * 13, None),
    ],
)
def test_a_malformed_list_is_a_400_naming_the_field(
    api: Any, accounts: Any, comments: Any, message: str | None
) -> None:
    payload = body(platformFirstComments=comments, **targets(accounts, "MASTODON"))
    response = api.post(URL, payload, format="json")
    assert response.status_code == 400, response.json()
    messages = response.json()["message"]
    assert messages and all(m.startswith("platformFirstComments") for m in messages), messages
    if message:
        assert message in messages, messages
    issues = validate(api, payload)
    assert sorted(i["message"] for i in issues) == sorted(messages)
    assert all(i["field"].startswith("platformFirstComments") for i in issues)
    post_id = api.post(URL, body(saveAsDraft=True, **targets(accounts, "MASTODON")), format="json").json()["postId"]
    patched = api.patch(f"{URL}/{post_id}", {"platformFirstComments": comments}, format="json")
    assert patched.status_code == 400 and patched.json()["message"] == messages
    assert Post.objects.count() == 1


def test_each_text_is_checked_against_its_own_platforms_comment_limit(api: Any, accounts: Any) -> None:
    emoji = "\U0001f44d\U0001f3fd"  # one grapheme (Bluesky), weight 2 (X)
    at_limits = [{"platform": "TWITTER", "text": "a" * 280}, {"platform": "BLUESKY", "text": emoji * 300}]
    # the post's comment would not fit on X; the override replaces it there
    payload = body(
        firstComment={"text": "b" * 281},
        platformFirstComments=at_limits,
        **targets(accounts, "TWITTER", "BLUESKY", "MASTODON"),
    )
    assert validate(api, payload) == []
    over = [{"platform": "TWITTER", "text": emoji * 141}, {"platform": "BLUESKY", "text": emoji * 301}]
    issues = validate(api, {**payload, "platformFirstComments": over})
    assert sorted((i["platform"], i["field"], i["message"]) for i in issues) == [
        (
            "BLUESKY",
            "platformFirstComments",
            "platformFirstComments: BLUESKY comment is 301 characters; the limit is 300",
        ),
        (
            "TWITTER",
            "platformFirstComments",
            "platformFirstComments: TWITTER comment is 282 characters; the limit is 280",
        ),
    ]
    created = api.post(URL, {**payload, "platformFirstComments": over}, format="json")
    assert created.status_code == 400 and sorted(created.json()["message"]) == sorted(i["message"] for i in issues)
    # the post's own comment is still checked where no override replaces it
    long_default = validate(api, {**payload, "firstComment": {"text": "c" * 501}})
    assert [(i["platform"], i["message"]) for i in long_default] == [
        ("MASTODON", "firstComment: MASTODON comment is 501 characters; the limit is 500")
    ]


def test_a_platform_without_a_comment_api_is_refused_by_name(api: Any, workspace: Any, accounts: Any) -> None:
    video = uploaded(workspace, "video")
    payload = body(
        contentType="VIDEO",
        mediaUrls=[video],
        tiktokConfigs=[{"connectionId": accounts["TIKTOK"].id, "privacyLevel": "SELF_ONLY"}],
        platformFirstComments=[{"platform": "TIKTOK", "text": "first"}],
        **targets(accounts, "MASTODON", "TIKTOK"),
    )
    expected = f"platformFirstComments: TIKTOK {NO_API}"
    response = api.post(URL, payload, format="json")
    assert response.status_code == 400 and response.json()["message"] == [expected]
    assert validate(api, payload) == [{"platform": "TIKTOK", "field": "platformFirstComments", "message": expected}]
    # with a post-level comment too, TIKTOK's issue is its own item's, reported once
    both = {**payload, "firstComment": {"text": "for the others"}}
    assert [i["message"] for i in validate(api, both)] == [expected]
    # a draft postpones the platform rules to publish, where the same 400 comes back
    draft = api.post(URL, {**payload, "saveAsDraft": True}, format="json")
    assert draft.status_code == 201
    published = api.post(f"{URL}/{draft.json()['postId']}/publish", {}, format="json")
    assert published.status_code == 400 and published.json()["message"] == [expected]


def test_a_story_takes_no_per_platform_first_comment(api: Any, workspace: Any, accounts: Any) -> None:
    page = accounts["FACEBOOK"]
    payload = body(
        contentType="IMAGE",
        mediaUrls=[uploaded(workspace, "image")],
        facebookConfigs=[{"pageId": page.page_id, "postType": "STORY"}],
        platformFirstComments=[{"platform": "FACEBOOK", "text": "first"}],
        **targets(accounts, "FACEBOOK"),
    )
    assert validate(api, payload) == [
        {
            "platform": "FACEBOOK",
            "field": "platformFirstComments",
            "message": "platformFirstComments: FACEBOOK stories cannot be commented on (postType STORY)",
        }
    ]


def test_patch_sets_replaces_keeps_and_removes_the_list(api: Any, accounts: Any) -> None:
    created = api.post(URL, body(scheduledAt=iso(future()), **targets(accounts, "MASTODON", "BLUESKY")), format="json")
    post_id = created.json()["postId"]
    url = f"{URL}/{post_id}"
    first = [{"platform": "BLUESKY", "text": "sky"}]
    added = api.patch(url, {"platformFirstComments": first}, format="json")
    assert added.status_code == 200, added.json()
    assert added.json()["platformFirstComments"] == first and "firstComment" not in added.json()
    assert added.json() == api.get(url).json()
    kept = api.patch(url, {"text": "Edited", "firstComment": {"text": "all"}}, format="json")
    assert kept.json()["platformFirstComments"] == first
    both = [{"platform": "BLUESKY", "text": "sky 2"}, {"platform": "MASTODON", "text": "masto"}]
    replaced = api.patch(url, {"platformFirstComments": both}, format="json")
    assert replaced.json()["platformFirstComments"] == [
        {"platform": "MASTODON", "text": "masto"},
        {"platform": "BLUESKY", "text": "sky 2"},
    ]
    assert comment_texts(post_id) == {"MASTODON": "masto", "BLUESKY": "sky 2"}
    # a change of platforms keeps the items of the platforms still targeted (BLUESKY's goes with its entry)
    moved = api.patch(url, targets(accounts, "MASTODON", "TWITTER"), format="json")
    assert moved.status_code == 200 and moved.json()["platformFirstComments"] == [
        {"platform": "MASTODON", "text": "masto"}
    ]
    too_long = api.patch(url, {"platformFirstComments": [{"platform": "TWITTER", "text": "x" * 281}]}, format="json")
    assert too_long.status_code == 400
    assert too_long.json()["message"] == ["platformFirstComments: TWITTER comment is 281 characters; the limit is 280"]
    removed = api.patch(url, {"platformFirstComments": None}, format="json")
    assert removed.status_code == 200 and "platformFirstComments" not in removed.json()
    assert removed.json()["firstComment"] == {"text": "all", "delaySeconds": 0}
    assert comment_texts(post_id) == {"MASTODON": "", "TWITTER": ""}
    again = api.patch(url, {"platformFirstComments": first + [{"platform": "TWITTER", "text": "x"}]}, format="json")
    assert again.json()["platformFirstComments"] == [{"platform": "TWITTER", "text": "x"}]  # BLUESKY: not targeted
    emptied = api.patch(url, {"platformFirstComments": []}, format="json")
    assert emptied.status_code == 200 and "platformFirstComments" not in emptied.json()
