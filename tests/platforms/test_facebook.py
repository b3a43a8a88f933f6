"""The Facebook Pages client against its simulator over real HTTP, and against recorded
Graph API bodies for the error classes."""

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
    EditRequest,
    ErrorCode,
    Metrics,
    NotSupported,
    Permanent,
    Platform,
    PublishRequest,
    RateLimited,
    Transient,
    UnknownOutcome,
)
from platforms.facebook import LIVE_BASE_URL, Client
from platforms.registry import get_client
from tests.platforms.conftest import drive, load_recorded, media_item, publish_calls, sandbox_page, sim_requests

recorded = partial(load_recorded, "facebook")
publishes = partial(publish_calls, slug="facebook")

GRAPH = f"{LIVE_BASE_URL}/v21.0"


@pytest.fixture
def page(connect_one: Any) -> ConnectedIdentity:
    return connect_one("FACEBOOK")


def test_connect_yields_each_managed_page_with_its_page_token(connect: Any) -> None:
    identities = connect("FACEBOOK")
    assert len(identities) == 1
    identity = identities[0]
    assert identity.profile.page_id == identity.profile.external_id == identity.credentials.external_id
    assert identity.credentials.access_token.startswith("sbx-facebook-page-")
    assert identity.profile.display_name.startswith("Sandbox Page ")
    assert "pages_manage_posts" in identity.scopes
    again = connect("FACEBOOK")
    assert again[0].profile.page_id != identity.profile.page_id  # each authorization: a new user and page


def test_authorize_url_live_points_at_the_facebook_dialog() -> None:
    client = Client(base_url=LIVE_BASE_URL, app=get_client("FACEBOOK").app, session=requests.Session(), timeout=5)
    url = client.authorize_url(redirect_uri="https://app.example/cb", state="s1")
    assert url.startswith("https://www.facebook.com/v21.0/dialog/oauth?client_id=")
    assert "redirect_uri=https%3A%2F%2Fapp.example%2Fcb" in url and "state=s1" in url


def test_text_post_is_listed_with_growing_metrics(sandbox: str, page: ConnectedIdentity) -> None:
    client = get_client("FACEBOOK")
    since = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    results = drive(client, page.credentials, PublishRequest(target_id="t1", content_type="TEXT", text="Hello page"))
    assert len(results) == 1
    post_id = results[0].platform_post_id
    assert post_id.startswith(f"{page.profile.page_id}_")
    assert results[0].url == sandbox_page("facebook", f"/{post_id}")
    listed = client.list_recent_posts(page.credentials, since)
    assert [p.platform_post_id for p in listed] == [post_id]
    assert listed[0].text == "Hello page"
    metrics = client.fetch_post_metrics(page.credentials, [post_id, f"{page.profile.page_id}_999"])
    assert set(metrics) == {post_id}
    assert metrics[post_id].views is not None and metrics[post_id].views >= 5
    assert metrics[post_id].likes == metrics[post_id].views // 5
    assert [e["remoteId"] for e in publishes(sandbox)] == [post_id]


def test_single_image_post(sandbox: str, page: ConnectedIdentity, media_server: str) -> None:
    client = get_client("FACEBOOK")
    request = PublishRequest(
        target_id="t2", content_type="IMAGE", text="A photo", media=(media_item(f"{media_server}/sample.jpg"),)
    )
    results = drive(client, page.credentials, request)
    assert len(results) == 1 and results[0].platform_post_id.startswith(f"{page.profile.page_id}_")
    assert len(publishes(sandbox)) == 1


def test_multi_image_post_resumes_from_state_without_a_second_post(
    sandbox: str, page: ConnectedIdentity, media_server: str
) -> None:
    client = get_client("FACEBOOK")
    media = (media_item(f"{media_server}/sample.jpg"), media_item(f"{media_server}/sample.png"))
    request = PublishRequest(target_id="t3", content_type="CAROUSEL", text="Two photos", media=media)
    first = client.publish(page.credentials, request, {})
    assert not first.done and first.state["step"] == "feed" and len(first.state["photo_ids"]) == 2
    assert publishes(sandbox) == []  # unpublished photos are not posts
    final = client.publish(page.credentials, request, first.state)
    assert final.done
    assert [e["remoteId"] for e in publishes(sandbox)] == [final.platform_post_id]


