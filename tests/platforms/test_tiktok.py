"""The TikTok Content Posting API client against its simulator over real HTTP, and against
recorded bodies."""

from __future__ import annotations

import datetime as dt
import json
from functools import partial
from typing import Any

import pytest
import requests
import responses

from platforms.base import (
    AuthError,
    ConnectedIdentity,
    Credentials,
    ErrorCode,
    MediaItem,
    Metrics,
    NotSupported,
    Permanent,
    Platform,
    PublishRequest,
    Transient,
    UnknownOutcome,
)
from platforms.capabilities import CAPABILITIES
from platforms.registry import get_client
from platforms.sandbox.store import SandboxStore
from platforms.tiktok import LIVE_BASE_URL, Client
from tests.platforms.conftest import drive, load_recorded, media_item, publish_calls, sandbox_page

recorded = partial(load_recorded, "tiktok")
publishes = partial(publish_calls, slug="tiktok")


def video(media_server: str, name: str = "sample.mp4") -> tuple[MediaItem, ...]:
    return (media_item(f"{media_server}/{name}"),)


@pytest.fixture
def creator(connect_one: Any) -> ConnectedIdentity:
    return connect_one("TIKTOK")


def test_connect(creator: ConnectedIdentity) -> None:
    assert creator.profile.external_id == creator.credentials.external_id
    assert creator.profile.username.startswith("sandbox.tok")
    assert creator.credentials.refresh_token and creator.credentials.expires_at is not None
    assert "video.publish" in creator.scopes


def test_live_authorize_url_uses_client_key_on_tiktok_com() -> None:
    client = Client(base_url=LIVE_BASE_URL, app=get_client("TIKTOK").app, session=requests.Session(), timeout=5)
    url = client.authorize_url(redirect_uri="https://app.example/cb", state="s", code_challenge="abc")
    assert url.startswith("https://www.tiktok.com/v2/auth/authorize/?client_key=")
    assert "code_challenge=abc" in url and "code_challenge_method=S256" in url


def test_video_direct_post_resumes_from_state_and_is_listed_with_metrics(
    sandbox: str, creator: ConnectedIdentity, media_server: str
) -> None:
    client = get_client("TIKTOK")
    since = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    request = PublishRequest("t1", "VIDEO", "My clip #fun", media=video(media_server), options={"disableDuet": True})
    first = client.publish(creator.credentials, request, {})
    assert not first.done and first.state["step"] == "status" and first.poll_after == 5.0
    second = client.publish(creator.credentials, request, first.state)  # still PROCESSING_DOWNLOAD
    assert not second.done and second.state == first.state
    final = client.publish(creator.credentials, request, second.state)
    assert final.done and not final.draft_fallback
    assert final.url == sandbox_page("tiktok", f"/@{creator.profile.username}/video/{final.platform_post_id}")
    assert len(publishes(sandbox)) == 1
    job = SandboxStore("tiktok").get("publish", first.state["publish_id"])
    assert job is not None and job["privacy"] == "PUBLIC_TO_EVERYONE" and job["title"] == "My clip #fun"
    listed = client.list_recent_posts(creator.credentials, since)
    assert [(p.platform_post_id, p.text) for p in listed] == [(final.platform_post_id, "My clip #fun")]
    metrics = client.fetch_post_metrics(creator.credentials, [final.platform_post_id])
    views = metrics[final.platform_post_id].views
    assert views is not None and views >= 10 and metrics[final.platform_post_id].likes == views // 6
    assert client.fetch_followers(creator.credentials) == 500


def test_photo_post(sandbox: str, creator: ConnectedIdentity, media_server: str) -> None:
    media = tuple(
        MediaItem(url=f"{media_server}/{n}", kind="image", mime_type="image/jpeg") for n in ("sample.jpg", "sample.jpg")
    )
    request = PublishRequest("t2", "CAROUSEL", "Two photos\nmore words", media=media)
    final = drive(get_client("TIKTOK"), creator.credentials, request)[-1]
    assert final.done and not final.draft_fallback
    entry = publishes(sandbox)[0]
    job = SandboxStore("tiktok").get("publish", entry["remoteId"])
    assert job is not None and job["kind"] == "PHOTO" and job["title"] == "Two photos"
    assert job["description"] == "Two photos\nmore words"


def test_photo_title_is_cut_to_the_tables_title_limit(
    sandbox: str, creator: ConnectedIdentity, media_server: str
) -> None:
    media = tuple(
        MediaItem(url=f"{media_server}/{n}", kind="image", mime_type="image/jpeg") for n in ("sample.jpg", "sample.jpg")
    )
    first_line = "word " * 40
    request = PublishRequest("t3", "CAROUSEL", f"{first_line}\nrest", media=media)
    assert drive(get_client("TIKTOK"), creator.credentials, request)[-1].done
    job = SandboxStore("tiktok").get("publish", publishes(sandbox)[0]["remoteId"])
    assert job is not None and job["title"] == first_line[: CAPABILITIES[Platform.TIKTOK].title_limit or 0]
    assert len(job["title"]) == 90


