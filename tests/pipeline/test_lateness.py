"""latePolicy: an entry that reaches its first attempt past the post's maxLatenessSeconds is
skipped or its post turned back into a draft, never sent late; everything else goes out as before.
Posts are staged by the real dispatcher and published against the simulators over HTTP."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from platforms.base import Platform
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from posts.pipeline.dispatcher import dispatch_due
from posts.pipeline.lateness import MISSED
from posts.pipeline.publisher import publish_targets
from posts.pipeline.sweeper import sweep
from tests.pipeline.helpers import connect_account, events_of, make_post, sandbox_publishes, targets_of

pytestmark = pytest.mark.django_db(transaction=True)


def _scheduled(workspace, accounts, *, policy: str, limit: int | None, late_by: dt.timedelta) -> Post:
    """A SCHEDULED post that fell due ``late_by`` ago, claimed by the dispatcher now (as after
    workers were down)."""
    post = make_post(
        workspace, accounts, status=PostStatus.SCHEDULED, scheduled_at=timezone.now() - late_by, text="On time or not"
    )
    Post.objects.filter(id=post.id).update(late_policy=policy, max_lateness_seconds=limit)
    assert dispatch_due() == 1
    return post


def test_skip_fails_the_late_entries_with_missed_and_sends_nothing(sandbox, workspace):
    accounts = [connect_account(workspace, Platform.MASTODON), connect_account(workspace, Platform.BLUESKY)]
    post = _scheduled(workspace, accounts, policy="skip", limit=600, late_by=dt.timedelta(hours=2))
    ids = [t.id for t in targets_of(post)]

    assert publish_targets(ids) == 2
    assert publish_targets(ids) == 0  # the task delivered twice changes nothing

    post.refresh_from_db()
    assert post.status == PostStatus.FAILED
    for target in targets_of(post):
        assert (target.status, target.error_code) == (TargetStatus.FAILED, MISSED)
        assert "maxLatenessSeconds" in target.error_message and target.platform_post_id == ""
    assert sandbox_publishes(Platform.MASTODON) == [] and sandbox_publishes(Platform.BLUESKY) == []
    events = events_of(post.id)
    assert [e["event"] for e in events] == ["post.failed", "post.missed"]
    missed = events[1]["data"]
    assert missed["latePolicy"] == "skip" and missed["post"]["status"] == "FAILED"
    assert missed["post"]["latePolicy"] == "skip" and missed["post"]["maxLatenessSeconds"] == 600
    assert sorted(m["platformId"] for m in missed["missed"]) == sorted(ids)
    assert all(7190 <= m["latenessSeconds"] <= 7300 for m in missed["missed"])
    assert {m["platform"] for m in missed["missed"]} == {"MASTODON", "BLUESKY"}


def test_an_entry_staged_late_is_not_taken_for_lost_by_the_sweeper(sandbox, workspace, settings):
    """Workers back after longer than PUBLISH_LOST_TASK_SECONDS: the dispatcher has just queued the
    entry, due long ago; the sweeper running before its task must not re-queue it as lost."""
    settings.PUBLISH_LOST_TASK_SECONDS = 30
    _scheduled(
        workspace,
        [connect_account(workspace, Platform.MASTODON)],
        policy="skip",
        limit=1,
        late_by=dt.timedelta(minutes=5),
    )

    assert sweep().lost == []


def test_a_late_entry_queued_again_by_the_sweeper_is_still_judged_by_its_due_time(sandbox, workspace, settings):
    """Its task lost, the sweeper queues it again: that is no new due time, so the entry is as late
    as before (re-dating it made a late entry look on time and go out)."""
    settings.PUBLISH_LOST_TASK_SECONDS = 0
    post = _scheduled(
        workspace,
        [connect_account(workspace, Platform.MASTODON)],
        policy="skip",
        limit=1,
        late_by=dt.timedelta(minutes=5),
    )
    [target_id] = [t.id for t in targets_of(post)]
    assert sweep().lost == [target_id]

    assert publish_targets([target_id]) == 1

    target = PostTarget.objects.get(id=target_id)
    assert (target.status, target.error_code) == (TargetStatus.FAILED, MISSED)
    assert sandbox_publishes(Platform.MASTODON) == []
    [missed] = [e["data"]["missed"] for e in events_of(post.id) if e["event"] == "post.missed"]
    assert 300 <= missed[0]["latenessSeconds"] <= 400


def test_within_the_limit_the_entry_goes_out(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    post = _scheduled(workspace, [account], policy="skip", limit=3600, late_by=dt.timedelta(minutes=10))
    assert publish_targets([t.id for t in targets_of(post)]) == 1
    post.refresh_from_db()
    assert post.status == PostStatus.COMPLETED
    assert len(sandbox_publishes(Platform.MASTODON)) == 1
    assert [e["event"] for e in events_of(post.id)] == ["post.published"]


def test_the_default_policy_publishes_however_late(sandbox, workspace):
    account = connect_account(workspace, Platform.MASTODON)
    post = make_post(
        workspace, [account], status=PostStatus.SCHEDULED, scheduled_at=timezone.now() - dt.timedelta(days=3)
    )
    assert dispatch_due() == 1
    assert publish_targets([t.id for t in targets_of(post)]) == 1
    post.refresh_from_db()
    assert post.status == PostStatus.COMPLETED and len(sandbox_publishes(Platform.MASTODON)) == 1


def test_draft_turns_the_post_back_into_an_undated_draft(sandbox, workspace, api):
    accounts = [connect_account(workspace, Platform.MASTODON), connect_account(workspace, Platform.BLUESKY)]
    post = _scheduled(workspace, accounts, policy="draft", limit=60, late_by=dt.timedelta(minutes=30))
    ids = [t.id for t in targets_of(post)]

    assert publish_targets(ids) == 2
    assert publish_targets(ids) == 0

    post.refresh_from_db()
    assert (post.status, post.scheduled_at) == (PostStatus.DRAFT, None)
    for target in targets_of(post):
        assert (target.status, target.attempts, target.lease_until, target.error_code) == (
            TargetStatus.PENDING,
            0,
            None,
            "",
        )
    assert sandbox_publishes(Platform.MASTODON) == [] and sandbox_publishes(Platform.BLUESKY) == []
    (event,) = events_of(post.id)
    assert event["event"] == "post.missed" and event["data"]["latePolicy"] == "draft"
    assert event["data"]["post"]["status"] == "DRAFT" and event["data"]["post"]["scheduledAt"] is None
    # The draft is the client's again: publishing it now sends it, once.
    response = api.post(f"/api/v1/social-posts/{post.id}/publish", {}, format="json")
    assert response.status_code == 201, response.json()
    publish_targets([t.id for t in targets_of(post)])
    post.refresh_from_db()
    assert post.status == PostStatus.COMPLETED
    assert len(sandbox_publishes(Platform.MASTODON)) == 1 and len(sandbox_publishes(Platform.BLUESKY)) == 1


def test_draft_skips_instead_when_an_entry_of_the_post_already_went_out(sandbox, workspace):
    accounts = [connect_account(workspace, Platform.MASTODON), connect_account(workspace, Platform.BLUESKY)]
    post = _scheduled(workspace, accounts, policy="draft", limit=60, late_by=dt.timedelta(minutes=30))
    first, second = targets_of(post)
    # The first entry was published (on time, by another task); the second reaches a worker late.
    PostTarget.objects.filter(id=first.id).update(status=TargetStatus.PUBLISHED, platform_post_id="m-1", attempts=1)

    assert publish_targets([second.id]) == 1

    post.refresh_from_db()
    second.refresh_from_db()
    assert (second.status, second.error_code) == (TargetStatus.FAILED, MISSED)
    assert post.status == PostStatus.PARTIAL_FAILURE
    assert [e["event"] for e in events_of(post.id)] == ["post.partially_failed", "post.missed"]
    assert events_of(post.id)[1]["data"]["latePolicy"] == "skip"
    assert sandbox_publishes(Platform.BLUESKY) == []


def test_a_retry_is_never_judged_late(sandbox, workspace):
    """Only a first attempt is judged: an entry retried after a platform error (attempts > 0) or
    by the client (its due time cleared) goes out."""
    account = connect_account(workspace, Platform.MASTODON)
    post = _scheduled(workspace, [account], policy="skip", limit=60, late_by=dt.timedelta(hours=1))
    (target,) = targets_of(post)
    PostTarget.objects.filter(id=target.id).update(attempts=1)  # a retry after an earlier attempt
    assert publish_targets([target.id]) == 1
    post.refresh_from_db()
    assert post.status == PostStatus.COMPLETED and len(sandbox_publishes(Platform.MASTODON)) == 1


def test_an_entry_already_started_on_the_platform_is_never_judged_late(sandbox, workspace):
    """A multi-step flow polling the platform (its container made) or a thread between two items
    gives its attempt back but has started: it goes on however late its next round comes."""
    account = connect_account(workspace, Platform.MASTODON)
    post = _scheduled(workspace, [account], policy="skip", limit=60, late_by=dt.timedelta(hours=1))
    (target,) = targets_of(post)
    PostTarget.objects.filter(id=target.id).update(remote_state={"_pipeline": {"started": True}})
    assert publish_targets([target.id]) == 1
    target.refresh_from_db()
    assert target.error_code != MISSED
