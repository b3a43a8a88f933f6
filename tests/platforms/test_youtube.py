"""YouTube: the real Data API v3 client against its simulator over HTTP, plus recorded bodies."""

from __future__ import annotations

import datetime as dt
import json
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import requests
import responses

from platforms import youtube
from platforms.base import (
    AppCredentials,
    AuthError,
    Credentials,
    ErrorCode,
    MediaItem,
    Permanent,
    PublishRequest,
    Transient,
    thread_session,
)
from platforms.registry import get_client
from platforms.sandbox.store import SandboxStore
from tests.platforms.conftest import load_recorded, media_item, sandbox_page, sim_requests

recorded = partial(load_recorded, "youtube")

LIVE = youtube.LIVE_BASE_URL


def video_request(media_server: str, text: str = "Launch day\nAll about it", **options: Any) -> PublishRequest:
    media = (media_item(f"{media_server}/sample.mp4"),)
    return PublishRequest(target_id="tgt_yt1", content_type="VIDEO", text=text, media=media, options=options)


@pytest.fixture
def account(connect_one: Any) -> Any:
    return connect_one("YOUTUBE")


def test_connect_yields_the_channel_with_offline_access(account: Any) -> None:
    assert account.profile.external_id.startswith("UC")
    assert account.profile.display_name.startswith("Sandbox Channel")
    assert account.credentials.refresh_token
    assert "https://www.googleapis.com/auth/youtube.upload" in account.scopes
    assert get_client("YOUTUBE").authorize_url(redirect_uri="https://a/cb", state="s").count("access_type=offline") == 1


def test_check_token_valid_then_revoked(sandbox: str, account: Any) -> None:
    client = get_client("YOUTUBE")
    assert client.check_token(account.credentials).external_id == account.profile.external_id
    requests.post(f"{sandbox}/_control/youtube/accounts/{account.profile.external_id}/revoke", json={}, timeout=10)
    with pytest.raises(AuthError):
        client.check_token(account.credentials)
    with pytest.raises(AuthError):
        client.refresh_token(account.credentials)


def test_refresh_token(account: Any) -> None:
    client = get_client("YOUTUBE")
    refreshed = client.refresh_token(account.credentials)
    assert refreshed.access_token != account.credentials.access_token
    assert refreshed.refresh_token == account.credentials.refresh_token
    assert refreshed.expires_at is not None
    assert client.check_token(refreshed).external_id == account.profile.external_id


def test_publish_video_in_two_steps_then_listed_with_metrics(sandbox: str, media_server: str, account: Any) -> None:
    client = get_client("YOUTUBE")
    request = video_request(media_server, tags=["a", "b"], categoryId="22", privacyStatus="unlisted")
    opened = client.publish(account.credentials, request, {})
    assert not opened.done and "upload_id=" in opened.state["session_uri"]
    result = client.publish(account.credentials, request, opened.state)
    assert result.done and result.url == sandbox_page("youtube", f"/watch?v={result.platform_post_id}")
    [listed] = client.list_recent_posts(account.credentials, dt.datetime.now(dt.UTC) - dt.timedelta(hours=1))
    assert (listed.platform_post_id, listed.text) == (result.platform_post_id, "Launch day")
    assert listed.metrics.views is not None and listed.metrics.shares is None
    # the lost-answer retry: the same session answers with the same video, no second upload
    again = client.publish(account.credentials, request, opened.state)
    assert again.platform_post_id == result.platform_post_id
    assert len([r for r in sim_requests(sandbox, "youtube") if r.get("publish")]) == 1
    assert len(client.list_recent_posts(account.credentials, dt.datetime.now(dt.UTC) - dt.timedelta(hours=1))) == 1


