"""Pinterest: the real v5 client against its simulator over HTTP, plus recorded API bodies."""

from __future__ import annotations

import datetime as dt
import json
import time
from functools import partial
from typing import Any

import pytest
import requests
import responses

from platforms import pinterest
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
    Transient,
    UnknownOutcome,
    thread_session,
)
from platforms.registry import get_client
from tests.platforms.conftest import drive, load_recorded, media_item, sandbox_page, sim_requests

recorded = partial(load_recorded, "pinterest")

LIVE = pinterest.LIVE_BASE_URL


@pytest.fixture
def account(connect_one: Any) -> Any:
    return connect_one("PINTEREST")


@pytest.fixture
def board_id(account: Any) -> str:
    return get_client("PINTEREST").list_boards(account.credentials)[0].id


def pin_request(text: str, media: tuple[MediaItem, ...], board: str, content_type: str = "IMAGE") -> PublishRequest:
    return PublishRequest(
        target_id="tgt_pin1",
        content_type=content_type,
        text=text,
        media=media,
        options={"boardId": board, "title": "Sandbox pin", "link": "https://example.com/shop"},
    )


# --- connect, token, boards ------------------------------------------------------------------
def test_connect_yields_profile_and_refreshable_credentials(account: Any) -> None:
    assert account.profile.external_id
    assert account.profile.username.startswith("sandbox_pinner_")
    assert account.credentials.external_id == account.profile.external_id
    assert account.credentials.refresh_token
    assert "boards:read_secret" in account.scopes


def test_check_token_valid_then_revoked(sandbox: str, account: Any) -> None:
    client = get_client("PINTEREST")
    assert client.check_token(account.credentials).external_id == account.profile.external_id
    revoke_url = f"{sandbox}/_control/pinterest/accounts/{account.profile.external_id}/revoke"
    requests.post(revoke_url, json={"revoked": True}, timeout=10)
    with pytest.raises(AuthError):
        client.check_token(account.credentials)
    with pytest.raises(AuthError):
        client.list_boards(account.credentials)


def test_refresh_gives_a_new_working_access_token(account: Any) -> None:
    client = get_client("PINTEREST")
    refreshed = client.refresh_token(account.credentials)
    assert refreshed.access_token != account.credentials.access_token
    assert refreshed.refresh_token == account.credentials.refresh_token
    assert client.check_token(refreshed).external_id == account.profile.external_id
    with pytest.raises(AuthError):
        client.refresh_token(Credentials(access_token="x", refresh_token="not-a-token", external_id="u"))


def test_list_boards_follows_bookmarks_and_includes_secret_boards(sandbox: str, account: Any) -> None:
    requests.delete(f"{sandbox}/_control/pinterest/requests", timeout=10)
    boards = get_client("PINTEREST").list_boards(account.credentials)
    assert len(boards) == 28
    assert len({b.id for b in boards}) == 28
    assert [b.name for b in boards if b.privacy == "SECRET"] == ["Private drafts"]
    assert {b.privacy for b in boards} == {"PUBLIC", "PROTECTED", "SECRET"}
    board_calls = [r for r in sim_requests(sandbox, "pinterest") if r["path"].endswith("/boards")]
    assert len(board_calls) == 2


def test_followers(account: Any) -> None:
    assert get_client("PINTEREST").fetch_followers(account.credentials) >= 120


# --- publishing ---------------------------------------------------------------------------
def test_publish_image_pin(sandbox: str, media_server: str, account: Any, board_id: str) -> None:
    client = get_client("PINTEREST")
    result = client.publish(
        account.credentials,
        pin_request("Fresh lemons", (media_item(f"{media_server}/sample.jpg", alt="a test card"),), board_id),
        {},
    )
    assert result.done and result.platform_post_id
    assert result.url == sandbox_page("pinterest", f"/pin/{result.platform_post_id}/")
    [listed] = client.list_recent_posts(account.credentials, dt.datetime.now(dt.UTC) - dt.timedelta(hours=1))
    assert (listed.platform_post_id, listed.text) == (result.platform_post_id, "Fresh lemons")
    assert [r["remoteId"] for r in sim_requests(sandbox, "pinterest") if r.get("publish")] == [result.platform_post_id]


def test_publish_carousel_pin(media_server: str, account: Any, board_id: str) -> None:
    media = (
        media_item(f"{media_server}/sample.jpg", alt="a test card"),
        media_item(f"{media_server}/sample.png", alt="a test card"),
        media_item(f"{media_server}/sample.jpg", alt="a test card"),
    )
    result = get_client("PINTEREST").publish(
        account.credentials, pin_request("Three looks", media, board_id, "CAROUSEL"), {}
    )
    assert result.done and result.platform_post_id


