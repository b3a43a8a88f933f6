"""publish_targets with a batch: the attempts of the claimed targets run side by side, each one
still fenced, the post finalized once with one event, and a second delivery changes nothing."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from platforms.base import Credentials, Platform, PlatformClient, PublishRequest, PublishResult, Transient
from posts.models import PostStatus, TargetStatus
from posts.pipeline.publisher import publish_targets
from tests.pipeline.helpers import (
    empty_publish_queue,
    events_of,
    fake_account,
    make_post,
    queued_publish_tasks,
    targets_of,
)

pytestmark = pytest.mark.django_db(transaction=True)


class SlowClient(PlatformClient):
    """Answers after ``delay`` seconds and records how many calls were in flight at once."""

    def __init__(self, platform: Platform, delay: float, fail_text: str = "") -> None:
        self.platform = platform
        self.delay = delay
        self.fail_text = fail_text
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.sent: list[str] = []

    def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.sent.append(request.target_id)
        try:
            time.sleep(self.delay)
        finally:
            with self.lock:
                self.in_flight -= 1
        if self.fail_text and self.fail_text in request.text:
            raise Transient("try later")
        return PublishResult(
            done=True, platform_post_id=f"r-{request.target_id}", url=f"https://x.test/{request.target_id}"
        )

    def lookup(self, creds: Credentials, request: PublishRequest) -> PublishResult | None:
        return None


def test_a_batch_runs_its_attempts_concurrently_and_finalizes_each_post_once(workspace, use_client, settings):
    settings.PUBLISH_ATTEMPT_THREADS = 4
    client = use_client(SlowClient(Platform.MASTODON, delay=0.3))
    accounts = [fake_account(workspace, Platform.MASTODON, f"a{i}") for i in range(3)]
    posts = [make_post(workspace, accounts, text=f"batch {i}") for i in range(2)]
    ids = [t.id for post in posts for t in targets_of(post)]

    assert publish_targets(ids) == 6

    # Four calls were in flight at once (capped by the setting): the proof of concurrency, with
    # no wall-clock bound that a loaded machine could break.
    assert client.max_in_flight == 4
    assert sorted(client.sent) == sorted(ids)
    assert publish_targets(ids) == 0  # a second delivery changes nothing
    assert sorted(client.sent) == sorted(ids)
    for post in posts:
        post.refresh_from_db()
        assert post.status == PostStatus.COMPLETED
        assert [t.status for t in targets_of(post)] == [TargetStatus.PUBLISHED] * 3
        assert [e["event"] for e in events_of(post.id)] == ["post.published"]


def test_a_batch_with_mixed_outcomes_writes_each_and_leaves_no_connection_behind(workspace, use_client):
    client = use_client(SlowClient(Platform.MASTODON, delay=0.05, fail_text="flaky"))
    accounts = [fake_account(workspace, Platform.MASTODON, f"b{i}") for i in range(2)]
    good = make_post(workspace, accounts, text="fine")
    flaky = make_post(workspace, accounts, text="flaky one")
    ids = [t.id for post in (good, flaky) for t in targets_of(post)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        before = cursor.fetchone()[0]

    assert publish_targets(ids) == 4

    # Every pool thread closed its connection. The server ends a backend a moment after its
    # client hangs up, so give pg_stat_activity a few seconds to catch up before judging.
    deadline = time.monotonic() + 5
    while True:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
            now_open = cursor.fetchone()[0]
        if now_open <= before or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert now_open <= before
    assert client.max_in_flight > 1
    good.refresh_from_db()
    flaky.refresh_from_db()
    assert good.status == PostStatus.COMPLETED
    assert [t.status for t in targets_of(flaky)] == [TargetStatus.PENDING] * 2
    assert all(t.error_code == "platform_unavailable" and t.lease_until is None for t in targets_of(flaky))
    assert flaky.status == PostStatus.PUBLISHING


def test_inside_a_transaction_the_attempts_run_on_the_callers_connection(workspace, use_client):
    client = use_client(SlowClient(Platform.MASTODON, delay=0.0))
    accounts = [fake_account(workspace, Platform.MASTODON, f"c{i}") for i in range(2)]
    from django.db import transaction

    with transaction.atomic():
        post = make_post(workspace, accounts, text="in a transaction")
        ids = [t.id for t in targets_of(post)]
        assert publish_targets(ids) == 2  # threads could not see these uncommitted rows
    assert client.max_in_flight == 1
    assert [t.status for t in targets_of(post)] == [TargetStatus.PUBLISHED] * 2


def test_a_batch_is_two_rounds_of_attempt_threads_by_default():
    from django.conf import settings

    # A batch's fixed cost (task, claim, read, recording) is paid once for two rounds of calls;
    # the second round starts as slots free up, within the first tenth of the lease (next test).
    assert settings.PUBLISH_TASK_BATCH == 2 * settings.PUBLISH_ATTEMPT_THREADS == 50
    assert settings.WORK_THREADS >= settings.PUBLISH_ATTEMPT_THREADS


def test_a_call_that_would_start_after_the_first_tenth_of_its_lease_is_put_back_unsent(workspace, use_client, settings):
    """One slot, calls of 2.5 s, a lease of 20 s: the first call starts at once; the next would
    start 2.5 s into the lease, after its first tenth (2 s), so it is not sent. Its target is
    PENDING again, due now, its attempt given back and its task queued; the next delivery sends it."""
    empty_publish_queue()
    settings.PUBLISH_ATTEMPT_THREADS = 1
    settings.PUBLISH_LEASE_SECONDS = 20.0
    client = use_client(SlowClient(Platform.MASTODON, delay=2.5))
    accounts = [fake_account(workspace, Platform.MASTODON, f"l{i}") for i in range(2)]
    post = make_post(workspace, accounts, text="leases")
    first, second = (t.id for t in targets_of(post))

    assert publish_targets([first, second]) == 2
    assert client.sent == [first]
    rows = {t.id: t for t in targets_of(post)}
    assert rows[first].status == TargetStatus.PUBLISHED
    assert (rows[second].status, rows[second].attempts, rows[second].lease_until) == (TargetStatus.PENDING, 0, None)
    assert rows[second].next_attempt_at is not None and rows[second].next_attempt_at <= timezone.now()
    assert [(name, ids) for name, ids, _ in queued_publish_tasks([second])] == [("posts.publish_targets", [second])]

    settings.PUBLISH_LEASE_SECONDS = 180.0
    assert publish_targets([second]) == 1
    assert publish_targets([second]) == 0  # a second delivery changes nothing
    assert client.sent == [first, second]
    post.refresh_from_db()
    assert post.status == PostStatus.COMPLETED
    assert [e["event"] for e in events_of(post.id)] == ["post.published"]


def test_the_attempt_threads_are_kept_from_one_batch_to_the_next(workspace, use_client, settings):
    """In a worker process (its threads made at worker_process_init) a thread, and its HTTP
    session, so its keep-alive connection, serves the next batch too; a batch is still capped at
    PUBLISH_ATTEMPT_THREADS calls in flight on the bigger pool."""
    from celery.signals import worker_process_init, worker_process_shutdown

    settings.PUBLISH_ATTEMPT_THREADS = 3
    settings.WORK_THREADS = 5
    seen: list[set[int]] = []

    class ThreadNoting(SlowClient):
        def publish(self, creds: Credentials, request: PublishRequest, state: dict[str, Any]) -> PublishResult:
            seen[-1].add(threading.get_ident())
            return super().publish(creds, request, state)

    client = use_client(ThreadNoting(Platform.MASTODON, delay=0.05))
    accounts = [fake_account(workspace, Platform.MASTODON, f"k{i}") for i in range(3)]
    kept: list[set[int]] = []
    worker_process_init.send(sender=None)
    try:
        for round_ in range(2):
            seen.append(set())
            post = make_post(workspace, accounts, text=f"kept {round_}")
            assert publish_targets([t.id for t in targets_of(post)]) == 3
            kept.append({t.ident for t in threading.enumerate() if t.name.startswith("work_") and t.ident})
        assert threading.get_ident() not in seen[0] | seen[1]  # the calls ran on the pool, not here
        assert seen[1] <= kept[0]  # the second batch ran on threads already there after the first
        assert kept[1] == kept[0]  # and started none

        settings.PUBLISH_ATTEMPT_THREADS = 2
        client.max_in_flight = 0
        post = make_post(workspace, accounts, text="capped")
        assert publish_targets([t.id for t in targets_of(post)]) == 3
        assert client.max_in_flight == 2
    finally:
        worker_process_shutdown.send(sender=None, pid=0, exitcode=0)
    assert not any(t.name.startswith("work_") for t in threading.enumerate())  # ended with the process


def test_results_written_together_stay_fenced_per_target(workspace):
    """outcomes.record: one statement for the batch, yet a target whose lease was taken over
    (the sweeper recovered it) is left alone while its siblings are written; the post is finalized
    only once every entry is terminal, with one event."""
    import datetime as dt

    from django.utils import timezone

    from posts.pipeline import outcomes
    from posts.pipeline.claims import claim_targets

    accounts = [fake_account(workspace, Platform.MASTODON, f"d{i}") for i in range(3)]
    post = make_post(workspace, accounts, text="written together")
    ids = [t.id for t in targets_of(post)]
    claims = claim_targets(ids, now=timezone.now(), lease=dt.timedelta(seconds=60))
    assert len(claims) == 3
    taken_over = claims[2]
    from posts.models import PostTarget

    PostTarget.objects.filter(id=taken_over.target_id).update(lease_until=timezone.now() + dt.timedelta(hours=1))

    items = [
        outcomes.Published(claim=c, platform_post_id=f"r-{c.target_id}", url="", published_at=None) for c in claims
    ]
    assert outcomes.record(items) == {claims[0].target_id, claims[1].target_id}
    assert outcomes.record(items) == set()  # written once: the leases are spent

    statuses = {t.id: (t.status, t.platform_post_id, t.lease_until) for t in targets_of(post)}
    assert statuses[claims[0].target_id] == (TargetStatus.PUBLISHED, f"r-{claims[0].target_id}", None)
    assert statuses[taken_over.target_id][0] == TargetStatus.PUBLISHING
    post.refresh_from_db()
    assert post.status == PostStatus.PUBLISHING and events_of(post.id) == []

    # The attempt that now owns the last entry finishes it: the post is finalized, one event.
    PostTarget.objects.filter(id=taken_over.target_id).update(lease_until=taken_over.lease_until)
    assert outcomes.record(items[2:]) == {taken_over.target_id}
    post.refresh_from_db()
    assert post.status == PostStatus.COMPLETED
    assert [e["event"] for e in events_of(post.id)] == ["post.published"]


def test_a_batch_tracks_its_published_targets_once_with_one_rollup_row(workspace, use_client):
    """The batch tracks what it published in one statement (analytics platforms only); the rollup
    the triggers keep counts each once, and a second batch over the same targets adds nothing."""
    from analytics.models import AnalyticsDailyRollup, TrackedPost
    from analytics.services import track_published_targets

    use_client(SlowClient(Platform.BLUESKY, delay=0.01))
    accounts = [fake_account(workspace, Platform.BLUESKY, f"e{i}") for i in range(3)]
    posts = [make_post(workspace, accounts, text=f"tracked {i}") for i in range(2)]
    ids = [t.id for post in posts for t in targets_of(post)]

    assert publish_targets(ids) == 6
    tracked = TrackedPost.objects.filter(workspace=workspace)
    assert sorted(tracked.values_list("target_id", flat=True)) == sorted(ids)
    assert {(r.platform_post_id, r.views) for r in tracked} == {(f"r-{i}", None) for i in ids}
    assert sum(AnalyticsDailyRollup.objects.filter(workspace_id=workspace.id).values_list("posts", flat=True)) == 6

    track_published_targets(target_ids=ids)  # idempotent: the same rows, counted once
    assert TrackedPost.objects.filter(workspace=workspace).count() == 6
    assert sum(AnalyticsDailyRollup.objects.filter(workspace_id=workspace.id).values_list("posts", flat=True)) == 6


def test_tracking_takes_the_targets_given_and_reads_only_the_others(workspace, use_client):
    """The pipeline hands tracking the entries it read after the PUBLISHED write: the rows are the
    same as read afresh, and only the entries not given are read."""
    from django.test.utils import CaptureQueriesContext

    from analytics.models import TrackedPost
    from analytics.services import track_published_targets
    from posts.models import PostTarget

    use_client(SlowClient(Platform.BLUESKY, delay=0.0))
    accounts = [fake_account(workspace, Platform.BLUESKY, f"g{i}") for i in range(3)]
    post = make_post(workspace, accounts, text="given")
    ids = [t.id for t in targets_of(post)]
    assert publish_targets(ids) == 3
    fields = ("target_id", "account_id", "platform_post_id", "post_id", "published_at", "text", "permalink")
    expected = sorted(TrackedPost.objects.values_list(*fields))
    TrackedPost.objects.all().delete()

    given = list(PostTarget.objects.select_related("post").filter(id__in=ids[:2]))
    with CaptureQueriesContext(connection) as queries:
        track_published_targets(target_ids=ids, targets=given)
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert len(reads) == 1 and ids[2] in reads[0] and ids[0] not in reads[0]
    assert sorted(TrackedPost.objects.values_list(*fields)) == expected
