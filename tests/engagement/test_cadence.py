"""The sync's cadence: every 5 minutes in a post's first day, hourly in its first week, daily to 30
days, then on demand only; reviews hourly."""

from __future__ import annotations

import datetime as dt

import pytest

from engagement import cadence

T0 = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("age", "every"),
    [
        (dt.timedelta(0), dt.timedelta(minutes=5)),
        (dt.timedelta(hours=23, minutes=59), dt.timedelta(minutes=5)),
        (dt.timedelta(days=1), dt.timedelta(hours=1)),
        (dt.timedelta(days=6, hours=23), dt.timedelta(hours=1)),
        (dt.timedelta(days=7), dt.timedelta(days=1)),
        (dt.timedelta(days=29), dt.timedelta(days=1)),
        (dt.timedelta(days=30), None),
        (dt.timedelta(days=400), None),
    ],
)
def test_the_interval_follows_the_posts_age(age: dt.timedelta, every: dt.timedelta | None) -> None:
    assert cadence.interval(age) == every


def test_the_next_sync_is_one_interval_later_and_the_last_lands_on_the_thirtieth_day() -> None:
    assert cadence.next_due(published_at=T0, synced_at=T0 + dt.timedelta(hours=2)) == T0 + dt.timedelta(
        hours=2, minutes=5
    )
    assert cadence.next_due(published_at=T0, synced_at=T0 + dt.timedelta(days=2)) == T0 + dt.timedelta(days=2, hours=1)
    late = T0 + dt.timedelta(days=29, hours=12)
    assert cadence.next_due(published_at=T0, synced_at=late) == T0 + dt.timedelta(days=30)
    assert cadence.next_due(published_at=T0, synced_at=T0 + dt.timedelta(days=30)) is None


def test_reviews_are_read_hourly() -> None:
    assert cadence.next_due(published_at=None, synced_at=T0) == T0 + dt.timedelta(hours=1)
    assert cadence.first_due(published_at=None, now=T0) == T0


def test_a_new_entry_is_first_read_one_interval_after_publishing_or_now() -> None:
    assert cadence.first_due(published_at=T0, now=T0 + dt.timedelta(minutes=1)) == T0 + dt.timedelta(minutes=5)
    assert cadence.first_due(published_at=T0, now=T0 + dt.timedelta(hours=3)) == T0 + dt.timedelta(hours=3)
    assert cadence.first_due(published_at=T0, now=T0 + dt.timedelta(days=31)) is None
