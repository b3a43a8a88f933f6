"""Replies, hides, unhides, deletes and likes through the API and the work engine, against the
Facebook simulator over real HTTP (its API takes every action): each answered 202 with the action,
sent once (claimed, fenced, retried on a transient failure), reflected on the simulator and in the
inbox, with its one event; a reply interrupted mid-call (the worker killed, or the answer lost) is
looked up among the post's comments before anything is sent again, so it is never posted twice."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from engagement import sync
from engagement.actions import COLUMNS, recover, run_comment_actions
from engagement.models import ActionStatus, Comment, CommentAction
from platforms.base import Platform, RemoteComment
from platforms.registry import get_client
from platforms.sandbox import faults
from platforms.sandbox.store import SandboxStore
from posts.pipeline import step
from tests.engagement.conftest import Live, due_now, events_named, received
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db(transaction=True)
API = "/api/v1"


def _synced(live: Live) -> dict[str, Comment]:
    sync.sources_discover()
    due_now()
    sync.sync_account(account_id=live.account.id)
    return {c.platform_comment_id: c for c in Comment.objects.filter(target=live.target)}


def _top(live: Live, stored: dict[str, Comment]) -> Comment:
    """The first comment under the post that has a reply under it."""
    expected = live.expected()
    doc = next(c for c in expected if not c["parentId"] and any(r["parentId"] == c["id"] for r in expected))
    return stored[live.wire(doc["id"])]


def _listing(live: Live) -> dict[str, RemoteComment]:
    """What the platform shows under the post now (the real client, real HTTP)."""
    client, creds = get_client(Platform.FACEBOOK), live.account.credentials()
    found: dict[str, RemoteComment] = {}
    cursor = ""
    while True:
        page = client.list_comments(creds, live.remote_id, cursor=cursor)
        found.update({c.platform_comment_id: c for c in page.comments})
        cursor = page.cursor
        if not cursor:
            return found


def _replies_sent(comment: Comment) -> list[dict[str, Any]]:
    """The reply calls the simulator received under ``comment`` that created one."""
    return [
        e
        for e in SandboxStore("facebook").requests()
        if e["method"] == "POST"
        and e["path"].endswith(f"/{comment.platform_comment_id}/comments")
        and int(e["status"]) < 300
    ]


def test_a_reply_goes_out_once_and_the_comment_is_answered(workspace: Workspace, facebook: Live, api: Any) -> None:
    stored = _synced(facebook)
    comment = _top(facebook, stored)
    announced = len(received(workspace))

    response = api.post(f"{API}/comments/{comment.id}/replies", {"text": "Thanks, it ships next week!"}, format="json")

    assert response.status_code == 202
    body = response.json()
    assert body == {
        "id": body["id"],
        "commentId": comment.id,
        "kind": "REPLY",
        "status": "PENDING",
        "text": "Thanks, it ships next week!",
        "replyId": None,
        "errorCode": None,
        "errorMessage": None,
        "requestedAt": body["requestedAt"],
        "finishedAt": None,
    }
    assert run_comment_actions([body["id"]]) == 1
    assert run_comment_actions([body["id"]]) == 0  # done: a second task changes nothing

    action = CommentAction.objects.get(id=body["id"])
    assert action.status == ActionStatus.DONE and action.reply is not None
    reply = action.reply
    mine = _listing(facebook)[reply.platform_comment_id]
    assert mine.from_account and mine.text == "Thanks, it ships next week!"
    assert mine.parent_id == comment.platform_comment_id
    assert len(_replies_sent(comment)) == 1
    comment.refresh_from_db()
    assert comment.answered
    assert (reply.parent_id, reply.from_account, reply.text) == (comment.id, True, "Thanks, it ships next week!")
    [event] = events_named(workspace, "comment.replied")
    assert event["comment"]["id"] == comment.id and event["comment"]["answered"] is True
    assert event["reply"]["id"] == reply.id and event["reply"]["fromAccount"] is True
    assert event["action"]["status"] == "DONE" and event["action"]["replyId"] == reply.id
    detail = api.get(f"{API}/comments/{comment.id}").json()
    assert [(a["kind"], a["status"], a["replyId"]) for a in detail["actions"]] == [("REPLY", "DONE", reply.id)]
    unanswered = api.get(f"{API}/comments?unanswered=true").json()["comments"]
    assert comment.id not in {c["id"] for c in unanswered}

    # The next sync finds the reply on the platform: the same row, not announced as new.
    due_now()
    sync.sync_account(account_id=facebook.account.id)
    assert Comment.objects.filter(platform_comment_id=reply.platform_comment_id).count() == 1
    assert len(received(workspace)) == announced
    comment.refresh_from_db()
    assert comment.answered


def test_a_retried_request_with_its_idempotency_key_is_one_reply(facebook: Live, api: Any) -> None:
    comment = _top(facebook, _synced(facebook))
    url = f"{API}/comments/{comment.id}/replies"
    headers = {"Idempotency-Key": "reply-42"}
    first = api.post(url, {"text": "On its way"}, format="json", headers=headers)
    second = api.post(url, {"text": "On its way"}, format="json", headers=headers)
    assert first.status_code == second.status_code == 202
    assert first.json() == second.json() and second["Idempotent-Replayed"] == "true"
    assert CommentAction.objects.count() == 1


def test_a_reply_the_platform_would_refuse_is_a_400_and_nothing_is_queued(facebook: Live, api: Any) -> None:
    comment = _top(facebook, _synced(facebook))
    response = api.post(f"{API}/comments/{comment.id}/replies", {"text": "x" * 8001}, format="json")
    assert (response.status_code, response.json()) == (
        400,
        {
            "statusCode": 400,
            "error": "Bad Request",
            "message": ["text: FACEBOOK reply is 8001 characters; the limit is 8000"],
            "code": "validation_error",
        },
    )
    blank = api.post(f"{API}/comments/{comment.id}/replies", {"text": "  "}, format="json")
    assert blank.status_code == 400 and "text" in str(blank.json()["message"])
    assert not CommentAction.objects.exists()


def test_hide_and_show_again_on_the_platform(workspace: Workspace, facebook: Live, api: Any) -> None:
    comment = _top(facebook, _synced(facebook))
    hide = api.post(f"{API}/comments/{comment.id}/hide", {}, format="json").json()
    assert api.post(f"{API}/comments/{comment.id}/hide", {}, format="json").json()["id"] == hide["id"]  # still open
    assert run_comment_actions([hide["id"]]) == 1
    assert _listing(facebook)[comment.platform_comment_id].hidden
    comment.refresh_from_db()
    assert comment.hidden
    assert api.get(f"{API}/comments?hidden=true").json()["comments"][0]["id"] == comment.id

    unhide = api.post(f"{API}/comments/{comment.id}/unhide", {}, format="json").json()
    assert run_comment_actions([unhide["id"]]) == 1
    assert not _listing(facebook)[comment.platform_comment_id].hidden
    comment.refresh_from_db()
    assert not comment.hidden
    assert [e["action"]["kind"] for e in events_named(workspace, "comment.hidden")] == ["HIDE"]
    assert [e["comment"]["hidden"] for e in events_named(workspace, "comment.unhidden")] == [False]


def test_another_persons_comment_is_deleted_with_its_replies(workspace: Workspace, facebook: Live, api: Any) -> None:
    stored = _synced(facebook)
    comment = _top(facebook, stored)
    replies = [c for c in stored.values() if c.parent_id == comment.id]
    assert replies
    response = api.delete(f"{API}/comments/{comment.id}")
    assert response.status_code == 202 and response.json()["kind"] == "DELETE"
    assert run_comment_actions([response.json()["id"]]) == 1

    assert comment.platform_comment_id not in _listing(facebook)
    gone = Comment.objects.filter(id__in=[comment.id, *[r.id for r in replies]])
    assert all(c.deleted_at is not None for c in gone)
    listed = {c["id"] for c in api.get(f"{API}/comments").json()["comments"]}
    assert not listed & {c.id for c in gone}
    [event] = events_named(workspace, "comment.deleted")
    assert event["comment"]["deletedAt"] is not None
    again = api.delete(f"{API}/comments/{comment.id}")
    assert (again.status_code, again.json()["id"]) == (202, response.json()["id"])  # done already: the same one


def test_a_like_is_sent_once(workspace: Workspace, facebook: Live, api: Any) -> None:
    comment = _top(facebook, _synced(facebook))
    like = api.post(f"{API}/comments/{comment.id}/like", {}, format="json").json()
    assert run_comment_actions([like["id"]]) == 1
    assert _listing(facebook)[comment.platform_comment_id].like_count == comment.like_count + 1
    assert api.post(f"{API}/comments/{comment.id}/like", {}, format="json").json()["id"] == like["id"]
    assert [e["action"]["status"] for e in events_named(workspace, "comment.liked")] == ["DONE"]


def test_a_transient_failure_is_retried_and_then_done(facebook: Live, api: Any) -> None:
    comment = _top(facebook, _synced(facebook))
    faults.arm("facebook", "server_error", path=f"/{comment.platform_comment_id}", method="POST")
    hide = api.post(f"{API}/comments/{comment.id}/hide", {}, format="json").json()
    assert run_comment_actions([hide["id"]]) == 1
    action = CommentAction.objects.get(id=hide["id"])
    assert (action.status, action.attempts, action.error_code) == (ActionStatus.PENDING, 1, "platform_unavailable")
    assert action.due_at is not None and action.due_at > timezone.now()  # backoff
    CommentAction.objects.filter(id=action.id).update(due_at=timezone.now())
    assert run_comment_actions([hide["id"]]) == 1
    action.refresh_from_db()
    assert (action.status, action.attempts) == (ActionStatus.DONE, 2)
    assert _listing(facebook)[comment.platform_comment_id].hidden


def _claimed_reply(api: Any, comment: Comment, text: str) -> tuple[CommentAction, step.RowClaim]:
    body = api.post(f"{API}/comments/{comment.id}/replies", {"text": text}, format="json").json()
    [claim] = step.claim_rows(COLUMNS, [body["id"]], now=timezone.now())
    return CommentAction.objects.select_related("comment").get(id=body["id"]), claim


def _expire(action: CommentAction) -> None:
    CommentAction.objects.filter(id=action.id).update(lease_until=timezone.now() - dt.timedelta(seconds=1))


def test_a_reply_whose_worker_was_killed_mid_call_is_found_not_sent_again(facebook: Live, api: Any) -> None:
    from engagement.actions import reply_request

    comment = _top(facebook, _synced(facebook))
    action, claim = _claimed_reply(api, comment, "We will DM you the details")
    assert step.record_start(COLUMNS, claim)  # the worker records that it starts sending...
    client = get_client(Platform.FACEBOOK)
    client.reply_comment(facebook.account.credentials(), reply_request(action, comment), {})  # ...sends, and dies
    _expire(action)

    requeued, failed, _ = recover()

    assert (requeued, failed) == ([action.id], [])
    assert recover() == ([], [], [])  # run twice: nothing more to recover
    assert run_comment_actions([action.id]) == 1  # the lookup finds the reply: nothing is sent
    action.refresh_from_db()
    assert action.status == ActionStatus.DONE and action.reply is not None
    assert len(_replies_sent(comment)) == 1
    mine = [c for c in _listing(facebook).values() if c.from_account]
    assert [c.platform_comment_id for c in mine] == [action.reply.platform_comment_id]


def test_a_reply_whose_worker_died_before_sending_is_sent_once(facebook: Live, api: Any) -> None:
    comment = _top(facebook, _synced(facebook))
    action, _ = _claimed_reply(api, comment, "Thanks!")  # claimed, then the worker dies before the call
    _expire(action)
    assert recover()[0] == [action.id]
    assert run_comment_actions([action.id]) == 1
    action.refresh_from_db()
    assert action.status == ActionStatus.DONE
    assert len(_replies_sent(comment)) == 1


def test_a_reply_whose_answer_was_lost_is_looked_up_before_it_is_sent_again(
    facebook: Live, api: Any, settings: Any
) -> None:
    comment = _top(facebook, _synced(facebook))
    settings.PLATFORM_HTTP_TIMEOUT = 1.0
    # The simulator creates the reply, then answers after the client gave up: an unknown outcome.
    faults.arm("facebook", "timeout", path=f"/{comment.platform_comment_id}/comments", method="POST", seconds=3.0)
    body = api.post(f"{API}/comments/{comment.id}/replies", {"text": "Sending you a code"}, format="json").json()
    assert run_comment_actions([body["id"]]) == 1
    action = CommentAction.objects.get(id=body["id"])
    assert (action.status, action.error_code) == (ActionStatus.PENDING, "unknown_outcome")
    assert action.sending  # the marker stays: the next attempt looks first
    faults.clear("facebook")
    CommentAction.objects.filter(id=action.id).update(due_at=timezone.now())
    assert run_comment_actions([action.id]) == 1
    action.refresh_from_db()
    assert action.status == ActionStatus.DONE
    assert len(_replies_sent(comment)) == 1