@pytest.mark.parametrize("content", ["video", "photo"])
def test_daily_cap_falls_back_to_the_inbox_as_a_draft(
    sandbox: str, creator: ConnectedIdentity, media_server: str, content: str
) -> None:
    media = (
        video(media_server)
        if content == "video"
        else (MediaItem(url=f"{media_server}/sample.jpg", kind="image", mime_type="image/jpeg"),)
    )
    request = PublishRequest("t3", "VIDEO", "capped #sandbox-daily-cap", media=media)
    results = drive(get_client("TIKTOK"), creator.credentials, request)
    assert results[0].draft_fallback and results[0].state["inbox"] is True
    assert results[-1].done and results[-1].draft_fallback
    assert results[-1].platform_post_id == results[0].state["publish_id"]
    assert [e["mode"] for e in publishes(sandbox)] == ["inbox"]


def test_per_creator_counter_hits_the_cap(sandbox: str, creator: ConnectedIdentity, media_server: str) -> None:
    SandboxStore("tiktok").update("user", creator.credentials.external_id, daily_cap=1)
    client = get_client("TIKTOK")
    first = drive(client, creator.credentials, PublishRequest("a", "VIDEO", "one", media=video(media_server)))[-1]
    second = drive(client, creator.credentials, PublishRequest("b", "VIDEO", "two", media=video(media_server)))[-1]
    assert (first.draft_fallback, second.draft_fallback) == (False, True)


def test_send_as_draft_uses_the_inbox_without_flagging_a_fallback(
    sandbox: str, creator: ConnectedIdentity, media_server: str
) -> None:
    request = PublishRequest("t4", "VIDEO", "draft", media=video(media_server), options={"sendAsDraft": True})
    final = drive(get_client("TIKTOK"), creator.credentials, request)[-1]
    assert final.done and not final.draft_fallback
    assert [e["mode"] for e in publishes(sandbox)] == ["inbox"]


def test_privacy_option_and_duration_are_honoured(sandbox: str, creator: ConnectedIdentity, media_server: str) -> None:
    client = get_client("TIKTOK")
    with pytest.raises(Permanent) as privacy:
        client.publish(
            creator.credentials,
            PublishRequest("a", "VIDEO", "x", media=video(media_server), options={"privacyLevel": "FRIENDS_ONLY"}),
            {},
        )
    assert privacy.value.error_code == ErrorCode.INVALID_REQUEST
    with pytest.raises(Permanent) as duration:
        client.publish(
            creator.credentials,
            PublishRequest("b", "VIDEO", "x", media=video(media_server), options={"videoDurationSec": 601}),
            {},
        )
    assert duration.value.error_code == ErrorCode.MEDIA_REJECTED
    assert publishes(sandbox) == []


def test_pull_failure_and_moderation_failure(sandbox: str, creator: ConnectedIdentity, media_server: str) -> None:
    client = get_client("TIKTOK")
    with pytest.raises(Permanent) as pulled:
        drive(client, creator.credentials, PublishRequest("a", "VIDEO", "x", media=video(media_server, "no.mp4")))
    assert pulled.value.error_code == ErrorCode.MEDIA_REJECTED and "video_pull_failed" in pulled.value.message
    with pytest.raises(Permanent) as moderated:
        drive(client, creator.credentials, PublishRequest("b", "VIDEO", "x #sandbox-fail", media=video(media_server)))
    assert moderated.value.error_code == ErrorCode.CONTENT_REJECTED


def test_scenario_markers_unauthorized_and_flaky(sandbox: str, creator: ConnectedIdentity, media_server: str) -> None:
    client = get_client("TIKTOK")
    with pytest.raises(AuthError):
        client.publish(
            creator.credentials, PublishRequest("a", "VIDEO", "#sandbox-unauthorized", media=video(media_server)), {}
        )
    flaky = PublishRequest("b", "VIDEO", "x #sandbox-flaky", media=video(media_server))
    with pytest.raises(Transient):
        client.publish(creator.credentials, flaky, {})
    assert drive(client, creator.credentials, flaky)[-1].done
    assert len(publishes(sandbox)) == 1
    with pytest.raises(NotSupported):
        client.lookup(creator.credentials, flaky)


def test_token_check_refresh_and_revocation(sandbox: str, creator: ConnectedIdentity) -> None:
    client = get_client("TIKTOK")
    assert client.check_token(creator.credentials).username == creator.profile.username
    fresh = client.refresh_token(creator.credentials)
    assert fresh.access_token != creator.credentials.access_token
    assert fresh.refresh_token != creator.credentials.refresh_token
    assert client.check_token(fresh).external_id == creator.profile.external_id
    requests.post(
        f"{sandbox}/_control/tiktok/accounts/{creator.profile.external_id}/revoke", json={"revoked": True}, timeout=10
    ).raise_for_status()
    with pytest.raises(AuthError):
        client.check_token(fresh)
    with pytest.raises(AuthError):
        client.refresh_token(fresh)


# --- recorded real-API bodies ---------------------------------------------------------------

CREDS = Credentials(access_token="act.x", external_id="723f24d7-e717-40f8-a2b6-cb8464cd23b4", refresh_token="rft.x")
INIT = f"{LIVE_BASE_URL}/v2/post/publish/video/init/"


