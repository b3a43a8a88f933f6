"""TWITTER (X): the real v2 client against the simulator over HTTP, and against recorded bodies."""

from __future__ import annotations

import datetime as dt
import json
import time
from functools import partial
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
import responses
from django.conf import settings

from platforms import twitter
from platforms.base import (
    AppCredentials,
    AuthError,
    Credentials,
    EditRequest,
    ErrorCode,
    MediaItem,
    Metrics,
    NotSupported,
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
from tests.platforms.conftest import load_recorded, media_item, sim_requests

recorded = partial(load_recorded, "twitter")


@pytest.fixture
def account(connect_one: Any) -> Credentials:
    return connect_one(Platform.TWITTER).credentials


def recent(client: Any, creds: Credentials) -> list[Any]:
    return client.list_recent_posts(creds, dt.datetime.now(dt.UTC) - dt.timedelta(days=1))


# --- OAuth ----------------------------------------------------------------------------------


def test_connect_with_pkce_and_check_token(sandbox: str, connect: Any) -> None:
    (identity,) = connect(Platform.TWITTER)
    creds = identity.credentials
    assert creds.refresh_token and creds.expires_at is not None
    assert "offline.access" in identity.scopes
    assert creds.extra["username"] == identity.profile.username
    assert get_client(Platform.TWITTER).check_token(creds) == identity.profile


def test_s256_challenge_is_verified(sandbox: str) -> None:
    import base64
    import hashlib

    client = get_client(Platform.TWITTER)
    verifier = "v" * 50
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    url = client.authorize_url(redirect_uri="https://app.example/cb", state="s", code_challenge=challenge)
    assert parse_qs(urlsplit(url).query)["code_challenge_method"] == ["S256"]
    code = parse_qs(urlsplit(requests.get(url, allow_redirects=False, timeout=10).headers["Location"]).query)["code"][0]
    with pytest.raises(AuthError):
        client.exchange_code(code=code, redirect_uri="https://app.example/cb", code_verifier="w" * 50)
    url = client.authorize_url(redirect_uri="https://app.example/cb", state="s", code_challenge=challenge)
    code = parse_qs(urlsplit(requests.get(url, allow_redirects=False, timeout=10).headers["Location"]).query)["code"][0]
    (identity,) = client.exchange_code(code=code, redirect_uri="https://app.example/cb", code_verifier=verifier)
    assert identity.credentials.access_token


def test_refresh_rotates_the_refresh_token(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    renewed = client.refresh_token(account)
    assert renewed.access_token != account.access_token and renewed.refresh_token != account.refresh_token
    assert renewed.extra == account.extra and renewed.external_id == account.external_id
    assert client.check_token(renewed).external_id == account.external_id
    with pytest.raises(AuthError):
        client.refresh_token(account)  # the old refresh token is spent


def test_token_rejected_when_revoked(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    requests.post(f"{sandbox}/_control/twitter/accounts/{account.external_id}/revoke", json={}, timeout=10)
    with pytest.raises(AuthError) as rejected:
        client.check_token(account)
    assert rejected.value.message == "Unauthorized"


# --- publishing ----------------------------------------------------------------------------


def test_publish_text(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    result = client.publish(account, PublishRequest(target_id="t", content_type="TEXT", text="Hello X"), {})
    assert result.done
    # the simulator's page of the tweet (x.com has no such tweet), at the service's public address
    path = f"/sandbox/twitter/{account.extra['username']}/status/{result.platform_post_id}"
    assert result.url == f"{settings.PUBLIC_BASE_URL}{path}"
    assert [(p.platform_post_id, p.text) for p in recent(client, account)] == [(result.platform_post_id, "Hello X")]


def test_publish_images(sandbox: str, account: Credentials, media_server: str) -> None:
    client = get_client(Platform.TWITTER)
    req = PublishRequest(
        target_id="i",
        content_type="CAROUSEL",
        text="pics",
        media=(media_item(f"{media_server}/sample.jpg"), media_item(f"{media_server}/sample.png")),
    )
    assert client.publish(account, req, {}).done
    assert (
        len(sim_requests(sandbox, "twitter", "/initialize")) == 2
        and len(sim_requests(sandbox, "twitter", "/finalize")) == 2
    )
    assert len([r for r in sim_requests(sandbox, "twitter", "/2/tweets") if r.get("publish")]) == 1


def test_publish_video_waits_for_processing_and_resumes_once(
    sandbox: str, account: Credentials, media_server: str
) -> None:
    client = get_client(Platform.TWITTER)
    req = PublishRequest(
        target_id="v", content_type="VIDEO", text="clip", media=(media_item(f"{media_server}/sample.mp4"),)
    )
    first = client.publish(account, req, {})
    assert not first.done and first.state["pending"] == first.state["media_ids"] and first.poll_after >= 1
    # a new worker resumes from the stored state after the poll delay
    time.sleep(first.poll_after + 0.6)
    result = client.publish(account, req, first.state)
    assert result.done
    assert len(sim_requests(sandbox, "twitter", "/initialize")) == 1
    assert len(sim_requests(sandbox, "twitter", "/2/media/upload")) >= 4  # initialize, append, finalize, STATUS
    assert [p.platform_post_id for p in recent(client, account)] == [result.platform_post_id]


def test_duplicate_content_and_scenarios(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    req = PublishRequest(target_id="d", content_type="TEXT", text="same words")
    client.publish(account, req, {})
    with pytest.raises(Permanent) as duplicate:
        client.publish(account, req, {})
    assert duplicate.value.error_code == ErrorCode.DUPLICATE
    with pytest.raises(Permanent) as failed:
        client.publish(account, PublishRequest(target_id="f", content_type="TEXT", text="#sandbox-fail"), {})
    assert failed.value.error_code == ErrorCode.CONTENT_REJECTED
    with pytest.raises(AuthError):
        client.publish(account, PublishRequest(target_id="u", content_type="TEXT", text="#sandbox-unauthorized"), {})
    flaky = PublishRequest(target_id="fl", content_type="TEXT", text="#sandbox-flaky")
    with pytest.raises(Transient):
        client.publish(account, flaky, {})
    assert client.publish(account, flaky, {}).done
    with pytest.raises(Permanent) as long:
        client.publish(account, PublishRequest(target_id="l", content_type="TEXT", text="é" * 281), {})
    assert long.value.message == "Your Tweet text is too long."


def test_lookup_finds_the_tweet_by_its_text(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    req = PublishRequest(target_id="lk", content_type="TEXT", text="find me https://example.com")
    assert client.lookup(account, req) is None
    created = client.publish(account, req, {})
    found = client.lookup(account, req)
    assert found is not None and found.platform_post_id == created.platform_post_id


def test_metrics_and_followers(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TWITTER)
    ids = [
        client.publish(
            account, PublishRequest(target_id=f"m{i}", content_type="TEXT", text=f"n{i}"), {}
        ).platform_post_id
        for i in range(2)
    ]
    metrics = client.fetch_post_metrics(account, [*ids, "1"])
    assert set(metrics) == set(ids)
    assert all(m.views is not None and m.likes is not None for m in metrics.values())
    followers = client.fetch_followers(account)
    assert isinstance(followers, int) and followers >= 50


# --- recorded bodies and error mapping -----------------------------------------------------------

LIVE = "https://api.x.example"
CREDS = Credentials(
    access_token="tok", refresh_token="ref", external_id="2244994945", extra={"username": "XDevelopers"}
)
TEXT = PublishRequest(target_id="x", content_type="TEXT", text="Hello world!")


def live_client() -> twitter.Client:
    return twitter.Client(base_url=LIVE, app=AppCredentials("cid", "csecret"), session=thread_session(), timeout=5)


@responses.activate
def test_recorded_success_bodies_parse() -> None:
    client = live_client()
    responses.post(f"{LIVE}/2/oauth2/token", json=recorded("token.json"))
    responses.get(f"{LIVE}/2/users/me", json=recorded("users_me.json"))
    (identity,) = client.exchange_code(code="c", redirect_uri="https://app.example/cb", code_verifier="v" * 43)
    assert identity.credentials.external_id == "2244994945"
    assert identity.credentials.refresh_token.startswith("bWRWa3gz")
    assert identity.profile.username == "XDevelopers"
    assert responses.calls[0].request.headers["Authorization"].startswith("Basic ")
    assert client.fetch_followers(CREDS) == 570842
    responses.post(f"{LIVE}/2/tweets", json=recorded("create_tweet.json"), status=201)
    result = client.publish(CREDS, TEXT, {})
    assert result.url == "https://x.com/XDevelopers/status/1445880548472328192"
    responses.get(f"{LIVE}/2/users/2244994945/tweets", json=recorded("user_tweets.json"))
    posts = client.list_recent_posts(CREDS, dt.datetime(2021, 1, 1, tzinfo=dt.UTC))
    assert [p.platform_post_id for p in posts] == ["1460323737035677698", "1458172421115101189"]
    assert posts[0].metrics == Metrics(views=51234, likes=672, comments=39, shares=214)
    assert client.lookup(CREDS, TEXT).platform_post_id == "1458172421115101189"  # type: ignore[union-attr]
    responses.get(f"{LIVE}/2/tweets", json=recorded("tweets_lookup.json"))
    assert client.fetch_post_metrics(CREDS, ["1460323737035677698", "1"]) == {
        "1460323737035677698": Metrics(views=51234, likes=672, comments=39, shares=214)
    }


@responses.activate
def test_recorded_chunked_video_flow_parses() -> None:
    client = live_client()
    media_id = "1880028106020515840"
    responses.get("https://m.example/v.mp4", body=b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 16)
    responses.post(f"{LIVE}/2/media/upload/initialize", json=recorded("media_initialize.json"))
    responses.post(f"{LIVE}/2/media/upload/{media_id}/append", status=204)
    responses.post(f"{LIVE}/2/media/upload/{media_id}/finalize", json=recorded("media_finalize_pending.json"))
    responses.get(f"{LIVE}/2/media/upload", json=recorded("media_status_in_progress.json"))
    req = PublishRequest(
        target_id="v",
        content_type="VIDEO",
        text="clip",
        media=(MediaItem(url="https://m.example/v.mp4", kind="video", mime_type="video/mp4"),),
    )
    first = client.publish(CREDS, req, {})
    assert first.state == {"media_ids": [media_id], "pending": [media_id]} and first.poll_after == 1
    second = client.publish(CREDS, req, first.state)
    assert not second.done and second.poll_after == 10
    responses.replace(responses.GET, f"{LIVE}/2/media/upload", json=recorded("media_status_succeeded.json"))
    responses.post(f"{LIVE}/2/tweets", json=recorded("create_tweet.json"), status=201)
    assert client.publish(CREDS, req, second.state).done
    assert json.loads(responses.calls[-1].request.body)["media"] == {"media_ids": [media_id]}
    responses.replace(responses.GET, f"{LIVE}/2/media/upload", json=recorded("media_status_failed.json"))
    with pytest.raises(Permanent) as failed:
        client.publish(CREDS, req, first.state)
    assert (failed.value.error_code, failed.value.message) == (ErrorCode.MEDIA_REJECTED, "Unsupported video format")


@responses.activate
def test_rate_limit_and_daily_cap() -> None:
    headers = {"x-rate-limit-limit": "100", "x-rate-limit-remaining": "0", "x-rate-limit-reset": "1893456000"}
    responses.post(f"{LIVE}/2/tweets", json=recorded("error_429.json"), status=429, headers=headers)
    with pytest.raises(RateLimited) as limited:
        live_client().publish(CREDS, TEXT, {})
    assert limited.value.retry_at == dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    daily = {**headers, "x-user-limit-24hour-remaining": "0", "x-user-limit-24hour-reset": "1893542400"}
    responses.replace(responses.POST, f"{LIVE}/2/tweets", json=recorded("error_429.json"), status=429, headers=daily)
    with pytest.raises(QuotaExhausted) as quota:
        live_client().publish(CREDS, TEXT, {})
    assert quota.value.retry_at == dt.datetime(2030, 1, 2, tzinfo=dt.UTC)


@responses.activate
def test_refused_refresh_is_auth_error_and_timeout_after_send_is_unknown() -> None:
    responses.post(f"{LIVE}/2/oauth2/token", json=recorded("error_invalid_grant.json"), status=400)
    with pytest.raises(AuthError) as refused:
        live_client().refresh_token(CREDS)
    assert refused.value.message == "Value passed for the token was invalid."
    responses.post(f"{LIVE}/2/tweets", body=requests.ReadTimeout("read timed out"))
    with pytest.raises(UnknownOutcome):
        live_client().publish(CREDS, TEXT, {})


def test_delete_of_another_users_post_is_refused_and_revoke_ends_the_refresh_token_too(
    sandbox: str, connect_one: Any
) -> None:
    client = get_client(Platform.TWITTER)
    author = connect_one(Platform.TWITTER).credentials
    stranger = connect_one(Platform.TWITTER).credentials
    post = client.publish(author, PublishRequest(target_id="t_own", content_type="TEXT", text="mine only"), {})
    with pytest.raises(Permanent) as refused:
        client.delete(stranger, post.platform_post_id)
    assert refused.value.error_code == ErrorCode.PERMISSION_MISSING
    assert refused.value.message == "You are not allowed to delete a Tweet you did not create."
    assert author.refresh_token
    client.revoke_token(author)
    with pytest.raises(AuthError):
        client.refresh_token(author)
    with pytest.raises(NotSupported):
        client.edit(author, EditRequest(target_id="t_own", platform_post_id=post.platform_post_id, text="changed"))
