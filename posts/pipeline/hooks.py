"""The two places other features plug into the pipeline. Both run inside the pipeline's own
transaction, so what they write commits (or rolls back) with the state change that caused it.
They must not call platforms or other slow services."""

from __future__ import annotations


def on_target_published(*, target_id: str) -> None:
    """A target has just become PUBLISHED. Wiring point for analytics: it turns the entry into a
    tracked post (``analytics.services.track_published_target(target_id=...)``)."""


def on_posts_claimed(*, post_ids: list[str]) -> None:
    """The dispatcher has just claimed these due SCHEDULED posts. Wiring point for recurrence:
    claiming an occurrence of a series creates the next one (``posts.recurrence``)."""