def test_publish_video_pin_runs_the_media_flow(sandbox: str, media_server: str, account: Any, board_id: str) -> None:
    client = get_client("PINTEREST")
    request = pin_request("Watch this", (media_item(f"{media_server}/sample-reel.mp4"),), board_id, "VIDEO")
    first = client.publish(account.credentials, request, {})
    assert not first.done and first.state["media_id"]
    # the worker lost the result of the next step: resume from the first state again
    second = client.publish(account.credentials, request, first.state)
    assert not second.done and second.state["uploaded"]
    result = drive(client, account.credentials, request, second.state)[-1]
    assert result.done
    log = sim_requests(sandbox, "pinterest")
    assert len([r for r in log if r["path"].endswith("/media") and r["method"] == "POST"]) == 1
    assert len([r for r in log if r.get("publish")]) == 1
    assert len(client.list_recent_posts(account.credentials, dt.datetime.now(dt.UTC) - dt.timedelta(hours=1))) == 1


def test_publish_without_board_is_refused_before_calling(account: Any, media_server: str) -> None:
    with pytest.raises(Permanent) as caught:
        get_client("PINTEREST").publish(
            account.credentials,
            pin_request("x", (media_item(f"{media_server}/sample.jpg", alt="a test card"),), ""),
            {},
        )
    assert caught.value.error_code == ErrorCode.INVALID_REQUEST


def test_unfetchable_image_is_media_rejected(media_server: str, account: Any, board_id: str) -> None:
    broken = MediaItem(url=f"{media_server}/missing.jpg", kind="image", mime_type="image/jpeg")
    with pytest.raises(Permanent) as caught:
        get_client("PINTEREST").publish(account.credentials, pin_request("x", (broken,), board_id), {})
    assert caught.value.error_code == ErrorCode.MEDIA_REJECTED


def test_scenario_markers(media_server: str, account: Any, board_id: str) -> None:
    client = get_client("PINTEREST")
    media = (media_item(f"{media_server}/sample.jpg", alt="a test card"),)
    with pytest.raises(Permanent) as failed:
        client.publish(account.credentials, pin_request("bad #sandbox-fail", media, board_id), {})
    assert failed.value.error_code == ErrorCode.CONTENT_REJECTED
    with pytest.raises(AuthError):
        client.publish(account.credentials, pin_request("x #sandbox-unauthorized", media, board_id), {})
    with pytest.raises(Transient):
        client.publish(account.credentials, pin_request("once #sandbox-flaky", media, board_id), {})
    assert client.publish(account.credentials, pin_request("once #sandbox-flaky", media, board_id), {}).done


def test_metrics_grow_and_unknown_pins_are_skipped(media_server: str, account: Any, board_id: str) -> None:
    client = get_client("PINTEREST")
    request = pin_request("m", (media_item(f"{media_server}/sample.jpg", alt="a test card"),), board_id)
    pin_id = client.publish(account.credentials, request, {}).platform_post_id
    first = client.fetch_post_metrics(account.credentials, [pin_id, "999"])
    assert list(first) == [pin_id]
    time.sleep(1.1)  # the simulator's impressions grow two a second
    later = client.fetch_post_metrics(account.credentials, [pin_id])[pin_id]
    assert later.views > (first[pin_id].views or 0)
    assert None not in (later.likes, later.comments, later.shares)


# --- error mapping and recorded bodies (the documented shapes, against the live URLs) -------
def live_client() -> pinterest.Client:
    from platforms.base import AppCredentials

    return pinterest.Client(base_url=LIVE, app=AppCredentials("id", "secret"), session=thread_session(), timeout=5)


CREDS = Credentials(access_token="pina_x", external_id="549755885175")


@responses.activate
def test_recorded_bodies_parse() -> None:
    responses.get(f"{LIVE}/user_account", json=recorded("user_account.json"))
    responses.get(f"{LIVE}/boards", json=recorded("boards_page1.json"))
    responses.get(f"{LIVE}/boards", json=recorded("boards_page2.json"))
    responses.get(f"{LIVE}/pins", json=recorded("pins_list.json"))
    responses.get(f"{LIVE}/pins/813744226420795884/analytics", json=recorded("pin_analytics.json"))
    responses.post(f"{LIVE}/pins", json=recorded("pin.json"), status=201)
    client = live_client()
    profile = client.check_token(CREDS)
    assert (profile.external_id, profile.username) == ("549755885175", "examplebrand")
    assert profile.display_name == "Example Brand"
    boards = client.list_boards(CREDS)
    assert [(b.id, b.privacy) for b in boards] == [("549755885175", "PUBLIC"), ("549755885176", "SECRET")]
    assert "bookmark=Y2JVSG81" in responses.calls[2].request.url
    [post] = client.list_recent_posts(CREDS, dt.datetime(2019, 1, 1, tzinfo=dt.UTC))
    assert post.published_at == dt.datetime(2020, 1, 1, 20, 10, 40, tzinfo=dt.UTC)
    assert post.thumbnail_url.startswith("https://i.pinimg.com/600x/")
    metrics = client.fetch_post_metrics(CREDS, ["813744226420795884"])["813744226420795884"]
    assert (metrics.views, metrics.likes, metrics.comments, metrics.shares) == (2, 7, 6, 4)
    assert (metrics.saves, metrics.clicks, metrics.impressions, metrics.reach) == (4, 5 + 3, 2, None)
    result = client.publish(
        CREDS,
        PublishRequest(
            "t",
            "IMAGE",
            "Light",
            (MediaItem("https://e.com/a.jpg", "image", "image/jpeg"),),
            {"boardId": "549755885175"},
        ),
        {},
    )
    assert result.platform_post_id == "813744226420795884"
    sent = json.loads(responses.calls[-1].request.body)
    assert sent["media_source"] == {"source_type": "image_url", "url": "https://e.com/a.jpg"}


