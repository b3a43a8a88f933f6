"""The entries of an account being disconnected (issue 31): what has not been sent fails with
``account_disconnected``; what may already have reached the platform is left to its worker.

- A PENDING entry of a post that is going to be sent (SCHEDULED, PENDING or PUBLISHING) fails. A
  draft's entries are left alone: publishing a draft rebuilds its entries from the workspace's
  connected accounts, where the disconnected one no longer is.
- A PUBLISHING entry whose attempt has not recorded that it starts sending (the pipeline's
  ``claims.claim_started_sending``) fails too, and its lease is cleared: the lease is the
  attempt's fencing token, so the worker's record of its start matches nothing (its call never
  leaves) and every later write of that attempt changes nothing.
- A PUBLISHING entry whose attempt has started sending may have reached the platform: it is left
  to its worker, whose outcome is written as usual (with the token it already read).

Locks are taken in the pipeline's order, the posts (``FOR NO KEY UPDATE``, id order) before their
entries (``FOR UPDATE``), so this never deadlocks with a claim or a record; a claim that comes
after finds the entry FAILED and leaves it. Each post whose last entry this ends is finalized with
its one event, as the pipeline does (``outcomes.finalize_locked``).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from posts.models import Post, PostStatus, PostTarget, TargetStatus
from posts.pipeline.claims import BOOK_KEY, SENDING_KEY, started_sending
from posts.pipeline.outcomes import finalize_locked

ACCOUNT_DISCONNECTED = "account_disconnected"
DISCONNECTED_MESSAGE = "The account was disconnected before this entry was sent"

_SENDABLE_POST_STATUSES = [PostStatus.SCHEDULED, PostStatus.PENDING, PostStatus.PUBLISHING]
_OPEN_ENTRY_STATUSES = [TargetStatus.PENDING, TargetStatus.PUBLISHING]


def _may_have_been_sent(target: PostTarget) -> bool:
    if target.status != TargetStatus.PUBLISHING or target.lease_until is None:
        return False
    book = (target.remote_state or {}).get(BOOK_KEY) or {}
    return started_sending(book.get(SENDING_KEY), target.lease_until)


def entries_fail_for_disconnected_account(*, account_id: str) -> list[str]:
    """Fail the account's entries that were not sent (see the module docstring) with errorCode
    ``account_disconnected``, in the caller's transaction (or its own), and finalize their posts
    with one event each. Returns the ids of the entries failed; a second call fails none."""
    post_ids = sorted(
        set(
            PostTarget.objects.filter(
                account_id=account_id, status__in=_OPEN_ENTRY_STATUSES, post__status__in=_SENDABLE_POST_STATUSES
            ).values_list("post_id", flat=True)
        )
    )
    if not post_ids:
        return []
    with transaction.atomic():
        posts = list(
            Post.objects.select_for_update(no_key=True)
            .filter(id__in=post_ids, status__in=_SENDABLE_POST_STATUSES)
            .order_by("id")
        )
        targets = list(
            PostTarget.objects.select_for_update()
            .filter(post_id__in=[post.id for post in posts], account_id=account_id, status__in=_OPEN_ENTRY_STATUSES)
            .order_by("id")
        )
        failing = [target.id for target in targets if not _may_have_been_sent(target)]
        if not failing:
            return []
        PostTarget.objects.filter(id__in=failing).update(
            status=TargetStatus.FAILED,
            error_code=ACCOUNT_DISCONNECTED,
            error_message=DISCONNECTED_MESSAGE,
            lease_until=None,
            next_attempt_at=None,
            updated_at=timezone.now(),
        )
        touched = {target.post_id for target in targets if target.id in set(failing)}
        for post in posts:
            if post.id in touched:
                finalize_locked(post)
    return failing
