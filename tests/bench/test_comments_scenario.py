"""The bench's comments scenario (issue 33) run tiny against the real stack: web, worker, beat and
the simulators on this test's database (the scenario seeds it and reads it back in this process),
the bench's own redis-servers. A few accounts and posts on every platform that reads comments (text,
video and Google Business's review feeds), watched for half a minute: the report has every figure
per platform, reads happened, and none went past the hourly budget or met a 429."""

from __future__ import annotations

import pytest
from django.db import connection

from bench.context import Bench
from bench.scenarios import comments
from bench.stack import BenchStack, server_database_url

# Real processes, like the end-to-end tests: on their xdist worker, one after the other.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

PER_PLATFORM = (
    "accounts",
    "budgetPerHour",
    "demandPerHour",
    "stretch",
    "targetIntervalSeconds",
    "readsPerAccountHourMax",
    "readsPerAccountHourP50",
    "readsInOneClockHourMax",
    "readsInWindowMax",
    "readsAllowedInWindow",
    "readsSeen",
    "intervalP50Seconds",
    "intervalP95Seconds",
    "latenessP50Seconds",
    "latenessP95Seconds",
    "backlogMax",
    "lagMaxSeconds",
    "rateLimitedAnswers",
    "withinBudget",
    "withinInterval",
)


def test_a_tiny_comment_sync_reads_within_budget_and_reports_every_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    # Beat every 5 s instead of every minute: the half-minute window then holds several of its runs
    # whatever the phase of the first (the stack's processes take this process's environment).
    monkeypatch.setenv("COMMENT_SYNC_INTERVAL_SECONDS", "5")
    stack = BenchStack(server_url=server_database_url(), database_name=str(connection.settings_dict["NAME"]))
    try:
        stack.redis.start()
        stack.sandbox_redis.start()
        stack.start()
        accounts = 2 * len(comments.PLATFORMS)
        report = comments.run(
            Bench(stack=stack, quick=True), accounts=accounts, posts=2, seconds=30, first_due_within=10
        )
    finally:
        stack.stop()
        stack.redis.stop()
        stack.sandbox_redis.stop()

    platforms = report.details["platforms"]
    planned = comments.plans(2)
    assert set(platforms) == set(comments.PLATFORMS)
    for platform, row in platforms.items():
        assert set(row) == set(PER_PLATFORM), platform
        assert row["accounts"] == 2, platform
        assert row["stretch"] == round(planned[platform].stretch, 3), platform
        # Two young posts fit every budget but YouTube's, whose read lists twice (its own comment
        # threads and the held ones): there the cadence stretches the interval.
        assert (row["stretch"] > 1.0) == (platform == "YOUTUBE"), platform
        assert row["readsSeen"] >= 1, platform  # every source fell due within the window
        assert 0 < row["readsInOneClockHourMax"] <= row["budgetPerHour"], platform
        # Not the window's share of the budget: this seed has every source due in its first 10 s.
        assert row["readsInOneClockHourMax"] <= row["readsInWindowMax"], platform
        assert row["rateLimitedAnswers"] == 0, platform
    names = [figure.name for figure in report.figures]
    for platform in comments.PLATFORMS:
        for figure in ("within budget", "within interval", "reads per account-hour max", "interval p95"):
            assert f"{platform.lower()}: {figure}" in names
    assert "worker CPU / wall" in names and "postgres CPU / wall" in names and "redis CPU / wall" in names
    # Two posts each on the eight platforms with posts, one review feed each on Google Business.
    entry_accounts = 2 * len(comments.ENTRY_PLATFORMS)
    assert report.details["seed"]["sources"] == entry_accounts * 2 + 2
    assert report.details["seed"]["reviewFeeds"] == 2