def test_video_post_polls_processing_then_ready(sandbox: str, page: ConnectedIdentity, media_server: str) -> None:
    client = get_client("FACEBOOK")
    request = PublishRequest(
        target_id="t4",
        content_type="VIDEO",
        text="A video",
        media=(media_item(f"{media_server}/sample.mp4"),),
        options={"videoTitle": "My title"},
    )
    results = drive(client, page.credentials, request)
    assert [r.done for r in results] == [False, False, True]
    assert results[0].state["step"] == "video_status" and results[0].poll_after > 0
    video_id = results[0].state["video_id"]
    assert results[-1].platform_post_id == f"{page.profile.page_id}_{video_id}"
    assert len(publishes(sandbox)) == 1


@pytest.mark.parametrize("post_type", ["REEL", "STORY"])
def test_reel_and_video_story_phases_resume_without_a_second_post(
    sandbox: str, page: ConnectedIdentity, media_server: str, post_type: str
) -> None:
    client = get_client("FACEBOOK")
    request = PublishRequest(
        target_id="t5",
        content_type="VIDEO",
        text="Short one",
        media=(media_item(f"{media_server}/sample-reel.mp4"),),
        options={"postType": post_type},
    )
    start = client.publish(page.credentials, request, {})
    assert start.state["step"] == "phase_upload"
    assert start.state["edge"] == ("video_reels" if post_type == "REEL" else "video_stories")
    uploaded = client.publish(page.credentials, request, start.state)
    assert uploaded.state["step"] == "phase_finish"
    finished = client.publish(page.credentials, request, uploaded.state)
    assert finished.state == {"step": "video_status", "video_id": start.state["video_id"]}
    # the worker crashed after finish: the status step runs again, never a second finish
    done = client.publish(page.credentials, request, finished.state)
    while not done.done:
        done = client.publish(page.credentials, request, done.state)
    assert done.platform_post_id == f"{page.profile.page_id}_{start.state['video_id']}"
    assert len(publishes(sandbox)) == 1


def test_photo_story(sandbox: str, page: ConnectedIdentity, media_server: str) -> None:
    client = get_client("FACEBOOK")
    request = PublishRequest(
        target_id="t6",
        content_type="IMAGE",
        text="",
        media=(media_item(f"{media_server}/sample.jpg"),),
        options={"postType": "STORY"},
    )
    results = drive(client, page.credentials, request)
    assert [r.done for r in results] == [False, True]
    assert results[0].state["step"] == "photo_story"
    assert len(publishes(sandbox)) == 1


def test_unreachable_image_is_media_rejected(sandbox: str, page: ConnectedIdentity, media_server: str) -> None:
    request = PublishRequest(
        target_id="t7", content_type="IMAGE", text="x", media=(media_item(f"{media_server}/missing.jpg"),)
    )
    with pytest.raises(Permanent) as raised:
        get_client("FACEBOOK").publish(page.credentials, request, {})
    assert raised.value.error_code == ErrorCode.MEDIA_REJECTED
    assert "HTTP 404" in raised.value.message


def test_check_token_valid_then_revoked(sandbox: str, page: ConnectedIdentity) -> None:
    client = get_client("FACEBOOK")
    profile = client.check_token(page.credentials)
    assert profile.page_id == page.profile.page_id and profile.display_name == page.profile.display_name
    revoke = requests.post(
        f"{sandbox}/_control/facebook/accounts/{page.profile.page_id}/revoke", json={"revoked": True}, timeout=10
    )
    assert revoke.status_code == 200
    with pytest.raises(AuthError) as raised:
        client.check_token(page.credentials)
    assert "session has been invalidated" in raised.value.message
    assert raised.value.error_code == ErrorCode.AUTH_EXPIRED


