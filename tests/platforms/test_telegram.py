"""TELEGRAM: the real Bot API client against the simulator over HTTP, and against recorded bodies."""

from __future__ import annotations

import datetime as dt
import json
from functools import partial
from typing import Any

import pytest
import requests
import responses

from platforms import telegram
from platforms.base import (
    AppCredentials,
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
    thread_session,
)
from platforms.registry import get_client
from tests.platforms.conftest import load_recorded, media_item, publish_calls, sandbox_page, sim_requests

recorded = partial(load_recorded, "telegram")
publishes = partial(publish_calls, slug="telegram")


@pytest.fixture
def account(connect_one: Any) -> Credentials:
    return connect_one(Platform.TELEGRAM).credentials


def history(sandbox: str, chat_id: str) -> list[dict[str, Any]]:
    from platforms.sandbox.store import SandboxStore

    return SandboxStore("telegram").all(f"messages:{chat_id}")


# --- connect and tokens ------------------------------------------------------------------


def test_connect_with_sandbox_credentials_validates_bot_and_chat(sandbox: str) -> None:
    client = get_client(Platform.TELEGRAM)
    assert client.connect_method == "credentials"
    fields = client.sandbox_credentials()
    assert telegram.BOT_TOKEN.match(fields["botToken"])
    (identity,) = client.connect_with_credentials(fields)
    assert identity.credentials.access_token == fields["botToken"]
    assert identity.credentials.external_id == fields["chatId"]
    assert identity.credentials.extra["bot_id"] == fields["botToken"].split(":")[0]
    assert identity.profile.display_name.startswith("Sandbox Channel")
    assert client.check_token(identity.credentials) == identity.profile


def test_connect_refuses_malformed_token_unknown_chat_and_foreign_bot(sandbox: str) -> None:
    client = get_client(Platform.TELEGRAM)
    fields = client.sandbox_credentials()
    with pytest.raises(Permanent) as malformed:
        client.connect_with_credentials({"botToken": "12345:short", "chatId": fields["chatId"]})
    assert malformed.value.error_code == ErrorCode.INVALID_REQUEST
    with pytest.raises(Permanent) as unknown:
        client.connect_with_credentials({"botToken": fields["botToken"], "chatId": "-1000000000001"})
    assert unknown.value.message == "Bad Request: chat not found"
    other_bot = client.sandbox_credentials()["botToken"]
    with pytest.raises(Permanent) as foreign:
        client.connect_with_credentials({"botToken": other_bot, "chatId": fields["chatId"]})
    assert foreign.value.error_code == ErrorCode.PERMISSION_MISSING


def test_check_token_rejected_when_revoked_or_wrong(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TELEGRAM)
    wrong = Credentials(access_token=account.access_token[:-1] + "x", external_id=account.external_id)
    with pytest.raises(AuthError) as bad_token:
        client.check_token(wrong)
    assert bad_token.value.message == "Unauthorized"
    requests.post(f"{sandbox}/_control/telegram/accounts/{account.external_id}/revoke", json={}, timeout=10)
    with pytest.raises(AuthError):
        client.check_token(account)


def test_no_refresh_no_metrics_no_listing(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TELEGRAM)
    with pytest.raises(NotSupported):
        client.refresh_token(account)
    with pytest.raises(NotSupported):
        client.fetch_post_metrics(account, ["1"])
    with pytest.raises(NotSupported):
        client.list_recent_posts(account, dt.datetime.now(dt.UTC))
    with pytest.raises(NotSupported):
        client.lookup(account, PublishRequest(target_id="t", content_type="TEXT", text="x"))


def test_followers_from_member_count(sandbox: str, account: Credentials) -> None:
    count = get_client(Platform.TELEGRAM).fetch_followers(account)
    assert isinstance(count, int) and count >= 100


# --- publishing --------------------------------------------------------------------------


def test_publish_text(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TELEGRAM)
    result = client.publish(account, PublishRequest(target_id="t_text", content_type="TEXT", text="Hello channel"), {})
    assert result.done and result.platform_post_id == "1"
    username = history(sandbox, account.external_id)[0]["chat"]["username"]
    assert result.url == sandbox_page("telegram", f"/{username}/1")
    assert [(m["message_id"], m["text"]) for m in history(sandbox, account.external_id)] == [(1, "Hello channel")]
    (logged,) = publishes(sandbox)
    assert logged["remoteId"] == "1" and logged["path"].endswith("/sendMessage")


