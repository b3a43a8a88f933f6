"""CONTRACT.md §1 as the posts endpoints see it: the clients already written send
``Content-Type: application/json`` with an empty body on every method, ``{}`` to every action,
bracket-indexed arrays, ``status`` for ``statuses``, and bare dates."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from posts.models import Post
from posts.rendering import post_record
from tests.factories.posts import PostFactory, PostTargetFactory, account, uploaded
from tests.posts.conftest import future, iso

URL = "/api/v1/social-posts"


def _empty(api: Any, method: str, path: str) -> Any:
    return api.generic(method, path, "", content_type="application/json")


def test_empty_json_body_on_every_read_and_delete(api: Any, workspace: Any) -> None:
    post = PostFactory(workspace=workspace, status="DRAFT")
    PostTargetFactory(post=post, platform="MASTODON")
    response = _empty(api, "GET", URL)
    assert response.status_code == 200 and response.json()["posts"] == [post_record(post)]
    response = _empty(api, "GET", f"{URL}/{post.id}")
    assert response.status_code == 200 and response.json() == post_record(post)
    response = _empty(api, "GET", f"{URL}/{post.id}/results")
    assert response.status_code == 200 and response.json()["postId"] == post.id
    response = _empty(api, "DELETE", f"{URL}/{post.id}")
    assert response.status_code == 200 and response.json() == {"deleted": True}
    assert not Post.objects.filter(id=post.id).exists()


def test_empty_json_body_on_a_change_changes_nothing(api: Any, workspace: Any) -> None:
    post = PostFactory(workspace=workspace, status="SCHEDULED", scheduled_at=future())
    PostTargetFactory(post=post, platform="MASTODON", account=account(workspace, "MASTODON"))
    before = post_record(post)
    response = _empty(api, "PATCH", f"{URL}/{post.id}")
    assert response.status_code == 200, response.json()
    assert {k: v for k, v in response.json().items() if k != "updatedAt"} == {
        k: v for k, v in before.items() if k != "updatedAt"
    }
    for body in ("", "{}"):
        response = api.generic("PATCH", f"{URL}/{post.id}", body, content_type="application/json")
        assert response.status_code == 200 and response.json()["text"] == before["text"]


@pytest.mark.parametrize("path", ["", "/bulk"])
def test_empty_json_body_on_a_create_is_a_validation_error_naming_the_fields(api: Any, path: str) -> None:
    response = _empty(api, "POST", URL + path)
    assert response.status_code == 400
    body = response.json()
    assert (body["statusCode"], body["error"], body["code"]) == (400, "Bad Request", "validation_error")
    assert "platforms: This field is required." in body["message"]
    assert "timezone: This field is required." in body["message"]
    assert Post.objects.count() == 0


def test_empty_json_body_on_validate_reports_the_missing_fields(api: Any) -> None:
    response = _empty(api, "POST", f"{URL}/validate")
    assert response.status_code == 200
    assert response.json()["valid"] is False
    assert {"platform": None, "field": "timezone", "message": "timezone: This field is required."} in response.json()[
        "issues"
    ]


def test_bracket_arrays_with_the_status_alias_and_bare_dates(api: Any, workspace: Any) -> None:
    midnight = dt.datetime(2031, 8, 1, tzinfo=dt.UTC)
    at_midnight = PostFactory(workspace=workspace, status="SCHEDULED", scheduled_at=midnight)
    after = PostFactory(workspace=workspace, status="SCHEDULED", scheduled_at=midnight + dt.timedelta(seconds=1))
    before = PostFactory(workspace=workspace, status="DRAFT", scheduled_at=midnight - dt.timedelta(seconds=1))
    PostTargetFactory(post=at_midnight, platform="MASTODON")
    PostTargetFactory(post=after, platform="BLUESKY")

    def ids(query: str) -> set[str]:
        response = api.get(URL + query)
        assert response.status_code == 200, response.json()
        return {p["id"] for p in response.json()["posts"]}

    # a bare date is midnight UTC, and both bounds are inclusive
    assert ids("?endDate=2031-08-01") == {at_midnight.id, before.id}
    assert ids("?startDate=2031-08-01") == {at_midnight.id, after.id}
    assert ids("?startDate=2031-08-01&endDate=2031-08-01") == {at_midnight.id}
    assert ids("?status[0]=DRAFT") == {before.id}
    assert ids("?status[]=DRAFT&status[]=SCHEDULED&startDate=2031-08-01") == {at_midnight.id, after.id}
    assert ids("?statuses[1]=DRAFT&statuses[0]=SCHEDULED") == {at_midnight.id, after.id, before.id}
    assert ids("?platforms[0]=BLUESKY&platforms[1]=TIKTOK") == {after.id}
    assert ids(f"?endDate={iso(midnight - dt.timedelta(seconds=1))}") == {before.id}


def test_every_account_id_in_every_connection_array_picks_each_platforms_own(
    api: Any, workspace: Any, other_workspace: Any
) -> None:
    """Older published client scripts put every account id of the workspace into every
    ``*ConnectionIds`` array and into ``pageIds``: ids of other platforms are dropped first, then
    one account per platform applies to what is left (CONTRACT §4)."""
    masto = account(workspace, "MASTODON")
    bsky = account(workspace, "BLUESKY")
    page = account(workspace, "FACEBOOK")
    foreign = account(other_workspace, "TWITTER")
    every_id = [masto.id, bsky.id, page.id, page.page_id, foreign.id, "acc_nobody"]
    response = api.post(
        URL,
        {
            "contentType": "TEXT",
            "timezone": "UTC",
            "text": "to everything I have",
            "scheduledAt": iso(future()),
            "platforms": ["MASTODON", "BLUESKY", "FACEBOOK", "TWITTER"],
            "mastodonConnectionIds": every_id,
            "blueskyConnectionIds": every_id,
            "pageIds": every_id,
            "twitterConnectionIds": every_id,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["queuedPlatforms"] == ["MASTODON", "BLUESKY", "FACEBOOK"]
    assert response.json()["skippedPlatforms"] == [{"platform": "TWITTER", "reason": "No valid connection found"}]
    post = Post.objects.get(id=response.json()["postId"])
    assert {(t.platform, t.account_id) for t in post.targets.all()} == {
        ("MASTODON", masto.id),
        ("BLUESKY", bsky.id),
        ("FACEBOOK", page.id),
    }


def test_two_accounts_of_one_platform_among_every_id_are_still_refused(api: Any, workspace: Any) -> None:
    first, second = account(workspace, "MASTODON"), account(workspace, "MASTODON")
    bsky = account(workspace, "BLUESKY")
    every_id = [first.id, second.id, bsky.id]
    response = api.post(
        URL,
        {
            "contentType": "TEXT",
            "timezone": "UTC",
            "text": "two of a kind",
            "platforms": ["MASTODON", "BLUESKY"],
            "mastodonConnectionIds": every_id,
            "blueskyConnectionIds": every_id,
        },
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["message"] == ["mastodonConnectionIds: one account per platform per post"]
    assert not Post.objects.exists()


def test_patch_with_alt_texts_alone_relabels_the_posts_media(api: Any, workspace: Any) -> None:
    """The published CLI edits alt text by sending ``mediaAltTexts`` alone: the rule relating it
    to ``mediaUrls`` is checked on the post as it will be, not on the request's fields."""
    masto = account(workspace, "MASTODON")
    media = [uploaded(workspace), uploaded(workspace)]
    created = api.post(
        URL,
        {
            "contentType": "IMAGE",
            "timezone": "UTC",
            "text": "two pictures",
            "mediaUrls": media,
            "scheduledAt": iso(future()),
            "platforms": ["MASTODON"],
            "mastodonConnectionIds": [masto.id],
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    path = f"{URL}/{created.json()['postId']}"
    response = api.patch(path, {"mediaAltTexts": ["a red door", ""]}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["mediaAltTexts"] == ["a red door", ""]
    assert response.json()["mediaUrls"] == media
    assert Post.objects.get().media_alt_texts == ["a red door", ""]
    too_many = api.patch(path, {"mediaAltTexts": ["one", "two", "three"]}, format="json")
    assert too_many.status_code == 400
    assert too_many.json()["message"] == ["mediaAltTexts: must not have more items than mediaUrls"]
    assert Post.objects.get().media_alt_texts == ["a red door", ""]
