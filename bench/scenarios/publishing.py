"""Shared by ``burst`` and ``steady``: simulated accounts connected through the real connect-link
flow, due posts seeded with SQL, lateness read back from the database, duplicates counted from
the simulators' request logs, and the no-op floor of the same workers."""

from __future__ import annotations

import secrets
import time
import uuid
from typing import Any

from bench import seed
from bench.context import Bench, duplicates_in
from bench.report import percentile
from posts.models import Post, PostTarget

# Three simulators whose publish is one cheap call each (no media, no polling).
PLATFORMS = ("MASTODON", "TELEGRAM", "BLUESKY")


def publishing_workspace(bench: Bench) -> dict[str, Any]:
    """One workspace with a connected account per platform (made once per run)."""
    if "publishing" not in bench.shared:
        workspace_id, key = bench.workspace("bench publishing")
        accounts = {platform: bench.connect_account(key, platform) for platform in PLATFORMS}
        bench.shared["publishing"] = {"workspace": workspace_id, "key": key, "accounts": accounts}
    return dict(bench.shared["publishing"])


def seed_due_posts(
    bench: Bench, *, tag: str, posts: int, due_sql: str, targets_per_post: int, start: float
) -> tuple[str, float]:
    """``posts`` SCHEDULED posts whose due time is ``due_sql`` (an expression of ``g``, in seconds
    after ``start``), each with ``targets_per_post`` PENDING entries on rotating platforms.
    Returns the id prefix of the posts and the seeding time."""
    setup = publishing_workspace(bench)
    accounts = [setup["accounts"][p] for p in PLATFORMS]
    run = f"{tag}{secrets.token_hex(3)}"
    timer = seed.Timer()
    seed.insert_select(
        Post,
        source=f"generate_series(0, {posts - 1}) g",
        exprs={
            "id": f"'post_{run}_' || g",
            "workspace_id": "%(workspace)s",
            "status": "'SCHEDULED'",
            "content_type": "'TEXT'",
            "text": f"'Benchmark {run} post ' || g",
            "scheduled_at": f"to_timestamp(%(start)s + {due_sql})",
        },
        params={"workspace": setup["workspace"], "start": start},
    )
    for k in range(targets_per_post):
        platform_index = f"mod(g + {k}, {len(PLATFORMS)})" if targets_per_post < len(PLATFORMS) else str(k)
        seed.insert_select(
            PostTarget,
            source=f"generate_series(0, {posts - 1}) g",
            exprs={
                "id": f"'pt_{run}_' || g || '_{k}'",
                "post_id": f"'post_{run}_' || g",
                "platform": f"(%(platforms)s::text[])[{platform_index} + 1]",
                "account_id": f"(%(accounts)s::text[])[{platform_index} + 1]",
                "status": "'PENDING'",
                "text": f"'Benchmark {run} post ' || g || ' #' || {k}",
            },
            params={"platforms": list(PLATFORMS), "accounts": accounts},
        )
    return run, timer.seconds


def outcome(bench: Bench, run: str) -> dict[str, Any]:
    rows = bench.sql(
        """SELECT t.status, EXTRACT(EPOCH FROM t.published_at - p.scheduled_at), EXTRACT(EPOCH FROM t.published_at),
                  EXTRACT(EPOCH FROM p.scheduled_at), EXTRACT(EPOCH FROM clock_timestamp() - p.scheduled_at),
                  t.attempts
           FROM posts_posttarget t JOIN posts_post p ON p.id = t.post_id WHERE p.id LIKE %s""",
        [f"post_{run}_%"],
    )
    lateness = [float(r[1]) for r in rows if r[0] == "PUBLISHED"]
    # A target still unfinished when the scenario gave up is at least this late: counted so.
    lateness += [max(float(r[4]), 0.0) for r in rows if r[0] in ("PENDING", "PUBLISHING")]
    published_at = [float(r[2]) for r in rows if r[0] == "PUBLISHED"]
    due = [float(r[3]) for r in rows]
    statuses: dict[str, int] = {}
    for row in rows:
        statuses[row[0]] = statuses.get(row[0], 0) + 1
    return {
        "targets": len(rows),
        "statuses": statuses,
        "lateness": lateness,
        "p50": percentile(lateness, 50),
        "p99": percentile(lateness, 99),
        "max": max(lateness) if lateness else None,
        # Attempts beyond each target's first: a retry (a platform error, a timeout) shows here.
        "retries": sum(max(int(r[5]) - 1, 0) for r in rows),
        "firstDue": min(due) if due else None,
        "lastPublished": max(published_at) if published_at else None,
    }


def terminal_count(bench: Bench, run: str) -> int:
    rows = bench.sql(
        "SELECT count(*) FROM posts_posttarget WHERE post_id LIKE %s AND status IN ('PUBLISHED', 'FAILED')",
        [f"post_{run}_%"],
    )
    return int(rows[0][0])


def duplicates(bench: Bench) -> tuple[int, int]:
    created = dup = 0
    for platform in PLATFORMS:
        c, d = duplicates_in(bench.sandbox_requests(platform.lower()))
        created, dup = created + c, dup + d
    return created, dup


def clear_logs(bench: Bench) -> None:
    for platform in PLATFORMS:
        bench.clear_sandbox_requests(platform.lower())


def noop_floor(bench: Bench, count: int) -> dict[str, float]:
    """Queue ``count`` no-op tasks on the publish queue while the worker is not consuming it, then
    let it consume: tasks per second from the moment consumption resumes to the last one."""
    from bench.celery_app import app, noop

    counter = f"bench:noop:{uuid.uuid4().hex}"
    destination = [next(iter(reply)) for reply in app.control.ping(timeout=2.0) or []]
    app.control.cancel_consumer("publish", destination=destination, reply=True)
    with app.producer_or_acquire() as producer:
        for _ in range(count):
            noop.apply_async(args=(counter, count), queue="publish", producer=producer)
    redis = bench.stack.redis.client(0)
    started = time.time()
    app.control.add_consumer("publish", destination=destination, reply=True)
    deadline = started + 600
    done = None
    while time.time() < deadline:
        done = redis.get(f"{counter}:done")
        if done:
            break
        time.sleep(0.05)
    if not done:
        raise RuntimeError("the no-op tasks were not drained in 10 minutes")
    seconds = float(done) - started
    return {"tasks": count, "seconds": round(seconds, 2), "perSecond": round(count / seconds, 1)}


def queue_depth(bench: Bench, queue: str = "publish") -> int:
    redis = bench.stack.redis.client(0)
    keys = [queue, *(f"{queue}\x06\x16{p}" for p in (1, 2, 3, 4, 5, 6, 7, 8, 9))]
    pipe = redis.pipeline()
    for key in keys:
        pipe.llen(key)
    return int(sum(pipe.execute()))


def abandon(bench: Bench, run: str) -> int:
    """Keep the next scenario clean when this one stopped waiting: targets of ``run`` still
    PENDING are closed as FAILED (the benchmark's own database) and the queued tasks dropped;
    a task that still arrives finds nothing to claim. Returns how many were abandoned."""
    from bench.celery_app import app

    rows = bench.sql(
        "UPDATE posts_posttarget SET status = 'FAILED', error_message = 'abandoned by the benchmark' "
        "WHERE post_id LIKE %s AND status = 'PENDING' RETURNING id",
        [f"post_{run}_%"],
    )
    app.control.purge()
    return len(rows)
