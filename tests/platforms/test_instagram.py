"""The Instagram client (Graph API via Facebook Login) against its simulator over real HTTP,
and against recorded Graph API bodies."""

from __future__ import annotations

import datetime as dt
from functools import partial
from typing import Any

import pytest
import requests
import responses

from platforms.base import (
    AudioItem,
    AuthError,
    ConnectedIdentity,
    Credentials,
    ErrorCode,
    Metrics,
    Permanent,
    PublishRequest,
    PublishResult,
    QuotaExhausted,
    Transient,
    UnknownOutcome,
)
from platforms.instagram import LIVE_BASE_URL, Client
from platforms.registry import get_client
from platforms.sandbox.store import SandboxStore
from tests.platforms.conftest import drive, load_recorded, media_item, publish_calls, sandbox_page

recorded = partial(load_recorded, "instagram")
publishes = partial(publish_calls, slug="instagram")

GRAPH = f"{LIVE_BASE_URL}/v21.0"


@pytest.fixture
def account(connect_one: Any) -> ConnectedIdentity:
    return connect_one("INSTAGRAM")


def test_connect_yields_the_linked_professional_account(account: ConnectedIdentity) -> None:
    assert account.profile.external_id == account.credentials.external_id
    assert account.profile.external_id.startswith("1784")
    assert account.profile.supports_instagram_audio is True
    assert account.profile.username.startswith("sandbox.pro")
    assert account.credentials.extra["page_id"]
    assert account.credentials.expires_at is not None
    assert account.credentials.expires_at > dt.datetime.now(dt.UTC) + dt.timedelta(days=59)


def test_image_post_publishes_in_one_call_and_is_listed(
    sandbox: str, account: ConnectedIdentity, media_server: str
) -> None:
    client = get_client("INSTAGRAM")
    since = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    request = PublishRequest("t1", "IMAGE", "Fresh peaches", media=(media_item(f"{media_server}/sample.jpg"),))
    results = drive(client, account.credentials, request)
    assert len(results) == 1
    media_id = results[0].platform_post_id
    assert results[0].url.startswith(sandbox_page("instagram", "/p/"))
    listed = client.list_recent_posts(account.credentials, since)
    assert [(p.platform_post_id, p.text) for p in listed] == [(media_id, "Fresh peaches")]
    metrics = client.fetch_post_metrics(account.credentials, [media_id, "180999"])
    assert set(metrics) == {media_id}
    assert metrics[media_id].views is not None and metrics[media_id].likes == metrics[media_id].views // 5
    assert [e["remoteId"] for e in publishes(sandbox)] == [media_id]


def test_reel_with_audio_and_trial_resumes_from_state_without_a_second_post(
    sandbox: str, account: ConnectedIdentity, media_server: str
) -> None:
    client = get_client("INSTAGRAM")
    request = PublishRequest(
        "t2",
        "VIDEO",
        "A reel",
        media=(media_item(f"{media_server}/sample.mp4"),),
        options={"audio": "17900000000000001", "trialGraduation": "SS_PERFORMANCE"},
    )
    first = client.publish(account.credentials, request, {})
    assert not first.done and first.state["step"] == "container" and first.poll_after == 10.0
    assert publishes(sandbox) == []
    final = client.publish(account.credentials, request, first.state)  # the first result was "dropped"
    assert final.done
    stored = SandboxStore("instagram").get("media", final.platform_post_id)
    assert stored is not None
    assert stored["audio_id"] == "17900000000000001"
    assert stored["trial_params"] == {"graduation_strategy": "SS_PERFORMANCE"}
    assert stored["product"] == "REELS"
    # a worker that lost the result and resumes from the old state does not post twice
    with pytest.raises(UnknownOutcome):
        client.publish(account.credentials, request, first.state)
    assert len(publishes(sandbox)) == 1
    found = client.lookup(account.credentials, request)
    assert found is not None and found.platform_post_id == final.platform_post_id


def test_carousel_waits_for_items_then_publishes_once(
    sandbox: str, account: ConnectedIdentity, media_server: str
) -> None:
    client = get_client("INSTAGRAM")
    media = (
        media_item(f"{media_server}/sample.jpg"),
        media_item(f"{media_server}/sample-wide.mp4"),
        media_item(f"{media_server}/sample.jpg"),
    )
    results = drive(client, account.credentials, PublishRequest("t3", "CAROUSEL", "Three", media=media))
    assert results[0].state["step"] == "children" and len(results[0].state["children"]) == 3
    assert results[-1].done
    stored = SandboxStore("instagram").get("media", results[-1].platform_post_id)
    assert stored is not None and stored["media_type"] == "CAROUSEL_ALBUM"
    assert len(publishes(sandbox)) == 1


