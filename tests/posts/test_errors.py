"""Every documented error of the posts endpoints, its body compared whole (spec §4 and §7,
CONTRACT.md §3): the status, the status name, the message and the stable code a client keys on."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone

from posts.models import Post
from tests.factories.posts import PostFactory, PostTargetFactory, account
from tests.posts.conftest import future, iso

URL = "/api/v1/social-posts"
NOT_FOUND = {"statusCode": 404, "error": "Not Found", "message": "Post not found or access denied", "code": "not_found"}


def bad_request(message: Any, code: str) -> dict[str, Any]:
    return {"statusCode": 400, "error": "Bad Request", "message": message, "code": code}


def _post(workspace: Any, status: str, target_status: str = "PENDING", **kwargs: Any) -> Post:
    post = PostFactory(workspace=workspace, status=status, **kwargs)
    remote = {"platform_post_id": "remote-1"} if target_status == "PUBLISHED" else {}
    PostTargetFactory(post=post, platform="MASTODON", status=target_status, **remote)
    return post


def _masto_payload(workspace: Any, **extra: Any) -> dict[str, Any]:
    masto = account(workspace, "MASTODON")
    return {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "Hi",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
        **extra,
    }


Request = tuple[str, str, Any]
# name → (request builder given the workspace and another workspace, status, whole body)
CASES: dict[str, tuple[Callable[[Any, Any], Request], int, dict[str, Any]]] = {
    "list: unknown parameter": (
        lambda ws, other: ("get", f"{URL}?foo=1", None),
        400,
        bad_request(["property foo should not exist"], "unknown_parameter"),
    ),
    "list: invalid filter value": (
        lambda ws, other: ("get", f"{URL}?statuses=LOST", None),
        400,
        bad_request(['statuses[0]: "LOST" is not a valid choice.'], "validation_error"),
    ),
    "create: validation error": (
        lambda ws, other: ("post", URL, _masto_payload(ws, contentType="GIF")),
        400,
        bad_request(['contentType: "GIF" is not a valid choice.'], "validation_error"),
    ),
    "create: unauthorized account": (
        lambda ws, other: (
            "post",
            URL,
            {**_masto_payload(ws), "mastodonConnectionIds": [account(ws, "MASTODON", status="unauthorized").id]},
        ),
        400,
        {},  # message names the account id: checked in the test below
    ),
    "bulk: validation error": (
        lambda ws, other: ("post", f"{URL}/bulk", {**_masto_payload(ws), "posts": []}),
        400,
        bad_request(["posts: Ensure this field has at least 1 elements."], "validation_error"),
    ),
    "get: other workspace": (lambda ws, other: ("get", f"{URL}/{_post(other, 'DRAFT').id}", None), 404, NOT_FOUND),
    "results: other workspace": (
        lambda ws, other: ("get", f"{URL}/{_post(other, 'DRAFT').id}/results", None),
        404,
        NOT_FOUND,
    ),
    "patch: other workspace": (
        lambda ws, other: ("patch", f"{URL}/{_post(other, 'DRAFT').id}", {"text": "x"}),
        404,
        NOT_FOUND,
    ),
    "patch: not editable": (
        lambda ws, other: ("patch", f"{URL}/{_post(ws, 'FAILED', 'FAILED').id}", {"text": "x"}),
        400,
        bad_request("Cannot edit post in current state", "post_not_editable"),
    ),
    "patch: scheduled time in the past": (
        lambda ws, other: (
            "patch",
            f"{URL}/{_post(ws, 'SCHEDULED', scheduled_at=future()).id}",
            {"scheduledAt": iso(timezone.now() - dt.timedelta(minutes=5))},
        ),
        400,
        bad_request("The new scheduled time is in the past", "scheduled_time_in_past"),
    ),
    "delete: other workspace": (
        lambda ws, other: ("delete", f"{URL}/{_post(other, 'DRAFT').id}", None),
        404,
        NOT_FOUND,
    ),
    "delete: being published": (
        lambda ws, other: ("delete", f"{URL}/{_post(ws, 'PUBLISHING', 'PUBLISHING').id}", None),
        409,
        {
            "statusCode": 409,
            "error": "Conflict",
            "message": "Post is being published and cannot be deleted now",
            "code": "conflict",
        },
    ),
    "publish: other workspace": (
        lambda ws, other: ("post", f"{URL}/{_post(other, 'DRAFT').id}/publish", {}),
        404,
        NOT_FOUND,
    ),
    "publish: not a draft": (
        lambda ws, other: ("post", f"{URL}/{_post(ws, 'FAILED', 'FAILED').id}/publish", {}),
        400,
        bad_request("Post is not a draft or scheduled post (its status is FAILED)", "post_not_draft"),
    ),
    "unschedule: other workspace": (
        lambda ws, other: ("post", f"{URL}/{_post(other, 'SCHEDULED', scheduled_at=future()).id}/unschedule", {}),
        404,
        NOT_FOUND,
    ),
    "unschedule: neither draft nor scheduled": (
        lambda ws, other: ("post", f"{URL}/{_post(ws, 'PENDING').id}/unschedule", {}),
        400,
        bad_request("Only a draft or a scheduled post can be unscheduled", "post_not_unschedulable"),
    ),
    "retry: other workspace": (
        lambda ws, other: ("post", f"{URL}/{_post(other, 'FAILED', 'FAILED').id}/retry", {}),
        404,
        NOT_FOUND,
    ),
    "retry: platformIds value matches nothing": (
        lambda ws, other: ("post", f"{URL}/{_post(ws, 'FAILED', 'FAILED').id}/retry", {"platformIds": ["TIKTOK"]}),
        400,
        bad_request("platformIds: TIKTOK matches no platform entry of this post", "unknown_retry_target"),
    ),
    "retry: nothing matched has failed": (
        lambda ws, other: ("post", f"{URL}/{_post(ws, 'COMPLETED', 'PUBLISHED').id}/retry", {}),
        400,
        bad_request("None of the matched platform entries has failed", "no_failed_platforms"),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_documented_error_bodies(api: Any, workspace: Any, other_workspace: Any, enqueued: list, case: str) -> None:
    build, status, expected = CASES[case]
    method, path, body = build(workspace, other_workspace)
    before = {(p.id, p.status, p.updated_at) for p in Post.objects.all()}
    response = getattr(api, method)(path, body, format="json") if body is not None else getattr(api, method)(path)
    assert response.status_code == status, response.content
    if case == "create: unauthorized account":
        [message] = response.json()["message"]
        assert response.json() == bad_request([message], "account_unauthorized")
        assert message.startswith("mastodonConnectionIds: the MASTODON account acc_") and "unauthorized" in message
    else:
        assert response.json() == expected
    # An error changes nothing.
    assert {(p.id, p.status, p.updated_at) for p in Post.objects.all()} == before
