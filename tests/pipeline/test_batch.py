"""publish_targets with a batch: the attempts of the claimed targets run side by side, each one
still fenced, the post finalized once with one event, and a second delivery changes nothing."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection

from platforms.base import Credentials, Platform, PlatformClient, PublishRequest, PublishResult, Transient
from posts.models import PostStatus, TargetStatus
from posts.pipeline import publisher
from posts.pipeline.publisher import publish_targets
from tests.pipeline.helpers import events_of, fake_account, make_post, targets_of

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

    started = time.monotonic()
    assert publish_targets(ids) == 6
    elapsed = time.monotonic() - started

    assert client.max_in_flight == 4  # capped by the setting, more than one at a time
    assert elapsed < 6 * 0.3  # one after the other would take at least 1.8 s
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


def test_attempt_threads_setting_defaults_to_ten(settings):
    settings.PUBLISH_ATTEMPT_THREADS = None
    from posts.pipeline import config

    assert config.attempt_threads() == 10
    assert publisher.config is config
