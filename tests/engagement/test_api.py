"""The inbox's API: the list and its filters and cursor, one comment with its actions, a post's
tree per entry (after a real sync), and for every operation 401, 403 naming the permission, and
404 for another workspace's comment or post; actions the platform's API lacks, on a deleted
comment or through an account that cannot act are refused before anything is queued."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import AccountStatus
from engagement import sync
from engagement.models import Comment, CommentAction
from tests.engagement.conftest import Live, due_now
from tests.factories.engagement import CommentFactory
from tests.factories.posts import PostFactory, PostTargetFactory
from workspaces.models import Workspace

API = "/api/v1"
T0 = timezone.now().replace(microsecond=0) - dt.timedelta(days=1)


def _comment(workspace: Workspace, platform: str = "FACEBOOK", *, minutes: int = 0, **extra: Any) -> Comment:
    target = extra.pop("target", None) or PostTargetFactory(
        post=PostFactory(workspace=workspace, status="COMPLETED"),
        platform=platform,
        status="PUBLISHED",
        platform_post_id=f"remote-{platform.lower()}-{Comment.objects.count()}",
    )
    return CommentFactory(target=target, created_at=T0 + dt.timedelta(minutes=minutes), **extra)  # type: ignore[no-any-return]


def _ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.json()
    return [c["id"] for c in response.json()["comments"]]


@pytest.mark.django_db
def test_a_comment_is_answered_whole(api: APIClient, workspace: Workspace) -> None:
    comment = _comment(workspace, rating=None, permalink="https://facebook.com/c/1")
    reply = _comment(workspace, target=comment.target, minutes=1, parent=comment, from_account=True, text="Thanks!")
    body = api.get(f"{API}/comments/{comment.id}").json()
    assert body == {
        "id": comment.id,
        "platform": "FACEBOOK",
        "accountId": comment.account_id,
        "postId": comment.post_id,
        "platformId": comment.target_id,
        "parentId": None,
        "platformCommentId": comment.platform_comment_id,
        "author": {"id": comment.author_id, "name": "Ana Alvarez", "handle": "anaa42", "avatarUrl": None},
        "text": "Where can I buy it?",
        "createdAt": T0.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "likeCount": 3,
        "replyCount": 0,
        "hidden": False,
        "answered": False,
        "fromAccount": False,
        "rating": None,
        "permalink": "https://facebook.com/c/1",
        "deletedAt": None,
        "firstSeenAt": body["firstSeenAt"],
        "actions": [],
    }
    assert api.get(f"{API}/comments/{reply.id}").json()["parentId"] == comment.id


@pytest.mark.django_db
def test_the_list_is_newest_first_with_a_cursor_and_a_fixed_number_of_queries(
    api: APIClient, workspace: Workspace
) -> None:
    made = [_comment(workspace, minutes=i) for i in range(5)]
    newest_first = [c.id for c in reversed(made)]
    first = api.get(f"{API}/comments?limit=2").json()
    assert [c["id"] for c in first["comments"]] == newest_first[:2] and first["hasMore"] is True
    second = api.get(f"{API}/comments?limit=2&after={first['nextCursor']}").json()
    assert [c["id"] for c in second["comments"]] == newest_first[2:4]
    last = api.get(f"{API}/comments?limit=2&after={second['nextCursor']}").json()
    assert [c["id"] for c in last["comments"]] == newest_first[4:] and last["hasMore"] is False
    caught_up = api.get(f"{API}/comments?limit=2&after={last['nextCursor']}").json()
    assert caught_up == {"comments": [], "nextCursor": last["nextCursor"], "hasMore": False}
    bad = api.get(f"{API}/comments?after=bm90LWEtY3Vyc29y")
    assert bad.status_code == 400 and "nextCursor" in str(bad.json()["message"])
    unknown = api.get(f"{API}/comments?sort=old")
    assert (unknown.status_code, unknown.json()["code"]) == (400, "unknown_parameter")
    api.get(f"{API}/comments?limit=1")  # warm: the key and its cache
    assert _queries(api, 1) == _queries(api, 100)  # one page of 1 or of 5: the same queries


def _queries(api: APIClient, limit: int) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        api.get(f"{API}/comments?limit={limit}")
    return len(captured)


@pytest.mark.django_db
def test_the_filters_combine(api: APIClient, workspace: Workspace) -> None:
    facebook = _comment(workspace, "FACEBOOK", minutes=1, text="Love this!")
    instagram = _comment(workspace, "INSTAGRAM", minutes=2, text="Where can I BUY it?", hidden=True)
    answered = _comment(workspace, "FACEBOOK", minutes=3, answered=True)
    own = _comment(
        workspace, "FACEBOOK", target=answered.target, minutes=4, parent=answered, from_account=True, text="Thanks!"
    )
    _comment(workspace, "FACEBOOK", minutes=5, deleted_at=timezone.now())  # never listed
    other = _comment(PostFactory().workspace, "FACEBOOK", minutes=6)  # another workspace: never listed

    assert _ids(api.get(f"{API}/comments")) == [own.id, answered.id, instagram.id, facebook.id]
    assert _ids(api.get(f"{API}/comments?unanswered=true")) == [instagram.id, facebook.id]
    assert _ids(api.get(f"{API}/comments?unanswered=false")) == [answered.id]
    assert _ids(api.get(f"{API}/comments?hidden=true")) == [instagram.id]
    assert _ids(api.get(f"{API}/comments?platforms=INSTAGRAM&platforms[1]=TWITTER")) == [instagram.id]
    assert _ids(api.get(f"{API}/comments?accountId={facebook.account_id}")) == [facebook.id]
    assert _ids(api.get(f"{API}/comments?postId={answered.post_id}")) == [own.id, answered.id]
    since = (T0 + dt.timedelta(minutes=3)).isoformat().replace("+00:00", "Z")
    assert _ids(api.get(f"{API}/comments?since={since}")) == [own.id, answered.id]
    assert _ids(api.get(f"{API}/comments?q=buy")) == [answered.id, instagram.id]  # the text, any case
    assert _ids(api.get(f"{API}/comments?q=anaa&unanswered=true&platforms=FACEBOOK")) == [facebook.id]
    assert _ids(api.get(f"{API}/comments?accountId={other.account_id}")) == []
    bad = api.get(f"{API}/comments?unanswered=yes")
    assert bad.status_code == 400 and "unanswered" in str(bad.json()["message"])


@pytest.mark.django_db(transaction=True)
def test_a_posts_comments_are_a_tree_per_entry(api: APIClient, workspace: Workspace, facebook: Live) -> None:
    sync.sources_discover()
    due_now()
    sync.sync_account(account_id=facebook.account.id)
    body = api.get(f"{API}/social-posts/{facebook.post.id}/comments").json()
    [entry] = body["entries"]
    assert body["postId"] == facebook.post.id
    assert (entry["platformId"], entry["platform"], entry["accountId"], entry["platformPostId"]) == (
        facebook.target.id,
        "FACEBOOK",
        facebook.account.id,
        facebook.remote_id,
    )
    assert entry["lastSyncedAt"] is not None and entry["truncated"] is False

    def shape(nodes: list[dict[str, Any]]) -> list[tuple[str, list[Any]]]:
        return sorted((n["platformCommentId"], shape(n["replies"])) for n in nodes)

    expected = facebook.expected()
    wanted = [
        (
            facebook.wire(c["id"]),
            sorted((facebook.wire(r["id"], c["id"]), []) for r in expected if r["parentId"] == c["id"]),
        )
        for c in expected
        if not c["parentId"]
    ]
    assert sorted(shape(entry["comments"])) == sorted(wanted)
    missing = api.get(f"{API}/social-posts/post_000000000000/comments")
    assert (missing.status_code, missing.json()["message"]) == (404, "Post not found or access denied")


@pytest.mark.django_db
def test_a_reply_whose_parent_is_not_stored_stands_at_the_top() -> None:
    from engagement.selectors import build_tree

    def record(id_: str, parent: str | None) -> dict[str, Any]:
        return {"id": id_, "parentId": parent}

    tree = build_tree([record("a", None), record("b", "a"), record("c", "gone"), record("d", "b")])
    assert [(n["id"], [(r["id"], [x["id"] for x in r["replies"]]) for r in n["replies"]]) for n in tree] == [
        ("a", [("b", ["d"])]),
        ("c", []),
    ]


# --- who may do what -----------------------------------------------------------------------------

OPERATIONS: list[tuple[str, str, str, str | None]] = [
    # (method, path with {c} for a comment id or {p} for a post id, permission, body)
    ("get", "/comments", "comments.read", None),
    ("get", "/comments/{c}", "comments.read", None),
    ("post", "/comments/sync", "comments.read", "{}"),
    ("get", "/social-posts/{p}/comments", "comments.read", None),
    ("post", "/comments/{c}/replies", "comments.reply", '{"text": "Hi"}'),
    ("post", "/comments/{c}/like", "comments.reply", "{}"),
    ("post", "/comments/{c}/hide", "comments.moderate", "{}"),
    ("post", "/comments/{c}/unhide", "comments.moderate", "{}"),
    ("delete", "/comments/{c}", "comments.moderate", None),
]


def _call(client: APIClient, method: str, path: str, body: str | None) -> Any:
    if body is None:
        return getattr(client, method)(f"{API}{path}")
    return getattr(client, method)(f"{API}{path}", body, content_type="application/json")


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path", "permission", "body"), OPERATIONS)
def test_every_operation_needs_its_permission_and_stays_in_its_workspace(
    method: str,
    path: str,
    permission: str,
    body: str | None,
    client_for: Callable[..., APIClient],
    workspace: Workspace,
    other_workspace: Workspace,
) -> None:
    mine = _comment(workspace)
    theirs = _comment(other_workspace)
    own_path = path.format(c=mine.id, p=mine.post_id)
    anonymous = _call(APIClient(), method, own_path, body)
    assert (anonymous.status_code, anonymous.json()["code"]) == (401, "unauthorized")
    for role in ("admin", "editor", "contributor", "viewer"):
        response = _call(client_for(role), method, own_path, body)
        allowed = permission == "comments.read" or role in ("admin", "editor")
        if allowed:
            assert response.status_code in (200, 202), (role, response.json())
        else:
            assert response.status_code == 403, (role, response.json())
            assert response.json()["code"] == "permission_denied"
            assert (response.json()["requiredPermission"], response.json()["role"]) == (permission, role)
    if "{" in path:
        stranger = _call(client_for("admin"), method, path.format(c=theirs.id, p=theirs.post_id), body)
        assert stranger.status_code == 404, stranger.json()
        assert stranger.json()["message"] in ("Comment not found", "Post not found or access denied")
        theirs.refresh_from_db()
        assert not CommentAction.objects.filter(comment=theirs).exists() and theirs.hidden is False


@pytest.mark.django_db
def test_an_action_the_platform_lacks_is_refused_naming_it(api: APIClient, workspace: Workspace) -> None:
    instagram = _comment(workspace, "INSTAGRAM")
    response = api.post(f"{API}/comments/{instagram.id}/like", {}, format="json")
    assert (response.status_code, response.json()) == (
        400,
        {
            "statusCode": 400,
            "error": "Bad Request",
            "message": "INSTAGRAM cannot like comments through its API (GET /platforms: comments.actions)",
            "code": "comment_action_not_supported",
            "platform": "INSTAGRAM",
            "action": "like",
        },
    )
    threads = _comment(workspace, "THREADS")  # Threads deletes the account's own replies only
    refused = api.delete(f"{API}/comments/{threads.id}")
    assert (refused.status_code, refused.json()["action"]) == (400, "delete_others")
    own = _comment(workspace, "THREADS", target=threads.target, parent=threads, from_account=True)
    assert api.delete(f"{API}/comments/{own.id}").status_code == 202
    assert CommentAction.objects.count() == 1


@pytest.mark.django_db
def test_a_deleted_comment_or_an_account_that_cannot_act_is_refused(api: APIClient, workspace: Workspace) -> None:
    deleted = _comment(workspace, deleted_at=timezone.now())
    response = api.post(f"{API}/comments/{deleted.id}/replies", {"text": "Hi"}, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "comment_deleted")
    for status, word in ((AccountStatus.UNAUTHORIZED, "unauthorized"), (AccountStatus.DISCONNECTED, "disconnected")):
        comment = _comment(workspace)
        type(comment.account).objects.filter(id=comment.account_id).update(status=status)
        refused = api.post(f"{API}/comments/{comment.id}/hide", {}, format="json")
        assert (refused.status_code, refused.json()["code"]) == (400, "account_unauthorized")
        assert word in refused.json()["message"]
    assert not CommentAction.objects.exists()
