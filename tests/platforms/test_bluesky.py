"""BLUESKY: the real XRPC client against the simulated PDS over HTTP, and against recorded bodies."""

from __future__ import annotations

import datetime as dt
import json
import time
from functools import partial
from typing import Any

import pytest
import requests
import responses
from django.conf import settings

from platforms import bluesky
from platforms.base import (
    AppCredentials,
    AuthError,
    Credentials,
    ErrorCode,
    MediaItem,
    Metrics,
    Permanent,
    Platform,
    PublishRequest,
    QuotaExhausted,
    RateLimited,
    Transient,
    UnknownOutcome,
    thread_session,
)
from platforms.registry import get_client
from platforms.sandbox.store import SandboxStore
from tests.platforms.conftest import load_recorded, media_item, publish_calls

recorded = partial(load_recorded, "bluesky")


def posts_in_repo(did: str) -> list[dict[str, Any]]:
    return SandboxStore("bluesky").all(f"posts:{did}")


@pytest.fixture
def account(connect_one: Any) -> Credentials:
    return connect_one(Platform.BLUESKY).credentials


# --- pure helpers -------------------------------------------------------------------------


def test_record_key_is_a_deterministic_valid_tid() -> None:
    key = bluesky.record_key("tgt_0123456789abcdef")
    assert key == bluesky.record_key("tgt_0123456789abcdef")
    assert key != bluesky.record_key("tgt_0123456789abcdeg")
    from platforms.sandbox.bluesky import TID

    assert TID.match(key)
    assert all(TID.match(bluesky.record_key(f"t{i}")) for i in range(200))


def test_facets_use_utf8_byte_offsets() -> None:
    text = "héllo 🌍 see https://example.com/a?b=1. #café @alice.test and #2024 nope"
    facets = bluesky.detect_facets(text, lambda handle: "did:plc:alice" if handle == "alice.test" else None)
    encoded = text.encode()
    spans = [(encoded[f["index"]["byteStart"] : f["index"]["byteEnd"]].decode(), f["features"][0]) for f in facets]
    assert spans == [
        ("https://example.com/a?b=1", {"$type": "app.bsky.richtext.facet#link", "uri": "https://example.com/a?b=1"}),
        ("#café", {"$type": "app.bsky.richtext.facet#tag", "tag": "café"}),
        ("@alice.test", {"$type": "app.bsky.richtext.facet#mention", "did": "did:plc:alice"}),
    ]


# --- sessions -------------------------------------------------------------------------------


def test_connect_creates_a_user_and_checks_the_token(sandbox: str, connect: Any) -> None:
    (identity,) = connect(Platform.BLUESKY)
    creds = identity.credentials
    assert creds.external_id.startswith("did:plc:")
    assert creds.extra["handle"].startswith("sandbox-") and creds.extra["handle"].endswith(".bsky.social")
    assert creds.expires_at is not None and creds.expires_at > dt.datetime.now(dt.UTC)
    assert identity.profile.username == creds.extra["handle"]
    assert get_client(Platform.BLUESKY).check_token(creds) == identity.profile


def test_same_handle_logs_into_the_same_user_and_wrong_password_is_refused(sandbox: str) -> None:
    client = get_client(Platform.BLUESKY)
    (first,) = client.connect_with_credentials({"handle": "alice.test", "appPassword": "sandbox"})
    (again,) = client.connect_with_credentials({"handle": "@alice.test", "appPassword": "sandbox"})
    assert first.credentials.external_id == again.credentials.external_id
    with pytest.raises(AuthError) as refused:
        client.connect_with_credentials({"handle": "alice.test", "appPassword": "wrong"})
    assert refused.value.message == "Invalid identifier or password"