@responses.activate
def test_recorded_token_exchange_uses_basic_auth() -> None:
    responses.post(f"{LIVE}/oauth/token", json=recorded("token.json"))
    responses.get(f"{LIVE}/user_account", json=recorded("user_account.json"))
    [identity] = live_client().exchange_code(code="abc", redirect_uri="https://app/cb")
    assert identity.credentials.refresh_token.startswith("pinr_")
    assert identity.credentials.external_id == "549755885175"
    assert responses.calls[0].request.headers["Authorization"].startswith("Basic ")
    assert "grant_type=authorization_code" in responses.calls[0].request.body
    assert (
        live_client()
        .authorize_url(redirect_uri="https://app/cb", state="s")
        .startswith("https://www.pinterest.com/oauth/?client_id=id")
    )


@responses.activate
def test_timeout_after_sending_a_pin_is_an_unknown_outcome_but_before_is_transient() -> None:
    request = PublishRequest(
        "t", "IMAGE", "x", (MediaItem("https://e.com/a.jpg", "image", "image/jpeg"),), {"boardId": "1"}
    )
    responses.post(f"{LIVE}/pins", body=requests.exceptions.ReadTimeout("read timed out"))
    with pytest.raises(UnknownOutcome):
        live_client().publish(CREDS, request, {})
    responses.replace(responses.POST, f"{LIVE}/pins", body=requests.exceptions.ConnectTimeout("connect timed out"))
    with pytest.raises(Transient):
        live_client().publish(CREDS, request, {})
    responses.get(f"{LIVE}/user_account", body=requests.exceptions.ReadTimeout("read timed out"))
    with pytest.raises(Transient):
        live_client().check_token(CREDS)


def test_the_seeded_pins_have_views_in_proportion_as_a_real_account_s(account: Any) -> None:
    """The seeded history (pins 10, 40 and 200 days old) once had views growing without end, so
    a 40-day-old pin had four times a 10-day-old one's and the overview swung −75 %."""
    client = get_client("PINTEREST")
    since = dt.datetime.now(dt.UTC) - dt.timedelta(days=365)
    history = sorted(client.list_recent_posts(account.credentials, since), key=lambda p: p.published_at)
    views = client.fetch_post_metrics(account.credentials, [p.platform_post_id for p in history])
    oldest, older, newest = (views[p.platform_post_id].views or 0 for p in history)
    assert 0 < newest < older < oldest < 2 * newest
    assert oldest < 100_000


def test_edit_changes_title_and_description_but_never_the_media(
    sandbox: str, connect_one: Any, media_server: str
) -> None:
    creds = connect_one(Platform.PINTEREST).credentials
    client = get_client(Platform.PINTEREST)
    board = client.list_boards(creds)[0].id
    pin = client.publish(
        creds,
        PublishRequest(
            target_id="t_pin",
            content_type="IMAGE",
            text="old words",
            media=(media_item(f"{media_server}/sample.jpg"),),
            options={"boardId": board, "title": "Old title"},
        ),
        {},
    )
    client.edit(creds, EditRequest(target_id="t_pin", platform_post_id=pin.platform_post_id, title="New title"))
    read = requests.get(
        f"{sandbox}/pinterest/pins/{pin.platform_post_id}",
        headers={"Authorization": f"Bearer {creds.access_token}"},
        timeout=10,
    ).json()
    assert (read["title"], read["description"]) == ("New title", "old words")
    with pytest.raises(Permanent) as refused:
        client.edit(
            creds,
            EditRequest(
                target_id="t_pin",
                platform_post_id=pin.platform_post_id,
                media=(media_item(f"{media_server}/sample.png"),),
            ),
        )
    assert refused.value.error_code == ErrorCode.INVALID_REQUEST
    with pytest.raises(NotSupported):
        client.revoke_token(creds)
