"""publish_target against the simulators over real HTTP: results written, errors classified,
the post finalized with exactly one event, and every run repeated without changing the world."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from accounts.models import AccountStatus, SocialAccount
from platforms.base import Platform
from posts.models import Post, PostStatus, TargetStatus
from posts.pipeline.publisher import publish_targets
from posts.rendering import post_record
from tests.pipeline.helpers import (
    connect_account,
    events_of,
    make_due,
    make_post,
    queued_publish_tasks,
    sandbox_publishes,
    targets_of,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_publish_now_writes_the_result_and_emits_one_event(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account], text="Exactly once")
    target = targets_of(post)[0]

    assert publish_targets([target.id]) == 1
    assert publish_targets([target.id]) == 0  # a second delivery of the task changes nothing

    target.refresh_from_db()
    post.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED
    assert target.platform_post_id and target.post_url.startswith("http")
    assert target.published_at is not None and target.lease_until is None
    assert (target.attempts, target.error_code, target.error_message) == (1, "", "")
    assert post.status == PostStatus.COMPLETED and post.finished_at is not None
    created = sandbox_publishes(Platform.MASTODON)
    assert [entry["remoteId"] for entry in created] == [target.platform_post_id]
    events = events_of(post.id)
    assert [e["event"] for e in events] == ["post.published"]
    record = events[0]["data"]["post"]
    assert record == post_record(Post.objects.get(id=post.id))  # the post record, whole
    assert record["id"] == post.id and record["status"] == "COMPLETED"
    assert [(p["id"], p["status"], p["platformPostId"]) for p in record["platforms"]] == [
        (target.id, "PUBLISHED", target.platform_post_id)
    ]


def test_permanent_failure_keeps_the_platform_message_and_code(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account], text="This one breaks #sandbox-fail")
    target = targets_of(post)[0]

    publish_targets([target.id])
    publish_targets([target.id])

    target.refresh_from_db()
    post.refresh_from_db()
    assert target.status == TargetStatus.FAILED
    assert target.error_code == "content_rejected"
    assert target.error_message and target.platform_post_id == ""
    assert post.status == PostStatus.FAILED
    assert [e["event"] for e in events_of(post.id)] == ["post.failed"]
    assert sandbox_publishes(Platform.MASTODON) == []


def test_mixed_outcomes_give_partial_failure_with_one_event(sandbox, workspace):
    good = connect_account(workspace, Platform.MASTODON)
    bad = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [good, bad], texts={bad.id: "nope #sandbox-fail"})
    ids = [t.id for t in targets_of(post)]

    publish_targets(ids)
    publish_targets(ids)

    post.refresh_from_db()
    assert post.status == PostStatus.PARTIAL_FAILURE
    assert sorted(t.status for t in targets_of(post)) == [TargetStatus.FAILED, TargetStatus.PUBLISHED]
    [event] = events_of(post.id)
    assert event["event"] == "post.partially_failed" and event["data"] == {"post": post_record(post)}


def test_flaky_platform_is_retried_within_30_seconds_and_then_publishes(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account], text="Try again #sandbox-flaky")
    target = targets_of(post)[0]
    before = timezone.now()

    publish_targets([target.id])

    target.refresh_from_db()
    post.refresh_from_db()
    assert target.status == TargetStatus.PENDING and target.lease_until is None
    assert target.error_code == "platform_unavailable"
    assert before < target.next_attempt_at <= before + dt.timedelta(seconds=30)
    assert post.status == PostStatus.PUBLISHING  # still being sent
    [(task, ids, countdown)] = queued_publish_tasks([target.id])
    assert task == "posts.publish_targets" and ids == [target.id]
    assert countdown is not None and 0 < countdown <= 30
    assert publish_targets([target.id]) == 0  # not due yet: the early task does nothing

    make_due(target)
    assert publish_targets([target.id]) == 1
    target.refresh_from_db()
    assert (target.status, target.attempts, target.error_code) == (TargetStatus.PUBLISHED, 2, "")
    assert [e["event"] for e in events_of(post.id)] == ["post.published"]
    assert len(sandbox_publishes(Platform.MASTODON)) == 1


def test_rejected_token_fails_the_entry_and_marks_the_account_once(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    first = make_post(workspace, [account], text="who am I #sandbox-unauthorized")
    second = make_post(workspace, [account], text="me neither #sandbox-unauthorized")

    publish_targets([targets_of(first)[0].id])
    publish_targets([targets_of(second)[0].id])

    account.refresh_from_db()
    assert account.status == AccountStatus.UNAUTHORIZED and account.unauthorized_reason
    for post in (first, second):
        [target] = targets_of(post)
        assert target.status == TargetStatus.FAILED
        assert target.error_code == "auth_expired"
        assert Post.objects.get(id=post.id).status == PostStatus.FAILED
    assert [e["event"] for e in events_of(workspace.id, "account.")] == ["account.unauthorized"]


def test_unauthorized_account_is_not_sent_to_the_platform(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    SocialAccount.objects.filter(id=account.id).update(status=AccountStatus.UNAUTHORIZED, unauthorized_reason="gone")
    post = make_post(workspace, [account])

    publish_targets([targets_of(post)[0].id])

    [target] = targets_of(post)
    assert (target.status, target.error_code) == (TargetStatus.FAILED, "auth_expired")
    assert "Reconnect" in target.error_message
    assert sandbox_publishes(Platform.MASTODON) == []


def test_removed_account_fails_the_entry(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account])
    account.delete()

    publish_targets([targets_of(post)[0].id])

    [target] = targets_of(post)
    assert (target.status, target.error_code) == (TargetStatus.FAILED, "invalid_request")
    assert Post.objects.get(id=post.id).status == PostStatus.FAILED


def test_draft_and_scheduled_posts_are_never_sent(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    draft = make_post(workspace, [account], status=PostStatus.DRAFT)
    scheduled = make_post(
        workspace, [account], status=PostStatus.SCHEDULED, scheduled_at=timezone.now() + dt.timedelta(hours=1)
    )

    assert publish_targets([t.id for t in targets_of(draft) + targets_of(scheduled)]) == 0

    assert {t.status for t in targets_of(draft) + targets_of(scheduled)} == {TargetStatus.PENDING}
    assert sandbox_publishes(Platform.MASTODON) == []


def test_a_published_entry_is_tracked_for_analytics_at_once(sandbox, workspace):
    from analytics.models import TrackedPost

    account = connect_account(workspace, Platform.BLUESKY)
    post = make_post(workspace, [account], text="Count me")
    [target] = targets_of(post)

    publish_targets([target.id])
    publish_targets([target.id])

    target.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED
    [tracked] = TrackedPost.objects.filter(post_id=post.id)
    assert (tracked.target_id, tracked.account_id, tracked.platform_post_id) == (
        target.id,
        account.id,
        target.platform_post_id,
    )
    assert tracked.published_at == target.published_at
    assert (tracked.views, tracked.likes, tracked.comments, tracked.shares) == (None, None, None, None)
