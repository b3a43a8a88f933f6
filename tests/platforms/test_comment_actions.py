"""The capability table's ``comment_actions`` and the clients agree: a platform lists an action
exactly when its client implements the call behind it, and TikTok, Pinterest and Telegram (no
comment API an app can use for a creator) list none and raise NotSupported for every call."""

from __future__ import annotations

import pytest

from platforms.base import Credentials, NotSupported, Platform, PlatformClient, PostRef, PublishRequest, ReplyTo
from platforms.capabilities import CAPABILITIES
from platforms.registry import get_client

CALLS = {
    "read": "list_comments",
    "reply": "reply_comment",
    "hide": "set_comment_hidden",
    "delete_own": "delete_comment",
    "delete_others": "delete_comment",
    "like": "like_comment",
}
MINE = {
    Platform.TWITTER: {"read", "reply", "hide", "delete_own", "like"},
    Platform.BLUESKY: {"read", "reply", "hide", "delete_own", "like"},
    Platform.MASTODON: {"read", "reply", "delete_own", "like"},
    Platform.LINKEDIN: {"read", "reply", "delete_own", "like"},
    Platform.TIKTOK: set(),
}


@pytest.mark.parametrize("platform", list(Platform), ids=lambda p: p.value)
def test_an_action_is_listed_exactly_when_the_client_implements_it(platform: Platform) -> None:
    caps = CAPABILITIES[platform]
    assert caps.comment_actions <= set(CALLS)
    client_class = type(get_client(platform))
    for action, call in CALLS.items():
        implemented = getattr(client_class, call) is not getattr(PlatformClient, call)
        if action in caps.comment_actions:
            assert implemented, (platform, action)
        elif not any(a in caps.comment_actions for a, c in CALLS.items() if c == call):
            assert not implemented, (platform, action)
    assert (caps.comment_reads_per_hour > 0) == ("read" in caps.comment_actions)


@pytest.mark.parametrize("platform", sorted(MINE), ids=lambda p: p.value)
def test_the_actions_of_x_bluesky_mastodon_linkedin_and_tiktok(platform: Platform) -> None:
    assert CAPABILITIES[platform].comment_actions == MINE[platform]


def test_tiktok_has_no_comment_call() -> None:
    client = get_client(Platform.TIKTOK)
    creds = Credentials(access_token="tok", external_id="42")
    on = PostRef("7300000000000000000")
    request = PublishRequest(target_id="k", content_type="TEXT", text="x", reply_to=ReplyTo(root=on, parent=on))
    calls = [
        lambda: client.list_comments(creds, "7300000000000000000"),
        lambda: client.reply_comment(creds, request, {}),
        lambda: client.set_comment_hidden(creds, "1", True),
        lambda: client.delete_comment(creds, "1"),
        lambda: client.like_comment(creds, "1"),
    ]
    for call in calls:
        with pytest.raises(NotSupported):
            call()