def test_story(sandbox: str, account: ConnectedIdentity, media_server: str) -> None:
    client = get_client("INSTAGRAM")
    request = PublishRequest(
        "t4", "IMAGE", "", media=(media_item(f"{media_server}/sample.jpg"),), options={"postType": "STORY"}
    )
    result = drive(client, account.credentials, request)[-1]
    stored = SandboxStore("instagram").get("media", result.platform_post_id)
    assert stored is not None and stored["product"] == "STORY"


def test_video_that_cannot_be_fetched_is_media_rejected(
    sandbox: str, account: ConnectedIdentity, media_server: str
) -> None:
    client = get_client("INSTAGRAM")
    request = PublishRequest("t5", "VIDEO", "x", media=(media_item(f"{media_server}/missing.mp4"),))
    with pytest.raises(Permanent) as raised:
        client.publish(account.credentials, request, {})
    assert raised.value.error_code == ErrorCode.MEDIA_REJECTED
    assert "Media download has failed" in raised.value.message


def test_publishing_limit_is_quota_exhausted(sandbox: str, account: ConnectedIdentity, media_server: str) -> None:
    SandboxStore("instagram").update("iguser", account.credentials.external_id, quota_total=1)
    client = get_client("INSTAGRAM")
    request = PublishRequest("t6", "IMAGE", "one", media=(media_item(f"{media_server}/sample.jpg"),))
    assert client.publish(account.credentials, request, {}).done
    with pytest.raises(QuotaExhausted) as raised:
        client.publish(account.credentials, PublishRequest("t7", "IMAGE", "two", media=request.media), {})
    assert raised.value.retry_at is not None and raised.value.retry_at > dt.datetime.now(dt.UTC)
    assert raised.value.error_code == ErrorCode.QUOTA_EXHAUSTED


def test_check_token_refresh_and_revocation(sandbox: str, account: ConnectedIdentity) -> None:
    client = get_client("INSTAGRAM")
    assert client.check_token(account.credentials).username == account.profile.username
    fresh = client.refresh_token(account.credentials)
    assert fresh.access_token != account.credentials.access_token
    assert fresh.external_id == account.credentials.external_id and fresh.extra == account.credentials.extra
    assert client.check_token(fresh).external_id == account.profile.external_id
    requests.post(
        f"{sandbox}/_control/instagram/accounts/{account.profile.external_id}/revoke", json={}, timeout=10
    ).raise_for_status()
    with pytest.raises(AuthError):
        client.check_token(fresh)
    with pytest.raises(AuthError):
        client.refresh_token(fresh)


def test_scenario_markers(sandbox: str, account: ConnectedIdentity, media_server: str) -> None:
    client = get_client("INSTAGRAM")
    media = (media_item(f"{media_server}/sample.jpg"),)
    with pytest.raises(AuthError):
        client.publish(account.credentials, PublishRequest("a", "IMAGE", "x #sandbox-unauthorized", media=media), {})
    with pytest.raises(Permanent) as failed:
        client.publish(account.credentials, PublishRequest("b", "IMAGE", "x #sandbox-fail", media=media), {})
    assert failed.value.error_code == ErrorCode.CONTENT_REJECTED
    flaky = PublishRequest("c", "IMAGE", "x #sandbox-flaky", media=media)
    with pytest.raises(Transient):
        client.publish(account.credentials, flaky, {})
    assert client.publish(account.credentials, flaky, {}).done
    assert len(publishes(sandbox)) == 1


def test_audio_search_trending_and_query(sandbox: str, account: ConnectedIdentity) -> None:
    client = get_client("INSTAGRAM")
    music = client.search_audio(account.credentials, audio_type="music")
    assert len(music) >= 3 and all(a.audio_type == "music" and a.artist and a.duration_ms for a in music)
    sounds = client.search_audio(account.credentials, audio_type="original_sound")
    assert sounds and all(a.audio_type == "original_sound" for a in sounds)
    found = client.search_audio(account.credentials, audio_type="music", query="coffee")
    assert [a.title for a in found] == ["Morning Coffee"]
    assert client.search_audio(account.credentials, audio_type="music", query="no such song") == []
    assert client.search_audio(account.credentials, audio_type="music", query="x" * 100) == []  # at the limit
    with pytest.raises(Permanent):
        client.search_audio(account.credentials, audio_type="music", query="x" * 101)


def test_followers(sandbox: str, account: ConnectedIdentity) -> None:
    assert (get_client("INSTAGRAM").fetch_followers(account.credentials) or 0) >= 300


# --- recorded real-API bodies ---------------------------------------------------------------

CREDS = Credentials(access_token="user-token", external_id="17841405822304914")


