"""The Threads client against its simulator over real HTTP, and against recorded bodies."""

from __future__ import annotations

import datetime as dt
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
    MediaItem,
    Metrics,
    NotSupported,
    Permanent,
    Platform,
    PublishRequest,
    PublishResult,
    QuotaExhausted,
    RateLimited,
    Transient,
    UnknownOutcome,
)
from platforms.registry import get_client
from platforms.sandbox import audience
from platforms.sandbox.store import SandboxStore
from platforms.threads import LIVE_BASE_URL, Client
from tests.platforms.conftest import drive, load_recorded, publish_calls, sandbox_page

recorded = partial(load_recorded, "threads")
publishes = partial(publish_calls, slug="threads")

API = f"{LIVE_BASE_URL}/v1.0"


@pytest.fixture
def account(connect_one: Any) -> ConnectedIdentity:
    return connect_one("THREADS")


def test_connect_gets_a_long_lived_token_and_the_profile(account: ConnectedIdentity) -> None:
    assert account.profile.external_id == account.credentials.external_id
    assert account.profile.username.startswith("sandbox.threads")
    assert account.credentials.expires_at is not None
    assert account.credentials.expires_at > dt.datetime.now(dt.UTC) + dt.timedelta(days=59)
    assert account.scopes == (
        "threads_basic",
        "threads_content_publish",
        "threads_manage_insights",
        "threads_read_replies",
        "threads_manage_replies",
    )


def test_live_authorize_url_points_at_threads_net() -> None:
    client = Client(base_url=LIVE_BASE_URL, app=get_client("THREADS").app, session=requests.Session(), timeout=5)
    url = client.authorize_url(redirect_uri="https://app.example/cb", state="s")
    assert url.startswith("https://threads.net/oauth/authorize?client_id=")


def test_text_post_listed_with_metrics_and_followers(sandbox: str, account: ConnectedIdentity) -> None:
    client = get_client("THREADS")
    since = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    results = drive(client, account.credentials, PublishRequest("t1", "TEXT", "Hello Threads"))
    assert len(results) == 1
    thread_id = results[0].platform_post_id
    assert results[0].url.startswith(sandbox_page("threads", f"/@{account.profile.username}/post/"))
    listed = client.list_recent_posts(account.credentials, since)
    assert [(p.platform_post_id, p.text) for p in listed] == [(thread_id, "Hello Threads")]
    metrics = client.fetch_post_metrics(account.credentials, [thread_id, "180404"])
    assert set(metrics) == {thread_id}
    views = metrics[thread_id].views
    assert views is not None and metrics[thread_id].likes == views // 5
    # the replies insight: the audience's top-level replies (tests/platforms/test_comment_counts.py)
    tops = [c for c in audience.expected("threads", thread_id, 0.0) if not c["parentId"]]
    assert metrics[thread_id].comments == len(tops) >= 1
    assert (client.fetch_followers(account.credentials) or 0) >= 200
    assert [e["remoteId"] for e in publishes(sandbox)] == [thread_id]


def test_image_post(sandbox: str, account: ConnectedIdentity, media_server: str) -> None:
    media = (MediaItem(url=f"{media_server}/sample.jpg", kind="image", mime_type="image/jpeg"),)
    result = drive(get_client("THREADS"), account.credentials, PublishRequest("t2", "IMAGE", "pic", media=media))[-1]
    stored = SandboxStore("threads").get("thread", result.platform_post_id)
    assert stored is not None and stored["media_type"] == "IMAGE"


def test_video_post_resumes_from_state_without_a_second_post(
    sandbox: str, account: ConnectedIdentity, media_server: str
) -> None:
    client = get_client("THREADS")
    media = (MediaItem(url=f"{media_server}/sample.mp4", kind="video", mime_type="video/mp4"),)
    request = PublishRequest("t3", "VIDEO", "clip", media=media)
    first = client.publish(account.credentials, request, {})
    assert not first.done and first.state["step"] == "container" and first.poll_after == 10.0
    final = client.publish(account.credentials, request, first.state)
    assert final.done
    with pytest.raises(UnknownOutcome):  # a stale state cannot publish the container again
        client.publish(account.credentials, request, first.state)
    assert len(publishes(sandbox)) == 1
    found = client.lookup(account.credentials, request)
    assert found is not None and found.platform_post_id == final.platform_post_id
    with pytest.raises(NotSupported):
        client.lookup(account.credentials, PublishRequest("t", "IMAGE", ""))


