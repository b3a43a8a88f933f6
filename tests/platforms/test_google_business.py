"""Google Business Profile: the real client against its simulator over HTTP, plus recorded bodies."""

from __future__ import annotations

import datetime as dt
import json
import time
from functools import partial
from typing import Any

import pytest
import requests
import responses

from platforms import google_business
from platforms.base import (
    AppCredentials,
    AuthError,
    Credentials,
    ErrorCode,
    MediaItem,
    NotSupported,
    Permanent,
    PublishRequest,
    Transient,
    UnknownOutcome,
    thread_session,
)
from platforms.registry import get_client
from platforms.sandbox.store import SandboxStore
from tests.platforms.conftest import load_recorded, sandbox_page, sim_requests

recorded = partial(load_recorded, "google_business")

HOUR_AGO = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)


@pytest.fixture
def locations(connect: Any) -> list[Any]:
    return connect("GOOGLE_BUSINESS")


def test_connect_yields_one_identity_per_location(locations: list[Any]) -> None:
    assert len(locations) == 2
    for identity in locations:
        parts = identity.profile.external_id.split("/")
        assert parts[0::2] == ["accounts", "locations"]
        assert identity.credentials.external_id == identity.profile.external_id
        assert identity.credentials.refresh_token
    assert [i.profile.display_name for i in locations] == ["Sandbox Bakery #1", "Sandbox Bakery #2"]


def test_check_token_valid_revoked_and_refresh(sandbox: str, locations: list[Any]) -> None:
    client = get_client("GOOGLE_BUSINESS")
    first, second = locations
    assert client.check_token(first.credentials).display_name == "Sandbox Bakery #1"
    assert client.check_token(client.refresh_token(first.credentials)).external_id == first.profile.external_id
    location_number = first.profile.external_id.rsplit("/", 1)[1]
    requests.post(f"{sandbox}/_control/google_business/accounts/{location_number}/revoke", json={}, timeout=10)
    with pytest.raises(AuthError):
        client.check_token(first.credentials)
    assert client.check_token(second.credentials).display_name == "Sandbox Bakery #2"
    with pytest.raises(NotSupported):
        client.fetch_followers(first.credentials)


def test_standard_post_with_call_to_action_listing_and_views(sandbox: str, locations: list[Any]) -> None:
    client = get_client("GOOGLE_BUSINESS")
    creds = locations[0].credentials
    request = PublishRequest(
        "tgt_gb1",
        "TEXT",
        "Fresh bread today",
        options={"callToActionType": "ORDER", "callToActionUrl": "https://example.com/order"},
    )
    result = client.publish(creds, request, {})
    assert result.done and result.platform_post_id.startswith(f"{creds.external_id}/localPosts/")
    stored_id = result.platform_post_id.rsplit("/", 1)[1]
    location_id = creds.external_id.rsplit("/", 1)[1]
    assert result.url == sandbox_page("google_business", f"/place?id={location_id}&use=posts&lpsid={stored_id}")
    stored = SandboxStore("google_business").get("post", stored_id)
    assert stored["callToAction"] == {"actionType": "ORDER", "url": "https://example.com/order"}
    [listed] = client.list_recent_posts(creds, HOUR_AGO)
    assert (listed.platform_post_id, listed.text) == (result.platform_post_id, "Fresh bread today")
    assert client.list_recent_posts(locations[1].credentials, HOUR_AGO) == []
    first = client.fetch_post_metrics(creds, [result.platform_post_id])[result.platform_post_id]
    time.sleep(1.1)  # views grow three a second in the simulator
    later = client.fetch_post_metrics(creds, [result.platform_post_id])[result.platform_post_id]
    assert later.views > (first.views or 0)
    assert (later.likes, later.comments, later.shares) == (None, None, None)


def test_event_and_offer_posts(locations: list[Any]) -> None:
    client = get_client("GOOGLE_BUSINESS")
    creds = locations[0].credentials
    event = {
        "topicType": "EVENT",
        "eventTitle": "Open day",
        "eventStart": "2030-05-01T09:30:00Z",
        "eventEnd": "2030-05-01T17:00:00Z",
        "callToActionType": "CALL",
    }
    result = client.publish(creds, PublishRequest("t", "TEXT", "Join us", options=event), {})
    stored = SandboxStore("google_business").get("post", result.platform_post_id.rsplit("/", 1)[1])
    assert stored["event"] == {
        "title": "Open day",
        "schedule": {
            "startDate": {"year": 2030, "month": 5, "day": 1},
            "startTime": {"hours": 9, "minutes": 30, "seconds": 0, "nanos": 0},
            "endDate": {"year": 2030, "month": 5, "day": 1},
            "endTime": {"hours": 17, "minutes": 0, "seconds": 0, "nanos": 0},
        },
    }
    assert stored["callToAction"] == {"actionType": "CALL"}
    offer = {
        "topicType": "OFFER",
        "eventTitle": "Spring sale",
        "eventStart": "2030-05-01",
        "eventEnd": "2030-05-07",
        "offerCouponCode": "SPRING",
        "offerRedeemUrl": "https://example.com/r",
        "offerTerms": "One per visit",
    }
    result = client.publish(creds, PublishRequest("t", "TEXT", "20% off", options=offer), {})
    stored = SandboxStore("google_business").get("post", result.platform_post_id.rsplit("/", 1)[1])
    assert stored["offer"] == {
        "couponCode": "SPRING",
        "redeemOnlineUrl": "https://example.com/r",
        "termsConditions": "One per visit",
    }
    with pytest.raises(Permanent) as invalid:  # an event without dates
        client.publish(creds, PublishRequest("t", "TEXT", "x", options={"topicType": "EVENT", "eventTitle": "x"}), {})
    assert invalid.value.error_code == ErrorCode.INVALID_REQUEST


