"""Races: concurrent dispatchers, duplicate task deliveries, delete and unschedule against the
claim. Threads each hold their own database connection, as separate workers would."""

from __future__ import annotations

import datetime as dt
import threading
from collections import Counter

import pytest
from django.utils import timezone

from core.errors import Conflict
from platforms.base import Platform
from posts.models import Post, PostStatus, PostTarget, TargetStatus
from posts.pipeline.dispatcher import dispatch_due
from posts.pipeline.publisher import publish_targets
from posts.services.transitions import post_delete, post_unschedule
from tests.concurrency import run_concurrently
from tests.pipeline.helpers import (
    ScriptedClient,
    done,
    events_of,
    fake_account,
    make_post,
    queued_publish_tasks,
    queued_target_ids,
    targets_of,
)

pytestmark = pytest.mark.django_db(transaction=True)


class CountingClient(ScriptedClient):
    """Publishes anything, counting sends per target id."""

    def __init__(self, platform: Platform) -> None:
        super().__init__(platform, [])
        self.sent: Counter[str] = Counter()
        self.lock = threading.Lock()

    def publish(self, creds, request, state):  # type: ignore[no-untyped-def]
        with self.lock:
            self.sent[request.target_id] += 1
            number = sum(self.sent.values())
        return done(f"remote-{number}")


def test_ten_dispatchers_claim_each_due_post_once(workspace):
    accounts = [fake_account(workspace, Platform.MASTODON, f"a{i}") for i in range(2)]
    past = timezone.now() - dt.timedelta(seconds=5)
    posts = [
        make_post(workspace, accounts, status=PostStatus.SCHEDULED, scheduled_at=past + dt.timedelta(milliseconds=i))
        for i in range(120)
    ]
    later = make_post(
        workspace, accounts, status=PostStatus.SCHEDULED, scheduled_at=timezone.now() + dt.timedelta(minutes=5)
    )

    results = run_concurrently([dispatch_due for _ in range(10)])

    assert all(isinstance(r, int) for r in results), results
    assert sum(results) == len(posts)
    assert set(Post.objects.filter(id__in=[p.id for p in posts]).values_list("status", flat=True)) == {
        PostStatus.PENDING
    }
    assert Post.objects.get(id=later.id).status == PostStatus.SCHEDULED
    target_ids = [t.id for p in posts for t in targets_of(p)]
    assert sorted(queued_target_ids(target_ids + [t.id for t in targets_of(later)])) == sorted(target_ids)
    staged = PostTarget.objects.filter(id__in=target_ids).select_related("post")
    assert all(t.next_attempt_at == t.post.scheduled_at for t in staged)
    assert dispatch_due() == 0  # run again: nothing left to claim


def test_dispatcher_stages_posts_due_in_a_moment_but_they_wait_for_their_time(workspace, use_client):
    client = use_client(CountingClient(Platform.MASTODON))
    due_at = timezone.now() + dt.timedelta(seconds=1.5)
    post = make_post(
        workspace, [fake_account(workspace, Platform.MASTODON)], status=PostStatus.SCHEDULED, scheduled_at=due_at
    )
    target = targets_of(post)[0]

    assert dispatch_due() == 1

    [(task, ids, countdown)] = queued_publish_tasks([target.id])
    assert (task, ids) == ("posts.publish_targets", [target.id])
    assert countdown is not None and 0.5 < countdown <= 1.6
    assert publish_targets([target.id]) == 0  # arrived early: nothing happens…
    assert client.sent[target.id] == 0
    assert len(queued_publish_tasks([target.id])) == 2  # …but it is put back for its time
    PostTarget.objects.filter(id=target.id).update(next_attempt_at=timezone.now())
    assert publish_targets([target.id]) == 1 and client.sent[target.id] == 1


def test_large_dispatch_is_queued_in_batches(workspace, settings):
    settings.PUBLISH_TASK_BATCH = 25
    account = fake_account(workspace, Platform.MASTODON)
    past = timezone.now() - dt.timedelta(seconds=1)
    posts = [make_post(workspace, [account], status=PostStatus.SCHEDULED, scheduled_at=past) for _ in range(60)]
    ids = [t.id for p in posts for t in targets_of(p)]

    assert dispatch_due() == 60

    tasks = queued_publish_tasks(ids)
    assert {name for name, _, _ in tasks} == {"posts.publish_targets"}
    assert sorted(t for _, batch, _ in tasks for t in batch) == sorted(ids)
    assert max(len(batch) for _, batch, _ in tasks) == 25


def test_concurrent_deliveries_of_one_task_send_once(workspace, use_client):
    client = use_client(CountingClient(Platform.MASTODON))
    post = make_post(workspace, [fake_account(workspace, Platform.MASTODON)])
    target = targets_of(post)[0]

    results = run_concurrently([lambda: publish_targets([target.id]) for _ in range(10)])

    assert sorted(results) == [0] * 9 + [1]
    assert client.sent[target.id] == 1
    assert [e["event"] for e in events_of(post.id)] == ["post.published"]


def test_batch_task_claims_the_same_way(workspace, use_client):
    client = use_client(CountingClient(Platform.MASTODON))
    accounts = [fake_account(workspace, Platform.MASTODON, f"b{i}") for i in range(3)]
    post = make_post(workspace, accounts)
    ids = [t.id for t in targets_of(post)]

    results = run_concurrently([lambda: publish_targets(ids), lambda: publish_targets(list(reversed(ids)))])

    assert sum(results) == 3 and set(client.sent.values()) == {1}
    assert Post.objects.get(id=post.id).status == PostStatus.COMPLETED
    assert [e["event"] for e in events_of(post.id)] == ["post.published"]