def test_publish_photo_and_video_by_url(sandbox: str, account: Credentials, media_server: str) -> None:
    client = get_client(Platform.TELEGRAM)
    photo = client.publish(
        account,
        PublishRequest(
            target_id="t_p", content_type="IMAGE", text="pic", media=(media_item(f"{media_server}/sample.jpg"),)
        ),
        {},
    )
    clip = client.publish(
        account,
        PublishRequest(
            target_id="t_v", content_type="VIDEO", text="clip", media=(media_item(f"{media_server}/sample.mp4"),)
        ),
        {},
    )
    assert (photo.platform_post_id, clip.platform_post_id) == ("1", "2")
    first, second = history(sandbox, account.external_id)
    assert first["caption"] == "pic" and first["photo"][0]["file_size"] > 0
    assert second["caption"] == "clip" and second["video"]["mime_type"] == "video/mp4"


def test_publish_media_group(sandbox: str, account: Credentials, media_server: str) -> None:
    client = get_client(Platform.TELEGRAM)
    items = (
        media_item(f"{media_server}/sample.jpg"),
        media_item(f"{media_server}/sample.png"),
        media_item(f"{media_server}/sample.mp4"),
    )
    result = client.publish(
        account, PublishRequest(target_id="t_g", content_type="CAROUSEL", text="album", media=items), {}
    )
    assert result.platform_post_id == "1"
    messages = history(sandbox, account.external_id)
    assert [m["message_id"] for m in messages] == [1, 2, 3]
    assert len({m["media_group_id"] for m in messages}) == 1
    assert messages[0]["caption"] == "album" and "caption" not in messages[1]
    assert len(publishes(sandbox)) == 1


def test_unfetchable_media_is_media_rejected(sandbox: str, account: Credentials, media_server: str) -> None:
    client = get_client(Platform.TELEGRAM)
    req = PublishRequest(
        target_id="t_m", content_type="IMAGE", text="x", media=(media_item(f"{media_server}/missing.jpg"),)
    )
    with pytest.raises(Permanent) as rejected:
        client.publish(account, req, {})
    assert rejected.value.error_code == ErrorCode.MEDIA_REJECTED
    wrong_kind = PublishRequest(
        target_id="t_m2",
        content_type="IMAGE",
        text="x",
        media=(MediaItem(url=f"{media_server}/sample.pdf", kind="image", mime_type="image/jpeg"),),
    )
    with pytest.raises(Permanent) as pdf:
        client.publish(account, wrong_kind, {})
    assert pdf.value.message == "Bad Request: wrong type of the web page content"


def test_scenarios(sandbox: str, account: Credentials) -> None:
    client = get_client(Platform.TELEGRAM)
    with pytest.raises(Permanent) as failed:
        client.publish(account, PublishRequest(target_id="f", content_type="TEXT", text="x #sandbox-fail"), {})
    assert failed.value.error_code == ErrorCode.CONTENT_REJECTED and failed.value.http_status == 400
    with pytest.raises(AuthError):
        client.publish(account, PublishRequest(target_id="u", content_type="TEXT", text="x #sandbox-unauthorized"), {})
    flaky = PublishRequest(target_id="fl", content_type="TEXT", text="x #sandbox-flaky")
    with pytest.raises(Transient):
        client.publish(account, flaky, {})
    assert client.publish(account, flaky, {}).done
    assert len(history(sandbox, account.external_id)) == 1


# --- error mapping and recorded bodies ----------------------------------------------------

LIVE = "https://api.telegram.example"
TOKEN = "7004234567:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
CREDS = Credentials(access_token=TOKEN, external_id="-1001234567890")
TEXT = PublishRequest(target_id="t", content_type="TEXT", text="hi")


def live_client() -> telegram.Client:
    return telegram.Client(base_url=LIVE, app=AppCredentials(), session=thread_session(), timeout=5)


def url(method: str) -> str:
    return f"{LIVE}/bot{TOKEN}/{method}"