def test_photo_post_processing_is_resumed_without_a_second_post(
    sandbox: str, media_server: str, locations: list[Any]
) -> None:
    client = get_client("GOOGLE_BUSINESS")
    creds = locations[0].credentials
    photo = MediaItem(url=f"{media_server}/sample.jpg", kind="image", mime_type="image/jpeg")
    request = PublishRequest("tgt_gb2", "IMAGE", "Our cakes", (photo,))
    started = client.publish(creds, request, {})
    assert not started.done and started.state["name"].startswith(creds.external_id)
    result = client.publish(creds, request, started.state)
    assert result.done and result.platform_post_id == started.state["name"]
    assert len([r for r in sim_requests(sandbox, "google_business") if r.get("publish")]) == 1
    broken = MediaItem(url=f"{media_server}/sample.pdf", kind="image", mime_type="image/jpeg")
    with pytest.raises(Permanent):
        client.publish(creds, PublishRequest("t", "IMAGE", "x", (broken,)), {})


def test_scenario_markers(locations: list[Any]) -> None:
    client = get_client("GOOGLE_BUSINESS")
    creds = locations[0].credentials
    with pytest.raises(Permanent) as failed:
        client.publish(creds, PublishRequest("t", "TEXT", "x #sandbox-fail"), {})
    assert failed.value.error_code == ErrorCode.CONTENT_REJECTED
    with pytest.raises(AuthError):
        client.publish(creds, PublishRequest("t", "TEXT", "x #sandbox-unauthorized"), {})
    with pytest.raises(Transient):
        client.publish(creds, PublishRequest("t", "TEXT", "x #sandbox-flaky"), {})
    assert client.publish(creds, PublishRequest("t", "TEXT", "x #sandbox-flaky"), {}).done


# --- recorded bodies and the error taxonomy, against the live URLs ---------------------------
LIVE = google_business.LIVE_BASE_URL
LOCATION = "accounts/102937475619283746/locations/4958273645012938475"
POST = f"{LOCATION}/localPosts/1837465019283746501"
CREDS = Credentials(access_token="ya29.x", refresh_token="1//r", external_id=LOCATION)


def live_client() -> google_business.Client:
    return google_business.Client(base_url=LIVE, app=AppCredentials("cid", "s"), session=thread_session(), timeout=5)


@responses.activate
def test_recorded_bodies_parse() -> None:
    responses.post(
        "https://oauth2.googleapis.com/token",
        json={
            "access_token": "ya29.a",
            "expires_in": 3599,
            "refresh_token": "1//x",
            "token_type": "Bearer",
            "scope": "https://www.googleapis.com/auth/business.manage",
        },
    )
    responses.get("https://mybusinessaccountmanagement.googleapis.com/v1/accounts", json=recorded("accounts.json"))
    responses.get(
        "https://mybusinessbusinessinformation.googleapis.com/v1/accounts/102937475619283746/locations",
        json=recorded("locations.json"),
    )
    responses.get(f"{LIVE}/v4/{LOCATION}/media", json=recorded("media_list.json"))
    responses.get(f"{LIVE}/v4/{LOCATION}/localPosts", json=recorded("local_posts_list.json"))
    responses.post(f"{LIVE}/v4/{LOCATION}/localPosts:reportInsights", json=recorded("report_insights.json"))
    responses.post(f"{LIVE}/v4/{LOCATION}/localPosts", json=recorded("local_post.json"))
    client = live_client()
    [identity] = client.exchange_code(code="4/0A", redirect_uri="https://app/cb")
    assert (identity.profile.external_id, identity.profile.display_name) == (LOCATION, "Joe's Bakery Downtown")
    assert "readMask=" in responses.calls[2].request.url
    # no PROFILE photo: the logo is the account's picture, the cover is not
    assert identity.profile.avatar_url == "https://lh3.googleusercontent.com/p/AF1QipOlogo=s0"
    [post] = client.list_recent_posts(CREDS, dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    assert post.platform_post_id == POST
    assert post.published_at == dt.datetime(2024, 10, 20, 16, 3, 2, 523000, tzinfo=dt.UTC)
    assert client.fetch_post_metrics(CREDS, [POST])[POST].views == 1286
    sent = json.loads(responses.calls[5].request.body)
    assert sent["localPostNames"] == [POST]
    assert sent["basicRequest"]["metricRequests"] == [{"metric": "LOCAL_POST_VIEWS_SEARCH"}]
    result = client.publish(CREDS, PublishRequest("t", "TEXT", "Come in", options={"topicType": "EVENT"}), {})
    assert (result.platform_post_id, result.done) == (POST, True)


@responses.activate
def test_timeout_after_sending_a_local_post_is_an_unknown_outcome() -> None:
    responses.post(f"{LIVE}/v4/{LOCATION}/localPosts", body=requests.exceptions.ReadTimeout("read timed out"))
    with pytest.raises(UnknownOutcome):
        live_client().publish(CREDS, PublishRequest("t", "TEXT", "x"), {})
