"""Threads through the pipeline: each item a reply to the one before it, sent in order against the
simulators over real HTTP, each confirmed item on record before the next is sent, a crash resumed
after the last confirmed item without a duplicate, and an unknown outcome never re-sent blindly."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from platforms import registry
from platforms.base import Permanent, Platform, PublishResult, UnknownOutcome
from platforms.sandbox.store import SandboxStore
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from posts.pipeline import thread_sequence
from posts.pipeline.claims import claim_started_sending, claim_targets
from posts.pipeline.publisher import _prepare, publish_targets
from posts.pipeline.sweeper import sweep
from posts.rendering import post_record
from posts.services import post_retry
from tests.pipeline.helpers import (
    ScriptedClient,
    connect_account,
    events_of,
    fake_account,
    make_due,
    make_post,
    sandbox_publishes,
    targets_of,
)

pytestmark = pytest.mark.django_db(transaction=True)

THREAD = [{"text": "Second: a reply to the first", "mediaUrls": []}, {"text": "Third: the end", "mediaUrls": []}]
TEXTS = ["First: the post itself", THREAD[0]["text"], THREAD[1]["text"]]


def _thread_post(workspace, platform, *, thread=THREAD, fake=False):
    account = fake_account(workspace, platform) if fake else connect_account(workspace, platform)
    post = make_post(workspace, [account], text=TEXTS[0])
    Post.objects.filter(id=post.id).update(thread=thread)
    return post, targets_of(post)[0]


def _run_until_settled(target: PostTarget, rounds: int = 12) -> int:
    """Run attempts until the entry is terminal (each attempt sends at most one item); returns how
    many attempts claimed it."""
    claimed = 0
    for _ in range(rounds):
        make_due(target)
        claimed += publish_targets([target.id])
        target.refresh_from_db()
        if target.status in (TargetStatus.PUBLISHED, TargetStatus.FAILED):
            return claimed
    return claimed


def _sent(platform: Platform) -> list[dict[str, Any]]:
    """The simulator's log of calls that created a post (the publish step of each item)."""
    return sandbox_publishes(platform)


def _reply_parents(platform: Platform) -> list[Any]:
    """What each creating call named as its parent, in order (None for the first item)."""
    log = SandboxStore(platform.slug).requests()
    if platform == Platform.TWITTER:
        return [e.get("inReplyTo") for e in log if e.get("publish") and e["status"] < 300]
    if platform == Platform.MASTODON:
        return [e.get("inReplyTo") for e in log if e.get("publish") and e["status"] < 300 and not e.get("repeat")]
    if platform == Platform.BLUESKY:
        return [
            (e.get("replyTo") or {}).get("parent", {}).get("uri")
            for e in log
            if e.get("publish") and e["status"] < 300 and not e.get("repeat")
        ]
    # THREADS: the reply goes on the container; each container is published once, in order.
    return [e.get("replyTo") for e in log if e["method"] == "POST" and e["path"].endswith("/threads")]


@pytest.mark.parametrize("platform", [Platform.TWITTER, Platform.BLUESKY, Platform.THREADS, Platform.MASTODON])
def test_a_thread_is_published_in_order_each_item_replying_to_the_one_before(sandbox, workspace, platform):
    post, target = _thread_post(workspace, platform)

    assert _run_until_settled(target) == 3  # one attempt per item
    assert publish_targets([target.id]) == 0  # run again: nothing changes

    target.refresh_from_db()
    post.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED and post.status == PostStatus.COMPLETED
    items = target.thread_items
    ids = [item["platformPostId"] for item in items]
    assert len(ids) == 3 and len(set(ids)) == 3 and all(ids)
    assert target.platform_post_id == ids[0] and target.post_url == items[0]["postUrl"]
    sent = _sent(platform)
    assert [e["remoteId"] for e in sent] == ids  # each item exactly once, in order
    assert [e["text"] for e in sent] == TEXTS
    assert _reply_parents(platform) == [None, ids[0], ids[1]]
    if platform == Platform.BLUESKY:
        roots = [
            (e.get("replyTo") or {}).get("root", {}).get("uri")
            for e in SandboxStore("bluesky").requests()
            if e.get("publish")
        ]
        assert roots == [None, ids[0], ids[0]]
    record = post_record(Post.objects.get(id=post.id))
    assert record["thread"] == THREAD
    [entry] = record["platforms"]
    assert entry["platformPostId"] == ids[0]
    assert entry["threadItems"] == [{"platformPostId": i["platformPostId"], "postUrl": i["postUrl"]} for i in items]
    assert [e["event"] for e in events_of(post.id)] == ["post.published"]


def test_a_post_without_a_thread_sends_the_same_body_and_record_as_before(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account], text="No thread here")
    target = targets_of(post)[0]
    publish_targets([target.id])
    target.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED and target.thread_items == []
    [entry] = [e for e in SandboxStore("mastodon").requests() if e.get("publish")]
    assert "inReplyTo" not in entry
    record = post_record(Post.objects.get(id=post.id))
    assert "thread" not in record and "threadItems" not in record["platforms"][0]


def _crash_mid_item(target: PostTarget, index: int) -> None:
    """The attempt that sends item ``index`` dies after the platform created it and before the
    pipeline wrote anything: claim, send through the real client, never record; then the lease runs
    out."""
    [claim] = claim_targets([target.id], now=timezone.now(), lease=dt.timedelta(seconds=60))
    row = PostTarget.objects.select_related("post", "account").get(id=target.id)
    assert len(row.thread_items) == index
    creds, request = _prepare(row, {})
    result = thread_sequence.publish_next(registry.get_client(row.platform), creds, request, {}, list(row.thread_items))
    assert len(result.thread_items) == index + 1  # the platform has it; nobody wrote it down
    PostTarget.objects.filter(id=target.id).update(lease_until=claim.lease_until - dt.timedelta(minutes=5))