@responses.activate
def test_recorded_success_bodies_parse() -> None:
    client = live_client()
    responses.post(url("getMe"), json=recorded("getMe.json"))
    responses.post(url("getChat"), json=recorded("getChat.json"))
    (identity,) = client.connect_with_credentials({"botToken": TOKEN, "chatId": "@crosspost_news"})
    assert identity.credentials.external_id == "-1001234567890"
    assert identity.profile.display_name == "Crosspost News" and identity.profile.username == "crosspost_news"
    assert identity.profile.avatar_url == "https://t.me/i/userpic/320/crosspost_news.jpg"  # t.me's, not the Bot API's
    assert identity.credentials.extra == {"bot_id": "7004234567", "bot_username": "crosspost_publisher_bot"}
    responses.post(url("sendMessage"), json=recorded("sendMessage.json"))
    result = client.publish(CREDS, TEXT, {})
    assert (result.platform_post_id, result.url) == ("42", "https://t.me/crosspost_news/42")
    assert result.published_at == dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert json.loads(responses.calls[-1].request.body) == {"chat_id": "-1001234567890", "text": "hi"}
    photo = client.result_from(recorded("sendPhoto_private_channel.json")["result"])
    assert photo.url == "https://t.me/c/9876543210/7"
    responses.post(url("sendMediaGroup"), json=recorded("sendMediaGroup.json"))
    group = client.publish(
        CREDS,
        PublishRequest(
            target_id="g",
            content_type="CAROUSEL",
            text="Album",
            media=(
                MediaItem(url="https://m.example/a.jpg", kind="image", mime_type="image/jpeg"),
                MediaItem(url="https://m.example/b.mp4", kind="video", mime_type="video/mp4"),
            ),
        ),
        {},
    )
    assert group.platform_post_id == "50"
    assert json.loads(responses.calls[-1].request.body)["media"] == [
        {"type": "photo", "media": "https://m.example/a.jpg", "caption": "Album"},
        {"type": "video", "media": "https://m.example/b.mp4"},
    ]
    responses.post(url("getChatMemberCount"), json=recorded("getChatMemberCount.json"))
    assert client.fetch_followers(CREDS) == 1832


@responses.activate
def test_flood_wait_is_rate_limited_with_retry_after() -> None:
    responses.post(url("sendMessage"), json=recorded("error_429.json"), status=429)
    before = dt.datetime.now(dt.UTC)
    with pytest.raises(RateLimited) as limited:
        live_client().publish(CREDS, TEXT, {})
    assert limited.value.retry_at is not None
    assert 34 <= (limited.value.retry_at - before).total_seconds() <= 37


@responses.activate
def test_timeout_after_sending_is_unknown_outcome() -> None:
    responses.post(url("sendMessage"), body=requests.ReadTimeout("read timed out"))
    with pytest.raises(UnknownOutcome):
        live_client().publish(CREDS, TEXT, {})
    responses.post(url("getMe"), body=requests.ReadTimeout("read timed out"))
    with pytest.raises(Transient):
        live_client().check_token(CREDS)


# --- after publishing ---------------------------------------------------------------------------


def test_caption_edit_without_the_content_type_falls_back_and_a_repeated_edit_is_done(
    sandbox: str, account: Credentials, media_server: str
) -> None:
    client = get_client(Platform.TELEGRAM)
    photo = client.publish(
        account,
        PublishRequest(
            target_id="t_cap",
            content_type="IMAGE",
            text="old caption",
            media=(media_item(f"{media_server}/sample.jpg"),),
        ),
        {},
    )
    edit = EditRequest(target_id="t_cap", platform_post_id=photo.platform_post_id, text="new caption")
    result = client.edit(account, edit)
    assert result.edited_at is not None
    edits = [e for e in sim_requests(sandbox, "telegram") if e.get("edit")]
    assert [(e["path"].rsplit("/", 1)[-1], e["status"]) for e in edits] == [
        ("editMessageText", 400),  # refused, nothing changed
        ("editMessageCaption", 200),
    ]
    again = client.edit(account, EditRequest(**{**edit.__dict__, "content_type": "IMAGE"}))  # "not modified"
    assert again.edited_at is None
    page = requests.get(f"{sandbox}/telegram/c/{account.external_id[4:]}/{photo.platform_post_id}", timeout=10)
    assert "new caption" in page.text


def test_a_message_older_than_48_hours_is_not_deleted(sandbox: str, account: Credentials, monkeypatch: Any) -> None:
    from platforms.sandbox import telegram as simulator

    client = get_client(Platform.TELEGRAM)
    post = client.publish(account, PublishRequest(target_id="t_old", content_type="TEXT", text="old news"), {})
    monkeypatch.setattr(simulator, "DELETE_WINDOW", 0)
    with pytest.raises(Permanent) as refused:
        client.delete(account, post.platform_post_id)
    assert refused.value.message == "Bad Request: message can't be deleted for everyone"
    with pytest.raises(NotSupported):
        client.revoke_token(account)
