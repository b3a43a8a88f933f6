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


def test_the_demand_counts_each_source_at_its_bands_pace() -> None:
    assert cadence.band_edges() == (dt.timedelta(days=1), dt.timedelta(days=7), dt.timedelta(days=30))
    assert cadence.demand(per_band=[50, 0, 0]) == 600  # 50 young posts: every 5 minutes each
    assert cadence.demand(per_band=[1, 2, 24], reviews=1) == 12 + 2 + 1 + 1
    assert cadence.demand(per_band=[0, 0, 0]) == 0
    # A read of two list calls (YouTube: published, then held for review) spends two of the budget.
    assert cadence.demand(per_band=[50, 0, 0], reviews=1, listings=2) == 2 * (600 + 1)
    with pytest.raises(ValueError):
        cadence.demand(per_band=[1, 2])
    with pytest.raises(ValueError):
        cadence.demand(per_band=[1, 0, 0], listings=0)


def test_below_the_budget_nothing_stretches() -> None:
    assert cadence.stretch(12, 120) == 1.0
    assert cadence.stretch(108, 120) == 1.0  # exactly the headroom's share
    assert cadence.stretch(0, 0) == 1.0  # no budget at all: the budget's own check refuses reads


def test_above_the_budget_every_interval_stretches_to_fit_the_headroom_share() -> None:
    factor = cadence.stretch(600, 120)  # 50 young posts on a 120-reads/h platform
    assert factor == pytest.approx(600 / 108)
    young = cadence.next_due(published_at=T0, synced_at=T0 + dt.timedelta(hours=1), factor=factor)
    assert young == T0 + dt.timedelta(hours=1) + dt.timedelta(minutes=5) * factor
    # 50 sources, each read once per stretched interval: the headroom's share of the budget an hour.
    assert 50 * (dt.timedelta(hours=1) / (dt.timedelta(minutes=5) * factor)) == pytest.approx(0.9 * 120)
    assert cadence.next_due(published_at=None, synced_at=T0, factor=2.0) == T0 + dt.timedelta(hours=2)
    # The last read still lands on the thirtieth day, however stretched.
    late = T0 + dt.timedelta(days=29, hours=12)
    assert cadence.next_due(published_at=T0, synced_at=late, factor=3.0) == T0 + dt.timedelta(days=30)
