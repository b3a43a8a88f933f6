"""The due-post dispatcher (beat, every second): the database is the schedule."""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from posts.models import PostStatus, TargetStatus
from posts.pipeline import hooks
from posts.pipeline.enqueue import enqueue_targets

# Posts due up to ``stage_ahead`` from now, oldest first, that no other dispatcher holds.
_CLAIM_POSTS_SQL = """
WITH due AS (
    SELECT id FROM posts_post
    WHERE status = %(scheduled)s AND scheduled_at <= %(horizon)s
    ORDER BY scheduled_at, id
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE posts_post p SET status = %(pending)s, updated_at = %(now)s
FROM due WHERE p.id = due.id
RETURNING p.id, p.scheduled_at
"""

# Their entries become due at the post's time: the claim in publish_targets reads that column and
# never acts early, however early the task arrives.
_STAGE_TARGETS_SQL = """
UPDATE posts_posttarget t
SET next_attempt_at = p.scheduled_at, lease_until = NULL, updated_at = %(now)s
FROM posts_post p
WHERE t.post_id = p.id AND p.id = ANY(%(ids)s) AND t.status = %(pending)s
RETURNING t.id, p.scheduled_at
"""


def dispatch_due(*, now: dt.datetime | None = None) -> int:
    """Claim every SCHEDULED post due by now (+ the stage-ahead window) in batches, move it to
    PENDING, and queue its entries after commit with a countdown to their time. Safe with any
    number of concurrent dispatchers (SKIP LOCKED; each post is claimed once). Returns how many
    posts were claimed."""
    claimed = 0
    for _ in range(settings.PUBLISH_DISPATCH_MAX_BATCHES):
        count = _dispatch_batch(now or timezone.now())
        claimed += count
        if count < settings.PUBLISH_DISPATCH_BATCH:
            break
    return claimed


def _dispatch_batch(now: dt.datetime) -> int:
    horizon = now + dt.timedelta(seconds=settings.PUBLISH_STAGE_AHEAD_SECONDS)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            _CLAIM_POSTS_SQL,
            {
                "scheduled": PostStatus.SCHEDULED.value,
                "pending": PostStatus.PENDING.value,
                "horizon": horizon,
                "limit": settings.PUBLISH_DISPATCH_BATCH,
                "now": now,
            },
        )
        post_ids = [row[0] for row in cursor.fetchall()]
        if not post_ids:
            return 0
        cursor.execute(_STAGE_TARGETS_SQL, {"ids": post_ids, "pending": TargetStatus.PENDING.value, "now": now})
        by_due: dict[float, list[str]] = defaultdict(list)
        for target_id, due_at in cursor.fetchall():
            # Bucketed by 100 ms, rounded up: a task may come late, never early.
            by_due[math.ceil(due_at.timestamp() * 10) / 10].append(target_id)
        hooks.on_posts_claimed(post_ids=post_ids)
        transaction.on_commit(lambda: _enqueue(by_due), robust=True)
    return len(post_ids)


def _enqueue(by_due: dict[float, list[str]]) -> None:
    """Targets falling due in the same 100 ms go together, as ``publish_targets`` tasks of up to
    ``PUBLISH_TASK_BATCH`` (a post's entries are sent side by side by one task)."""
    now = timezone.now().timestamp()
    for due_at, target_ids in sorted(by_due.items()):
        enqueue_targets(target_ids, countdown=due_at - now)
