"""LinkedIn: the real versioned REST client against its simulator over HTTP, plus recorded bodies."""

from __future__ import annotations

import datetime as dt
import json
import time
from functools import partial
from typing import Any

import pytest
import requests
import responses

from platforms import linkedin
from platforms.base import (
    AppCredentials,
    AuthError,
    Credentials,
    ErrorCode,
    MediaItem,
    Permanent,
    PublishRequest,
    Transient,
    UnknownOutcome,
    thread_session,
)
from platforms.registry import get_client
from platforms.sandbox.store import SandboxStore
from tests.platforms.conftest import drive, load_recorded, media_item, sandbox_page, sim_requests

recorded = partial(load_recorded, "linkedin")

LIVE = linkedin.LIVE_BASE_URL
HOUR_AGO = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)


@pytest.fixture
def account(connect_one: Any) -> Any:
    return connect_one("LINKEDIN")


def test_connect_check_and_refresh(sandbox: str, account: Any) -> None:
    client = get_client("LINKEDIN")
    assert account.profile.display_name.startswith("Sandbox Member")
    assert "w_member_social" in account.scopes
    assert client.check_token(account.credentials).external_id == account.credentials.external_id
    refreshed = client.refresh_token(account.credentials)
    assert refreshed.access_token != account.credentials.access_token
    assert client.check_token(refreshed).external_id == account.profile.external_id
    requests.post(f"{sandbox}/_control/linkedin/accounts/{account.profile.external_id}/revoke", json={}, timeout=10)
    with pytest.raises(AuthError):
        client.check_token(account.credentials)
    with pytest.raises(AuthError):
        client.refresh_token(account.credentials)


def test_text_post_listing_metrics_and_duplicate(sandbox: str, account: Any) -> None:
    client = get_client("LINKEDIN")
    request = PublishRequest("tgt_li1", "TEXT", "Hello professional world")
    result = client.publish(account.credentials, request, {})
    assert result.done and result.platform_post_id.startswith("urn:li:share:")
    assert result.url == sandbox_page("linkedin", f"/feed/update/{result.platform_post_id}/")
    [listed] = client.list_recent_posts(account.credentials, HOUR_AGO)
    assert (listed.platform_post_id, listed.text) == (result.platform_post_id, "Hello professional world")
    first = client.fetch_post_metrics(account.credentials, [result.platform_post_id])[result.platform_post_id]
    time.sleep(1.1)  # impressions grow four a second in the simulator
    later = client.fetch_post_metrics(account.credentials, [result.platform_post_id])[result.platform_post_id]
    assert later.views > (first.views or 0)
    assert None not in (later.likes, later.comments, later.shares)
    with pytest.raises(Permanent) as duplicate:
        client.publish(account.credentials, request, {})
    assert duplicate.value.error_code == ErrorCode.DUPLICATE
    assert client.fetch_followers(account.credentials) >= 500


def test_single_image_and_multi_image_posts(media_server: str, account: Any) -> None:
    client = get_client("LINKEDIN")
    one = PublishRequest("t1", "IMAGE", "One picture", (media_item(f"{media_server}/sample.jpg", alt="image alt"),))
    assert drive(client, account.credentials, one, {})[-1].done
    many = tuple(media_item(f"{media_server}/{n}", alt="image alt") for n in ("sample.jpg", "sample.png", "sample.jpg"))
    result = drive(client, account.credentials, PublishRequest("t2", "CAROUSEL", "Three", many), {})[-1]
    post = SandboxStore("linkedin").get("post", result.platform_post_id)
    assert len(post["content"]["multiImage"]["images"]) == 3


def test_video_flow_resumed_after_each_step_creates_one_post(sandbox: str, media_server: str, account: Any) -> None:
    client = get_client("LINKEDIN")
    request = PublishRequest(
        "t3", "VIDEO", "Our clip", (media_item(f"{media_server}/sample-reel.mp4", alt="video alt"),)
    )
    initialized = client.publish(account.credentials, request, {})
    assert initialized.state["video"].startswith("urn:li:video:")
    uploaded = client.publish(account.credentials, request, initialized.state)
    assert uploaded.state["finalized"]
    # the answer to the first status poll was lost: resume again from the finalized state
    assert not client.publish(account.credentials, request, uploaded.state).done
    result = drive(client, account.credentials, request, uploaded.state)[-1]
    log = sim_requests(sandbox, "linkedin")
    assert len([r for r in log if r["path"].endswith("/rest/videos") and r["method"] == "POST"]) == 2  # init+final
    assert [r["remoteId"] for r in log if r.get("publish")] == [result.platform_post_id]
    assert SandboxStore("linkedin").get("post", result.platform_post_id)["content"] == {
        "media": {"id": initialized.state["video"]}
    }


def test_document_post_uses_the_document_title(media_server: str, account: Any) -> None:
    client = get_client("LINKEDIN")
    request = PublishRequest(
        "t4",
        "DOCUMENT",
        "Read this",
        (media_item(f"{media_server}/sample.pdf", alt="document alt"),),
        {"documentTitle": "Annual report"},
    )
    result = drive(client, account.credentials, request, {})[-1]
    content = SandboxStore("linkedin").get("post", result.platform_post_id)["content"]
    assert content["media"]["title"] == "Annual report" and content["media"]["id"].startswith("urn:li:document:")


def test_a_wrong_file_is_media_rejected(media_server: str, account: Any) -> None:
    request = PublishRequest(
        "t5",
        "IMAGE",
        "x",
        (MediaItem(url=f"{media_server}/sample.pdf", kind="image", mime_type="image/jpeg", alt_text="image alt"),),
    )
    with pytest.raises(Permanent) as caught:
        get_client("LINKEDIN").publish(account.credentials, request, {})
    assert caught.value.error_code == ErrorCode.MEDIA_REJECTED


