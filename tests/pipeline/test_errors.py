"""Each failure class of the platform taxonomy, through a scripted client of the interface."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from platforms.base import (
    NotSupported,
    Permanent,
    Platform,
    PublishResult,
    QuotaExhausted,
    RateLimited,
    Transient,
    UnknownOutcome,
)
from posts.models import Post, PostStatus, TargetStatus
from posts.pipeline.publisher import BOOK_KEY, publish_targets
from tests.pipeline.helpers import (
    ScriptedClient,
    done,
    events_of,
    fake_account,
    make_due,
    make_post,
    queued_publish_tasks,
    targets_of,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _one_target(workspace, platform):
    post = make_post(workspace, [fake_account(workspace, platform)])
    return post, targets_of(post)[0]


def _run_until_settled(target, rounds=10):
    for _ in range(rounds):
        make_due(target)
        publish_targets([target.id])
        target.refresh_from_db()
        if target.status in (TargetStatus.PUBLISHED, TargetStatus.FAILED):
            return


def test_rate_limited_waits_for_the_platforms_retry_time(workspace, use_client):
    retry_at = timezone.now() + dt.timedelta(seconds=75)
    client = use_client(ScriptedClient(Platform.MASTODON, [RateLimited("slow down", retry_at=retry_at), done()]))
    post, target = _one_target(workspace, Platform.MASTODON)

    publish_targets([target.id])

    target.refresh_from_db()
    assert target.status == TargetStatus.PENDING
    assert (target.error_code, target.error_message) == ("rate_limited", "slow down")
    assert retry_at <= target.next_attempt_at <= retry_at + dt.timedelta(seconds=2)
    [(_, _, countdown)] = queued_publish_tasks([target.id])
    assert countdown is not None and 70 < countdown < 80
    _run_until_settled(target)
    assert target.status == TargetStatus.PUBLISHED and len(client.publish_calls) == 2


def test_quota_far_away_is_left_to_the_sweeper_instead_of_a_long_eta(workspace, use_client):
    retry_at = timezone.now() + dt.timedelta(hours=6)
    use_client(ScriptedClient(Platform.MASTODON, [QuotaExhausted("daily quota", retry_at=retry_at)]))
    post, target = _one_target(workspace, Platform.MASTODON)

    publish_targets([target.id])

    target.refresh_from_db()
    assert (target.status, target.error_code) == (TargetStatus.PENDING, "quota_exhausted")
    assert target.next_attempt_at >= retry_at
    assert queued_publish_tasks([target.id]) == []


def test_transient_errors_stop_after_five_attempts(workspace, use_client):
    client = use_client(ScriptedClient(Platform.MASTODON, [Transient(f"503 #{n}") for n in range(1, 7)]))
    post, target = _one_target(workspace, Platform.MASTODON)

    _run_until_settled(target)

    assert (target.status, target.attempts) == (TargetStatus.FAILED, 5)
    assert (target.error_code, target.error_message) == ("platform_unavailable", "503 #5")
    assert len(client.publish_calls) == 5
    assert [e["event"] for e in events_of(post.id)] == ["post.failed"]


def test_permanent_error_is_final_at_once(workspace, use_client):
    client = use_client(ScriptedClient(Platform.MASTODON, [Permanent("Media too big", error_code="media_rejected")]))
    post, target = _one_target(workspace, Platform.MASTODON)

    publish_targets([target.id])
    make_due(target)
    publish_targets([target.id])

    target.refresh_from_db()
    assert (target.status, target.error_code, target.error_message) == (
        TargetStatus.FAILED,
        "media_rejected",
        "Media too big",
    )
    assert len(client.publish_calls) == 1


def test_multi_step_flow_resumes_from_its_state_without_spending_attempts(workspace, use_client):
    steps = [
        PublishResult(done=False, state={"container": "c-1"}, poll_after=3),
        PublishResult(done=False, state={"container": "c-1", "polls": 1}, poll_after=3),
        done("final-1"),
    ]
    client = use_client(ScriptedClient(Platform.MASTODON, steps))
    post, target = _one_target(workspace, Platform.MASTODON)

    publish_targets([target.id])

    target.refresh_from_db()
    assert target.status == TargetStatus.PENDING and target.remote_state == {"container": "c-1"}
    assert target.attempts == 0
    [(_, _, countdown)] = queued_publish_tasks([target.id])
    assert countdown is not None and 2 < countdown <= 3
    _run_until_settled(target)
    assert (target.status, target.platform_post_id, target.attempts) == (TargetStatus.PUBLISHED, "final-1", 1)
    assert [state for _, state in client.publish_calls] == [{}, {"container": "c-1"}, {"container": "c-1", "polls": 1}]
    assert target.remote_state == {}


def test_unknown_outcome_on_a_keyed_platform_is_resent_with_the_same_key(workspace, use_client):
    client = use_client(ScriptedClient(Platform.MASTODON, [UnknownOutcome("read timeout"), done("m-1")]))
    post, target = _one_target(workspace, Platform.MASTODON)

    _run_until_settled(target)

    assert (target.status, target.platform_post_id) == (TargetStatus.PUBLISHED, "m-1")
    assert [request.target_id for request, _ in client.publish_calls] == [target.id, target.id]
    assert client.lookup_calls == 0


def test_unknown_outcome_found_by_lookup_is_published_without_resending(workspace, use_client):
    client = use_client(
        ScriptedClient(Platform.FACEBOOK, [UnknownOutcome("connection dropped")], lookup=done("fb-found"))
    )
    post, target = _one_target(workspace, Platform.FACEBOOK)

    publish_targets([target.id])

    target.refresh_from_db()
    assert (target.status, target.platform_post_id) == (TargetStatus.PUBLISHED, "fb-found")
    assert len(client.publish_calls) == 1 and client.lookup_calls == 1
    assert Post.objects.get(id=post.id).status == PostStatus.COMPLETED


def test_unknown_outcome_not_found_is_resent_once_then_failed(workspace, use_client):
    client = use_client(
        ScriptedClient(Platform.FACEBOOK, [UnknownOutcome("timeout 1"), UnknownOutcome("timeout 2")], lookup=None)
    )
    post, target = _one_target(workspace, Platform.FACEBOOK)

    _run_until_settled(target)

    assert (target.status, target.error_code) == (TargetStatus.FAILED, "unknown_outcome")
    assert "Check the platform before retrying" in target.error_message
    # looked up after each timeout, and once more right before the re-send
    assert len(client.publish_calls) == 2 and client.lookup_calls == 3


class SlowPlatformClient(ScriptedClient):
    """The first request timed out but the platform was still processing it: the post shows up
    after the first lookup."""

    def lookup(self, creds, request):  # type: ignore[no-untyped-def]
        self.lookup_calls += 1
        return None if self.lookup_calls == 1 else done("fb-late")


def test_unknown_outcome_is_looked_up_again_before_the_resend(workspace, use_client):
    client = use_client(SlowPlatformClient(Platform.FACEBOOK, [UnknownOutcome("read timeout"), done("fb-dup")]))
    post, target = _one_target(workspace, Platform.FACEBOOK)

    _run_until_settled(target)

    assert (target.status, target.platform_post_id) == (TargetStatus.PUBLISHED, "fb-late")
    assert len(client.publish_calls) == 1 and client.lookup_calls == 2


def test_unknown_outcome_without_lookup_fails_asking_to_check(workspace, use_client):
    client = use_client(ScriptedClient(Platform.TELEGRAM, [UnknownOutcome("read timeout")], lookup=NotSupported()))
    post, target = _one_target(workspace, Platform.TELEGRAM)

    _run_until_settled(target)

    assert (target.status, target.error_code) == (TargetStatus.FAILED, "unknown_outcome")
    assert "read timeout" in target.error_message and "Check the platform" in target.error_message
    assert len(client.publish_calls) == 1


def test_failed_lookup_is_repeated_before_anything_is_resent(workspace, use_client):
    client = use_client(ScriptedClient(Platform.FACEBOOK, [UnknownOutcome("timeout")], lookup=Transient("lookup 503")))
    post, target = _one_target(workspace, Platform.FACEBOOK)

    publish_targets([target.id])
    target.refresh_from_db()
    assert target.status == TargetStatus.PENDING and target.remote_state[BOOK_KEY] == {"verify": True}

    client.lookup_answer = done("fb-late")
    make_due(target)
    publish_targets([target.id])

    target.refresh_from_db()
    assert (target.status, target.platform_post_id) == (TargetStatus.PUBLISHED, "fb-late")
    assert len(client.publish_calls) == 1 and client.lookup_calls == 2


def test_unclassified_exception_is_treated_as_an_unknown_outcome(workspace, use_client):
    client = use_client(ScriptedClient(Platform.TELEGRAM, [KeyError("id")], lookup=NotSupported()))
    post, target = _one_target(workspace, Platform.TELEGRAM)

    publish_targets([target.id])

    target.refresh_from_db()
    assert (target.status, target.error_code) == (TargetStatus.FAILED, "unknown_outcome")
    assert len(client.publish_calls) == 1


def test_request_carries_target_text_config_and_id(workspace, use_client):
    client = use_client(ScriptedClient(Platform.PINTEREST, [done()]))
    account = fake_account(workspace, Platform.PINTEREST)
    post = make_post(workspace, [account], texts={account.id: "Per-platform text"})
    target = targets_of(post)[0]
    type(target).objects.filter(id=target.id).update(config={"boardId": "b-1", "title": "T"})

    publish_targets([target.id])

    [(request, state)] = client.publish_calls
    assert (request.target_id, request.text, request.content_type) == (target.id, "Per-platform text", "TEXT")
    assert request.options == {"boardId": "b-1", "title": "T"} and state == {}