def test_scenario_markers(sandbox: str, page: ConnectedIdentity) -> None:
    client = get_client("FACEBOOK")
    with pytest.raises(AuthError):
        client.publish(page.credentials, PublishRequest("t8", "TEXT", "hi #sandbox-unauthorized"), {})
    with pytest.raises(Permanent) as failed:
        client.publish(page.credentials, PublishRequest("t9", "TEXT", "hi #sandbox-fail"), {})
    assert failed.value.error_code == ErrorCode.CONTENT_REJECTED
    flaky = PublishRequest("t10", "TEXT", "hi #sandbox-flaky")
    with pytest.raises(Transient):
        client.publish(page.credentials, flaky, {})
    assert client.publish(page.credentials, flaky, {}).done
    assert len(publishes(sandbox)) == 1


def test_lookup_finds_our_post_by_its_text(sandbox: str, page: ConnectedIdentity) -> None:
    client = get_client("FACEBOOK")
    request = PublishRequest("t11", "TEXT", "Exactly this text")
    assert client.lookup(page.credentials, request) is None
    posted = client.publish(page.credentials, request, {})
    found = client.lookup(page.credentials, request)
    assert found is not None and found.platform_post_id == posted.platform_post_id
    with pytest.raises(NotSupported):
        client.lookup(page.credentials, PublishRequest("t12", "IMAGE", ""))


def test_followers(sandbox: str, page: ConnectedIdentity) -> None:
    followers = get_client("FACEBOOK").fetch_followers(page.credentials)
    assert isinstance(followers, int) and followers >= 120


# --- recorded real-API bodies: the client parses them and maps every error class ----------

CREDS = Credentials(access_token="page-token", external_id="1234567890")


def live_client() -> Client:
    return Client(base_url=LIVE_BASE_URL, app=get_client("FACEBOOK").app, session=requests.Session(), timeout=5)


@responses.activate
def test_recorded_connect_flow_parses() -> None:
    responses.get(f"{GRAPH}/oauth/access_token", json=recorded("oauth_access_token.json"))
    responses.get(f"{GRAPH}/me", json=recorded("me.json"))
    responses.get(f"{GRAPH}/me/accounts", json=recorded("me_accounts.json"))
    identities = live_client().exchange_code(code="c", redirect_uri="https://app.example/cb")
    assert [(i.profile.page_id, i.profile.display_name, i.credentials.access_token) for i in identities] == [
        ("1234567890", "Cisco Systems", "EAAJjmJ...")
    ]
    assert identities[0].credentials.extra == {"user_id": "10158000000000000"}


