"""The simulators' profile counts (Mastodon ``statuses_count``, Bluesky ``postsCount``, X
``tweet_count``) follow what the account published, over real HTTP: each count is read from the
store's index without reading the items themselves, and must still be the number published."""

from __future__ import annotations

from typing import Any

import requests

from platforms.base import Credentials, Platform, PublishRequest
from platforms.registry import get_client


def _publish(platform: Platform, creds: Credentials, count: int) -> None:
    client = get_client(platform)
    for index in range(count):
        request = PublishRequest(target_id=f"tgt_count_{index}", content_type="TEXT", text=f"count me {index}")
        assert client.publish(creds, request, {}).done


def _get(url: str, token: str, **params: Any) -> dict[str, Any]:
    response = requests.get(url, headers={"Authorization": f"Bearer {token}"}, params=params, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def test_mastodon_statuses_count_follows_the_statuses_published(sandbox: str, connect_one: Any) -> None:
    creds = connect_one(Platform.MASTODON).credentials
    url = f"{sandbox}/mastodon/api/v1/accounts/verify_credentials"
    assert _get(url, creds.access_token)["statuses_count"] == 0
    _publish(Platform.MASTODON, creds, 3)
    assert _get(url, creds.access_token)["statuses_count"] == 3


def test_bluesky_posts_count_follows_the_posts_published(sandbox: str, connect_one: Any) -> None:
    creds = connect_one(Platform.BLUESKY).credentials
    url = f"{sandbox}/bluesky/xrpc/app.bsky.actor.getProfile"
    assert _get(url, creds.access_token, actor=creds.external_id)["postsCount"] == 0
    _publish(Platform.BLUESKY, creds, 2)
    assert _get(url, creds.access_token, actor=creds.external_id)["postsCount"] == 2


def test_x_tweet_count_follows_the_tweets_published(sandbox: str, connect_one: Any) -> None:
    creds = connect_one(Platform.TWITTER).credentials
    url = f"{sandbox}/twitter/2/users/me"
    assert _get(url, creds.access_token)["data"]["public_metrics"]["tweet_count"] == 0
    _publish(Platform.TWITTER, creds, 2)
    assert _get(url, creds.access_token)["data"]["public_metrics"]["tweet_count"] == 2