def live_client() -> Client:
    return Client(base_url=LIVE_BASE_URL, app=get_client("INSTAGRAM").app, session=requests.Session(), timeout=5)


@responses.activate
def test_recorded_connect_skips_pages_without_instagram() -> None:
    responses.get(
        f"{GRAPH}/oauth/access_token", json={"access_token": "t", "token_type": "bearer", "expires_in": 5183944}
    )
    responses.get(f"{GRAPH}/me/accounts", json=recorded("me_accounts.json"))
    identities = live_client().exchange_code(code="c", redirect_uri="https://app.example/cb")
    assert [(i.profile.external_id, i.profile.username, i.credentials.extra) for i in identities] == [
        ("17841405822304914", "jaspersmarket", {"page_id": "134895793791914"})
    ]


@responses.activate
def test_recorded_publish_flow_parses() -> None:
    responses.get(f"{GRAPH}/17841405822304914/content_publishing_limit", json={"data": [{"quota_usage": 2}]})
    responses.post(f"{GRAPH}/17841405822304914/media", json=recorded("container_create.json"))
    responses.get(f"{GRAPH}/17889455560051444", json=recorded("container_status_in_progress.json"))
    responses.get(f"{GRAPH}/17889455560051444", json=recorded("container_status_finished.json"))
    responses.post(f"{GRAPH}/17841405822304914/media_publish", json=recorded("media_publish.json"))
    responses.get(f"{GRAPH}/17920238422030506", json=recorded("media_fields.json"))
    client = live_client()
    request = PublishRequest("t", "VIDEO", "x", media=(media_item("https://cdn.example/v.mp4"),))
    first = client.publish(CREDS, request, {})
    assert first.state == {"step": "container", "container_id": "17889455560051444"}
    done = client.publish(CREDS, request, first.state)
    assert done == PublishResult(
        done=True,
        platform_post_id="17920238422030506",
        url="https://www.instagram.com/p/C6xYzAbCdEf/",
        published_at=dt.datetime(2024, 5, 1, 10, 0, tzinfo=dt.UTC),
    )


@responses.activate
def test_recorded_limit_status_error_insights_media_and_audio_parse() -> None:
    responses.get(f"{GRAPH}/17841405822304914/content_publishing_limit", json=recorded("content_publishing_limit.json"))
    responses.get(f"{GRAPH}/17889455560051444", json=recorded("container_status_error.json"))
    responses.get(f"{GRAPH}/17920238422030506/insights", json=recorded("media_insights.json"))
    responses.get(f"{GRAPH}/17841405822304914/media", json=recorded("user_media.json"))
    responses.get(f"{GRAPH}/17841405822304914", json=recorded("ig_user.json"))
    responses.get(f"{GRAPH}/ig_audio", json=recorded("ig_audio.json"))
    client = live_client()
    request = PublishRequest("t", "IMAGE", "x", media=(media_item("https://cdn.example/a.jpg"),))
    with pytest.raises(QuotaExhausted):
        client.publish(CREDS, request, {})
    with pytest.raises(Permanent) as rejected:
        client.publish(CREDS, request, {"step": "container", "container_id": "17889455560051444"})
    assert rejected.value.error_code == ErrorCode.MEDIA_REJECTED and "aspect ratio" in rejected.value.message
    assert client.fetch_post_metrics(CREDS, ["17920238422030506"]) == {
        "17920238422030506": Metrics(views=1530, likes=87, comments=9, shares=4, saves=12, reach=1100)
    }
    posts = client.list_recent_posts(CREDS, dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    assert [(p.platform_post_id, p.metrics.likes) for p in posts] == [("17920238422030506", 87)]
    assert client.fetch_followers(CREDS) == 3421
    assert client.search_audio(CREDS, audio_type="music") == [
        AudioItem(
            "17900000000000000",
            "Late Night Drive",
            "Example Artist",
            30000,
            "https://scontent.xx.fbcdn.net/cover.jpg",
            "music",
        ),
        AudioItem(
            "17800000000000000",
            "Original audio",
            "creator",
            None,
            "https://scontent.xx.fbcdn.net/creator.jpg",
            "original_sound",
        ),
    ]


@responses.activate
def test_timeout_on_media_publish_is_unknown_outcome() -> None:
    responses.get(f"{GRAPH}/1", json={"status_code": "FINISHED", "id": "1"})
    responses.post(f"{GRAPH}/17841405822304914/media_publish", body=requests.ConnectionError("Connection aborted."))
    with pytest.raises(UnknownOutcome):
        live_client().publish(CREDS, PublishRequest("t", "IMAGE", "x"), {"step": "container", "container_id": "1"})
