"""MASTODON: the real client against the simulator over HTTP, and against recorded API bodies."""

from __future__ import annotations

import datetime as dt
import json
import time
from functools import partial
from typing import Any

import pytest
import requests
import responses

from platforms import mastodon
from platforms.base import (
    AuthError,
    Credentials,
    EditRequest,
    ErrorCode,
    MediaItem,
    NotSupported,
    Permanent,
    Platform,
    PublishRequest,
    RateLimited,
    Transient,
    UnknownOutcome,
)
from platforms.registry import get_client
from tests.platforms.conftest import load_recorded, media_item, publish_calls, sim_requests

recorded = partial(load_recorded, "mastodon")
publishes = partial(publish_calls, slug="mastodon")


@pytest.fixture
def account(connect_one: Any) -> Credentials:
    return connect_one(Platform.MASTODON).credentials


# --- connect and tokens ------------------------------------------------------------------


def test_connect_yields_a_new_user_each_time_and_check_token_reads_it(sandbox: str, connect: Any) -> None:
    (first,) = connect(Platform.MASTODON)
    (second,) = connect(Platform.MASTODON)
    assert first.credentials.external_id != second.credentials.external_id
    assert first.scopes == ("read", "write")
    profile = get_client(Platform.MASTODON).check_token(first.credentials)
    assert profile == first.profile
    assert profile.username.startswith("sandbox_user")
    assert profile.external_id == first.credentials.external_id


