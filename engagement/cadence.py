"""How often a published entry's comments are read: often while the post is young, when most
comments come, then less and less, and after ``SCHEDULED_DAYS`` only on demand
(``POST /comments/sync``). Pure functions of the post's age: no database, no clock of their own.

An account whose sources want more reads an hour than its platform's budget has every interval
stretched by one factor (:func:`stretch`), so its reads spread evenly over the hour instead of
spending the budget in the first minutes and waiting for the next clock hour."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

# (the post is younger than, read it every)
CADENCE: tuple[tuple[dt.timedelta, dt.timedelta], ...] = (
    (dt.timedelta(days=1), dt.timedelta(minutes=5)),
    (dt.timedelta(days=7), dt.timedelta(hours=1)),
    (dt.timedelta(days=30), dt.timedelta(days=1)),
)
SCHEDULED_DAYS = 30
# A Google Business location's reviews have no post to age with: read them at this pace.
REVIEWS_EVERY = dt.timedelta(hours=1)
# The share of an account's hourly budget the scheduled reads may plan for: the rest is left for
# passes of more than one page and for ``POST /comments/sync``.
HEADROOM = 0.9
HOUR = dt.timedelta(hours=1)


def interval(age: dt.timedelta) -> dt.timedelta | None:
    """How long after a sync of a post of this age the next one is due (None: on demand only)."""
    for younger_than, every in CADENCE:
        if age < younger_than:
            return every
    return None


def band_edges() -> tuple[dt.timedelta, ...]:
    """The ages where the interval changes (the upper edge of each of :data:`CADENCE`'s bands):
    what a caller counts its sources by for :func:`demand`."""
    return tuple(younger_than for younger_than, _ in CADENCE)


def demand(*, per_band: Sequence[int], reviews: int = 0, listings: int = 1) -> float:
    """Reads an hour (list calls, what the budget counts) an account's scheduled sources want at the
    unstretched cadence: ``per_band`` counts its entries in each of :data:`CADENCE`'s bands
    (youngest first), ``reviews`` its review feeds, ``listings`` the calls one read of a source
    makes at the least (the platform's ``comment_listings``). With one call a read, a young post
    wants 12 an hour, one in its first week 1, one to 30 days 1/24."""
    if len(per_band) != len(CADENCE):
        raise ValueError(f"expected {len(CADENCE)} band counts, got {len(per_band)}")
    if listings < 1:
        raise ValueError(f"a read makes one list call at the least, not {listings}")
    wanted = sum(count * (HOUR / every) for count, (_, every) in zip(per_band, CADENCE, strict=True))
    return (wanted + reviews * (HOUR / REVIEWS_EVERY)) * listings


def stretch(wanted: float, budget: int, *, share: float = HEADROOM) -> float:
    """The factor every interval of an account is multiplied by so that ``wanted`` reads an hour fit
    in ``share`` of its ``budget``: 1 when they fit already (nothing changes below the budget), or
    when there is no budget to plan for (the budget's own check refuses every read then)."""
    allowed = share * budget
    if allowed <= 0 or wanted <= allowed:
        return 1.0
    return wanted / allowed


def next_due(*, published_at: dt.datetime | None, synced_at: dt.datetime, factor: float = 1.0) -> dt.datetime | None:
    """When the sync after one at ``synced_at`` is due: one interval of the post's age later
    (times ``factor``, the account's :func:`stretch`), but never past the end of the scheduled
    period (its last read lands on it); None once the post is older than that. Reviews (no
    ``published_at``) every :data:`REVIEWS_EVERY` (times ``factor``)."""
    if published_at is None:
        return synced_at + REVIEWS_EVERY * factor
    every = interval(synced_at - published_at)
    if every is None:
        return None
    return min(synced_at + every * factor, published_at + dt.timedelta(days=SCHEDULED_DAYS))


def first_due(*, published_at: dt.datetime | None, now: dt.datetime) -> dt.datetime | None:
    """When a newly tracked entry is first read: one first interval after publishing (a post read
    the moment it is live has nothing yet), or now when that has passed; None for a post past its
    scheduled period (read on demand only)."""
    if published_at is None:
        return now
    if now - published_at >= dt.timedelta(days=SCHEDULED_DAYS):
        return None
    return max(published_at + CADENCE[0][1], now)
