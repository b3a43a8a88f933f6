"""How often a published entry's comments are read: often while the post is young, when most
comments come, then less and less, and after ``SCHEDULED_DAYS`` only on demand
(``POST /comments/sync``). Pure functions of the post's age: no database, no clock of their own."""

from __future__ import annotations

import datetime as dt

# (the post is younger than, read it every)
CADENCE: tuple[tuple[dt.timedelta, dt.timedelta], ...] = (
    (dt.timedelta(days=1), dt.timedelta(minutes=5)),
    (dt.timedelta(days=7), dt.timedelta(hours=1)),
    (dt.timedelta(days=30), dt.timedelta(days=1)),
)
SCHEDULED_DAYS = 30
# A Google Business location's reviews have no post to age with: read them at this pace.
REVIEWS_EVERY = dt.timedelta(hours=1)


def interval(age: dt.timedelta) -> dt.timedelta | None:
    """How long after a sync of a post of this age the next one is due (None: on demand only)."""
    for younger_than, every in CADENCE:
        if age < younger_than:
            return every
    return None


def next_due(*, published_at: dt.datetime | None, synced_at: dt.datetime) -> dt.datetime | None:
    """When the sync after one at ``synced_at`` is due: one interval of the post's age later, but
    never past the end of the scheduled period (its last read lands on it); None once the post is
    older than that. Reviews (no ``published_at``) every :data:`REVIEWS_EVERY`."""
    if published_at is None:
        return synced_at + REVIEWS_EVERY
    every = interval(synced_at - published_at)
    if every is None:
        return None
    return min(synced_at + every, published_at + dt.timedelta(days=SCHEDULED_DAYS))


def first_due(*, published_at: dt.datetime | None, now: dt.datetime) -> dt.datetime | None:
    """When a newly tracked entry is first read: one first interval after publishing (a post read
    the moment it is live has nothing yet), or now when that has passed; None for a post past its
    scheduled period (read on demand only)."""
    if published_at is None:
        return now
    if now - published_at >= dt.timedelta(days=SCHEDULED_DAYS):
        return None
    return max(published_at + CADENCE[0][1], now)
