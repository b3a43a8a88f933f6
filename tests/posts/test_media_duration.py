"""Create and validate refuse a probed video longer than a target platform takes (the media
rules table, ``platforms.media_rules``), naming the platform, the file and the rule."""

from __future__ import annotations

import dataclasses
import io
from typing import Any

import pytest
from rest_framework.test import APIClient

from media.storage import get_media_storage
from media.tasks import probe_media
from platforms.base import Platform
from platforms.media_rules import MEDIA_RULES, PostType
from posts.models import Post
from posts.payloads import CONNECTION_FIELDS
from tests.factories.accounts import SocialAccountFactory
from tests.factories.media import MediaFileFactory
from tests.media import corpus
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def local_media(settings: Any, tmp_path: Any) -> None:
    settings.STORAGE = "local"
    settings.MEDIA_ROOT = str(tmp_path / "media")


def video_probed(workspace: Workspace, seconds: float | None, status: str = "ready") -> str:
    probe = None if seconds is None else {"type": "video", "durationSeconds": seconds, "videoCodec": "h264"}
    media = MediaFileFactory(
        workspace=workspace,
        uploaded=True,
        kind="video",
        mime_type="video/mp4",
        file_name="clip.mp4",
        probe_status=status,
        probe=probe,
    )
    return str(media.public_url)


def body(workspace: Workspace, platforms: list[str], url: str) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "contentType": "VIDEO",
        "text": "a clip",
        "mediaUrls": [url],
        "timezone": "UTC",
        "platforms": platforms,
    }
    for platform in platforms:
        account = SocialAccountFactory(workspace=workspace, platform=platform)
        payload[CONNECTION_FIELDS[platform]] = [account.id]
    return payload


def issues(api: APIClient, payload: dict[str, Any]) -> list[dict[str, Any]]:
    response = api.post("/api/v1/social-posts/validate", payload, format="json")
    assert response.status_code == 200, response.json()
    return [i for i in response.json()["issues"] if i.get("field") == "mediaUrls"]


def test_a_video_at_the_limit_passes_and_one_longer_is_refused_naming_platform_file_and_rule(
    api: APIClient, workspace: Workspace
) -> None:
    assert MEDIA_RULES[(Platform.TWITTER, PostType.FEED)].video.max_seconds == 1200
    assert issues(api, body(workspace, ["TWITTER"], video_probed(workspace, 1200.0))) == []
    url = video_probed(workspace, 1200.5)
    assert issues(api, body(workspace, ["TWITTER", "YOUTUBE"], url)) == [
        {
            "platform": "TWITTER",
            "field": "mediaUrls",
            "message": f"mediaUrls: TWITTER takes videos of at most 1200 seconds (media_duration); {url} lasts "
            "1200.5 seconds",
        }
    ]


@pytest.mark.parametrize("status", ["queued", ""])
def test_a_video_not_probed_is_not_refused_for_its_length(api: APIClient, workspace: Workspace, status: str) -> None:
    url = video_probed(workspace, None, status)
    assert issues(api, body(workspace, ["TWITTER"], url)) == []


def test_create_refuses_it_with_the_rule_as_its_code(api: APIClient, workspace: Workspace) -> None:
    url = video_probed(workspace, 1500.0)
    response = api.post("/api/v1/social-posts", body(workspace, ["TWITTER"], url), format="json")
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "media_duration"
    assert any("(media_duration)" in message and url in message for message in response.json()["message"])
    assert not Post.objects.exists()


def test_a_really_probed_video_is_checked(api: APIClient, workspace: Workspace, tmp_path: Any, monkeypatch) -> None:
    media = MediaFileFactory(workspace=workspace, uploaded=True, kind="video", mime_type="video/mp4", file_name="v.mp4")
    data = corpus.video(tmp_path / "v.mp4", fps=10, frames=30)  # 3 seconds
    get_media_storage().save(media.key, io.BytesIO(data), content_type="video/mp4")
    assert probe_media(media.id) == "ready"
    assert issues(api, body(workspace, ["TWITTER"], media.public_url)) == []
    rules = MEDIA_RULES[(Platform.TWITTER, PostType.FEED)]
    video = dataclasses.replace(rules.video, max_seconds=2)
    monkeypatch.setitem(MEDIA_RULES, (Platform.TWITTER, PostType.FEED), dataclasses.replace(rules, video=video))
    [issue] = issues(api, body(workspace, ["TWITTER"], media.public_url))
    assert issue["message"].endswith(f"(media_duration); {media.public_url} lasts 3 seconds")
