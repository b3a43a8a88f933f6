"""``analytics``: tracked posts across 1,000 workspaces (the largest with 1,000,000) and 180 days of
follower snapshots, seeded with generate_series; p50/p99 of the report endpoints for the largest
workspace (half of its posts published through us, half discovered), and the cost of one refresh
batch (in-process, against the simulators)."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext

from analytics.models import AccountSyncState, FollowerSnapshot, TrackedPost
from bench import seed
from bench.context import Bench
from bench.loadgen import sequential_timings
from bench.report import Report

WORKSPACES = 1000
LARGEST = 1_000_000
ASKED_TOTAL = 10_000_000
# The size. Seeding it takes about 190 s on a quiet 2-core machine (2,000,000: about 45 s),
# so make bench stays near 14 minutes; on a crowded machine ``--analytics-posts 2000000`` saves time.
DEFAULT_TOTAL = ASKED_TOTAL
LARGEST_PLATFORMS = ["BLUESKY", "THREADS", "LINKEDIN", "YOUTUBE"]
OTHER_PLATFORMS = ["BLUESKY", "THREADS"]
WINDOW_SECONDS = 180 * 86400


def _tracked_exprs(*, id_prefix: str, workspace: str, account: str, platform: str) -> dict[str, str]:
    moment = f"now() - make_interval(secs => mod(g::bigint * 7919, {WINDOW_SECONDS}))"
    return {
        "id": f"'{id_prefix}' || g",
        "workspace_id": workspace,
        "account_id": account,
        "platform": platform,
        "platform_post_id": "'remote-' || g",
        "published_at": moment,
        "text": "'Tracked post ' || g",
        "views": f"CASE WHEN {platform} = 'BLUESKY' THEN NULL ELSE mod(g::bigint * 37, 50000) END",
        "likes": "mod(g::bigint * 13, 900)",
        "comments": "mod(g::bigint * 7, 120)",
        "shares": "mod(g::bigint * 3, 60)",
        "refresh_until": f"{moment} + interval '180 days'",
        "last_refreshed_at": "now()",
    }


def seed_analytics(total: int) -> dict[str, Any]:
    timer = seed.Timer()
    seed.workspaces("an", WORKSPACES)
    seed.accounts("an", WORKSPACES, OTHER_PLATFORMS, extra_first=LARGEST_PLATFORMS[len(OTHER_PLATFORMS) :])
    seed.insert_select(
        AccountSyncState,
        source="accounts_socialaccount a WHERE a.id LIKE 'acc_an_%%'",
        exprs={"account_id": "a.id", "workspace_id": "a.workspace_id", "last_synced_at": "now()"},
    )
    rest = max(total - LARGEST, 0)
    others = WORKSPACES - 1
    with seed.bulk_load(TrackedPost):
        largest_platform = f"(ARRAY{LARGEST_PLATFORMS!r}::text[])[mod(g, {len(LARGEST_PLATFORMS)}) + 1]"
        seed.insert_select(
            TrackedPost,
            source=f"generate_series(0, {LARGEST - 1}) g",
            exprs={
                **_tracked_exprs(
                    id_prefix="tp_an0_",
                    workspace="'ws_an_0'",
                    account=f"'acc_an_0_' || mod(g, {len(LARGEST_PLATFORMS)})",
                    platform=largest_platform,
                ),
                # Every other post was published through us; the rest are discovered-posts' rows.
                "post_id": "CASE WHEN mod(g, 2) = 0 THEN 'post_an0_' || g END",
                "target_id": "CASE WHEN mod(g, 2) = 0 THEN 'pt_an0_' || g END",
            },
        )
        if rest:
            k = f"mod(g / {others}, {len(OTHER_PLATFORMS)})"
            seed.insert_select(
                TrackedPost,
                source=f"generate_series(0, {rest - 1}) g",
                exprs=_tracked_exprs(
                    id_prefix="tp_an_",
                    workspace=f"'ws_an_' || (1 + mod(g, {others}))",
                    account=f"'acc_an_' || (1 + mod(g, {others})) || '_' || {k}",
                    platform=f"(ARRAY{OTHER_PLATFORMS!r}::text[])[{k} + 1]",
                ),
            )
    tracked_seconds = timer.seconds
    seed.insert_select(
        FollowerSnapshot,
        source="accounts_socialaccount a CROSS JOIN generate_series(0, 179) d WHERE a.id LIKE 'acc_an_%%'",
        exprs={
            "workspace_id": "a.workspace_id",
            "account_id": "a.id",
            "platform": "a.platform",
            "day": "current_date - d",
            "count": "10000 + (180 - d) * 25",
        },
    )
    seed.analyze()
    return {"trackedPosts": LARGEST + rest, "trackedSeconds": round(tracked_seconds, 1), "seconds": timer.seconds}


def refresh_batch_cost(bench: Bench) -> dict[str, Any]:
    """One refresh of a real simulated account (tokens valid on the simulator): with the burst's
    BLUESKY account its 2,000 tracked posts were published by the pipeline; otherwise a newly
    connected account with 1,000 seeded rows (remote ids the simulator does not know)."""
    from analytics.services import METRICS_BATCH, refresh_account

    setup = bench.shared.get("publishing")
    if setup:
        account_id, source = setup["accounts"]["BLUESKY"], "BLUESKY account of burst/steady (published posts)"
    else:
        workspace_id, key = bench.workspace("bench analytics refresh")
        account_id = bench.connect_account(key, "BLUESKY")
        seed.insert_select(
            TrackedPost,
            source="generate_series(0, 999) g",
            exprs=_tracked_exprs(id_prefix="tp_refresh_", workspace="%(ws)s", account="%(acc)s", platform="'BLUESKY'"),
            params={"ws": workspace_id, "acc": account_id},
        )
        source = "a connected BLUESKY account with 1,000 seeded rows unknown to the simulator"
    rows = TrackedPost.objects.filter(account_id=account_id, refresh_until__gt=dt.datetime.now(dt.UTC)).count()
    calls_before = len(bench.sandbox_requests("bluesky"))
    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        refresh_account(account_id=account_id)
        seconds = time.perf_counter() - started
    calls = len(bench.sandbox_requests("bluesky")) - calls_before
    batches = max(1, -(-rows // METRICS_BATCH))
    return {
        "source": source,
        "rows": rows,
        "batches": batches,
        "batchSize": METRICS_BATCH,
        "seconds": round(seconds, 3),
        "msPerBatch": round(seconds / batches * 1000, 1),
        "sqlQueries": len(captured.captured_queries),
        "platformCalls": calls,
    }


def run(bench: Bench, *, total: int = DEFAULT_TOTAL) -> Report:
    report = Report("analytics")
    seeded = seed_analytics(total)
    report.details["seed"] = seeded
    key = bench.api_key("ws_an_0")
    today = dt.datetime.now(dt.UTC).date()
    window = {"from": (today - dt.timedelta(days=180)).isoformat(), "to": today.isoformat()}
    one_day = {"from": (today - dt.timedelta(days=90)).isoformat(), "to": (today - dt.timedelta(days=89)).isoformat()}
    endpoints: dict[str, tuple[str, dict[str, Any]]] = {
        "overview": ("/analytics/overview", window),
        "timeseries DAILY 180 d": ("/analytics/timeseries", {**window, "granularity": "DAILY"}),
        "platform-breakdown": ("/analytics/platform-breakdown", window),
        "posts page 1 by VIEWS": ("/analytics/posts", {**window, "sortBy": "VIEWS", "page": 1}),
        "top-posts 10 by VIEWS": ("/analytics/top-posts", window),
        "top-posts 50 by ENGAGEMENT_RATE": (
            "/analytics/top-posts",
            {**window, "sortBy": "ENGAGEMENT_RATE", "limit": 50},
        ),
        "top-posts 10, 1 day, THREADS": ("/analytics/top-posts", {**one_day, "platforms": "THREADS"}),
        "discovered-posts 200": ("/analytics/discovered-posts", window),
        "discovered-posts 1000, 1 day": ("/analytics/discovered-posts", {**one_day, "limit": 1000}),
    }
    samples = 10 if bench.quick else 25
    timings: dict[str, Any] = {}
    for name, (path, params) in endpoints.items():
        timing = sequential_timings(
            f"{bench.stack.web_url}/api/v1{path}", key=key, params=params, count=samples, budget_s=45
        )
        timings[name] = timing
        report.add(f"{name} p50", timing["p50Ms"], "ms")
        report.add(f"{name} p99", timing["p99Ms"], "ms", at_most=50)
        if timing["statuses"] != [200]:
            report.notes.append(f"{name} answered {timing['statuses']}")
    report.details["endpoints"] = timings
    cost = refresh_batch_cost(bench)
    report.details["refresh"] = cost
    report.add("refresh: rows of the account", cost["rows"])
    report.add("refresh: ms per batch", cost["msPerBatch"], f"ms / {cost['batchSize']} rows")
    report.add("refresh: SQL queries (whole refresh)", cost["sqlQueries"])
    report.add("refresh: platform calls (whole refresh)", cost["platformCalls"])
    report.add("tracked posts seeded", seeded["trackedPosts"], target=f"{ASKED_TOTAL:,} asked")
    report.add("seeding time", seeded["seconds"], "s")
    if seeded["trackedPosts"] < ASKED_TOTAL:
        report.notes.append(
            f"seeded {seeded['trackedPosts']:,} tracked posts (largest workspace at full size, 1,000,000) "
            f"instead of {ASKED_TOTAL:,} (--analytics-posts)"
        )
    report.notes.append(f"refresh measured on {cost['source']}")
    return report