@pytest.mark.parametrize("platform", [Platform.MASTODON, Platform.BLUESKY])
def test_a_crash_after_the_platform_created_an_item_resumes_without_a_duplicate(sandbox, workspace, platform):
    post, target = _thread_post(workspace, platform)
    make_due(target)
    publish_targets([target.id])  # item 0 confirmed and written
    target.refresh_from_db()
    assert len(target.thread_items) == 1

    _crash_mid_item(target, 1)
    report = sweep()
    assert target.id in report.requeued
    assert sweep().requeued == []  # a second sweep finds nothing

    _run_until_settled(target)
    target.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED
    ids = [item["platformPostId"] for item in target.thread_items]
    sent = _sent(platform)
    assert [e["remoteId"] for e in sent] == ids  # the platform saw each item created exactly once
    assert [e["text"] for e in sent] == TEXTS
    assert _reply_parents(platform) == [None, ids[0], ids[1]]


def test_a_crash_on_a_platform_without_key_dedup_fails_and_a_retry_resumes_after_the_confirmed_items(
    sandbox, workspace
):
    post, target = _thread_post(workspace, Platform.TWITTER)
    make_due(target)
    publish_targets([target.id])
    target.refresh_from_db()
    first = list(target.thread_items)
    # The next attempt is claimed and its worker dies with the next item on its way.
    [claim] = claim_targets([target.id], now=timezone.now(), lease=dt.timedelta(seconds=60))
    expired = dataclasses.replace(claim, lease_until=claim.lease_until - dt.timedelta(minutes=5))
    PostTarget.objects.filter(id=target.id).update(lease_until=expired.lease_until)
    assert claim_started_sending(expired)

    report = sweep()
    assert report.failed == [target.id] and report.to_lookup == []
    target.refresh_from_db()
    assert (target.status, target.error_code) == (TargetStatus.FAILED, "unknown_outcome")
    assert target.thread_items == first  # what was confirmed stays on record
    assert (
        post_record(Post.objects.get(id=post.id))["platforms"][0]["threadItems"][0]["platformPostId"]
        == (first[0]["platformPostId"])
    )

    post_retry(workspace_id=workspace.id, post_id=post.id, platform_ids=[])
    _run_until_settled(target)
    target.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED
    ids = [item["platformPostId"] for item in target.thread_items]
    assert ids[0] == first[0]["platformPostId"] and len(ids) == 3
    assert [e["remoteId"] for e in _sent(Platform.TWITTER)] == ids  # the first item was not sent again


def _ok(remote_id: str) -> PublishResult:
    return PublishResult(done=True, platform_post_id=remote_id, url=f"https://example.test/{remote_id}")


def test_an_unknown_outcome_mid_thread_is_not_re_sent_where_the_platform_cannot_deduplicate(workspace, use_client):
    client = use_client(ScriptedClient(Platform.TWITTER, [_ok("t-0"), UnknownOutcome("read timeout")]))
    post, target = _thread_post(workspace, Platform.TWITTER, fake=True)

    _run_until_settled(target)
    target.refresh_from_db()
    assert (target.status, target.error_code) == (TargetStatus.FAILED, "unknown_outcome")
    assert "thread item 1" in target.error_message
    assert [i["platformPostId"] for i in target.thread_items] == ["t-0"]
    assert client.lookup_calls == 0 and len(client.publish_calls) == 2  # looked nothing up, re-sent nothing
    assert publish_targets([target.id]) == 0


def test_an_unknown_outcome_mid_thread_is_re_sent_with_the_same_key_where_the_platform_deduplicates(
    workspace, use_client
):
    client = use_client(
        ScriptedClient(Platform.MASTODON, [_ok("m-0"), UnknownOutcome("read timeout"), _ok("m-1"), _ok("m-2")])
    )
    post, target = _thread_post(workspace, Platform.MASTODON, fake=True)

    _run_until_settled(target)
    target.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED
    assert [i["platformPostId"] for i in target.thread_items] == ["m-0", "m-1", "m-2"]
    keys = [request.target_id for request, _ in client.publish_calls]
    assert keys == [target.id, f"{target.id}.1", f"{target.id}.1", f"{target.id}.2"]
    parents = [
        request.reply_to.parent.platform_post_id if request.reply_to else None for request, _ in client.publish_calls
    ]
    assert parents == [None, "m-0", "m-0", "m-1"]


def test_a_permanent_failure_mid_thread_keeps_the_confirmed_items_and_a_retry_resumes(workspace, use_client):
    client = use_client(ScriptedClient(Platform.MASTODON, [_ok("m-0"), Permanent("refused"), _ok("m-1"), _ok("m-2")]))
    post, target = _thread_post(workspace, Platform.MASTODON, fake=True)
    _run_until_settled(target)
    target.refresh_from_db()
    assert target.status == TargetStatus.FAILED and [i["platformPostId"] for i in target.thread_items] == ["m-0"]
    assert Post.objects.get(id=post.id).status == PostStatus.FAILED

    post_retry(workspace_id=workspace.id, post_id=post.id, platform_ids=[])
    _run_until_settled(target)
    target.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED
    assert [i["platformPostId"] for i in target.thread_items] == ["m-0", "m-1", "m-2"]
    assert [r.text for r, _ in client.publish_calls] == [TEXTS[0], TEXTS[1], TEXTS[1], TEXTS[2]]
