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

from core import bulk
from posts.models import LatePolicy, PostStatus, TargetStatus
from posts.pipeline import step

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
    platform: str = ""  # the entry's platform (its attempt's log line names it)


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
    RETURNING t.id, t.post_id, t.attempts, t.platform, live.late_policy,
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
            platform=platform,
        )
        for target_id, post_id, attempts, platform, policy, late in rows
    ]


# --- "started sending": the line between "nothing left" and "may have reached the platform" -----

# Our own bookkeeping inside a target's ``remote_state``; stripped before a client sees the state.
BOOK_KEY = "_pipeline"
# In that book (and in a first comment's ``first_comment``): the lease of the attempt that started
# sending, written just before its first call that creates something leaves.
SENDING_KEY = "sending"

_STARTED_SENDING_SQL = """
UPDATE posts_posttarget t
SET remote_state = t.remote_state || jsonb_build_object(
        %(book)s, COALESCE(t.remote_state -> %(book)s, '{}'::jsonb) || jsonb_build_object(%(key)s, v.marker))
FROM jsonb_to_recordset(%(rows)s::jsonb) AS v(id text, lease_until timestamptz, marker text)
WHERE t.id = v.id AND t.status = %(publishing)s AND t.lease_until = v.lease_until
RETURNING t.id
"""


def claims_started_sending(claims: list[Claim]) -> list[bool]:
    """Record, each fenced by its claim, that the attempts of ``claims`` start sending: the first
    call of each that may create something on the platform is about to leave. A worker lost after
    this may have reached the platform; one lost before it sent nothing, and the sweeper retries
    its entry. One statement for all of them (the calls that leave side by side record together);
    each answer is False when that claim was taken over: its call must not leave."""
    if not claims:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            _STARTED_SENDING_SQL,
            {
                "book": BOOK_KEY,
                "key": SENDING_KEY,
                "rows": bulk.rows_param(
                    [
                        {
                            "id": claim.target_id,
                            "lease_until": claim.lease_until,
                            "marker": claim.lease_until.isoformat(),
                        }
                        for claim in claims
                    ]
                ),
                "publishing": TargetStatus.PUBLISHING.value,
            },
        )
        recorded = {row[0] for row in cursor.fetchall()}
    return [claim.target_id in recorded for claim in claims]


def claim_started_sending(claim: Claim) -> bool:
    """:func:`claims_started_sending` of one claim."""
    return claims_started_sending([claim])[0]


started_sending = step.started_sending
