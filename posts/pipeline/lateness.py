"""The late policy of a post (``latePolicy``, ``maxLatenessSeconds``): an entry that reaches its
first attempt more than the post's limit after it fell due (workers were down, a backlog) is not
sent late; it is skipped (FAILED, ``errorCode: missed``) or its post turns back into an undated
draft, and ``post.missed`` names the entries.

Only a first attempt of an entry staged by the dispatcher is judged (``attempts`` 1 after the
claim, ``next_attempt_at`` its due time, nothing started on the platform: no ``remote_state``, no
thread item): a retry after a platform error, a retry asked for by the client, a post sent "now",
a multi-step flow polling the platform and the rest of a started thread always go on. The claim
statement itself reads how late each entry came (``Claim.late_seconds``); the judgement happens
after the claim and before any call, so nothing of a skipped entry ever reaches the platform, and
its writes are fenced by the claim like every other outcome."""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction

from posts.models import LatePolicy, Post, PostStatus, PostTarget, TargetStatus
from posts.pipeline import outcomes
from posts.pipeline.claims import Claim
from posts.rendering import post_record
from webhooks.events import emit_events

MISSED = "missed"


def judge(claims: list[Claim]) -> list[Claim]:
    """Apply the late policies to ``claims`` (the claim read how late each came: no query here);
    return the claims to attempt."""
    late: dict[str, list[tuple[Claim, int]]] = defaultdict(list)
    for claim in claims:
        if claim.late_seconds is not None:
            late[claim.post_id].append((claim, claim.late_seconds))
    if not late:
        return claims
    for post_id, entries in late.items():
        policy = entries[0][0].late_policy
        if policy == LatePolicy.DRAFT and _back_to_draft(post_id, entries):
            continue
        _skip(entries, policy=policy)
    judged = {claim.target_id for entries in late.values() for claim, _ in entries}
    return [claim for claim in claims if claim.target_id not in judged]


def _missed(entries: list[tuple[Claim, int]], platforms: dict[str, str]) -> list[dict[str, object]]:
    return [
        {"platformId": claim.target_id, "platform": platforms.get(claim.target_id), "latenessSeconds": lateness}
        for claim, lateness in entries
    ]


def _back_to_draft(post_id: str, entries: list[tuple[Claim, int]]) -> bool:
    """The post becomes an undated DRAFT with its entries PENDING again, if none of them has been
    sent or is held by another worker (this worker's claims of it aside): the post row is locked
    FOR UPDATE, which no claim can pass, so nothing of it starts meanwhile. False otherwise."""
    mine = {claim.target_id: claim.lease_until for claim, _ in entries}
    with transaction.atomic():
        post = Post.objects.select_for_update().filter(id=post_id).first()
        if post is None:
            return True  # deleted meanwhile: nothing to send
        targets = list(
            PostTarget.objects.filter(post_id=post_id).values_list(
                "id", "status", "attempts", "lease_until", "platform"
            )
        )
        untouched = all(
            (target_id in mine and status == TargetStatus.PUBLISHING and lease == mine[target_id])
            or (status == TargetStatus.PENDING and attempts == 0 and lease is None)
            for target_id, status, attempts, lease, _ in targets
        )
        if not untouched:
            return False
        PostTarget.objects.filter(post_id=post_id).update(
            status=TargetStatus.PENDING, attempts=0, lease_until=None, next_attempt_at=None
        )
        post.status, post.scheduled_at = PostStatus.DRAFT, None
        post.save(update_fields=["status", "scheduled_at", "updated_at"])
        platforms = {target_id: platform for target_id, _, _, _, platform in targets}
        emit_events(
            [
                (
                    str(post.workspace_id),
                    "post.missed",
                    {
                        "post": post_record(post),
                        "latePolicy": LatePolicy.DRAFT.value,
                        "missed": _missed(entries, platforms),
                    },
                )
            ]
        )
    return True


def _skip(entries: list[tuple[Claim, int]], *, policy: str) -> None:
    """The late entries end FAILED with ``errorCode: missed`` (fenced by their claims; the post is
    finalized as after any failure), and ``post.missed`` names those this worker ended."""
    post_id = entries[0][0].post_id
    with transaction.atomic():
        owned = outcomes.record(
            [
                outcomes.Failed(
                    claim=claim,
                    error_code=MISSED,
                    message=f"Not sent: it reached a worker {lateness} s after its time, past the post's "
                    f"maxLatenessSeconds (latePolicy {policy})",
                )
                for claim, lateness in entries
            ]
        )
        ended = [(claim, lateness) for claim, lateness in entries if claim.target_id in owned]
        post = Post.objects.filter(id=post_id).first()
        if not ended or post is None:
            return
        platforms = dict(PostTarget.objects.filter(post_id=post_id).values_list("id", "platform"))
        emit_events(
            [
                (
                    str(post.workspace_id),
                    "post.missed",
                    {
                        "post": post_record(post),
                        "latePolicy": LatePolicy.SKIP.value,
                        "missed": _missed(ended, platforms),
                    },
                )
            ]
        )
