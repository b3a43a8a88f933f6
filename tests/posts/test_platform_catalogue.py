"""``GET /platforms``: every platform, derived from the capabilities table the validators use."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from platforms.base import Platform
from platforms.capabilities import CAPABILITIES, max_file_bytes, max_video_seconds, text_length
from posts.catalogue import comments_entry, platform_catalogue
from posts.payloads import CONNECTION_FIELDS
from tests.factories.accounts import SocialAccountFactory
from tests.factories.media import MediaFileFactory
from workspaces.models import Workspace

URL = "/api/v1/platforms"
_NO_SIDES = {
    "minFileBytes": None,
    "minWidth": None,
    "minHeight": None,
    "maxWidth": None,
    "maxHeight": None,
    "eitherOrientation": False,
    "maxPixels": None,
    "maxWidthPlusHeight": None,
    "aspectRatio": None,
}
TIKTOK_FEED_RULES = {
    "postType": "FEED",
    "selectedBy": "every post (a video, or a photo post of 2 to 35 images)",
    "source": "TikTok Content Posting API: Media Transfer Guide (video and image restrictions)",
    "note": "Photos are at most 1080p (read as 1920x1080 either way round). A creator's own longest video "
    "(creator_info max_video_post_duration_sec) may be shorter than 10 minutes; TikTok documents no ratio limit.",
    "image": {
        **_NO_SIDES,
        "maxFileBytes": 20 * 1024 * 1024,
        "maxWidth": 1920,
        "maxHeight": 1080,
        "eitherOrientation": True,
        "formats": ["JPEG", "WEBP"],
        "animated": True,
        "maxAnimatedFileBytes": None,
    },
    "video": {
        **_NO_SIDES,
        "maxFileBytes": 4 * 1024 * 1024 * 1024,
        "minWidth": 360,
        "minHeight": 360,
        "maxWidth": 4096,
        "maxHeight": 4096,
        "containers": ["mp4", "quicktime"],
        "videoCodecs": ["h264", "hevc", "vp8", "vp9"],
        "audioCodecs": None,
        "minDurationSeconds": None,
        "maxDurationSeconds": 600,
        "minFrameRate": 23,
        "maxFrameRate": 60,
        "maxBitRate": None,
    },
    "document": None,
}


@pytest.mark.parametrize("role", ["admin", "editor", "contributor", "viewer"])
def test_every_role_reads_every_platform(client_for: Callable[..., APIClient], role: str) -> None:
    response = client_for(role).get(URL)
    assert response.status_code == 200
    body = response.json()
    assert [entry["platform"] for entry in body["platforms"]] == [p.value for p in Platform]
    assert body == {"platforms": platform_catalogue()}


def test_an_entry_whole(api: APIClient, settings: Any) -> None:
    settings.MEDIA_MAX_UPLOAD_BYTES = 512 * 1024 * 1024
    [tiktok] = [e for e in api.get(URL).json()["platforms"] if e["platform"] == "TIKTOK"]
    privacy = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"]
    assert tiktok == {
        "platform": "TIKTOK",
        "contentTypes": ["IMAGE", "VIDEO", "CAROUSEL"],
        "text": {"limit": 2200, "counting": "chars", "limitWithMedia": None, "byteLimit": None},
        "titleLimit": 90,
        "media": {
            "required": True,
            "maxItems": 35,
            "mixedImagesAndVideos": False,
            "minImagesWithoutVideo": 2,
            "kinds": [
                {
                    "kind": "image",
                    "maxCount": 35,
                    "mimeTypes": ["image/jpeg", "image/png", "image/webp"],
                    "maxFileBytes": 20 * 1024 * 1024,  # TikTok's photo limit
                    "maxDurationSeconds": None,
                },
                {
                    "kind": "video",
                    "maxCount": 1,
                    "mimeTypes": ["video/mp4", "video/quicktime"],
                    "maxFileBytes": 512 * 1024 * 1024,  # TikTok takes 4 GB; this service's uploads stop here
                    "maxDurationSeconds": 600,
                },
            ],
            "rules": [TIKTOK_FEED_RULES],
        },
        "config": {
            "field": "tiktokConfigs",
            "fields": [
                {
                    "name": "connectionId",
                    "type": "string",
                    "required": False,
                    "allowsNull": False,
                    "enum": None,
                    "maxLength": 255,
                },
                {
                    "name": "privacyLevel",
                    "type": "string",
                    "required": False,
                    "allowsNull": True,
                    "enum": privacy,
                    "maxLength": None,
                },
                {
                    "name": "title",
                    "type": "string",
                    "required": False,
                    "allowsNull": True,
                    "enum": None,
                    "maxLength": 5000,
                },
                {
                    "name": "caption",
                    "type": "string",
                    "required": False,
                    "allowsNull": True,
                    "enum": None,
                    "maxLength": 100000,
                },
                *[
                    {
                        "name": name,
                        "type": "boolean",
                        "required": False,
                        "allowsNull": False,
                        "enum": None,
                        "maxLength": None,
                    }
                    for name in ("allowComments", "allowDuet", "allowStitch", "sendAsDraft", "aiGenerated")
                ],
                {
                    "name": "brandedContent",
                    "type": "boolean",
                    "required": False,
                    "allowsNull": False,
                    "enum": None,
                    "maxLength": None,
                },
                {
                    "name": "brandedContentOwnBrand",
                    "type": "boolean",
                    "required": False,
                    "allowsNull": False,
                    "enum": None,
                    "maxLength": None,
                },
                {
                    "name": "autoAddMusic",
                    "type": "boolean",
                    "required": False,
                    "allowsNull": False,
                    "enum": None,
                    "maxLength": None,
                },
            ],
        },
        "analytics": {"metrics": ["views", "likes", "comments", "shares"], "followers": True},
        "thread": {"supported": False, "maxItems": None},
        "firstComment": {"supported": False, "textLimit": None},
        "afterPublishing": {"editFields": [], "deletable": False, "mediaEdit": None},
        "comments": comments_entry(CAPABILITIES[Platform.TIKTOK]),
    }


def test_a_changed_capability_changes_the_answer_and_the_validation(
    api: APIClient, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    tighter = dataclasses.replace(
        CAPABILITIES[Platform.MASTODON],
        text_limit=10,
        max_images=2,
        max_items=2,
        metrics=frozenset({"likes"}),
        threads=False,
        comment_text_limit=7,
    )
    monkeypatch.setitem(CAPABILITIES, Platform.MASTODON, tighter)
    [mastodon] = [e for e in api.get(URL).json()["platforms"] if e["platform"] == "MASTODON"]
    assert mastodon["text"]["limit"] == 10
    assert mastodon["media"]["maxItems"] == 2
    assert mastodon["media"]["kinds"][0]["maxCount"] == 2
    assert mastodon["analytics"]["metrics"] == ["likes"]
    assert mastodon["thread"] == {"supported": False, "maxItems": None}
    assert mastodon["firstComment"] == {"supported": True, "textLimit": 7}
    account = SocialAccountFactory(workspace=workspace, platform="MASTODON")
    assert _text_issues(api, "MASTODON", account.id, "x" * 10) == []
    assert len(_text_issues(api, "MASTODON", account.id, "x" * 11)) == 1


def _text_of(counting: str, length: int) -> str:
    """``length`` units as the platform counts them, in characters that tell the countings apart."""
    if counting == "x_weighted":
        return "漢" * (length // 2) + "a" * (length % 2)  # CJK weighs 2 on X
    if counting == "graphemes":
        return "👍🏽" * length  # two code points, one grapheme
    return "a" * length


def _text_issues(api: APIClient, platform: str, account_id: str, text: str) -> list[dict[str, Any]]:
    content = "TEXT" if "TEXT" in CAPABILITIES[Platform(platform)].content_types else "VIDEO"
    body = {
        "contentType": content,
        "text": text,
        "timezone": "UTC",
        "platforms": [platform],
        CONNECTION_FIELDS[platform]: [account_id],
    }
    response = api.post("/api/v1/social-posts/validate", body, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["skippedPlatforms"] == []
    return [i for i in response.json()["issues"] if i.get("field") == "text"]


def test_every_text_limit_answered_is_the_one_validation_enforces(api: APIClient, workspace: Workspace) -> None:
    for entry in api.get(URL).json()["platforms"]:
        platform, limit, counting = entry["platform"], entry["text"]["limit"], entry["text"]["counting"]
        account = SocialAccountFactory(workspace=workspace, platform=platform)
        at_limit, over = _text_of(counting, limit), _text_of(counting, limit + 1)
        assert text_length(Platform(platform), at_limit) == limit
        if counting != "chars":
            assert len(at_limit) != limit  # the counting matters: a plain count would differ
        assert _text_issues(api, platform, account.id, at_limit) == [], platform
        [issue] = _text_issues(api, platform, account.id, over)
        assert issue["platform"] == platform
        assert f"the limit is {limit}" in issue["message"]


def test_anonymous_is_401(anon: APIClient) -> None:
    response = anon.get(URL)
    assert response.status_code == 401
    assert response.json()["code"] == "unauthorized"


def test_an_unknown_parameter_is_400_naming_it(api: APIClient) -> None:
    response = api.get(f"{URL}?verbose=1")
    assert response.status_code == 400
    assert "verbose" in str(response.json()["message"])


def test_rate_limit_headers(api: APIClient) -> None:
    response = api.get(URL)
    assert response["RateLimit-Limit"]
    assert response["RateLimit-Remaining"]


def test_thread_and_first_comment_follow_the_capabilities_table(api: APIClient) -> None:
    answered = {e["platform"]: e for e in api.get(URL).json()["platforms"]}
    for platform, caps in CAPABILITIES.items():
        entry = answered[platform.value]
        assert entry["thread"] == {"supported": caps.threads, "maxItems": 24 if caps.threads else None}
        assert entry["firstComment"] == {
            "supported": caps.comment_text_limit is not None,
            "textLimit": caps.comment_text_limit,
        }
    assert answered["TIKTOK"]["firstComment"]["supported"] is False
    assert answered["YOUTUBE"]["firstComment"] == {"supported": True, "textLimit": 10000}


def test_comments_follow_the_capabilities_table(api: APIClient, monkeypatch: pytest.MonkeyPatch) -> None:
    answered = {e["platform"]: e for e in api.get(URL).json()["platforms"]}
    for platform, caps in CAPABILITIES.items():
        actions = answered[platform.value]["comments"]["actions"]
        assert set(actions) == set(caps.comment_actions), platform
    for platform in (Platform.PINTEREST, Platform.TELEGRAM):  # no comment API: listed as such
        assert answered[platform.value]["comments"] == {"actions": [], "textLimit": None, "readsPerHour": None}
    wider = dataclasses.replace(
        CAPABILITIES[Platform.TELEGRAM],
        comment_actions=frozenset({"like", "read", "reply"}),
        comment_text_limit=99,
        comment_reads_per_hour=42,
    )
    monkeypatch.setitem(CAPABILITIES, Platform.TELEGRAM, wider)
    [telegram] = [e for e in api.get(URL).json()["platforms"] if e["platform"] == "TELEGRAM"]
    assert telegram["comments"] == {"actions": ["read", "reply", "like"], "textLimit": 99, "readsPerHour": 42}


def test_every_media_kind_answers_its_platforms_own_limits(api: APIClient, settings: Any) -> None:
    upload_limit = settings.MEDIA_MAX_UPLOAD_BYTES
    answered = {e["platform"]: {k["kind"]: k for k in e["media"]["kinds"]} for e in api.get(URL).json()["platforms"]}
    for platform in CAPABILITIES:
        for kind, entry in answered[platform.value].items():
            documented = max_file_bytes(platform, kind)
            assert documented is not None, (platform, kind)  # every platform documents its file limits
            assert entry["maxFileBytes"] == min(documented, upload_limit), (platform, kind)
            assert entry["maxDurationSeconds"] == (max_video_seconds(platform) if kind == "video" else None)
    images = {platform: kinds["image"]["maxFileBytes"] for platform, kinds in answered.items() if "image" in kinds}
    assert images["TWITTER"] == 5 * 1024 * 1024 and images["BLUESKY"] == 1_000_000
    assert images["MASTODON"] == 16 * 1024 * 1024 and images["GOOGLE_BUSINESS"] == 5 * 1024 * 1024
    assert len(set(images.values())) >= 5 and upload_limit not in images.values()
    videos = {platform: kinds["video"] for platform, kinds in answered.items() if "video" in kinds}
    assert videos["BLUESKY"] == {**videos["BLUESKY"], "maxFileBytes": 100_000_000, "maxDurationSeconds": 180}
    assert videos["MASTODON"]["maxDurationSeconds"] is None  # Mastodon documents no longest video
    assert answered["LINKEDIN"]["document"]["maxFileBytes"] == 100 * 1024 * 1024


def test_a_smaller_upload_limit_caps_every_platform(api: APIClient, settings: Any) -> None:
    settings.MEDIA_MAX_UPLOAD_BYTES = 1000
    for entry in api.get(URL).json()["platforms"]:
        assert {k["maxFileBytes"] for k in entry["media"]["kinds"]} == {1000}, entry["platform"]


def _size_issues(api: APIClient, workspace: Workspace, platform: str, size: int) -> list[dict[str, Any]]:
    account = SocialAccountFactory(workspace=workspace, platform=platform)
    media = MediaFileFactory(workspace=workspace, uploaded=True, size=size)
    body = {
        "contentType": "IMAGE",
        "text": "a picture",
        "mediaUrls": [media.public_url],
        "timezone": "UTC",
        "platforms": [platform],
        CONNECTION_FIELDS[platform]: [account.id],
    }
    response = api.post("/api/v1/social-posts/validate", body, format="json")
    assert response.status_code == 200, response.json()
    return [i for i in response.json()["issues"] if i.get("field") == "mediaUrls"]


def test_validation_enforces_each_platforms_file_limit(api: APIClient, workspace: Workspace) -> None:
    assert _size_issues(api, workspace, "BLUESKY", 1_000_000) == []
    [issue] = _size_issues(api, workspace, "BLUESKY", 1_000_001)
    assert issue["platform"] == "BLUESKY"
    assert "at most 1000000 bytes" in issue["message"] and "1000001 bytes" in issue["message"]
    assert _size_issues(api, workspace, "MASTODON", 1_000_001) == []  # Mastodon takes 16 MB images
