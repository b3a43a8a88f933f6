"""Media fitting end to end (issue 34): a 4:5 phone video (1080x1350, H.264/AAC, made here with
PyAV) posted with ``mediaFit: "auto"`` to Instagram (a Reel), YouTube (a Short), TikTok and X
publishes on all four, with real web, sandbox, worker, beat and media worker processes (the
Procfile's ``worker-media``: ``media.fit`` runs on the ``media`` queue, which the stack's other
worker does not take).

Each platform is sent a variant of its own, made for it: the simulators' request logs name the
file each one received (its SHA-256, sides and codecs), and it is that platform's variant, never
the original. Instagram, YouTube and TikTok recommend vertical video, so theirs is padded to 9:16
(1080x1920); X takes 4:5 but at most 1280 px on the long side, so its variant is scaled to
1024x1280 and stays 4:5. Distinct rules give distinct files; the three 9:16 variants are still
three (one per platform), each what its platform's rules table accepts."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from platforms.base import Platform
from platforms.media_rules import PostType, check_file, rules_for
from platforms.sandbox.media_checks import measure
from posts.payloads import CONNECTION_FIELDS
from tests.e2e.harness import E2EStack, start_media_worker_and_wait, start_stack, wait_for
from tests.media import corpus

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

PLATFORMS = {
    "INSTAGRAM": PostType.REEL,
    "YOUTUBE": PostType.SHORT,
    "TIKTOK": PostType.FEED,
    "TWITTER": PostType.FEED,
}
SOURCE_SIZE = (1080, 1350)  # 4:5, the usual portrait phone video
FPS, FRAMES = 30, 105  # 3.5 s: longer than the 3 s Instagram's Reels need at least
# Fitting re-encodes the video four times on one media worker of concurrency 1; on a shared, loaded
# machine that is a minute or two, and publishing waits for it (at most 10 minutes by design).
PUBLISHED_TIMEOUT = 540


@pytest.fixture(scope="module")
def stack() -> Iterator[E2EStack]:
    with start_stack() as running:
        start_media_worker_and_wait(running)
        yield running


def _upload(stack: E2EStack, data: bytes) -> str:
    answer = stack.api("POST", "/upload-urls", json={"files": [{"fileName": "portrait.mp4", "mimeType": "video/mp4"}]})
    assert answer.status_code in (200, 201), answer.text
    [item] = answer.json()["urls"]
    put = requests.put(item["uploadUrl"], data=data, headers={"Content-Type": "video/mp4"}, timeout=60)
    assert put.ok, put.text
    return str(item["publicUrl"])


def _received(stack: E2EStack, platform: str) -> list[dict[str, Any]]:
    """What the platform's simulator logged of every file it was sent."""
    return [media for entry in stack.sandbox_requests(platform) for media in entry.get("media", [])]


def test_a_4_5_video_publishes_on_four_platforms_each_from_its_own_variant(stack: E2EStack, tmp_path: Path) -> None:
    original = corpus.video(tmp_path / "portrait.mp4", size=SOURCE_SIZE, fps=FPS, frames=FRAMES, audio=True)
    original_sha = hashlib.sha256(original).hexdigest()
    url = _upload(stack, original)
    accounts = {platform: stack.connect_account(platform) for platform in PLATFORMS}
    created = stack.api(
        "POST",
        "/social-posts",
        json={
            "contentType": "VIDEO",
            "timezone": "UTC",
            "text": "Fitted for every platform",
            "mediaUrls": [url],
            "mediaFit": "auto",
            "platforms": list(PLATFORMS),
            **{CONNECTION_FIELDS[p]: [accounts[p]["id"]] for p in PLATFORMS},
            "instagramConfigs": [{"connectionId": accounts["INSTAGRAM"]["id"], "postType": "REEL"}],
            "youtubeConfigs": [
                {"connectionId": accounts["YOUTUBE"]["id"], "postType": "SHORTS", "videoTitle": "Fitted"}
            ],
            "tiktokConfigs": [{"connectionId": accounts["TIKTOK"]["id"], "privacyLevel": "SELF_ONLY"}],
        },
    )
    assert created.status_code == 201, created.text
    post_id = created.json()["postId"]

    def published() -> dict[str, Any] | None:
        record = stack.api("GET", f"/social-posts/{post_id}").json()
        return record if record["status"] in ("COMPLETED", "FAILED", "PARTIAL_FAILURE") else None

    record = wait_for(published, timeout=PUBLISHED_TIMEOUT, interval=1.0, what="the post to finish")
    entries = {entry["platform"]: entry for entry in record["platforms"]}
    assert record["status"] == "COMPLETED", [e for e in entries.values() if e["status"] != "PUBLISHED"]

    variants = {}
    for platform, entry in entries.items():
        assert entry["mediaFit"] == "auto"
        [variant] = entry["mediaVariants"]
        assert variant["originalUrl"] == url and variant["status"] == "ready", (platform, variant)
        variants[platform] = variant
    assert len({v["url"] for v in variants.values()} | {url}) == 5  # four variants, none the original

    for platform, post_type in PLATFORMS.items():
        fitted = requests.get(variants[platform]["url"], timeout=60)
        assert fitted.ok, (platform, fitted.status_code)
        facts = measure(fitted.content)
        assert facts is not None and facts["videoCodec"] == "h264" and facts["audioCodec"] == "aac", facts
        rules = rules_for(Platform(platform), post_type)
        assert check_file(rules, "video", size=len(fitted.content), facts=facts) == [], platform
        # the simulator was sent this file, this platform's variant, and never the original
        received = _received(stack, platform)
        assert {m["sha256"] for m in received} == {hashlib.sha256(fitted.content).hexdigest()}, platform
        assert original_sha not in {m["sha256"] for m in received}
        sides = {(m["displayWidth"], m["displayHeight"]) for m in received}
        if platform == "TWITTER":  # 4:5 within X's 1280 px: scaled, not padded
            assert sides == {(1024, 1280)} and variants[platform]["rulesFixed"] == ["media_resolution"]
        else:  # vertical video platforms: padded to 9:16
            assert sides == {(1080, 1920)} and "media_aspect_ratio" in variants[platform]["rulesFixed"]