@responses.activate
def test_recorded_posts_metrics_and_page_parse() -> None:
    responses.get(f"{GRAPH}/1234567890/published_posts", json=recorded("published_posts.json"))
    responses.get(f"{GRAPH}/1234567890", json=recorded("page_fields.json"))
    client = live_client()
    posts = client.list_recent_posts(CREDS, dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    assert len(posts) == 1
    assert posts[0].published_at == dt.datetime(2024, 5, 1, 10, 0, tzinfo=dt.UTC)
    assert posts[0].metrics == Metrics(views=410, likes=12, comments=3, shares=2, impressions=410, reach=305)
    assert client.fetch_followers(CREDS) == 1523
    assert client.check_token(CREDS).username == "cisco"


@responses.activate
def test_recorded_reel_and_photo_bodies_parse() -> None:
    start = recorded("video_reels_start.json")
    responses.post(f"{GRAPH}/1234567890/video_reels", json=start)
    responses.get(f"{GRAPH}/1122334455667788", json=recorded("video_status_ready.json"))
    responses.post(f"{GRAPH}/1234567890/photos", json=recorded("photos_create.json"))
    client = live_client()
    request = PublishRequest(
        "t", "VIDEO", "x", media=(media_item("https://cdn.example/v.mp4"),), options={"postType": "REEL"}
    )
    first = client.publish(CREDS, request, {})
    assert first.state["upload_url"] == start["upload_url"]
    done = client.publish(CREDS, request, {"step": "video_status", "video_id": "1122334455667788"})
    assert done.platform_post_id == "1234567890_1122334455667788"
    assert done.url == "https://www.facebook.com/reel/1122334455667788"
    photo = client.publish(
        CREDS, PublishRequest("t", "IMAGE", "x", media=(media_item("https://cdn.example/a.jpg"),)), {}
    )
    assert photo.platform_post_id == "1234567890_10161000000000000"


@responses.activate
def test_business_use_case_header_gives_the_retry_time() -> None:
    usage = {
        "1234567890": [
            {
                "type": "pages",
                "call_count": 100,
                "total_cputime": 10,
                "total_time": 10,
                "estimated_time_to_regain_access": 7,
            }
        ]
    }
    responses.post(
        f"{GRAPH}/1234567890/feed",
        json=recorded("error_rate_limit.json"),
        status=400,
        headers={"X-Business-Use-Case-Usage": json.dumps(usage)},
    )
    before = dt.datetime.now(dt.UTC)
    with pytest.raises(RateLimited) as raised:
        live_client().publish(CREDS, PublishRequest("t", "TEXT", "hello"), {})
    assert raised.value.retry_at is not None
    assert before + dt.timedelta(minutes=7) <= raised.value.retry_at <= before + dt.timedelta(minutes=8)


@responses.activate
def test_timeout_after_sending_a_create_is_unknown_outcome_but_a_read_is_transient() -> None:
    responses.post(f"{GRAPH}/1234567890/feed", body=requests.ReadTimeout("read timed out"))
    responses.get(f"{GRAPH}/1234567890", body=requests.ReadTimeout("read timed out"))
    client = live_client()
    with pytest.raises(UnknownOutcome):
        client.publish(CREDS, PublishRequest("t", "TEXT", "hello"), {})
    with pytest.raises(Transient):
        client.check_token(CREDS)


def test_connection_refused_before_sending_is_transient() -> None:
    client = Client(
        base_url="http://127.0.0.1:9", app=get_client("FACEBOOK").app, session=requests.Session(), timeout=2
    )
    with pytest.raises(Transient):
        client.publish(CREDS, PublishRequest("t", "TEXT", "hello"), {})


def test_revoke_ends_the_login_behind_every_page_and_is_sent_with_the_app_token(sandbox: str, connect: Any) -> None:
    (page,) = connect(Platform.FACEBOOK)
    client = get_client(Platform.FACEBOOK)
    client.revoke_token(page.credentials)
    (call,) = [e for e in sim_requests(sandbox, "facebook") if e.get("revoke")]
    assert call["method"] == "DELETE" and call["remoteId"] == page.credentials.extra["user_id"]
    with pytest.raises(AuthError) as rejected:
        client.check_token(page.credentials)
    assert "has not authorized application" in rejected.value.message


def test_edit_of_a_post_that_is_gone_is_permanent_and_other_fields_are_refused(sandbox: str, connect: Any) -> None:
    (page,) = connect(Platform.FACEBOOK)
    client = get_client(Platform.FACEBOOK)
    post = client.publish(page.credentials, PublishRequest(target_id="t1", content_type="TEXT", text="here"), {})
    with pytest.raises(Permanent) as refused:
        client.edit(
            page.credentials, EditRequest(target_id="t1", platform_post_id=post.platform_post_id, title="A title")
        )
    assert refused.value.error_code == ErrorCode.INVALID_REQUEST
    client.delete(page.credentials, post.platform_post_id)
    with pytest.raises(Permanent) as gone:
        client.edit(page.credentials, EditRequest(target_id="t1", platform_post_id=post.platform_post_id, text="x"))
    assert gone.value.message.startswith("Unsupported post request. Object with ID")