def test_carousel(sandbox: str, account: ConnectedIdentity, media_server: str) -> None:
    media = (
        MediaItem(url=f"{media_server}/sample.jpg", kind="image", mime_type="image/jpeg"),
        MediaItem(url=f"{media_server}/sample.mp4", kind="video", mime_type="video/mp4"),
    )
    results = drive(get_client("THREADS"), account.credentials, PublishRequest("t4", "CAROUSEL", "two", media=media))
    assert results[0].state["step"] == "children"
    stored = SandboxStore("threads").get("thread", results[-1].platform_post_id)
    assert stored is not None and stored["media_type"] == "CAROUSEL_ALBUM"
    assert len(publishes(sandbox)) == 1


def test_media_download_failure_is_media_rejected(sandbox: str, account: ConnectedIdentity, media_server: str) -> None:
    media = (MediaItem(url=f"{media_server}/nothing.jpg", kind="image", mime_type="image/jpeg"),)
    with pytest.raises(Permanent) as raised:
        get_client("THREADS").publish(account.credentials, PublishRequest("t5", "IMAGE", "x", media=media), {})
    assert raised.value.error_code == ErrorCode.MEDIA_REJECTED
    assert raised.value.message.startswith("FAILED_DOWNLOADING_IMAGE")


def test_publishing_limit(sandbox: str, account: ConnectedIdentity) -> None:
    SandboxStore("threads").update("user", account.credentials.external_id, quota_total=1)
    client = get_client("THREADS")
    assert client.publish(account.credentials, PublishRequest("a", "TEXT", "one"), {}).done
    with pytest.raises(QuotaExhausted):
        client.publish(account.credentials, PublishRequest("b", "TEXT", "two"), {})


def test_token_check_refresh_and_revocation(sandbox: str, account: ConnectedIdentity) -> None:
    client = get_client("THREADS")
    assert client.check_token(account.credentials).external_id == account.profile.external_id
    fresh = client.refresh_token(account.credentials)
    assert fresh.access_token != account.credentials.access_token and fresh.expires_at is not None
    assert client.check_token(fresh).username == account.profile.username
    requests.post(
        f"{sandbox}/_control/threads/accounts/{account.profile.external_id}/revoke", json={"revoked": True}, timeout=10
    ).raise_for_status()
    with pytest.raises(AuthError):
        client.check_token(fresh)
    with pytest.raises(AuthError):
        client.refresh_token(fresh)


def test_scenario_markers(sandbox: str, account: ConnectedIdentity) -> None:
    client = get_client("THREADS")
    with pytest.raises(AuthError):
        client.publish(account.credentials, PublishRequest("a", "TEXT", "x #sandbox-unauthorized"), {})
    with pytest.raises(Permanent) as failed:
        client.publish(account.credentials, PublishRequest("b", "TEXT", "x #sandbox-fail"), {})
    assert failed.value.error_code == ErrorCode.CONTENT_REJECTED
    flaky = PublishRequest("c", "TEXT", "x #sandbox-flaky")
    with pytest.raises(Transient):
        client.publish(account.credentials, flaky, {})
    assert client.publish(account.credentials, flaky, {}).done
    assert len(publishes(sandbox)) == 1


# --- recorded real-API bodies ---------------------------------------------------------------

CREDS = Credentials(access_token="token", external_id="17841400000000000")


def live_client() -> Client:
    return Client(base_url=LIVE_BASE_URL, app=get_client("THREADS").app, session=requests.Session(), timeout=5)


@responses.activate
def test_recorded_connect_and_refresh_parse() -> None:
    responses.post(f"{LIVE_BASE_URL}/oauth/access_token", json=recorded("oauth_access_token.json"))
    responses.get(f"{LIVE_BASE_URL}/access_token", json=recorded("long_lived_token.json"))
    responses.get(f"{LIVE_BASE_URL}/refresh_access_token", json=recorded("long_lived_token.json"))
    responses.get(f"{API}/me", json=recorded("me.json"))
    client = live_client()
    [identity] = client.exchange_code(code="c", redirect_uri="https://app.example/cb")
    assert identity.credentials.access_token == "THQVJ...long"
    assert identity.credentials.external_id == "17841400000000000"
    assert identity.profile.username == "threadsapitestuser"
    assert client.refresh_token(identity.credentials).access_token == "THQVJ...long"


