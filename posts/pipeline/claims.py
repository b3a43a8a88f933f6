"""Claiming work with conditional UPDATEs (no long-held locks).

Lock order everywhere in the pipeline: the post row first, then its target rows. The target claim
takes a KEY SHARE lock on the post, which conflicts with the ``SELECT … FOR UPDATE`` that delete
and unschedule take, so a post is either deleted/unscheduled before its targets are claimed (and
the claim finds nothing) or the claim commits first (and delete sees a PUBLISHING entry: 409).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db import connection

from posts.models import LatePolicy, PostStatus, TargetStatus

# A target is only ever sent while its post has left DRAFT/SCHEDULED (claimed, queued or retried).
UNSENDABLE_POST_STATUSES = [PostStatus.DRAFT.value, PostStatus.SCHEDULED.value]


@dataclass(frozen=True)
class Claim:
    """A target this worker owns until ``lease_until``; the lease value is the fencing token every
    later write of this attempt is conditioned on."""

    target_id: str
    post_id: str
    lease_until: dt.datetime
    attempts: int
    # The post's latePolicy, and how late (seconds after its due time) this claim came when that is
    # past the post's maxLatenessSeconds and it is the first attempt of an entry with nothing
    # started on the platform (else None): what ``posts.pipeline.lateness`` acts on, read by the
    # claim itself.
    late_policy: str = LatePolicy.PUBLISH.value
    late_seconds: int | None = None


# The statements of the pipeline name the tables of posts.models (posts_post, posts_posttarget)
# literally: written out, with parameters only, never assembled from strings.
_CLAIM_SQL = """
WITH live AS (
    SELECT p.id, p.late_policy, p.max_lateness_seconds FROM posts_post p
    WHERE p.id IN (SELECT post_id FROM posts_posttarget WHERE id = ANY(%(ids)s))
      AND p.status <> ALL(%(unsendable)s)
    FOR KEY SHARE
),
claimed AS (
    UPDATE posts_posttarget t
    SET status = %(publishing)s, attempts = t.attempts + 1, lease_until = %(lease)s, updated_at = %(now)s
    FROM live
    WHERE t.post_id = live.id AND t.id = ANY(%(ids)s) AND t.status = %(pending)s
      AND (t.next_attempt_at IS NULL OR t.next_attempt_at <= %(now)s)
    RETURNING t.id, t.post_id, t.attempts, live.late_policy,
              CASE WHEN t.attempts = 1 AND t.remote_state = '{}'::jsonb AND t.thread_items = '[]'::jsonb
                        AND %(now)s - t.next_attempt_at > make_interval(secs => live.max_lateness_seconds)
                   THEN %(now)s - t.next_attempt_at END
),
bumped AS (
    UPDATE posts_post p SET status = %(post_publishing)s, updated_at = %(now)s
    WHERE p.id IN (SELECT post_id FROM claimed) AND p.status <> %(post_publishing)s
)
SELECT * FROM claimed
"""


def claim_targets(target_ids: list[str], *, now: dt.datetime, lease: dt.timedelta) -> list[Claim]:
    """Move each due PENDING target among ``target_ids`` to PUBLISHING (attempts + 1, lease set)
    in ONE statement, and its post to PUBLISHING. Targets not due, not PENDING, deleted, or whose
    post is a draft or still scheduled are left alone. Returns what this caller now owns."""
    if not target_ids:
        return []
    lease_until = now + lease
    # One statement is its own transaction: no BEGIN/COMMIT round trips around it (inside a caller's
    # transaction it is part of that one).
    with connection.cursor() as cursor:
        cursor.execute(
            _CLAIM_SQL,
            {
                "ids": list(target_ids),
                "unsendable": UNSENDABLE_POST_STATUSES,
                "publishing": TargetStatus.PUBLISHING.value,
                "pending": TargetStatus.PENDING.value,
                "post_publishing": PostStatus.PUBLISHING.value,
                "lease": lease_until,
                "now": now,
            },
        )
        rows = cursor.fetchall()
    return [
        Claim(
            target_id=target_id,
            post_id=post_id,
            lease_until=lease_until,
            attempts=attempts,
            late_policy=policy,
            late_seconds=None if late is None else int(late.total_seconds()),
        )
        for target_id, post_id, attempts, policy, late in rows
    ]