def test_interrupted_upload_resumes_from_the_offset(sandbox: str, media_server: str, account: Any) -> None:
    client = get_client("YOUTUBE")
    request = video_request(media_server)
    state = client.publish(account.credentials, request, {}).state
    data = (Path(__file__).parents[1] / "fixtures" / "sample.mp4").read_bytes()
    partial = requests.put(
        state["session_uri"],
        data=data[:1000],
        headers={
            "Authorization": f"Bearer {account.credentials.access_token}",
            "Content-Range": f"bytes 0-999/{len(data)}",
        },
        timeout=10,
    )
    assert (partial.status_code, partial.headers["Range"]) == (308, "bytes=0-999")
    result = client.publish(account.credentials, request, state)
    assert result.done
    ranges = [r.get("contentRange") for r in sim_requests(sandbox, "youtube") if r["method"] == "PUT"]
    assert ranges == [f"bytes 0-999/{len(data)}", f"bytes */{len(data)}", f"bytes 1000-{len(data) - 1}/{len(data)}"]
    assert len([r for r in sim_requests(sandbox, "youtube") if r.get("publish")]) == 1


def test_shorts_are_tagged_and_playlist_gets_the_video(media_server: str, account: Any) -> None:
    client = get_client("YOUTUBE")
    playlist_id = SandboxStore("youtube").get("channel", account.profile.external_id)["playlists"][0]
    request = video_request(media_server, "Quick tip", postType="SHORTS", playlistId=playlist_id, videoTitle="Tip")
    state = client.publish(account.credentials, request, {}).state
    result = client.publish(account.credentials, request, state)
    assert result.url == sandbox_page("youtube", f"/shorts/{result.platform_post_id}")
    video = SandboxStore("youtube").get("video", result.platform_post_id)
    assert video["snippet"]["title"] == "Tip #Shorts"
    assert SandboxStore("youtube").get("playlist", playlist_id)["items"] == [result.platform_post_id]


def test_scenario_markers(media_server: str, account: Any) -> None:
    client = get_client("YOUTUBE")
    with pytest.raises(Permanent) as failed:
        client.publish(account.credentials, video_request(media_server, "x #sandbox-fail"), {})
    assert failed.value.error_code == ErrorCode.CONTENT_REJECTED
    with pytest.raises(AuthError):
        client.publish(account.credentials, video_request(media_server, "x #sandbox-unauthorized"), {})
    with pytest.raises(Transient):
        client.publish(account.credentials, video_request(media_server, "x #sandbox-flaky"), {})
    assert not client.publish(account.credentials, video_request(media_server, "x #sandbox-flaky"), {}).done


def test_a_non_video_upload_is_media_rejected(media_server: str, account: Any) -> None:
    client = get_client("YOUTUBE")
    media = (MediaItem(url=f"{media_server}/sample.jpg", kind="video", mime_type="video/mp4"),)
    request = PublishRequest("t", "VIDEO", "Not a video", media)
    state = client.publish(account.credentials, request, {}).state
    with pytest.raises(Permanent) as caught:
        client.publish(account.credentials, request, state)
    assert caught.value.error_code == ErrorCode.MEDIA_REJECTED


def test_metrics_grow_and_followers(media_server: str, account: Any) -> None:
    client = get_client("YOUTUBE")
    request = video_request(media_server)
    video_id = client.publish(
        account.credentials, request, client.publish(account.credentials, request, {}).state
    ).platform_post_id
    first = client.fetch_post_metrics(account.credentials, [video_id, "missing0001"])
    assert list(first) == [video_id]
    time.sleep(1.4)  # the simulator's views grow 1.5 a second
    later = client.fetch_post_metrics(account.credentials, [video_id])[video_id]
    assert later.views > first[video_id].views
    assert (later.likes is not None, later.comments is not None, later.shares) == (True, True, None)
    assert client.fetch_followers(account.credentials) >= 250


# --- recorded bodies and the error taxonomy, against the live URLs ---------------------------
CREDS = Credentials(access_token="ya29.x", refresh_token="1//r", external_id="UC_x5XG1OV2P6uZZ5FSM9Ttw")


def live_client() -> youtube.Client:
    return youtube.Client(base_url=LIVE, app=AppCredentials("cid", "secret"), session=thread_session(), timeout=5)


