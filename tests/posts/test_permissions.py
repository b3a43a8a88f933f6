"""Every posts endpoint against every role (CONTRACT.md §2): a role lacking a permission the
call needs gets 403 naming the first one missing; a role holding them all gets the success
status. The role table is written out here, so a drift in the code's mapping fails."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.factories.posts import PostFactory, PostTargetFactory, account
from tests.posts.conftest import future, iso

URL = "/api/v1/social-posts"
ROLES = {
    "admin": {"posts.read", "posts.draft", "posts.schedule", "posts.publish"},
    "editor": {"posts.read", "posts.draft", "posts.schedule", "posts.publish"},
    "contributor": {"posts.read", "posts.draft"},
    "viewer": {"posts.read"},
}


def _payload(masto: Any, **extra: Any) -> dict[str, Any]:
    return {
        "contentType": "TEXT",
        "timezone": "UTC",
        "text": "Hi",
        "platforms": ["MASTODON"],
        "mastodonConnectionIds": [masto.id],
        **extra,
    }


def _post(workspace: Any, masto: Any, status: str = "DRAFT", target_status: str = "PENDING", **kwargs: Any) -> Any:
    post = PostFactory(workspace=workspace, status=status, **kwargs)
    PostTargetFactory(post=post, account=masto, status=target_status)
    return post


Case = Callable[[Any, Any], tuple[str, str, Any]]
# name → (needed permissions in the order they are checked, success status, request builder)
CASES: dict[str, tuple[list[str], int, Case]] = {
    "list": (["posts.read"], 200, lambda ws, m: ("get", URL, None)),
    "get": (["posts.read"], 200, lambda ws, m: ("get", f"{URL}/{_post(ws, m).id}", None)),
    "results": (["posts.read"], 200, lambda ws, m: ("get", f"{URL}/{_post(ws, m).id}/results", None)),
    "create draft": (["posts.draft"], 201, lambda ws, m: ("post", URL, _payload(m, saveAsDraft=True))),
    "create scheduled": (
        ["posts.draft", "posts.schedule"],
        201,
        lambda ws, m: ("post", URL, _payload(m, scheduledAt=iso(future()))),
    ),
    "create now": (["posts.draft", "posts.publish"], 201, lambda ws, m: ("post", URL, _payload(m))),
    "patch": (["posts.draft"], 200, lambda ws, m: ("patch", f"{URL}/{_post(ws, m).id}", {"text": "x"})),
    "delete": (["posts.draft"], 200, lambda ws, m: ("delete", f"{URL}/{_post(ws, m).id}", None)),
    "publish now": (
        ["posts.draft", "posts.publish"],
        201,
        lambda ws, m: ("post", f"{URL}/{_post(ws, m).id}/publish", {}),
    ),
    "publish scheduled": (
        ["posts.draft", "posts.schedule"],
        201,
        lambda ws, m: ("post", f"{URL}/{_post(ws, m).id}/publish", {"scheduledAt": iso(future())}),
    ),
    "unschedule": (
        ["posts.draft"],
        200,
        lambda ws, m: (
            "post",
            f"{URL}/{_post(ws, m, status='SCHEDULED', scheduled_at=future()).id}/unschedule",
            {},
        ),
    ),
    "retry": (
        ["posts.publish"],
        201,
        lambda ws, m: ("post", f"{URL}/{_post(ws, m, status='FAILED', target_status='FAILED').id}/retry", {}),
    ),
    "bulk scheduled": (
        ["posts.schedule"],
        201,
        lambda ws, m: (
            "post",
            f"{URL}/bulk",
            {**_payload(m), "posts": [{"contentType": "TEXT", "text": "a", "scheduledAt": iso(future())}]},
        ),
    ),
    "bulk due now": (
        ["posts.schedule", "posts.publish"],
        201,
        lambda ws, m: (
            "post",
            f"{URL}/bulk",
            {**_payload(m), "posts": [{"contentType": "TEXT", "text": "a", "scheduledAt": "2020-01-01T00:00:00Z"}]},
        ),
    ),
    "validate": (["posts.draft"], 200, lambda ws, m: ("post", f"{URL}/validate", _payload(m))),
}


def _send(client: Any, method: str, path: str, body: Any) -> Any:
    return getattr(client, method)(path, body, format="json") if body is not None else getattr(client, method)(path)


@pytest.mark.parametrize("case", list(CASES))
def test_anonymous_on_each_endpoint(anon: Any, workspace: Any, case: str) -> None:
    _, _, build = CASES[case]
    response = _send(anon, *build(workspace, account(workspace, "MASTODON")))
    assert response.status_code == 401
    assert response.json() == {
        "statusCode": 401,
        "error": "Unauthorized",
        "message": "API key is invalid or missing",
        "code": "unauthorized",
    }


@pytest.mark.parametrize("role", list(ROLES))
@pytest.mark.parametrize("case", list(CASES))
def test_each_role_on_each_endpoint(client_for: Any, workspace: Any, case: str, role: str) -> None:
    needed, success, build = CASES[case]
    response = _send(client_for(role), *build(workspace, account(workspace, "MASTODON")))
    missing = [p for p in needed if p not in ROLES[role]]
    if missing:
        assert response.status_code == 403, response.content
        assert response.json() == {
            "statusCode": 403,
            "error": "Forbidden",
            "message": f"This operation requires the {missing[0]} permission",
            "code": "permission_denied",
            "requiredPermission": missing[0],
            "role": role,
            "tokenType": "api_token",
        }
    else:
        assert response.status_code == success, response.content
