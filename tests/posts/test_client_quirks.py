"""CONTRACT.md §1 as the posts endpoints see it: the clients already written send
``Content-Type: application/json`` with an empty body on every method, ``{}`` to every action,
bracket-indexed arrays, ``status`` for ``statuses``, and bare dates."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from posts.models import Post
from posts.rendering import post_record
from tests.factories.posts import PostFactory, PostTargetFactory, account
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