@responses.activate
def test_recorded_bodies_parse() -> None:
    responses.get(f"{LIVE}/youtube/v3/channels", json=recorded("channels_mine.json"))
    responses.get(f"{LIVE}/youtube/v3/playlistItems", json=recorded("playlist_items.json"))
    responses.get(f"{LIVE}/youtube/v3/videos", json=recorded("videos_statistics.json"))
    client = live_client()
    profile = client.check_token(CREDS)
    assert (profile.external_id, profile.username) == ("UC_x5XG1OV2P6uZZ5FSM9Ttw", "@googledevelopers")
    assert client.fetch_followers(CREDS) == 2400000
    [post] = client.list_recent_posts(CREDS, dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    assert post.platform_post_id == "Ks-_Mh1QhMc"
    assert post.published_at == dt.datetime(2024, 5, 2, 17, 24, 11, tzinfo=dt.UTC)
    assert post.thumbnail_url == "https://i.ytimg.com/vi/Ks-_Mh1QhMc/hqdefault.jpg"
    assert (post.metrics.views, post.metrics.likes, post.metrics.comments) == (4206, 317, 28)
    assert "playlistId=UU_x5XG1OV2P6uZZ5FSM9Ttw" in responses.calls[3].request.url


@responses.activate
def test_recorded_upload_flow_against_live_urls() -> None:
    session_uri = f"{LIVE}/upload/youtube/v3/videos?uploadType=resumable&upload_id=xa298sd_f"
    responses.post(f"{LIVE}/upload/youtube/v3/videos", status=200, headers={"Location": session_uri})
    responses.get("https://media.example/v.mp4", body=b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 100)
    responses.put(session_uri, status=308)
    responses.put(session_uri, json=recorded("video_inserted.json"), status=201)
    client = live_client()
    request = PublishRequest(
        "t",
        "VIDEO",
        "Our launch",
        (MediaItem("https://media.example/v.mp4", "video", "video/mp4"),),
        {"notifySubscribers": False, "madeForKids": True},
    )
    state = client.publish(CREDS, request, {}).state
    init = responses.calls[0].request
    assert "notifySubscribers=false" in init.url and "part=snippet%2Cstatus" in init.url
    assert json.loads(init.body)["status"]["selfDeclaredMadeForKids"] is True
    result = client.publish(CREDS, request, state)
    assert result.platform_post_id == "Ks-_Mh1QhMc"
    assert result.published_at == dt.datetime(2024, 5, 2, 17, 24, 11, tzinfo=dt.UTC)
    assert responses.calls[3].request.headers["Content-Range"] == "bytes 0-111/112"


@responses.activate
def test_recorded_token_bodies() -> None:
    responses.post("https://oauth2.googleapis.com/token", json=recorded("token.json"))
    responses.get(f"{LIVE}/youtube/v3/channels", json=recorded("channels_mine.json"))
    [identity] = live_client().exchange_code(code="4/0Ab", redirect_uri="https://app/cb")
    assert identity.credentials.refresh_token == "1//0gexample-refresh-token"
    assert identity.credentials.external_id == "UC_x5XG1OV2P6uZZ5FSM9Ttw"
    assert (
        live_client()
        .authorize_url(redirect_uri="https://a/cb", state="s")
        .startswith("https://accounts.google.com/o/oauth2/v2/auth?client_id=cid")
    )
    responses.replace(
        responses.POST, "https://oauth2.googleapis.com/token", json=recorded("error_invalid_grant.json"), status=400
    )
    with pytest.raises(AuthError) as caught:
        live_client().refresh_token(CREDS)
    assert caught.value.message == "Token has been expired or revoked."


@responses.activate
def test_timeouts_during_the_upload_are_retryable_because_the_session_answers() -> None:
    session_uri = f"{LIVE}/upload/youtube/v3/videos?uploadType=resumable&upload_id=abc"
    responses.get("https://media.example/v.mp4", body=b"\x00\x00\x00\x18ftypmp42")
    responses.put(session_uri, body=requests.exceptions.ReadTimeout("read timed out"))
    request = PublishRequest("t", "VIDEO", "x", (MediaItem("https://media.example/v.mp4", "video", "video/mp4"),))
    with pytest.raises(Transient):
        live_client().publish(CREDS, request, {"session_uri": session_uri})