def test_scenario_markers(account: Any) -> None:
    client = get_client("LINKEDIN")
    with pytest.raises(Permanent) as failed:
        client.publish(account.credentials, PublishRequest("t", "TEXT", "no #sandbox-fail"), {})
    assert failed.value.error_code == ErrorCode.CONTENT_REJECTED
    with pytest.raises(AuthError):
        client.publish(account.credentials, PublishRequest("t", "TEXT", "no #sandbox-unauthorized"), {})
    with pytest.raises(Transient):
        client.publish(account.credentials, PublishRequest("t", "TEXT", "once #sandbox-flaky"), {})
    assert client.publish(account.credentials, PublishRequest("t", "TEXT", "once #sandbox-flaky"), {}).done


# --- recorded bodies and the error taxonomy, against the live URLs ---------------------------
CREDS = Credentials(access_token="AQUv", refresh_token="AQWA", external_id="782bbtaQ")
SHARE = "urn:li:share:6957408550713184256"


def live_client() -> linkedin.Client:
    return linkedin.Client(base_url=LIVE, app=AppCredentials("cid", "sec"), session=thread_session(), timeout=5)


@responses.activate
def test_recorded_bodies_parse() -> None:
    responses.get(f"{LIVE}/v2/userinfo", json=recorded("userinfo.json"))
    responses.get(f"{LIVE}/rest/posts", json=recorded("posts_by_author.json"))
    responses.get(
        f"{LIVE}/rest/socialActions/urn%3Ali%3Ashare%3A6957408550713184256", json=recorded("social_actions.json")
    )
    responses.get(f"{LIVE}/rest/memberCreatorPostAnalytics", json=recorded("creator_analytics_impression.json"))
    responses.get(f"{LIVE}/rest/memberFollowersCount", json=recorded("followers_count.json"))
    client = live_client()
    assert client.check_token(CREDS).display_name == "John Doe"
    [post] = client.list_recent_posts(CREDS, dt.datetime(2022, 1, 1, tzinfo=dt.UTC))
    assert (post.platform_post_id, post.text) == (SHARE, "Our 2022 guide")
    assert post.published_at == dt.datetime.fromtimestamp(1658527296, dt.UTC)
    assert "author=urn%3Ali%3Aperson%3A782bbtaQ" in responses.calls[1].request.url
    metrics = client.fetch_post_metrics(CREDS, [SHARE])[SHARE]
    assert (metrics.views, metrics.likes, metrics.comments, metrics.shares) == (1345, 21, 5, 1345)
    # The recorded body answers every queryType with its IMPRESSION element: reach reads the same count.
    assert (metrics.impressions, metrics.reach, metrics.saves, metrics.clicks) == (1345, 1345, None, None)
    assert "entity=(share:urn%3Ali%3Ashare%3A6957408550713184256)" in responses.calls[3].request.url
    assert client.fetch_followers(CREDS) == 1057
    assert responses.calls[1].request.headers["LinkedIn-Version"] == linkedin.API_VERSION
    assert responses.calls[1].request.headers["X-Restli-Protocol-Version"] == "2.0.0"


@responses.activate
def test_recorded_video_flow_against_live_urls() -> None:
    init = recorded("videos_initialize.json")
    responses.get("https://media.example/v.mp4", body=b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 4999988)
    responses.post(f"{LIVE}/rest/videos", json=init)
    for index, part in enumerate(init["value"]["uploadInstructions"]):
        responses.put(part["uploadUrl"], headers={"ETag": f"etag-{index}"})
    responses.get(f"{LIVE}/rest/videos/urn%3Ali%3Avideo%3AC5F10AQGKQg_6y2a4sQ", json=recorded("video_status.json"))
    responses.post(f"{LIVE}/rest/posts", status=201, headers={"x-restli-id": SHARE})
    request = PublishRequest("t", "VIDEO", "Clip", (MediaItem("https://media.example/v.mp4", "video", "video/mp4"),))
    state: dict[str, Any] = {}
    for _ in range(5):
        result = live_client().publish(CREDS, request, state)
        state = result.state
        if result.done:
            break
    assert result.platform_post_id == SHARE
    finalize = json.loads(next(c.request.body for c in responses.calls if "finalizeUpload" in c.request.url))
    assert finalize["finalizeUploadRequest"]["uploadedPartIds"] == ["etag-0", "etag-1"]
    part_sizes = [len(c.request.body) for c in responses.calls if c.request.method == "PUT"]
    assert part_sizes == [4194304, 805696]


@responses.activate
def test_recorded_token_exchange() -> None:
    responses.post("https://www.linkedin.com/oauth/v2/accessToken", json=recorded("token.json"))
    responses.get(f"{LIVE}/v2/userinfo", json=recorded("userinfo.json"))
    [identity] = live_client().exchange_code(code="c", redirect_uri="https://app/cb")
    assert (identity.credentials.external_id, identity.credentials.refresh_token) == (
        "782bbtaQ",
        "AQWAft_WjYZKwuWXLC5hQlghgTam",
    )
    assert identity.scopes == ("openid", "profile", "email", "w_member_social")


@responses.activate
def test_timeout_after_sending_a_post_is_an_unknown_outcome() -> None:
    responses.post(f"{LIVE}/rest/posts", body=requests.exceptions.ReadTimeout("read timed out"))
    with pytest.raises(UnknownOutcome):
        live_client().publish(CREDS, PublishRequest("t", "TEXT", "hi"), {})
    responses.replace(responses.POST, f"{LIVE}/rest/posts", body=requests.exceptions.ConnectionError("refused"))
    with pytest.raises(UnknownOutcome):
        live_client().publish(CREDS, PublishRequest("t", "TEXT", "hi"), {})
