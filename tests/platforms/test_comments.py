"""First comments: each client posts its platform's comment (or reply) call under a published post,
over real HTTP against the simulators, which record the body they received; a comment under a post
that does not exist is refused; TikTok (and every platform without a comment API) raises
NotSupported; Bluesky and Mastodon deduplicate a re-sent comment on its key."""

from __future__ import annotations

from typing import Any

import pytest

from platforms.base import Credentials, NotSupported, Permanent, Platform, PostRef, PublishRequest, ReplyTo
from platforms.capabilities import CAPABILITIES
from platforms.registry import get_client
from tests.platforms.conftest import drive, media_item, sim_requests

# What each platform needs published before it can be commented on.
POSTS: dict[Platform, tuple[str, tuple[str, ...]]] = {
    Platform.FACEBOOK: ("TEXT", ()),
    Platform.INSTAGRAM: ("IMAGE", ("sample.jpg",)),
    Platform.LINKEDIN: ("TEXT", ()),
    Platform.TWITTER: ("TEXT", ()),
    Platform.BLUESKY: ("TEXT", ()),
    Platform.THREADS: ("TEXT", ()),
    Platform.MASTODON: ("TEXT", ()),
    Platform.YOUTUBE: ("VIDEO", ("sample.mp4",)),
}
COMMENTING = [p for p, caps in CAPABILITIES.items() if caps.comment_text_limit is not None]


def test_the_platforms_with_a_comment_api_are_the_eight_of_the_issue() -> None:
    assert sorted(COMMENTING) == sorted(POSTS)


def _publish(client: Any, creds: Any, platform: Platform, media_server: str, key: str) -> Any:
    content_type, files = POSTS[platform]
    options = {"title": "A video"} if platform == Platform.YOUTUBE else {}
    request = PublishRequest(
        target_id=key,
        content_type=content_type,
        text=f"The post {key}",
        media=tuple(media_item(f"{media_server}/{name}") for name in files),
        options=options,
    )
    return drive(client, creds, request)[-1]


def _comment(client: Any, creds: Any, on: PostRef, text: str, key: str) -> Any:
    request = PublishRequest(target_id=key, content_type="TEXT", text=text, reply_to=ReplyTo(root=on, parent=on))
    results = [client.comment(creds, request, {})]
    while not results[-1].done:
        assert len(results) < 10, results
        results.append(client.comment(creds, request, results[-1].state))
    return results[-1]


def _comment_calls(sandbox: str, platform: Platform) -> list[dict[str, Any]]:
    """The simulator's successful calls that created a comment or a reply."""
    return [
        e
        for e in sim_requests(sandbox, platform.slug)
        if 200 <= int(e["status"]) < 300 and (e.get("comment") or e.get("replyTo") or e.get("inReplyTo"))
    ]


@pytest.mark.parametrize("platform", sorted(POSTS), ids=lambda p: p.value)
def test_a_comment_goes_under_the_published_post_with_the_platforms_body(
    sandbox: str, media_server: str, connect_one: Any, platform: Platform
) -> None:
    creds = connect_one(platform).credentials
    client = get_client(platform)
    post = _publish(client, creds, platform, media_server, "pt_fc_1")
    comment = _comment(client, creds, PostRef(post.platform_post_id, post.cid), "First! Links below", "pt_fc_1.comment")
    assert comment.platform_post_id and comment.platform_post_id != post.platform_post_id
    calls = _comment_calls(sandbox, platform)
    if platform == Platform.THREADS:
        # the reply container names the post; its publish call then creates the reply
        assert [c.get("replyTo") for c in calls] == [post.platform_post_id]
        return
    [call] = calls
    expected: dict[Platform, Any] = {
        Platform.FACEBOOK: {"message": "First! Links below"},
        Platform.INSTAGRAM: {"message": "First! Links below"},
        Platform.LINKEDIN: {
            "actor": f"urn:li:person:{creds.external_id}",
            "object": post.platform_post_id,
            "message": {"text": "First! Links below"},
        },
        Platform.YOUTUBE: {
            "snippet": {
                "videoId": post.platform_post_id,
                "topLevelComment": {"snippet": {"textOriginal": "First! Links below"}},
            }
        },
    }
    if platform in expected:
        assert call["body"] == expected[platform]
        assert call["on"] == post.platform_post_id
        assert call["remoteId"] == comment.platform_post_id
    elif platform == Platform.BLUESKY:
        ref = {"uri": post.platform_post_id, "cid": post.cid}
        assert call["replyTo"] == {"root": ref, "parent": ref}  # the cid read from the repo
    else:  # X and Mastodon: the thread items' reply parameter
        assert call["inReplyTo"] == post.platform_post_id


@pytest.mark.parametrize("platform", sorted(POSTS), ids=lambda p: p.value)
def test_a_comment_under_a_post_that_does_not_exist_is_refused(
    sandbox: str, connect_one: Any, platform: Platform
) -> None:
    creds = connect_one(platform).credentials
    missing = {
        Platform.FACEBOOK: "611234_999999",
        Platform.INSTAGRAM: "17999999999",
        Platform.LINKEDIN: "urn:li:share:999999",
        Platform.TWITTER: "1900000000000000001",
        Platform.BLUESKY: f"at://{creds.external_id}/app.bsky.feed.post/3kabcdefghij2",
        Platform.THREADS: "18000000000000000",
        Platform.MASTODON: "999999999",
        Platform.YOUTUBE: "dQw4w9WgXcQ",
    }[platform]
    with pytest.raises(Permanent):
        _comment(get_client(platform), creds, PostRef(missing), "an orphan", "pt_fc_orphan.comment")
    assert _comment_calls(sandbox, platform) == []


@pytest.mark.parametrize("platform", [p for p in Platform if p not in POSTS], ids=lambda p: p.value)
def test_a_platform_without_a_comment_api_raises_not_supported(platform: Platform) -> None:
    on = PostRef("123")
    request = PublishRequest(target_id="k", content_type="TEXT", text="x", reply_to=ReplyTo(root=on, parent=on))
    with pytest.raises(NotSupported):
        get_client(platform).comment(Credentials(access_token="tok", external_id="42"), request, {})


@pytest.mark.parametrize("platform", [Platform.BLUESKY, Platform.MASTODON], ids=lambda p: p.value)
def test_a_comment_sent_again_under_its_key_is_not_created_twice(
    sandbox: str, media_server: str, connect_one: Any, platform: Platform
) -> None:
    creds = connect_one(platform).credentials
    client = get_client(platform)
    post = _publish(client, creds, platform, media_server, "pt_fc_2")
    on = PostRef(post.platform_post_id, post.cid)
    first = _comment(client, creds, on, "Only once", "pt_fc_2.comment")
    second = _comment(client, creds, on, "Only once", "pt_fc_2.comment")
    assert first.platform_post_id == second.platform_post_id
    created = [c for c in _comment_calls(sandbox, platform) if not c.get("repeat")]
    assert len(created) == 1
