"""Every content type each platform's capabilities row names is published by its real client
against its simulator, with ordinary media (a 640×480 JPEG, a 3 s 9:16 H.264 MP4, a PDF), and
creates exactly one post, even when a resumed step runs twice (a task redelivered after its
worker died: the step re-runs from the last saved state)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from platforms.base import Platform, PublishRequest, PublishResult
from platforms.capabilities import CAPABILITIES
from platforms.registry import get_client
from tests.platforms.conftest import connect_sandbox_account, media_item, publish_calls

MEDIA = {
    "TEXT": (),
    "IMAGE": ("sample.jpg",),
    "VIDEO": ("sample-reel.mp4",),
    "CAROUSEL": ("sample.jpg", "sample.jpg"),
    "DOCUMENT": ("sample.pdf",),
}
OPTIONS: dict[Platform, dict[str, Any]] = {
    Platform.TIKTOK: {"privacyLevel": "SELF_ONLY", "title": "Sandbox clip"},
    Platform.YOUTUBE: {"videoTitle": "Sandbox clip"},
    Platform.LINKEDIN: {"documentTitle": "Sandbox deck"},
}
PAIRS = [(p, t) for p in Platform for t in sorted(CAPABILITIES[p].content_types)]


def _until_done(client: Any, creds: Any, request: PublishRequest) -> tuple[PublishResult, int]:
    """Run the flow as the worker would, waiting (briefly) as each step asks; every resumed step
    that does not finish is run a second time from the same saved state (its first answer lost).
    Returns the final result and the number of steps."""
    result = client.publish(creds, request, {})
    steps = 1
    for _ in range(40):
        if result.done:
            return result, steps
        saved = result.state
        time.sleep(min(result.poll_after, 0.5))
        result = client.publish(creds, request, saved)
        steps += 1
        if not result.done:
            result = client.publish(creds, request, saved)  # redelivered: the same step again
    raise AssertionError(f"not done: {result}")


@pytest.mark.parametrize(("platform", "content_type"), PAIRS, ids=[f"{p.value}-{t}" for p, t in PAIRS])
def test_each_content_type_publishes_once(
    platform: Platform, content_type: str, sandbox: str, media_server: str
) -> None:
    creds = connect_sandbox_account(platform)[0].credentials
    client = get_client(platform)
    options = dict(OPTIONS.get(platform, {}))
    if platform == Platform.PINTEREST:
        options["boardId"] = client.list_boards(creds)[0].id
    request = PublishRequest(
        target_id=f"tgt_{content_type.lower()}",
        content_type=content_type,
        text=f"A {content_type.lower()} post",
        media=tuple(media_item(f"{media_server}/{name}") for name in MEDIA[content_type]),
        options=options,
    )
    result, _steps = _until_done(client, creds, request)
    assert result.platform_post_id
    assert not result.draft_fallback
    created = [entry for entry in publish_calls(sandbox, platform.slug) if entry["status"] < 300]
    assert len(created) == 1, created