def test_refresh_session_renews_tokens(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    renewed = client.refresh_token(account)
    assert renewed.refresh_token != account.refresh_token
    assert renewed.external_id == account.external_id
    assert client.check_token(renewed).external_id == account.external_id
    with pytest.raises(AuthError) as reused:  # the old refresh token was single-use
        client.refresh_token(account)
    assert reused.value.error_code == ErrorCode.AUTH_EXPIRED


def test_token_rejected_when_revoked(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    requests.post(f"{sandbox}/_control/bluesky/accounts/{account.external_id}/revoke", json={}, timeout=10)
    with pytest.raises(AuthError):
        client.check_token(account)
    with pytest.raises(AuthError):
        client.check_token(Credentials(access_token="not.a.jwt", external_id=account.external_id))


# --- publishing ----------------------------------------------------------------------------


def test_publish_text_with_facets(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    client.connect_with_credentials({"handle": "bob.test", "appPassword": "sandbox"})
    text = "Launch 🚀 https://example.com #news @bob.test"
    result = client.publish(account, PublishRequest(target_id="tgt_t", content_type="TEXT", text=text), {})
    rkey = bluesky.record_key("tgt_t")
    assert result.done
    assert result.platform_post_id == f"at://{account.external_id}/app.bsky.feed.post/{rkey}"
    # the simulator's page of the post (bsky.app has no such post), at the service's public address
    path = f"/sandbox/bluesky/profile/{account.extra['handle']}/post/{rkey}"
    assert result.url == f"{settings.PUBLIC_BASE_URL}{path}"
    (stored,) = posts_in_repo(account.external_id)
    kinds = [f["features"][0]["$type"].rsplit("#", 1)[1] for f in stored["value"]["facets"]]
    assert kinds == ["link", "tag", "mention"]


def test_publish_images_with_alt_text(sandbox: str, account: Credentials, media_server: str) -> None:
    client = get_client(Platform.BLUESKY)
    req = PublishRequest(
        target_id="tgt_i",
        content_type="CAROUSEL",
        text="pics",
        media=(
            media_item(f"{media_server}/sample.jpg", alt="first"),
            media_item(f"{media_server}/sample.png", alt="second"),
        ),
    )
    result = client.publish(account, req, {})
    assert result.done
    (stored,) = posts_in_repo(account.external_id)
    images = stored["value"]["embed"]["images"]
    assert [(i["alt"], i["image"]["mimeType"]) for i in images] == [("first", "image/jpeg"), ("second", "image/png")]
    (listed,) = client.list_recent_posts(account, dt.datetime.now(dt.UTC) - dt.timedelta(days=1))
    assert listed.platform_post_id == result.platform_post_id and "feed_thumbnail" in listed.thumbnail_url


def test_publish_video_polls_the_job_and_resumes_without_a_second_post(
    sandbox: str, account: Credentials, media_server: str
) -> None:
    client = get_client(Platform.BLUESKY)
    clip = MediaItem(url=f"{media_server}/sample.mp4", kind="video", mime_type="video/mp4", alt_text="clip")
    req = PublishRequest(target_id="tgt_v", content_type="VIDEO", text="a video", media=(clip,))
    first = client.publish(account, req, {})
    assert not first.done and first.state["video_job"] and first.poll_after > 0
    # the worker stops here; another picks the saved state up later
    time.sleep(bluesky.VIDEO_POLL_SECONDS)
    result = client.publish(account, req, first.state)
    assert result.done
    (stored,) = posts_in_repo(account.external_id)
    assert stored["value"]["embed"]["$type"] == "app.bsky.embed.video"
    assert stored["value"]["embed"]["alt"] == "clip"
    log = requests.get(f"{sandbox}/_control/bluesky/requests", timeout=10).json()["requests"]
    assert len([r for r in log if r["path"].endswith("app.bsky.video.uploadVideo")]) == 1


def test_repeat_publish_with_the_same_target_returns_the_existing_post(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    req = PublishRequest(target_id="tgt_once", content_type="TEXT", text="exactly once")
    first = client.publish(account, req, {})
    again = client.publish(account, req, {})
    assert again.platform_post_id == first.platform_post_id
    assert len(posts_in_repo(account.external_id)) == 1
    assert [c["status"] for c in publish_calls(sandbox, "bluesky")] == [200, 400]
    assert client.lookup(account, req) == again
    assert client.lookup(account, PublishRequest(target_id="other", content_type="TEXT", text="x")) is None


def test_scenarios(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    with pytest.raises(Permanent) as failed:
        client.publish(account, PublishRequest(target_id="f", content_type="TEXT", text="#sandbox-fail"), {})
    assert failed.value.error_code == ErrorCode.CONTENT_REJECTED
    with pytest.raises(AuthError):
        client.publish(account, PublishRequest(target_id="u", content_type="TEXT", text="#sandbox-unauthorized"), {})
    flaky = PublishRequest(target_id="fl", content_type="TEXT", text="#sandbox-flaky")
    with pytest.raises(Transient):
        client.publish(account, flaky, {})
    assert client.publish(account, flaky, {}).done
    assert len(posts_in_repo(account.external_id)) == 1


def test_too_long_text_is_content_rejected(sandbox: str, account: Credentials) -> None:
    with pytest.raises(Permanent) as long:
        get_client(Platform.BLUESKY).publish(
            account, PublishRequest(target_id="l", content_type="TEXT", text="x" * 301), {}
        )
    assert long.value.error_code == ErrorCode.CONTENT_REJECTED


def test_metrics_listing_and_followers(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.BLUESKY)
    ids = [
        client.publish(
            account, PublishRequest(target_id=f"m{i}", content_type="TEXT", text=f"n{i}"), {}
        ).platform_post_id
        for i in range(3)
    ]
    listed = client.list_recent_posts(account, dt.datetime.now(dt.UTC) - dt.timedelta(days=180))
    assert [p.platform_post_id for p in listed] == list(reversed(ids))
    metrics = client.fetch_post_metrics(account, ids)
    assert set(metrics) == set(ids)
    assert all(m.views is None and m.likes is not None and m.shares is not None for m in metrics.values())
    followers = client.fetch_followers(account)
    assert isinstance(followers, int) and followers >= 30


# --- recorded bodies and error mapping -------------------------------------------------------

LIVE = "https://pds.example"
CREDS = Credentials(
    access_token="a.b.c",
    refresh_token="r",
    external_id="did:plc:z72i7hdynmk6r22z27h6tvur",
    extra={"handle": "bsky.app"},
)
TEXT = PublishRequest(target_id="tgt_x", content_type="TEXT", text="Hello world")


def live_client() -> bluesky.Client:
    return bluesky.Client(base_url=LIVE, app=AppCredentials(), session=thread_session(), timeout=5)


def xrpc(nsid: str) -> str:
    return f"{LIVE}/xrpc/{nsid}"


@responses.activate
def test_recorded_session_profile_and_post_bodies_parse() -> None:
    client = live_client()
    responses.post(xrpc("com.atproto.server.createSession"), json=recorded("createSession.json"))
    responses.get(xrpc("com.atproto.server.getSession"), json=recorded("getSession.json"))
    responses.get(xrpc("app.bsky.actor.getProfile"), json=recorded("getProfile.json"))
    (identity,) = client.connect_with_credentials({"handle": "bsky.app", "appPassword": "xxxx-xxxx-xxxx-xxxx"})
    assert identity.credentials.external_id == "did:plc:z72i7hdynmk6r22z27h6tvur"
    assert identity.credentials.expires_at == dt.datetime.fromtimestamp(1767232800, dt.UTC)
    assert (identity.profile.display_name, identity.profile.username) == ("Bluesky", "bsky.app")
    assert client.fetch_followers(CREDS) == 1306725
    responses.post(xrpc("com.atproto.repo.createRecord"), json=recorded("createRecord.json"))
    result = client.publish(CREDS, TEXT, {})
    assert result.platform_post_id == "at://did:plc:z72i7hdynmk6r22z27h6tvur/app.bsky.feed.post/3l6oveex3ii2l"
    assert result.url == "https://bsky.app/profile/bsky.app/post/3l6oveex3ii2l"
    sent = json.loads(responses.calls[-1].request.body)
    assert sent["rkey"] == bluesky.record_key("tgt_x") and sent["record"]["text"] == "Hello world"
    responses.get(xrpc("app.bsky.feed.getPosts"), json=recorded("getPosts.json"))
    assert client.fetch_post_metrics(CREDS, [result.platform_post_id]) == {
        result.platform_post_id: Metrics(views=None, likes=15120, comments=1245, shares=2313)
    }
    responses.get(xrpc("app.bsky.feed.getAuthorFeed"), json=recorded("getAuthorFeed.json"))
    responses.get(xrpc("app.bsky.feed.getAuthorFeed"), json={"feed": []})
    (post,) = client.list_recent_posts(CREDS, dt.datetime(2024, 1, 1, tzinfo=dt.UTC))  # the repost is skipped
    assert post.metrics == Metrics(views=None, likes=42, comments=3, shares=12)
    assert post.thumbnail_url.startswith("https://cdn.bsky.app/img/feed_thumbnail/")


@responses.activate
def test_recorded_video_flow_parses() -> None:
    client = live_client()
    responses.get("https://media.example/v.mp4", body=b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 32)
    responses.get(xrpc("com.atproto.server.getServiceAuth"), json=recorded("getServiceAuth.json"))
    video = "https://video.example"
    responses.post(f"{video}/xrpc/app.bsky.video.uploadVideo", json=recorded("uploadVideo.json"))
    responses.get(f"{video}/xrpc/app.bsky.video.getJobStatus", json=recorded("getJobStatus_completed.json"))
    responses.post(xrpc("com.atproto.repo.createRecord"), json=recorded("createRecord.json"))
    client.app = AppCredentials(extra={"video_service_url": video})
    req = PublishRequest(
        target_id="v",
        content_type="VIDEO",
        text="clip",
        media=(MediaItem(url="https://media.example/v.mp4", kind="video", mime_type="video/mp4"),),
    )
    assert client.publish(CREDS, req, {}).done
    record = json.loads(responses.calls[-1].request.body)["record"]
    assert record["embed"]["video"]["ref"]["$link"] == "bafkreiatfrt2ubw7vsvrk5qo6wnvn6mrnbhg6bwfnkiqf4dtuxv5lgvvbq"


@responses.activate
def test_duplicate_record_key_reads_the_existing_post_back() -> None:
    responses.post(
        xrpc("com.atproto.repo.createRecord"),
        json={"error": "InvalidRequest", "message": "Record already exists"},
        status=400,
    )
    responses.get(xrpc("com.atproto.repo.getRecord"), json=recorded("getRecord.json"))
    result = live_client().publish(CREDS, TEXT, {})
    assert result.platform_post_id.endswith("/3l6oveex3ii2l")
    assert result.published_at == dt.datetime(2024, 10, 10, 20, 10, 32, 210000, tzinfo=dt.UTC)
    responses.replace(
        responses.GET, xrpc("com.atproto.repo.getRecord"), json=recorded("error_record_not_found.json"), status=400
    )
    assert live_client().lookup(CREDS, TEXT) is None


@responses.activate
def test_rate_limit_and_daily_quota_carry_the_reset_time() -> None:
    headers = {
        "ratelimit-limit": "5000",
        "ratelimit-remaining": "0",
        "ratelimit-reset": "1893456000",
        "ratelimit-policy": "5000;w=3600",
    }
    responses.post(
        xrpc("com.atproto.repo.createRecord"), json=recorded("error_rate_limit.json"), status=429, headers=headers
    )
    with pytest.raises(RateLimited) as limited:
        live_client().publish(CREDS, TEXT, {})
    assert limited.value.retry_at == dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    responses.replace(
        responses.POST,
        xrpc("com.atproto.repo.createRecord"),
        json=recorded("error_rate_limit.json"),
        status=429,
        headers={**headers, "ratelimit-policy": "35000;w=86400"},
    )
    with pytest.raises(QuotaExhausted) as quota:
        live_client().publish(CREDS, TEXT, {})
    assert quota.value.retry_at == dt.datetime(2030, 1, 1, tzinfo=dt.UTC)


@responses.activate
def test_timeout_after_create_is_unknown_outcome() -> None:
    responses.post(xrpc("com.atproto.repo.createRecord"), body=requests.ConnectionError("Connection aborted."))
    with pytest.raises(UnknownOutcome):
        live_client().publish(CREDS, TEXT, {})
    responses.replace(responses.POST, xrpc("com.atproto.repo.createRecord"), body=requests.ReadTimeout("timed out"))
    with pytest.raises(UnknownOutcome):
        live_client().publish(CREDS, TEXT, {})
