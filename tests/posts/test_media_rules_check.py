"""Create, PATCH and ``/social-posts/validate`` refuse media a target platform will refuse (issue
34, item 3): a corpus of generated files (images of many sizes, ratios and formats, a HEIC, an
animated GIF, short videos of a few codecs, ratios and lengths, a truncated and a hostile file)
is stored, probed by the real probe, and checked for every platform: each gets either no media
issue or a refusal naming the platform, the file and the rule code, in the error format of
``media_duration``."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from media.storage import get_media_storage
from media.tasks import probe_media
from platforms.capabilities import CAPABILITIES
from platforms.media_rules import RULE_CODES
from posts.models import Post
from posts.payloads import CONFIG_FIELDS, CONNECTION_FIELDS
from tests.factories.accounts import SocialAccountFactory
from tests.factories.media import MediaFileFactory
from tests.media import corpus
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db
_RULE = re.compile(r"^mediaUrls: (?P<platform>[A-Z_]+) takes .+ \((?P<code>media_[a-z_]+)\); (?P<url>\S+) .+$")
OPTIONS = {
    "TIKTOK": {"privacyLevel": "SELF_ONLY"},
    "PINTEREST": {"boardId": "board-1"},
}


@pytest.fixture(autouse=True)
def local_media(settings: Any, tmp_path: Any) -> None:
    settings.STORAGE = "local"
    settings.MEDIA_ROOT = str(tmp_path / "media")


def probed(workspace: Workspace, data: bytes, *, kind: str, mime: str, name: str) -> str:
    """Store ``data`` as an upload of the workspace, run the real probe on it, and return its URL."""
    row = MediaFileFactory(
        workspace=workspace, uploaded=True, kind=kind, mime_type=mime, file_name=name, size=len(data)
    )
    get_media_storage().save(row.key, io.BytesIO(data), content_type=mime)
    probe_media(row.id)
    return str(row.public_url)


def payload(workspace: Workspace, platforms: list[str], urls: list[str], content_type: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "contentType": content_type,
        "text": "media rules",
        "mediaUrls": urls,
        "timezone": "UTC",
        "platforms": platforms,
    }
    for platform in platforms:
        account = SocialAccountFactory(workspace=workspace, platform=platform)
        body[CONNECTION_FIELDS[platform]] = [account.id]
        if platform in OPTIONS:
            body[CONFIG_FIELDS[platform]] = [OPTIONS[platform]]
    return body


def media_issues(api: APIClient, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = api.post("/api/v1/social-posts/validate", body, format="json")
    assert response.status_code == 200, response.json()
    return [i for i in response.json()["issues"] if i.get("field") == "mediaUrls"]


def test_every_platform_accepts_each_corpus_file_or_refuses_it_naming_the_rule(
    api: APIClient, workspace: Workspace, tmp_path: Path
) -> None:
    verdicts: dict[tuple[str, str], set[str]] = {}
    for name, kind, mime, data in corpus.generated(tmp_path):
        url = probed(workspace, data, kind=kind, mime=mime, name=name)
        platforms = [
            p.value for p, caps in CAPABILITIES.items() if (caps.max_images if kind == "image" else caps.max_videos)
        ]
        issues = media_issues(api, payload(workspace, platforms, [url], kind.upper()))
        for issue in issues:
            match = _RULE.match(issue["message"])
            assert match, issue
            assert (match["platform"], match["url"]) == (issue["platform"], url), issue
            assert match["code"] in RULE_CODES, issue
            verdicts.setdefault((name, issue["platform"]), set()).add(match["code"])
        for platform in platforms:
            verdicts.setdefault((name, platform), set())
    # a sample of what the table says, through the real probe
    assert verdicts[("square.jpg", "INSTAGRAM")] == set()
    assert verdicts[("portrait45.jpg", "INSTAGRAM")] == set()  # 4:5 is the tallest feed image
    assert verdicts[("tall916.jpg", "INSTAGRAM")] == {"media_aspect_ratio"}
    assert verdicts[("panorama.jpg", "TELEGRAM")] == set()  # 10:1 is within Telegram's 20
    assert verdicts[("panorama.jpg", "INSTAGRAM")] == {"media_aspect_ratio"}
    assert verdicts[("tiny.png", "GOOGLE_BUSINESS")] == {"media_resolution", "media_file_size"}
    assert verdicts[("tiny.png", "TWITTER")] == set()
    assert "media_format" in verdicts[("photo.webp", "INSTAGRAM")]
    assert verdicts[("photo.webp", "TIKTOK")] == set()
    assert verdicts[("phone.heic", "MASTODON")] == set() and verdicts[("phone.heic", "FACEBOOK")] == set()
    assert verdicts[("phone.heic", "TWITTER")] == {"media_format"}  # HEIC declared as JPEG: the bytes decide
    assert verdicts[("rotated.jpg", "INSTAGRAM")] == set()  # 400x500 as displayed (EXIF 6): 4:5
    assert "media_format" in verdicts[("animated.gif", "INSTAGRAM")]
    assert verdicts[("animated.gif", "TWITTER")] == set()
    assert verdicts[("clip169.mp4", "INSTAGRAM")] == {"media_duration"}  # a Reel lasts 3 s at least
    assert verdicts[("clip169.mp4", "TWITTER")] == set()
    assert verdicts[("reel.mp4", "INSTAGRAM")] == set()
    assert verdicts[("reel.mp4", "TIKTOK")] == {"media_resolution"}  # TikTok wants 360 px a side
    assert verdicts[("mpeg4.mp4", "THREADS")] == {"media_codec"}
    assert verdicts[("slow.mp4", "LINKEDIN")] >= {"media_resolution", "media_file_size"}
    assert "media_frame_rate" in verdicts[("slow.mp4", "INSTAGRAM")]


def test_a_file_the_probe_found_unusable_is_refused_with_its_reason(
    api: APIClient, workspace: Workspace, tmp_path: Path
) -> None:
    whole = corpus.video(tmp_path / "v.mp4", frames=50)
    truncated = probed(workspace, whole[: len(whole) // 2], kind="video", mime="video/mp4", name="cut.mp4")
    bomb = probed(workspace, corpus.decompression_bomb_png(), kind="image", mime="image/png", name="bomb.png")
    [video_issue] = media_issues(api, payload(workspace, ["TWITTER"], [truncated], "VIDEO"))
    assert video_issue["message"].startswith(
        f"mediaUrls: TWITTER takes only readable files (media_unusable); {truncated} is unusable: "
    )
    [image_issue] = media_issues(api, payload(workspace, ["MASTODON"], [bomb], "IMAGE"))
    assert "(media_unusable)" in image_issue["message"] and "pixels" in image_issue["message"]


def test_a_file_not_probed_yet_is_checked_for_its_size_only(api: APIClient, workspace: Workspace) -> None:
    row = MediaFileFactory(workspace=workspace, uploaded=True, kind="image", mime_type="image/png", size=2000)
    assert media_issues(api, payload(workspace, ["INSTAGRAM", "TIKTOK"], [row.public_url], "IMAGE")) == []
    [issue] = media_issues(api, payload(workspace, ["GOOGLE_BUSINESS"], [row.public_url], "IMAGE"))
    assert "(media_file_size)" in issue["message"]  # under Google's 10 KB: known before any probe


def test_the_post_type_decides_which_rules_apply(api: APIClient, workspace: Workspace, tmp_path: Path) -> None:
    wide = probed(
        workspace,
        corpus.video(tmp_path / "w.mp4", size=(320, 180), fps=25, frames=100),
        kind="video",
        mime="video/mp4",
        name="wide.mp4",
    )
    body = payload(workspace, ["YOUTUBE"], [wide], "VIDEO")
    assert media_issues(api, body) == []  # a regular video takes any ratio
    body["youtubeConfigs"] = [{"postType": "SHORTS"}]
    [issue] = media_issues(api, body)
    assert issue["message"] == (
        f"mediaUrls: YOUTUBE takes Shorts videos with an aspect ratio of at most 1:1 (media_aspect_ratio); {wide} "
        "is 320x180 (1.778:1)"
    )


def test_create_and_patch_refuse_with_the_rule_as_the_code(api: APIClient, workspace: Workspace) -> None:
    tall = probed(workspace, corpus.image((360, 640)), kind="image", mime="image/jpeg", name="tall.jpg")
    square = probed(workspace, corpus.image((600, 600)), kind="image", mime="image/jpeg", name="square.jpg")
    body = payload(workspace, ["INSTAGRAM"], [tall], "IMAGE")
    refused = api.post("/api/v1/social-posts", body, format="json")
    assert refused.status_code == 400, refused.json()
    assert refused.json()["code"] == "media_aspect_ratio"
    assert not Post.objects.exists()
    body.update(mediaUrls=[square], scheduledAt="2099-01-01T10:00:00Z")
    created = api.post("/api/v1/social-posts", body, format="json")
    assert created.status_code == 201, created.json()
    patched = api.patch(
        f"/api/v1/social-posts/{created.json()['postId']}",
        {"platforms": ["INSTAGRAM"], "instagramConnectionIds": body["instagramConnectionIds"], "mediaUrls": [tall]},
        format="json",
    )
    assert patched.status_code == 400, patched.json()
    assert patched.json()["code"] == "media_aspect_ratio"
    assert any(f"{tall} is 360x640" in message for message in patched.json()["message"])


def test_media_fit_auto_still_refuses_a_file_under_the_platform_s_smallest_size(
    api: APIClient, workspace: Workspace
) -> None:
    """A fit repairs a file too large, never one too small (it would only come out under the
    minimum again, and the entry fail media_fit_failed after the post was accepted)."""
    tiny = probed(workspace, corpus.image((300, 300)), kind="image", mime="image/jpeg", name="tiny.jpg")
    body = payload(workspace, ["GOOGLE_BUSINESS"], [tiny], "IMAGE")
    body["mediaFit"] = "auto"
    [issue] = media_issues(api, body)
    assert issue["message"].startswith("mediaUrls: GOOGLE_BUSINESS takes images of at least 10000 bytes")
    assert "(media_file_size)" in issue["message"]
    body["mediaUrls"] = [probed(workspace, corpus.image((200, 200), "WEBP"), kind="image", mime="image/webp", name="a")]
    # the format and sides a fit repairs; the size it does not
    assert [_RULE.match(i["message"])["code"] for i in media_issues(api, body)] == ["media_file_size"]  # type: ignore[index]
