"""The places other features plug into the pipeline. Each runs inside the pipeline's own
transaction, so what it writes commits (or rolls back) with the state change that caused it.
They must not call platforms or other slow services."""

from __future__ import annotations

from analytics.services import track_published_targets
from posts.models import PostTarget
from posts.recurrence.services import series_occurrences_claimed, series_post_finished


def on_targets_published(*, target_ids: list[str], targets: list[PostTarget] | None = None) -> None:
    """These targets have just become PUBLISHED. Wiring point for analytics: it turns each entry
    into a tracked post, one statement for all of them (``analytics.services``). ``targets``: those
    of them the pipeline already read after the write, each with its post (not read again)."""
    track_published_targets(target_ids=target_ids, targets=targets)


def on_posts_claimed(*, post_ids: list[str]) -> None:
    """The dispatcher has just claimed these due SCHEDULED posts. Wiring point for recurrence:
    claiming an occurrence of a series creates the next one (``posts.recurrence``)."""
    series_occurrences_claimed(post_ids=post_ids)


def on_post_finished(*, post_id: str, status: str) -> None:
    """The post has just become COMPLETED, PARTIAL_FAILURE or FAILED (finalize, under its row lock).
    Wiring point for recurrence: a series pauses itself after 3 failed occurrences in a row."""
    series_post_finished(post_id=post_id, status=status)