def live_client() -> Client:
    return Client(base_url=LIVE_BASE_URL, app=get_client("TIKTOK").app, session=requests.Session(), timeout=5)


@responses.activate
def test_recorded_connect_and_refresh_parse() -> None:
    responses.post(f"{LIVE_BASE_URL}/v2/oauth/token/", json=recorded("oauth_token.json"))
    responses.get(f"{LIVE_BASE_URL}/v2/user/info/", json=recorded("user_info.json"))
    client = live_client()
    [identity] = client.exchange_code(code="c", redirect_uri="https://app.example/cb", code_verifier="v")
    assert identity.credentials.external_id == "afd97af1-b87b-48b9-ac98-410aghda5344"
    assert identity.credentials.refresh_token == "rft.example12345Example12345Example"
    assert identity.scopes == ("user.info.basic", "video.list")
    assert identity.profile.display_name == "Tik Toker"
    assert client.fetch_followers(CREDS) == 4242
    assert client.refresh_token(CREDS).access_token == "act.example12345Example12345Example"


@responses.activate
def test_recorded_publish_flow_parses() -> None:
    responses.post(f"{LIVE_BASE_URL}/v2/post/publish/creator_info/query/", json=recorded("creator_info.json"))
    responses.post(INIT, json=recorded("video_init.json"))
    responses.post(f"{LIVE_BASE_URL}/v2/post/publish/status/fetch/", json=recorded("status_processing.json"))
    responses.post(f"{LIVE_BASE_URL}/v2/post/publish/status/fetch/", json=recorded("status_complete.json"))
    client = live_client()
    request = PublishRequest("t", "VIDEO", "x", media=(MediaItem("https://cdn.example/v.mp4", "video", "video/mp4"),))
    first = client.publish(CREDS, request, {})
    sent = json.loads(responses.calls[1].request.body or b"{}")
    assert sent["post_info"]["privacy_level"] == "PUBLIC_TO_EVERYONE"
    assert sent["post_info"]["disable_stitch"] is True  # the creator disabled stitches
    assert sent["source_info"] == {"source": "PULL_FROM_URL", "video_url": "https://cdn.example/v.mp4"}
    assert first.state["publish_id"] == "v_pub_url~v2.123456789"
    assert not client.publish(CREDS, request, first.state).done
    done = client.publish(CREDS, request, first.state)
    assert done.platform_post_id == "7282938301947194667"
    assert done.url == "https://www.tiktok.com/@tiktok/video/7282938301947194667"


@responses.activate
def test_recorded_status_failure_and_video_list_parse() -> None:
    responses.post(f"{LIVE_BASE_URL}/v2/post/publish/status/fetch/", json=recorded("status_failed.json"))
    responses.post(f"{LIVE_BASE_URL}/v2/video/list/", json=recorded("video_list.json"))
    client = live_client()
    with pytest.raises(Permanent) as failed:
        client.publish(CREDS, PublishRequest("t", "VIDEO", "x"), {"step": "status", "publish_id": "p"})
    assert failed.value.error_code == ErrorCode.MEDIA_REJECTED
    posts = client.list_recent_posts(CREDS, dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    assert [(p.platform_post_id, p.metrics) for p in posts] == [
        ("7080217258529732386", Metrics(views=1210, likes=95, comments=7, shares=3))
    ]
    assert posts[0].published_at == dt.datetime(2024, 5, 1, 10, 0, tzinfo=dt.UTC)


@responses.activate
def test_recorded_daily_cap_falls_back_to_inbox_and_oauth_error_is_auth() -> None:
    responses.post(f"{LIVE_BASE_URL}/v2/post/publish/creator_info/query/", json=recorded("creator_info.json"))
    responses.post(INIT, json=recorded("error_daily_cap.json"), status=403)
    responses.post(f"{LIVE_BASE_URL}/v2/post/publish/inbox/video/init/", json=recorded("video_init.json"))
    responses.post(f"{LIVE_BASE_URL}/v2/oauth/token/", json=recorded("oauth_error.json"), status=400)
    client = live_client()
    request = PublishRequest("t", "VIDEO", "x", media=(MediaItem("https://cdn.example/v.mp4", "video", "video/mp4"),))
    result = client.publish(CREDS, request, {})
    assert result.draft_fallback and result.state["inbox"] and result.state["publish_id"] == "v_pub_url~v2.123456789"
    with pytest.raises(AuthError) as raised:
        client.refresh_token(CREDS)
    assert raised.value.message == "Authorization code is expired."


@responses.activate
def test_timeout_after_sending_init_is_unknown_outcome() -> None:
    responses.post(f"{LIVE_BASE_URL}/v2/post/publish/creator_info/query/", json=recorded("creator_info.json"))
    responses.post(INIT, body=requests.ReadTimeout())
    request = PublishRequest("t", "VIDEO", "x", media=(MediaItem("https://cdn.example/v.mp4", "video", "video/mp4"),))
    with pytest.raises(UnknownOutcome):
        live_client().publish(CREDS, request, {})