def test_last_targets_finishing_together_emit_exactly_one_event(workspace, use_client):
    use_client(CountingClient(Platform.MASTODON))
    accounts = [fake_account(workspace, Platform.MASTODON, f"c{i}") for i in range(8)]
    post = make_post(workspace, accounts)
    ids = [t.id for t in targets_of(post)]

    run_concurrently([lambda i=i: publish_targets([i]) for i in ids])

    assert {t.status for t in targets_of(post)} == {TargetStatus.PUBLISHED}
    assert [e["event"] for e in events_of(post.id)] == ["post.published"]


def test_delete_racing_the_claim_never_publishes_a_deleted_post(workspace, use_client):
    client = use_client(CountingClient(Platform.MASTODON))
    account = fake_account(workspace, Platform.MASTODON)
    outcomes = Counter()
    for _ in range(25):
        post = make_post(workspace, [account])
        target_id = targets_of(post)[0].id
        deleted, claimed = run_concurrently(
            [
                lambda p=post: post_delete(workspace_id=workspace.id, post_id=p.id),
                lambda t=target_id: publish_targets([t]),
            ]
        )
        exists = Post.objects.filter(id=post.id).exists()
        if exists:
            assert isinstance(deleted, Conflict) and claimed == 1
            outcomes["claim first"] += 1
        elif claimed == 0:
            assert deleted is None
            assert client.sent[target_id] == 0
            outcomes["delete first"] += 1
        else:
            # The claim won and the attempt finished (PUBLISHED, post COMPLETED) before the
            # delete took the row lock: deleting a published post is allowed, and it was sent once.
            assert deleted is None and client.sent[target_id] == 1
            outcomes["published, then deleted"] += 1
    assert sum(outcomes.values()) == 25


def test_unschedule_racing_the_dispatcher_never_publishes_an_unscheduled_post(workspace, use_client):
    client = use_client(CountingClient(Platform.MASTODON))
    account = fake_account(workspace, Platform.MASTODON)
    for _ in range(15):
        post = make_post(
            workspace, [account], status=PostStatus.SCHEDULED, scheduled_at=timezone.now() - dt.timedelta(seconds=1)
        )
        target_id = targets_of(post)[0].id
        run_concurrently(
            [lambda p=post: post_unschedule(workspace_id=workspace.id, post_id=p.id), lambda: dispatch_due()]
        )
        publish_targets([target_id])  # whatever the dispatcher queued, delivered
        post.refresh_from_db()
        if post.status == PostStatus.DRAFT:
            assert client.sent[target_id] == 0
            assert PostTarget.objects.get(id=target_id).status == TargetStatus.PENDING
        else:
            assert client.sent[target_id] == 1 and post.status == PostStatus.COMPLETED


class TextRecordingClient(CountingClient):
    def __init__(self, platform: Platform) -> None:
        super().__init__(platform)
        self.texts: dict[str, str] = {}

    def publish(self, creds, request, state):  # type: ignore[no-untyped-def]
        self.texts[request.target_id] = request.text
        return super().publish(creds, request, state)


def test_patch_racing_the_dispatcher_is_either_sent_or_refused_never_lost(workspace, use_client):
    from core.errors import BadRequest
    from posts.services.changes import post_update

    client = use_client(TextRecordingClient(Platform.MASTODON))
    account = fake_account(workspace, Platform.MASTODON)
    outcomes = Counter()
    for _ in range(15):
        post = make_post(
            workspace,
            [account],
            text="original",
            status=PostStatus.SCHEDULED,
            scheduled_at=timezone.now() - dt.timedelta(seconds=1),
        )
        target_id = targets_of(post)[0].id
        patched, _ = run_concurrently(
            [
                lambda p=post: post_update(workspace_id=workspace.id, post_id=p.id, changes={"text": "patched"}),
                lambda: dispatch_due(),
            ]
        )
        dispatch_due()  # whichever order, the post is claimed by now
        publish_targets([target_id])
        assert client.sent[target_id] == 1
        if isinstance(patched, BadRequest):
            assert patched.code == "post_not_editable" and client.texts[target_id] == "original"
            outcomes["claimed first: refused"] += 1
        else:
            assert isinstance(patched, Post), patched
            assert client.texts[target_id] == "patched"
            outcomes["patched first: sent patched"] += 1
    assert sum(outcomes.values()) == 15


def test_delete_racing_the_dispatcher_never_publishes_the_deleted_post(workspace, use_client):
    client = use_client(CountingClient(Platform.MASTODON))
    account = fake_account(workspace, Platform.MASTODON)
    for _ in range(15):
        post = make_post(
            workspace, [account], status=PostStatus.SCHEDULED, scheduled_at=timezone.now() - dt.timedelta(seconds=1)
        )
        target_id = targets_of(post)[0].id
        deleted, _ = run_concurrently(
            [lambda p=post: post_delete(workspace_id=workspace.id, post_id=p.id), lambda: dispatch_due()]
        )
        assert deleted is None  # claimed or not, no entry is being sent yet: the delete goes through
        publish_targets([target_id])  # whatever the dispatcher queued, delivered
        assert not Post.objects.filter(id=post.id).exists()
        assert client.sent[target_id] == 0


def test_a_posts_entries_due_together_are_queued_as_one_batch(workspace):
    accounts = [fake_account(workspace, Platform.MASTODON, f"together{i}") for i in range(3)]
    past = timezone.now() - dt.timedelta(seconds=1)
    post = make_post(workspace, accounts, status=PostStatus.SCHEDULED, scheduled_at=past)
    ids = [t.id for t in targets_of(post)]

    assert dispatch_due() == 1

    [(task, batch, _)] = queued_publish_tasks(ids)
    assert task == "posts.publish_targets" and sorted(batch) == sorted(ids)