@responses.activate
def test_recorded_publish_listing_metrics_parse() -> None:
    responses.get(f"{API}/17841400000000000/threads_publishing_limit", json=recorded("publishing_limit.json"))
    responses.post(f"{API}/17841400000000000/threads", json=recorded("container_create.json"))
    responses.get(f"{API}/1234567", json=recorded("container_status_finished.json"))
    responses.post(f"{API}/17841400000000000/threads_publish", json=recorded("threads_publish.json"))
    responses.get(f"{API}/1234567890", json=recorded("thread_fields.json"))
    responses.get(f"{API}/17841400000000000/threads", json=recorded("user_threads.json"))
    responses.get(f"{API}/1234567890/insights", json=recorded("media_insights.json"))
    responses.get(f"{API}/17841400000000000/threads_insights", json=recorded("followers_count.json"))
    client = live_client()
    assert client.publish(CREDS, PublishRequest("t", "TEXT", "hi"), {}) == PublishResult(
        done=True,
        platform_post_id="1234567890",
        url="https://www.threads.net/@threadsapitestuser/post/abcdefg",
        published_at=dt.datetime(2023, 10, 17, 5, 42, 3, tzinfo=dt.UTC),
    )
    posts = client.list_recent_posts(CREDS, dt.datetime(2023, 1, 1, tzinfo=dt.UTC))
    assert [(p.platform_post_id, p.text) for p in posts] == [("1234567", "Today Is Monday")]
    assert client.fetch_post_metrics(CREDS, ["1234567890"]) == {
        "1234567890": Metrics(views=1000, likes=100, comments=10, shares=7)
    }
    assert client.fetch_followers(CREDS) == 2024


@responses.activate
def test_recorded_container_error_is_media_rejected() -> None:
    responses.get(f"{API}/1234567", json=recorded("container_status_error.json"))
    with pytest.raises(Permanent) as raised:
        live_client().publish(
            CREDS, PublishRequest("t", "TEXT", "hi"), {"step": "container", "container_id": "1234567"}
        )
    assert raised.value.error_code == ErrorCode.MEDIA_REJECTED and raised.value.message == "FAILED_DOWNLOADING_VIDEO"


@responses.activate
def test_server_error_is_transient_and_publish_timeout_unknown() -> None:
    responses.get(f"{API}/17841400000000000/threads_publishing_limit", body="<html>502</html>", status=502)
    with pytest.raises(Transient):
        live_client().publish(CREDS, PublishRequest("t", "TEXT", "hi"), {})
    responses.get(f"{API}/1234567", json=recorded("container_status_finished.json"))
    responses.post(f"{API}/17841400000000000/threads_publish", body=requests.ReadTimeout())
    with pytest.raises(UnknownOutcome):
        live_client().publish(
            CREDS, PublishRequest("t", "TEXT", "hi"), {"step": "container", "container_id": "1234567"}
        )


def test_lookup_finds_a_post_behind_a_full_day_of_newer_ones(sandbox: str, account: ConnectedIdentity) -> None:
    """The recovery lookup reads the whole last day: 240 newer posts (within the 250-a-day limit)
    do not hide the one a lost attempt made, so the pipeline never publishes it a second time."""
    client = get_client("THREADS")
    request = PublishRequest("t-busy", "TEXT", "the one to find")
    final = drive(client, account.credentials, request)[-1]
    store = SandboxStore("threads")
    ours = store.get("thread", final.platform_post_id)
    assert ours is not None
    for i in range(240):
        store.put(
            "thread", f"newer{i}", {**ours, "id": f"newer{i}", "text": f"newer {i}", "created": ours["created"] + i + 1}
        )
    found = client.lookup(account.credentials, request)
    assert found is not None and found.platform_post_id == final.platform_post_id


def test_deletes_beyond_the_daily_limit_are_rate_limited(
    sandbox: str, account: ConnectedIdentity, monkeypatch: Any
) -> None:
    from platforms.sandbox import threads as simulator

    monkeypatch.setattr(simulator, "DELETES_PER_DAY", 1)
    client = get_client(Platform.THREADS)
    first, second = (
        drive(client, account.credentials, PublishRequest(target_id=f"tgt_del{i}", content_type="TEXT", text=f"d{i}"))[
            -1
        ]
        for i in range(2)
    )
    client.delete(account.credentials, first.platform_post_id)
    with pytest.raises(RateLimited) as limited:
        client.delete(account.credentials, second.platform_post_id)
    assert limited.value.message == "Application request limit reached"
    with pytest.raises(NotSupported):
        client.edit(account.credentials, EditRequest(target_id="t", platform_post_id=second.platform_post_id, text="x"))
