"""The simulators answer in the shapes of the real APIs: every client call of a full flow (connect,
refresh, token check, a multi-step publish and a simple one, listing, metrics, followers) is
captured, and each answer is compared with the body recorded from the platform's documentation
for the same call. Every field the recorded body has must be there, with the same JSON type.
The few fields a simulator may leave out are listed below, each with the reason the real platform
leaves it out of that call too."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from platforms.base import NotSupported, Platform, PublishRequest, thread_session
from platforms.capabilities import CAPABILITIES
from platforms.registry import get_client
from tests.platforms.conftest import RECORDED, connect_sandbox_account, media_item

# recorded file → (method, path pattern, which matching answer: 0 the first, -1 the last)
CALLS: dict[Platform, dict[str, tuple[str, str, int]]] = {
    Platform.FACEBOOK: {
        "oauth_access_token.json": ("GET", r"/oauth/access_token$", 0),
        "me.json": ("GET", r"/me$", 0),
        "me_accounts.json": ("GET", r"/me/accounts$", 0),
        "page_fields.json": ("GET", r"/v\d+\.\d+/\d+$", 0),
        "feed_create.json": ("POST", r"/feed$", 0),
        "published_posts.json": ("GET", r"/published_posts$", 0),
    },
    Platform.INSTAGRAM: {
        "me_accounts.json": ("GET", r"/me/accounts$", 0),
        "content_publishing_limit.json": ("GET", r"/content_publishing_limit$", 0),
        "container_create.json": ("POST", r"/\d+/media$", 0),
        "media_publish.json": ("POST", r"/media_publish$", 0),
        "user_media.json": ("GET", r"/\d+/media$", 0),
        "media_insights.json": ("GET", r"/insights$", 0),
    },
    Platform.THREADS: {
        "oauth_access_token.json": ("POST", r"/oauth/access_token$", 0),
        "long_lived_token.json": ("GET", r"^/access_token$", 0),
        "me.json": ("GET", r"/me$", 0),
        "publishing_limit.json": ("GET", r"/threads_publishing_limit$", 0),
        "container_create.json": ("POST", r"/threads$", 0),
        "threads_publish.json": ("POST", r"/threads_publish$", 0),
        "user_threads.json": ("GET", r"/\d+/threads$", 0),
        "media_insights.json": ("GET", r"/\d+/insights$", 0),
        "followers_count.json": ("GET", r"/threads_insights$", 0),
    },
    Platform.TIKTOK: {
        "oauth_token.json": ("POST", r"/oauth/token/$", 0),
        "user_info.json": ("GET", r"/user/info/$", 0),
        "creator_info.json": ("POST", r"/creator_info/query/$", 0),
        "video_init.json": ("POST", r"/video/init/$", 0),
        "status_complete.json": ("POST", r"/status/fetch/$", -1),
        "video_list.json": ("POST", r"/video/list/$", 0),
    },
    Platform.TWITTER: {
        "token.json": ("POST", r"/oauth2/token$", 0),
        "users_me.json": ("GET", r"/users/me$", 0),
        "media_initialize.json": ("POST", r"/initialize$", 0),
        "media_finalize_pending.json": ("POST", r"/finalize$", 0),
        "media_status_succeeded.json": ("GET", r"/media/upload$", -1),
        "create_tweet.json": ("POST", r"/2/tweets$", 0),
        "user_tweets.json": ("GET", r"/users/\d+/tweets$", 0),
        "tweets_lookup.json": ("GET", r"/2/tweets$", 0),
    },
    Platform.BLUESKY: {
        "createSession.json": ("POST", r"createSession$", 0),
        "getSession.json": ("GET", r"getSession$", 0),
        "getProfile.json": ("GET", r"getProfile$", 0),
        "getServiceAuth.json": ("GET", r"getServiceAuth$", 0),
        "uploadVideo.json": ("POST", r"uploadVideo$", 0),
        "getJobStatus_completed.json": ("GET", r"getJobStatus$", -1),
        "createRecord.json": ("POST", r"createRecord$", 0),
        "getAuthorFeed.json": ("GET", r"getAuthorFeed$", 0),
        "getPosts.json": ("GET", r"getPosts$", 0),
    },
    Platform.LINKEDIN: {
        "token.json": ("POST", r"/accessToken$", 0),
        "userinfo.json": ("GET", r"/userinfo$", 0),
        "videos_initialize.json": ("POST", r"/rest/videos$", 0),
        "video_status.json": ("GET", r"/rest/videos/", -1),
        "posts_by_author.json": ("GET", r"/rest/posts$", 0),
        "social_actions.json": ("GET", r"/socialActions/", 0),
        "creator_analytics_impression.json": ("GET", r"/memberCreatorPostAnalytics$", 0),
        "followers_count.json": ("GET", r"/memberFollowersCount$", 0),
    },
    Platform.PINTEREST: {
        "token.json": ("POST", r"/oauth/token$", 0),
        "user_account.json": ("GET", r"/user_account$", 0),
        "boards_page1.json": ("GET", r"/boards$", 0),
        "pin.json": ("POST", r"/pins$", 0),
        "pins_list.json": ("GET", r"/pins$", 0),
        "pin_analytics.json": ("GET", r"/analytics$", 0),
    },
    Platform.YOUTUBE: {
        "token.json": ("POST", r"/token$", 0),
        "channels_mine.json": ("GET", r"/channels$", 0),
        "video_inserted.json": ("PUT", r"/upload/youtube/v3/videos$", -1),
        "playlist_items.json": ("GET", r"/playlistItems$", 0),
        "videos_statistics.json": ("GET", r"/youtube/v3/videos$", -1),
    },
    Platform.MASTODON: {
        "token.json": ("POST", r"/oauth/token$", 0),
        "account_verify_credentials.json": ("GET", r"/verify_credentials$", 0),
        "media_v2_processing.json": ("POST", r"/api/v2/media$", 0),
        "media_processed.json": ("GET", r"/api/v1/media/", -1),
        "status.json": ("POST", r"/api/v1/statuses$", 0),
    },
    Platform.TELEGRAM: {
        "getMe.json": ("POST", r"/getMe$", 0),
        "getChat.json": ("POST", r"/getChat$", 0),
        "getChatMemberCount.json": ("POST", r"/getChatMemberCount$", 0),
        "sendMessage.json": ("POST", r"/sendMessage$", 0),
    },
    Platform.GOOGLE_BUSINESS: {
        "accounts.json": ("GET", r"/accounts$", 0),
        "locations.json": ("GET", r"/locations$", 0),
        "local_post.json": ("POST", r"/localPosts$", 0),
        "local_posts_list.json": ("GET", r"/localPosts$", 0),
        "report_insights.json": ("POST", r"reportInsights$", 0),
    },
}
NOT_REQUESTED = "a field the client does not ask for (fields/readMask), so the real answer lacks it too"
ONLY_WHEN = "present only in situations this flow does not create"
OPTIONAL = "optional in the platform's schema"
NOT_MEASURED = "the simulator does not read the dimensions or duration of the uploaded file"
MAY_BE_ABSENT: dict[tuple[Platform, str], dict[str, str]] = {
    (Platform.FACEBOOK, "me_accounts.json"): {"$.data[0].category_list": NOT_REQUESTED},
    (Platform.FACEBOOK, "page_fields.json"): {
        "$.picture.data.height": NOT_REQUESTED,
        "$.picture.data.width": NOT_REQUESTED,
        "$.picture.data.is_silhouette": NOT_REQUESTED,
    },
    (Platform.FACEBOOK, "published_posts.json"): {
        "$.data[0].reactions.summary.viewer_reaction": NOT_REQUESTED,
        "$.data[0].comments.summary.can_comment": NOT_REQUESTED,
        "$.data[0].insights.data[0].title": NOT_REQUESTED,
        "$.data[0].insights.data[0].description": NOT_REQUESTED,
        "$.data[0].insights.paging": ONLY_WHEN + " (more insight pages)",
    },
    (Platform.TIKTOK, "user_info.json"): {"$.data.user.follower_count": NOT_REQUESTED + " (token check)"},
    (Platform.TWITTER, "tweets_lookup.json"): {"$.errors": ONLY_WHEN + " (an id not found)"},
    (Platform.BLUESKY, "createSession.json"): {"$.emailAuthFactor": OPTIONAL},
    (Platform.BLUESKY, "getSession.json"): {"$.didDoc": OPTIONAL},
    (Platform.BLUESKY, "getProfile.json"): {"$.avatar": OPTIONAL, "$.associated": OPTIONAL},
    (Platform.BLUESKY, "getAuthorFeed.json"): {
        "$.feed[0].post.record.embed": ONLY_WHEN + " (the newest post here is text)",
        "$.feed[0].post.embed": ONLY_WHEN + " (the newest post here is text)",
        "$.cursor": ONLY_WHEN + " (more pages)",
    },
    (Platform.BLUESKY, "getPosts.json"): {"$.posts[0].author.avatar": OPTIONAL, "$.posts[0].record.langs": OPTIONAL},
    (Platform.LINKEDIN, "videos_initialize.json"): {"$.value.thumbnailUploadUrl": ONLY_WHEN + " (uploadThumbnail)"},
    (Platform.LINKEDIN, "video_status.json"): {
        "$.duration": NOT_MEASURED,
        "$.aspectRatioWidth": NOT_MEASURED,
        "$.aspectRatioHeight": NOT_MEASURED,
    },
    (Platform.LINKEDIN, "posts_by_author.json"): {
        "$.elements[0].content.media": ONLY_WHEN + " (the newest post here is text)"
    },
    (Platform.YOUTUBE, "playlist_items.json"): {"$.nextPageToken": ONLY_WHEN + " (more pages)"},
    (Platform.MASTODON, "media_processed.json"): {
        "$.meta.original.width": NOT_MEASURED,
        "$.meta.original.height": NOT_MEASURED,
        "$.meta.original.aspect": NOT_MEASURED,
    },
    (Platform.TELEGRAM, "getChat.json"): {"$.result.invite_link": ONLY_WHEN + " (an invite link was created)"},
    (Platform.GOOGLE_BUSINESS, "locations.json"): {
        "$.locations[0].storefrontAddress.languageCode": NOT_REQUESTED,
        "$.locations[0].storefrontAddress.postalCode": NOT_REQUESTED,
        "$.locations[0].storefrontAddress.administrativeArea": NOT_REQUESTED,
        "$.totalSize": OPTIONAL,
    },
    (Platform.GOOGLE_BUSINESS, "local_post.json"): {
        "$.callToAction": ONLY_WHEN + " (a call to action)",
        "$.event": ONLY_WHEN + " (an EVENT post)",
        "$.media": ONLY_WHEN + " (a photo post)",
    },
}
_KINDS = {bool: "boolean", int: "number", float: "number", str: "string", dict: "object", list: "array"}


def shape_differences(recorded: Any, simulated: Any, path: str = "$") -> Iterator[str]:
    """Where ``simulated`` lacks a field of ``recorded`` or holds another JSON type (a null value
    on either side matches any type, but its key must be there; arrays are compared by their
    first items)."""
    if recorded is None or simulated is None:
        return
    if _KINDS[type(recorded)] != _KINDS[type(simulated)]:
        yield f"{path}: {_KINDS[type(recorded)]} expected, got {_KINDS[type(simulated)]}"
    elif isinstance(recorded, dict):
        for key, value in recorded.items():
            if key in simulated:
                yield from shape_differences(value, simulated[key], f"{path}.{key}")
            else:
                yield f"{path}.{key}"
    elif isinstance(recorded, list) and recorded and simulated:
        yield from shape_differences(recorded[0], simulated[0], f"{path}[0]")


def test_shape_differences_finds_missing_fields_and_other_types() -> None:
    recorded = {"id": "1", "n": 2, "ok": True, "data": [{"url": "u", "w": 1}], "gone": None}
    same = {"id": "9", "n": 3.5, "ok": False, "data": [{"url": "v", "w": 2}], "gone": "now set"}
    assert list(shape_differences(recorded, same)) == []
    simulated = {"id": 1, "ok": True, "data": [{"url": "v"}]}
    assert list(shape_differences(recorded, simulated)) == [
        "$.id: string expected, got number",
        "$.n",
        "$.data[0].w",
        "$.gone",
    ]


def _flow(platform: Platform, media_server: str) -> None:
    """Everything a worker does with an account, through the real client."""
    client = get_client(platform)
    creds = connect_sandbox_account(platform)[0].credentials
    if CAPABILITIES[platform].refreshable_token:
        creds = client.refresh_token(creds)
    client.check_token(creds)
    options: dict[str, Any] = {"privacyLevel": "SELF_ONLY", "videoTitle": "Shapes"}
    if platform == Platform.PINTEREST:
        options["boardId"] = client.list_boards(creds)[0].id
    types = CAPABILITIES[platform].content_types
    flows = [("VIDEO", ("sample-reel.mp4",)), ("TEXT", ()) if "TEXT" in types else ("IMAGE", ("sample.jpg",))]
    post_id = ""
    for content_type, media in flows:
        if content_type not in types:
            continue
        request = PublishRequest(
            target_id=f"tgt_shape_{content_type.lower()}",
            content_type=content_type,
            text=f"Shapes {content_type.lower()}",
            media=tuple(media_item(f"{media_server}/{name}") for name in media),
            options=options,
        )
        result = client.publish(creds, request, {})
        for _ in range(40):
            if result.done:
                break
            time.sleep(min(result.poll_after, 0.3))
            result = client.publish(creds, request, result.state)
        assert result.done, result
        post_id = result.platform_post_id
    for step in (
        lambda: client.list_recent_posts(creds, dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)),
        lambda: client.fetch_post_metrics(creds, [post_id]),
        lambda: client.fetch_followers(creds),
    ):
        with contextlib.suppress(NotSupported):
            step()


@pytest.mark.parametrize("platform", list(CALLS), ids=[p.value for p in CALLS])
def test_simulator_answers_have_the_recorded_shapes(platform: Platform, sandbox: str, media_server: str) -> None:
    answers: list[tuple[str, str, Any]] = []

    def capture(response: requests.Response, *args: Any, **kwargs: Any) -> None:
        path = response.request.path_url.split("?")[0].split(f"/sandbox/{platform.slug}", 1)[-1]
        with contextlib.suppress(ValueError):
            answers.append((str(response.request.method), path, response.json()))

    hooks = thread_session().hooks["response"]
    hooks.append(capture)
    try:
        _flow(platform, media_server)
    finally:
        hooks.remove(capture)
    drift: dict[str, list[str]] = {}
    for name, (method, pattern, which) in CALLS[platform].items():
        matching = [body for m, path, body in answers if m == method and re.search(pattern, path)]
        assert matching, f"the flow made no {method} {pattern} call for {name}"
        recorded = json.loads((RECORDED / platform.slug / name).read_text())
        allowed = MAY_BE_ABSENT.get((platform, name), {})
        found = [d for d in shape_differences(recorded, matching[which]) if d not in allowed]
        if found:
            drift[name] = found
    assert drift == {}