def test_check_token_rejected_when_revoked_and_for_unknown_token(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    requests.post(
        f"{sandbox}/_control/mastodon/accounts/{account.external_id}/revoke", json={"revoked": True}, timeout=10
    )
    with pytest.raises(AuthError) as revoked:
        client.check_token(account)
    assert revoked.value.error_code == ErrorCode.AUTH_EXPIRED
    assert revoked.value.http_status == 401
    with pytest.raises(AuthError):
        client.check_token(Credentials(access_token="nope", external_id=account.external_id))


def test_refresh_is_not_offered(sandbox: str, account: Credentials) -> None:
    with pytest.raises(NotSupported):
        get_client(Platform.MASTODON).refresh_token(account)


def test_register_app_on_the_server(sandbox: str) -> None:
    client_id, secret = get_client(Platform.MASTODON).register_app(
        client_name="Crosspost", redirect_uri="https://example.com/cb"
    )
    assert client_id and secret and client_id != secret


# --- publishing --------------------------------------------------------------------------


def test_publish_text_status(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    result = client.publish(
        account, PublishRequest(target_id="tgt_text1", content_type="TEXT", text="Hello fediverse"), {}
    )
    assert result.done
    assert result.platform_post_id
    assert result.url.endswith(f"/{result.platform_post_id}")
    assert result.published_at is not None
    (logged,) = publishes(sandbox)
    assert logged["marker"] == "tgt_text1"
    assert logged["remoteId"] == result.platform_post_id


def test_publish_images_with_alt_text(sandbox: str, account: Credentials, media_server: str) -> None:
    client = get_client(Platform.MASTODON)
    req = PublishRequest(
        target_id="tgt_imgs",
        content_type="CAROUSEL",
        text="two pictures",
        media=(media_item(f"{media_server}/sample.jpg", alt="a test card"), media_item(f"{media_server}/sample.png")),
    )
    result = client.publish(account, req, {})
    assert result.done  # images are processed at upload time
    posts = client.list_recent_posts(account, dt.datetime.now(dt.UTC) - dt.timedelta(hours=1))
    assert [p.platform_post_id for p in posts] == [result.platform_post_id]
    assert posts[0].text == "two pictures"
    assert "/small/" in posts[0].thumbnail_url
    uploads = sim_requests(sandbox, "mastodon", "/api/v2/media")
    assert [u["status"] for u in uploads] == [200, 200]


def test_publish_video_waits_for_processing_and_resumes_without_a_second_status(
    sandbox: str, account: Credentials, media_server: str
) -> None:
    client = get_client(Platform.MASTODON)
    req = PublishRequest(
        target_id="tgt_video", content_type="VIDEO", text="a clip", media=(media_item(f"{media_server}/sample.mp4"),)
    )
    first = client.publish(account, req, {})
    assert not first.done
    assert first.poll_after > 0
    assert len(first.state["media_ids"]) == 1 and first.state["ready"] == []
    # the worker dies here; a later run resumes from the saved state
    time.sleep(mastodon.PROCESSING_POLL_SECONDS)
    state = first.state
    result = None
    for _ in range(10):
        result = client.publish(account, req, state)
        if result.done:
            break
        state = result.state
        time.sleep(0.5)
    assert result is not None and result.done
    assert len(sim_requests(sandbox, "mastodon", "/api/v2/media")) == 1  # the upload was not repeated
    assert [p["remoteId"] for p in publishes(sandbox)] == [result.platform_post_id]
    assert [s["status"] for s in sim_requests(sandbox, "mastodon", "/api/v1/media/")][0] == 206


def test_repeated_publish_returns_the_same_status_by_idempotency_key(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    req = PublishRequest(target_id="tgt_same", content_type="TEXT", text="only once")
    first = client.publish(account, req, {})
    again = client.publish(account, req, {})
    assert again.platform_post_id == first.platform_post_id
    posts = client.list_recent_posts(account, dt.datetime.now(dt.UTC) - dt.timedelta(hours=1))
    assert len(posts) == 1
    assert [p["marker"] for p in publishes(sandbox)] == ["tgt_same", "tgt_same"]


def test_sandbox_fail_is_permanent_content_rejected(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    with pytest.raises(Permanent) as failed:
        client.publish(account, PublishRequest(target_id="t1", content_type="TEXT", text="no #sandbox-fail"), {})
    assert failed.value.error_code == ErrorCode.CONTENT_REJECTED
    assert failed.value.http_status == 422
    assert "Validation failed" in failed.value.message


def test_sandbox_flaky_fails_once_then_succeeds(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    req = PublishRequest(target_id="t_flaky", content_type="TEXT", text="maybe #sandbox-flaky")
    with pytest.raises(Transient) as flaky:
        client.publish(account, req, {})
    assert flaky.value.error_code == ErrorCode.PLATFORM_UNAVAILABLE
    assert client.publish(account, req, {}).done


def test_sandbox_unauthorized_is_an_auth_error(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    with pytest.raises(AuthError):
        client.publish(account, PublishRequest(target_id="t2", content_type="TEXT", text="#sandbox-unauthorized"), {})


def test_list_recent_posts_stops_at_since_and_pages(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    ids = [
        client.publish(
            account, PublishRequest(target_id=f"t_list{i}", content_type="TEXT", text=f"n{i}"), {}
        ).platform_post_id
        for i in range(3)
    ]
    posts = client.list_recent_posts(account, dt.datetime.now(dt.UTC) - dt.timedelta(days=180))
    assert [p.platform_post_id for p in posts] == list(reversed(ids))
    assert all(p.metrics == mastodon.Metrics() for p in posts)
    assert client.list_recent_posts(account, dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1)) == []


def test_followers_and_no_metrics(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    followers = client.fetch_followers(account)
    assert isinstance(followers, int) and followers >= 40
    with pytest.raises(NotSupported):
        client.fetch_post_metrics(account, ["1"])


def test_status_rate_limit_headers_are_sent(sandbox: str, account: Credentials) -> None:
    response = requests.get(
        f"{sandbox}/mastodon/api/v1/accounts/verify_credentials",
        headers={"Authorization": f"Bearer {account.access_token}"},
        timeout=10,
    )
    assert response.headers["X-RateLimit-Limit"] == "300"
    assert int(response.headers["X-RateLimit-Remaining"]) < 300
    assert response.headers["X-RateLimit-Reset"].endswith("Z")


# --- error mapping over recorded bodies ------------------------------------------------------

LIVE = "https://mastodon.example"


def live_client() -> mastodon.Client:
    from platforms.base import AppCredentials, thread_session

    return mastodon.Client(base_url=LIVE, app=AppCredentials("id", "secret"), session=thread_session(), timeout=5)


CREDS = Credentials(access_token="tok", external_id="14715")
TEXT = PublishRequest(target_id="tgt_x", content_type="TEXT", text="hi")


@responses.activate
def test_rate_limit_maps_with_reset_time() -> None:
    responses.post(
        f"{LIVE}/api/v1/statuses",
        json=recorded("error_429.json"),
        status=429,
        headers={
            "X-RateLimit-Limit": "300",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": "2030-01-01T00:05:00.000Z",
        },
    )
    with pytest.raises(RateLimited) as limited:
        live_client().publish(CREDS, TEXT, {})
    assert limited.value.retry_at == dt.datetime(2030, 1, 1, 0, 5, tzinfo=dt.UTC)
    assert limited.value.message == "Too many requests"


@responses.activate
def test_timeout_after_sending_a_status_is_unknown_outcome_but_a_read_is_transient() -> None:
    client = live_client()
    responses.post(f"{LIVE}/api/v1/statuses", body=requests.ReadTimeout("read timed out"))
    with pytest.raises(UnknownOutcome) as unknown:
        client.publish(CREDS, TEXT, {})
    assert unknown.value.error_code == ErrorCode.UNKNOWN_OUTCOME
    responses.get(f"{LIVE}/api/v1/accounts/verify_credentials", body=requests.ReadTimeout("read timed out"))
    with pytest.raises(Transient):
        client.check_token(CREDS)


def test_connection_refused_before_sending_is_transient(sandbox: str) -> None:
    from platforms.base import AppCredentials, thread_session

    client = mastodon.Client(
        base_url="http://127.0.0.1:9", app=AppCredentials("id", "s"), session=thread_session(), timeout=2
    )
    with pytest.raises(Transient):
        client.publish(CREDS, TEXT, {})


@responses.activate
def test_recorded_success_bodies_parse() -> None:
    client = live_client()
    responses.get(f"{LIVE}/api/v1/accounts/verify_credentials", json=recorded("account_verify_credentials.json"))
    profile = client.check_token(CREDS)
    assert (profile.external_id, profile.username, profile.display_name) == ("14715", "trwnh", "infinite love ⴳ")
    assert client.fetch_followers(CREDS) == 821
    status = recorded("status.json")
    result = mastodon.Client.result_from_status(status)
    assert result.platform_post_id == "103270115826048975"
    assert result.url == "https://mastodon.social/@Gargron/103270115826048975"
    assert result.published_at == dt.datetime(2019, 12, 8, 3, 48, 33, 901000, tzinfo=dt.UTC)
    post = mastodon.Client.remote_post_from(status)
    assert post.text.startswith(
        '"I lost my inheritance with one wrong digit on my sort code"\n\nhttps://www.theguardian'
    )
    responses.post(f"{LIVE}/oauth/token", json=recorded("token.json"))
    responses.post(f"{LIVE}/api/v1/apps", json=recorded("app.json"))
    (identity,) = client.exchange_code(code="c", redirect_uri="https://example.com/cb")
    assert identity.credentials.access_token == "ZA-Yj3aBD8U8Cm7lKUp-lm9O9BmDgdhHzDeqsY8tlL0"
    assert identity.credentials.external_id == "14715"
    assert client.register_app(client_name="x", redirect_uri="urn:ietf:wg:oauth:2.0:oob") == (
        "TWhM-tNSuncnqN7DBJmoyeLnk6K3iJJ71KKXxgL1hPM",
        "ZEaFUFmF0umgBX1qKJDjaU99Q31lDkOU8NutzTOoliw",
    )


@responses.activate
def test_recorded_media_processing_flow_parses() -> None:
    client = live_client()
    responses.get(
        "https://media.example/clip.mp4", body=b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64, content_type="video/mp4"
    )
    responses.post(f"{LIVE}/api/v2/media", json=recorded("media_v2_processing.json"), status=202)
    responses.get(f"{LIVE}/api/v1/media/22348641", json=recorded("media_v2_processing.json"), status=206)
    req = PublishRequest(
        target_id="tgt_v",
        content_type="VIDEO",
        text="clip",
        media=(MediaItem(url="https://media.example/clip.mp4", kind="video", mime_type="video/mp4"),),
    )
    pending = client.publish(CREDS, req, {})
    assert (pending.done, pending.state) == (False, {"media_ids": ["22348641"], "ready": []})
    responses.replace(responses.GET, f"{LIVE}/api/v1/media/22348641", json=recorded("media_processed.json"))
    responses.post(f"{LIVE}/api/v1/statuses", json=recorded("status.json"))
    done = client.publish(CREDS, req, pending.state)
    assert done.platform_post_id == "103270115826048975"
    sent = responses.calls[-1].request
    assert sent.headers["Idempotency-Key"] == "tgt_v"
    assert json.loads(sent.body)["media_ids"] == ["22348641"]


# --- after publishing: edit, history, delete, revoke ------------------------------------------------


def _status(sandbox: str, creds: Credentials, status_id: str, suffix: str = "") -> Any:
    response = requests.get(
        f"{sandbox}/mastodon/api/v1/statuses/{status_id}{suffix}",
        headers={"Authorization": f"Bearer {creds.access_token}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_edit_keeps_every_version_in_the_history_and_sets_edited_at(
    sandbox: str, account: Credentials, media_server: str
) -> None:
    client = get_client(Platform.MASTODON)
    req = PublishRequest(
        target_id="tgt_hist", content_type="IMAGE", text="first", media=(media_item(f"{media_server}/sample.jpg"),)
    )
    post = client.publish(account, req, {})
    assert _status(sandbox, account, post.platform_post_id)["edited_at"] is None
    assert len(_status(sandbox, account, post.platform_post_id, "/history")) == 1
    result = client.edit(
        account, EditRequest(target_id="tgt_hist", platform_post_id=post.platform_post_id, text="second")
    )
    assert result.done and result.edited_at is not None
    assert result.url.endswith(f"/{post.platform_post_id}")
    status = _status(sandbox, account, post.platform_post_id)
    assert status["edited_at"] is not None and mastodon.html_to_text(status["content"]) == "second"
    assert len(status["media_attachments"]) == 1  # a text edit re-sends the media it keeps
    client.edit(account, EditRequest(target_id="tgt_hist", platform_post_id=post.platform_post_id, text="third"))
    history = _status(sandbox, account, post.platform_post_id, "/history")
    assert [mastodon.html_to_text(v["content"]) for v in history] == ["first", "second", "third"]
    assert all(len(v["media_attachments"]) == 1 for v in history)
    (put, put2) = [e for e in sim_requests(sandbox, "mastodon") if e.get("edit")]
    assert put["method"] == put2["method"] == "PUT"


def test_media_edit_keeps_the_text_and_waits_for_a_video_without_uploading_it_twice(
    sandbox: str, account: Credentials, media_server: str
) -> None:
    client = get_client(Platform.MASTODON)
    post = client.publish(account, PublishRequest(target_id="tgt_m", content_type="TEXT", text="words stay"), {})
    req = EditRequest(
        target_id="tgt_m", platform_post_id=post.platform_post_id, media=(media_item(f"{media_server}/sample.mp4"),)
    )
    pending = client.edit(account, req)
    assert not pending.done and pending.poll_after > 0 and len(pending.state["media_ids"]) == 1
    assert [e for e in sim_requests(sandbox, "mastodon") if e.get("edit")] == []  # nothing changed yet
    time.sleep(mastodon.PROCESSING_POLL_SECONDS)  # the simulator's processing time, as in the publish test
    result = client.edit(account, EditRequest(**{**req.__dict__, "state": pending.state}))
    assert result.done
    status = _status(sandbox, account, post.platform_post_id)
    assert mastodon.html_to_text(status["content"]) == "words stay"
    assert [m["id"] for m in status["media_attachments"]] == pending.state["media_ids"]
    assert len(sim_requests(sandbox, "mastodon", "/api/v2/media")) == 1


def test_a_put_without_status_empties_the_text_as_the_server_does(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.MASTODON)
    post = client.publish(account, PublishRequest(target_id="tgt_put", content_type="TEXT", text="text"), {})
    response = requests.put(
        f"{sandbox}/mastodon/api/v1/statuses/{post.platform_post_id}",
        headers={"Authorization": f"Bearer {account.access_token}"},
        json={"spoiler_text": ""},
        timeout=10,
    )
    assert response.status_code == 422 and response.json() == {"error": "Validation failed: Text can't be blank"}


def test_edit_and_delete_of_another_accounts_status_are_not_found(
    sandbox: str, account: Credentials, connect_one: Any
) -> None:
    client = get_client(Platform.MASTODON)
    post = client.publish(account, PublishRequest(target_id="tgt_own", content_type="TEXT", text="mine"), {})
    stranger = connect_one(Platform.MASTODON).credentials
    with pytest.raises(Permanent) as refused:
        client.edit(stranger, EditRequest(target_id="x", platform_post_id=post.platform_post_id, text="theirs"))
    assert refused.value.http_status == 404 and refused.value.message == "Record not found"
    client.delete(stranger, post.platform_post_id)  # answers 404 to them: nothing of theirs to delete
    assert _status(sandbox, account, post.platform_post_id)["id"] == post.platform_post_id


def test_revoke_with_an_unknown_app_is_refused(sandbox: str, account: Credentials) -> None:
    from platforms.base import AppCredentials

    client = mastodon.Client(base_url=f"{sandbox}/mastodon", app=AppCredentials("not-registered", "nope"), timeout=5)
    with pytest.raises(Permanent) as refused:
        client.revoke_token(account)
    assert refused.value.error_code == ErrorCode.PERMISSION_MISSING
    assert refused.value.message == "You are not authorized to revoke this token"
    assert get_client(Platform.MASTODON).check_token(account).external_id == account.external_id


@responses.activate
def test_recorded_edit_answer_parses_and_sends_the_whole_status() -> None:
    client = live_client()
    status = recorded("status.json")
    responses.get(f"{LIVE}/api/v1/statuses/103270115826048975", json=status)
    responses.get(
        f"{LIVE}/api/v1/statuses/103270115826048975/source", json={"id": "1", "text": "kept", "spoiler_text": ""}
    )
    edited = {**status, "edited_at": "2019-12-08T04:00:00.000Z"}
    responses.put(f"{LIVE}/api/v1/statuses/103270115826048975", json=edited)
    result = client.edit(
        CREDS, EditRequest(target_id="t", platform_post_id="103270115826048975", options={"spoilerText": "cw"})
    )
    assert result.edited_at == dt.datetime(2019, 12, 8, 4, 0, tzinfo=dt.UTC)
    sent = json.loads(responses.calls[-1].request.body)
    assert sent["status"] == "kept" and sent["spoiler_text"] == "cw"
    assert sent["media_ids"] == [str(m["id"]) for m in status["media_attachments"]]


@responses.activate
def test_timeout_after_sending_a_delete_is_unknown_outcome() -> None:
    responses.delete(f"{LIVE}/api/v1/statuses/1", body=requests.ReadTimeout("read timed out"))
    with pytest.raises(UnknownOutcome):
        live_client().delete(CREDS, "1")
