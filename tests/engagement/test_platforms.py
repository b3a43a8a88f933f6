"""The inbox on every platform whose posts are text (the others, Instagram and YouTube, need media
and are covered by their clients' suites and the Facebook tests here), over real HTTP: a post
published by the pipeline, its audience's comments synced with the platform's own ids and nesting,
a reply sent once through the API and found by the next sync as the account's own, the comment
answered, and the reply then deleted as the account's own."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.utils import timezone

from engagement import sync
from engagement.actions import run_comment_actions
from engagement.models import ActionStatus, Comment, CommentAction, CommentSource
from platforms.base import Platform
from platforms.capabilities import CAPABILITIES
from platforms.sandbox import audience
from tests.engagement.conftest import due_now, publish_live, received
from workspaces.models import Workspace

pytestmark = pytest.mark.django_db(transaction=True)
TEXT_PLATFORMS = [
    Platform.FACEBOOK,
    Platform.THREADS,
    Platform.TWITTER,
    Platform.BLUESKY,
    Platform.LINKEDIN,
    Platform.MASTODON,
]


def _wire(platform: Platform, neutral: str, parent: str = "") -> str:
    simulator = importlib.import_module(f"platforms.sandbox.{platform.slug}")
    return str(simulator.platform_comment_id(neutral, parent))


def _sync(account_id: str) -> None:
    due_now()
    sync.sync_account(account_id=account_id)


@pytest.mark.parametrize("platform", TEXT_PLATFORMS, ids=lambda p: p.value)
def test_sync_reply_and_delete_on_each_platform(
    platform: Platform, workspace: Workspace, sandbox: str, api: Any
) -> None:
    assert {"read", "reply", "delete_own"} <= CAPABILITIES[platform].comment_actions
    live = publish_live(workspace, platform)
    # What the audience writes depends on the post's id alone (all of it at once: no pace).
    written = audience.expected(platform.slug, live.remote_id, 0.0, now=10**12)
    wanted = {_wire(platform, c["id"], c["parentId"]): c for c in written}
    sync.sources_discover()
    _sync(live.account.id)

    stored = {c.platform_comment_id: c for c in Comment.objects.filter(target=live.target).select_related("parent")}
    assert set(stored) == set(wanted)
    for wire, doc in wanted.items():
        assert stored[wire].text == doc["text"]
        parent = stored[wire].parent
        assert (parent.platform_comment_id if parent else "") == (
            _wire(platform, doc["parentId"]) if doc["parentId"] else ""
        )
    assert sorted(c["platformCommentId"] for e in received(workspace) for c in e["comments"]) == sorted(wanted)

    top = stored[_wire(platform, next(c for c in written if not c["parentId"])["id"])]
    reply = api.post(f"/api/v1/comments/{top.id}/replies", {"text": "Thank you, glad you like it"}, format="json")
    assert reply.status_code == 202, reply.json()
    assert run_comment_actions([reply.json()["id"]]) == 1
    action = CommentAction.objects.select_related("reply").get(id=reply.json()["id"])
    assert action.status == ActionStatus.DONE, (action.error_code, action.error_message)
    _sync(live.account.id)  # the platform lists the reply now: the same row, the account's own

    mine = Comment.objects.get(account=live.account, from_account=True)
    assert mine.id == action.reply_id and mine.text == "Thank you, glad you like it"
    top.refresh_from_db()
    assert top.answered
    assert len([c for e in received(workspace) for c in e["comments"]]) == len(wanted)  # ours never named

    deleted = api.delete(f"/api/v1/comments/{mine.id}")
    assert deleted.status_code == 202, deleted.json()
    assert run_comment_actions([deleted.json()["id"]]) == 1
    assert CommentAction.objects.get(id=deleted.json()["id"]).status == ActionStatus.DONE
    top.refresh_from_db()
    assert not top.answered
    # A full pass (a day later) finds it gone from the platform too: it stays deleted, nothing else does.
    CommentSource.objects.update(full_synced_at=timezone.now() - sync.FULL_PASS_EVERY)
    _sync(live.account.id)
    assert set(Comment.objects.filter(deleted_at__isnull=False).values_list("id", flat=True)) == {mine.id}


def test_a_hide_on_x_stays_although_its_listing_shows_no_hidden_flag(
    workspace: Workspace, sandbox: str, api: Any
) -> None:
    assert not CAPABILITIES[Platform.TWITTER].comment_hidden_listed
    live = publish_live(workspace, Platform.TWITTER)
    sync.sources_discover()
    _sync(live.account.id)
    comment = Comment.objects.filter(target=live.target, parent__isnull=True).order_by("created_at", "id").first()
    assert comment is not None
    hide = api.post(f"/api/v1/comments/{comment.id}/hide", {}, format="json")
    assert run_comment_actions([hide.json()["id"]]) == 1
    comment.refresh_from_db()
    assert comment.hidden
    CommentSource.objects.update(full_synced_at=timezone.now() - sync.FULL_PASS_EVERY)
    _sync(live.account.id)  # a full pass reads it again: X says nothing of hiding
    comment.refresh_from_db()
    assert comment.hidden and comment.deleted_at is None
