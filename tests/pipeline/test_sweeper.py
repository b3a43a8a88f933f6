"""The sweeper: expired leases per idempotency mode, lost tasks, fenced late writes."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from platforms.base import Platform
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from posts.pipeline import outcomes
from posts.pipeline.claims import claim_started_sending, claim_targets
from posts.pipeline.enqueue import enqueue_targets
from posts.pipeline.publisher import BOOK_KEY, publish_targets
from posts.pipeline.sweeper import INTERRUPTED_MESSAGE, NOT_SENT_MESSAGE, sweep
from tests.pipeline.helpers import (
    ScriptedClient,
    connect_account,
    done,
    empty_publish_queue,
    events_of,
    fake_account,
    make_post,
    queued_publish_tasks,
    queued_target_ids,
    sandbox_publishes,
    targets_of,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _killed_before_sending(post):
    """Claim every target of ``post`` as a worker would, then 'lose' that worker before any call
    left: its lease ran out."""
    ids = [t.id for t in targets_of(post)]
    claims = claim_targets(ids, now=timezone.now() - dt.timedelta(minutes=10), lease=dt.timedelta(minutes=3))
    assert len(claims) == len(ids)
    return claims


def _killed_mid_attempt(post):
    """As above, but the worker was lost after its create call started to leave."""
    claims = _killed_before_sending(post)
    assert all(claim_started_sending(claim) for claim in claims)
    return claims


def test_expired_lease_on_keyed_platform_is_requeued_and_published_once(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account], text="killed worker")
    [claim] = _killed_mid_attempt(post)

    report = sweep()
    assert report.requeued == [claim.target_id] and report.failed == []
    assert sweep().requeued == []  # a second sweep finds nothing

    target = PostTarget.objects.get(id=claim.target_id)
    assert (target.status, target.lease_until) == (TargetStatus.PENDING, None)
    assert queued_target_ids([target.id]) == [target.id]
    publish_targets([target.id])
    publish_targets([target.id])
    target.refresh_from_db()
    assert target.status == TargetStatus.PUBLISHED
    assert len(sandbox_publishes(Platform.MASTODON)) == 1
    assert Post.objects.get(id=post.id).status == PostStatus.COMPLETED


def test_expired_lease_on_keyed_platform_after_the_send_is_deduplicated_by_the_platform(sandbox, workspace):
    """The killed worker did reach the platform: the resend with the same key yields the same post."""
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(workspace, [account], text="sent, then killed")
    target = targets_of(post)[0]
    publish_targets([target.id])
    target.refresh_from_db()
    first_remote = target.platform_post_id
    # Pretend the result write never happened: the worker died right after the platform answered.
    PostTarget.objects.filter(id=target.id).update(
        status=TargetStatus.PUBLISHING,
        platform_post_id="",
        post_url="",
        lease_until=timezone.now() - dt.timedelta(seconds=1),
    )
    Post.objects.filter(id=post.id).update(status=PostStatus.PUBLISHING, finished_at=None)

    sweep()
    publish_targets([target.id])

    target.refresh_from_db()
    assert (target.status, target.platform_post_id) == (TargetStatus.PUBLISHED, first_remote)
    assert len(sandbox_publishes(Platform.MASTODON)) == 1


def test_expired_lease_on_lookup_platform_looks_before_sending(workspace, use_client):
    client = use_client(ScriptedClient(Platform.FACEBOOK, [], lookup=done("fb-was-there")))
    post = make_post(workspace, [fake_account(workspace, Platform.FACEBOOK)])
    [claim] = _killed_mid_attempt(post)

    report = sweep()

    assert report.to_lookup == [claim.target_id]
    target = PostTarget.objects.get(id=claim.target_id)
    assert target.status == TargetStatus.PENDING and target.remote_state[BOOK_KEY] == {"verify": True}
    publish_targets([target.id])
    target.refresh_from_db()
    assert (target.status, target.platform_post_id) == (TargetStatus.PUBLISHED, "fb-was-there")
    assert client.publish_calls == [] and client.lookup_calls == 1


def test_expired_lease_on_lookup_platform_sends_when_nothing_is_found(workspace, use_client):
    client = use_client(ScriptedClient(Platform.FACEBOOK, [done("fb-new")], lookup=None))
    post = make_post(workspace, [fake_account(workspace, Platform.FACEBOOK)])
    [claim] = _killed_mid_attempt(post)

    sweep()
    publish_targets([claim.target_id])

    target = PostTarget.objects.get(id=claim.target_id)
    assert (target.status, target.platform_post_id) == (TargetStatus.PUBLISHED, "fb-new")
    assert len(client.publish_calls) == 1 and client.lookup_calls == 1
    assert BOOK_KEY not in target.remote_state


def test_expired_lease_without_idempotency_fails_asking_to_check(workspace):
    post = make_post(workspace, [fake_account(workspace, Platform.TELEGRAM)])
    [claim] = _killed_mid_attempt(post)

    report = sweep()

    assert report.failed == [claim.target_id]
    target = PostTarget.objects.get(id=claim.target_id)
    assert (target.status, target.error_code, target.error_message) == (
        TargetStatus.FAILED,
        "unknown_outcome",
        INTERRUPTED_MESSAGE,
    )
    assert Post.objects.get(id=post.id).status == PostStatus.FAILED
    assert [e["event"] for e in events_of(post.id)] == ["post.failed"]
    assert sweep().failed == []


@pytest.mark.parametrize("platform", [Platform.TELEGRAM, Platform.FACEBOOK, Platform.MASTODON])
def test_a_worker_lost_before_anything_left_is_retried_on_every_platform(workspace, use_client, platform):
    """Claimed, then lost before the create call left (waiting behind its batch, reading its
    credentials): nothing reached the platform, so the entry is simply sent again, even where the
    platform has neither key nor lookup."""
    client = use_client(ScriptedClient(platform, [done("sent-once")], lookup=None))
    post = make_post(workspace, [fake_account(workspace, platform)])
    [claim] = _killed_before_sending(post)

    report = sweep()

    assert (report.requeued, report.to_lookup, report.failed) == ([claim.target_id], [], [])
    target = PostTarget.objects.get(id=claim.target_id)
    assert (target.status, target.error_code, target.lease_until) == (TargetStatus.PENDING, "", None)
    assert BOOK_KEY not in target.remote_state  # no "look first": there is nothing to find
    assert queued_target_ids([target.id]) == [target.id]
    assert sweep().requeued == []
    publish_targets([target.id])
    target.refresh_from_db()
    assert (target.status, target.platform_post_id) == (TargetStatus.PUBLISHED, "sent-once")
    assert len(client.publish_calls) == 1 and client.lookup_calls == 0


def test_a_worker_lost_after_sending_in_an_earlier_attempt_is_judged_by_this_attempt(workspace):
    """The record of an earlier attempt that started sending says nothing about this one."""
    post = make_post(workspace, [fake_account(workspace, Platform.TELEGRAM)])
    [first] = _killed_mid_attempt(post)
    PostTarget.objects.filter(id=first.target_id).update(status=TargetStatus.PENDING, lease_until=None)
    [second] = _killed_before_sending(post)

    assert sweep().requeued == [second.target_id]


def test_a_worker_lost_before_sending_on_every_attempt_fails_without_unknown_outcome(workspace, settings):
    post = make_post(workspace, [fake_account(workspace, Platform.TELEGRAM)])
    PostTarget.objects.filter(post=post).update(attempts=settings.PUBLISH_MAX_ATTEMPTS - 1)
    [claim] = _killed_before_sending(post)

    assert sweep().failed == [claim.target_id]

    target = PostTarget.objects.get(id=claim.target_id)
    assert (target.status, target.error_code, target.error_message) == (
        TargetStatus.FAILED,
        "platform_unavailable",
        NOT_SENT_MESSAGE,
    )


def test_late_write_of_a_recovered_attempt_changes_nothing(workspace, use_client):
    use_client(ScriptedClient(Platform.MASTODON, [done("second-worker")]))
    post = make_post(workspace, [fake_account(workspace, Platform.MASTODON)])
    [stale] = _killed_mid_attempt(post)
    sweep()
    publish_targets([stale.target_id])  # the recovered attempt publishes

    late = outcomes.Published(stale, platform_post_id="first-worker", url="", published_at=None)
    assert outcomes.record([late]) == set()
    assert outcomes.record([outcomes.Failed(stale, error_code="platform_unavailable", message="late")]) == set()

    target = PostTarget.objects.get(id=stale.target_id)
    assert (target.status, target.platform_post_id) == (TargetStatus.PUBLISHED, "second-worker")
    assert [e["event"] for e in events_of(post.id)] == ["post.published"]


def test_pending_target_whose_task_was_lost_is_requeued_once(workspace, settings):
    settings.PUBLISH_LOST_TASK_SECONDS = 30
    empty_publish_queue()
    account = fake_account(workspace, Platform.MASTODON)
    lost = make_post(workspace, [account])
    fresh = make_post(workspace, [account])
    draft = make_post(workspace, [account], status=PostStatus.DRAFT)
    long_ago = timezone.now() - dt.timedelta(minutes=5)
    PostTarget.objects.filter(post__in=[lost, draft]).update(updated_at=long_ago)
    lost_id, fresh_id, draft_id = (targets_of(p)[0].id for p in (lost, fresh, draft))

    report = sweep()

    assert report.lost == [lost_id]
    assert queued_target_ids([lost_id, fresh_id, draft_id]) == [lost_id]
    assert PostTarget.objects.get(id=lost_id).updated_at > long_ago
    assert sweep().lost == []  # just queued again: not queued again right away


def test_straggling_post_is_finalized_by_the_sweeper(workspace, settings):
    settings.PUBLISH_LOST_TASK_SECONDS = 0
    post = make_post(workspace, [fake_account(workspace, Platform.MASTODON)], status=PostStatus.PUBLISHING)
    PostTarget.objects.filter(post=post).update(status=TargetStatus.FAILED, error_code="content_rejected")

    assert sweep().finalized == [post.id]
    assert sweep().finalized == []
    assert Post.objects.get(id=post.id).status == PostStatus.FAILED
    assert [e["event"] for e in events_of(post.id)] == ["post.failed"]


def test_many_lost_targets_are_requeued_in_batches(workspace, settings):
    settings.PUBLISH_LOST_TASK_SECONDS = 30
    settings.PUBLISH_TASK_BATCH = 2
    empty_publish_queue()
    account = fake_account(workspace, Platform.MASTODON)
    posts = [make_post(workspace, [account]) for _ in range(3)]
    PostTarget.objects.filter(post__in=posts).update(updated_at=timezone.now() - dt.timedelta(minutes=5))
    ids = [targets_of(p)[0].id for p in posts]

    assert sorted(sweep().lost) == sorted(ids)

    tasks = queued_publish_tasks(ids)
    assert sorted(len(batch) for _, batch, _ in tasks) == [1, 2]
    assert sorted(name for name, _, _ in tasks) == ["posts.publish_targets", "posts.publish_targets"]
    assert sorted(queued_target_ids(ids)) == sorted(ids)


def test_a_backlog_in_the_queue_is_not_multiplied_by_requeuing_it(workspace, settings):
    """Targets waiting behind a backlog look lost but are still queued: re-queuing all of them every
    sweep would flood the queue. They are re-queued after 10 times the wait, or once it drains."""
    settings.PUBLISH_LOST_TASK_SECONDS = 60
    empty_publish_queue()
    account = fake_account(workspace, Platform.MASTODON)
    waiting, older = make_post(workspace, [account]), make_post(workspace, [account])
    PostTarget.objects.filter(post=waiting).update(updated_at=timezone.now() - dt.timedelta(minutes=5))
    PostTarget.objects.filter(post=older).update(updated_at=timezone.now() - dt.timedelta(minutes=11))
    waiting_id, older_id = targets_of(waiting)[0].id, targets_of(older)[0].id
    enqueue_targets(["pt_somebody_elses"])  # the backlog

    assert sweep().lost == [older_id]  # only what waited 10 × 60 s
    assert sweep().lost == []

    empty_publish_queue()  # drained
    assert sweep().lost == [waiting_id]
    assert queued_target_ids([waiting_id, older_id]) == [waiting_id]
