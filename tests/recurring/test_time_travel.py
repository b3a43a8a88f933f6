"""Series walked through time (time-machine) occurrence by occurrence: the clock travels to each
occurrence, the real dispatcher claims it, finalize records it published, and the next occurrence
must appear as the only SCHEDULED post of the series, at the expected wall-clock time. Covers
both DST changes in three zones (two northern, one southern), month ends, leap days, rules on
the 29th/30th/31st, weekly with several weekdays, and intervals above 1."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import time_machine

from posts.models import Post, PostStatus, RecurringPost, TargetStatus
from tests.recurring.conftest import SERIES, claim_at, finish, iso, scheduled_events, start, upcoming


def wall(zone: str, *parts: int) -> dt.datetime:
    """The instant of a wall-clock time in ``zone``."""
    return dt.datetime(*parts, tzinfo=ZoneInfo(zone)).astimezone(dt.UTC)


def walk(series: RecurringPost, steps: int) -> list[dt.datetime]:
    """The occurrence times of the series' first ``steps`` occurrences, each published through the
    real dispatcher and finalize with the clock at its time; after each claim exactly one SCHEDULED
    post (the next occurrence) must exist."""
    seen = []
    for _ in range(steps):
        [post] = upcoming(series)
        assert post.scheduled_at == post.occurrence_at and post.recurring_post_id == series.id
        seen.append(post.occurrence_at)
        assert claim_at(post.occurrence_at) == 1
        post.refresh_from_db()
        assert post.status == PostStatus.PENDING
        finish(post, TargetStatus.PUBLISHED)
        assert Post.objects.get(id=post.id).status == PostStatus.COMPLETED
    return seen


CASES: dict[str, tuple[str, tuple[int, ...], dict[str, Any], list[tuple[int, ...]]]] = {
    # zone, first occurrence (local), rule, expected occurrences (local, including the first)
    "new-york-spring-forward": (
        "America/New_York",
        (2026, 3, 6, 9),
        {"frequency": "DAILY"},
        [(2026, 3, 6, 9), (2026, 3, 7, 9), (2026, 3, 8, 9), (2026, 3, 9, 9)],
    ),
    "new-york-fall-back": (
        "America/New_York",
        (2026, 10, 30, 9),
        {"frequency": "DAILY"},
        [(2026, 10, 30, 9), (2026, 10, 31, 9), (2026, 11, 1, 9), (2026, 11, 2, 9)],
    ),
    "berlin-spring-forward-weekly-two-weekdays": (
        "Europe/Berlin",
        (2026, 3, 22, 10),  # a Sunday
        {"frequency": "WEEKLY", "weekdays": ["WEDNESDAY"]},
        [(2026, 3, 22, 10), (2026, 3, 25, 10), (2026, 3, 29, 10), (2026, 4, 1, 10)],
    ),
    "berlin-fall-back-weekly-two-weekdays": (
        "Europe/Berlin",
        (2026, 10, 18, 10),  # a Sunday
        {"frequency": "WEEKLY", "weekdays": ["WEDNESDAY"]},
        [(2026, 10, 18, 10), (2026, 10, 21, 10), (2026, 10, 25, 10), (2026, 10, 28, 10)],
    ),
    "sydney-dst-ends-in-april": (
        "Australia/Sydney",
        (2026, 4, 3, 18, 15),
        {"frequency": "DAILY"},
        [(2026, 4, 3, 18, 15), (2026, 4, 4, 18, 15), (2026, 4, 5, 18, 15), (2026, 4, 6, 18, 15)],
    ),
    "sydney-dst-starts-in-october": (
        "Australia/Sydney",
        (2026, 10, 2, 18, 15),
        {"frequency": "DAILY"},
        [(2026, 10, 2, 18, 15), (2026, 10, 3, 18, 15), (2026, 10, 4, 18, 15), (2026, 10, 5, 18, 15)],
    ),
    "month-end-and-year-end-daily-interval-3": (
        "UTC",
        (2026, 12, 27, 7),
        {"frequency": "DAILY", "interval": 3},
        [(2026, 12, 27, 7), (2026, 12, 30, 7), (2027, 1, 2, 7), (2027, 1, 5, 7)],
    ),
    "leap-day-daily": (
        "UTC",
        (2028, 2, 27, 23, 30),
        {"frequency": "DAILY"},
        [(2028, 2, 27, 23, 30), (2028, 2, 28, 23, 30), (2028, 2, 29, 23, 30), (2028, 3, 1, 23, 30)],
    ),
    "leap-day-monthly-on-the-29th": (
        "Europe/Berlin",
        (2028, 1, 29, 12),
        {"frequency": "MONTHLY"},
        [(2028, 1, 29, 12), (2028, 2, 29, 12), (2028, 3, 29, 12), (2028, 4, 29, 12)],
    ),
    "monthly-on-the-29th-outside-a-leap-year": (
        "UTC",
        (2027, 1, 29, 12),
        {"frequency": "MONTHLY"},
        [(2027, 1, 29, 12), (2027, 2, 28, 12), (2027, 3, 29, 12)],
    ),
    "leap-day-yearly-as-monthly-interval-12": (
        "UTC",
        (2028, 2, 29, 8),
        {"frequency": "MONTHLY", "interval": 12},
        [(2028, 2, 29, 8), (2029, 2, 28, 8), (2030, 2, 28, 8), (2031, 2, 28, 8), (2032, 2, 29, 8)],
    ),
    "monthly-on-the-31st-across-dst-in-berlin": (
        "Europe/Berlin",
        (2026, 1, 31, 10),
        {"frequency": "MONTHLY"},
        [(2026, 1, 31, 10), (2026, 2, 28, 10), (2026, 3, 31, 10), (2026, 4, 30, 10), (2026, 5, 31, 10)],
    ),
    "monthly-on-the-30th-in-new-york": (
        "America/New_York",
        (2026, 1, 30, 17),
        {"frequency": "MONTHLY"},
        [(2026, 1, 30, 17), (2026, 2, 28, 17), (2026, 3, 30, 17), (2026, 4, 30, 17)],
    ),
    "monthly-every-other-month-on-the-31st": (
        "UTC",
        (2026, 7, 31, 6),
        {"frequency": "MONTHLY", "interval": 2},
        [(2026, 7, 31, 6), (2026, 9, 30, 6), (2026, 11, 30, 6), (2027, 1, 31, 6), (2027, 3, 31, 6)],
    ),
    "weekly-three-weekdays-every-other-week": (
        "America/New_York",
        (2026, 1, 7, 8),  # a Wednesday
        {"frequency": "WEEKLY", "interval": 2, "weekdays": ["MONDAY", "FRIDAY"]},
        [(2026, 1, 7, 8), (2026, 1, 9, 8), (2026, 1, 19, 8), (2026, 1, 21, 8), (2026, 1, 23, 8), (2026, 2, 2, 8)],
    ),
    "weekly-several-weekdays-across-a-month-end": (
        "UTC",
        (2026, 1, 29, 12),  # a Thursday
        {"frequency": "WEEKLY", "weekdays": ["SATURDAY", "TUESDAY"]},
        [(2026, 1, 29, 12), (2026, 1, 31, 12), (2026, 2, 3, 12), (2026, 2, 5, 12)],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_series_walked_through_time(api: Any, workspace: Any, masto: Any, case: str) -> None:
    zone, first_local, rule, expected_local = CASES[case]
    first = wall(zone, *first_local)
    series = start_before(api, masto, first, rule, zone)
    expected = [wall(zone, *parts) for parts in expected_local]

    assert walk(series, len(expected)) == expected
    # The wall clock kept its time of day, whatever the UTC offset did.
    local_times = {moment.astimezone(ZoneInfo(zone)).time() for moment in expected}
    assert local_times == {dt.time(*first_local[3:])}
    if "dst" in case or "spring" in case or "fall" in case:
        offsets = {moment.astimezone(ZoneInfo(zone)).utcoffset() for moment in expected}
        assert len(offsets) == 2, "the case must cross a DST change"

    # The occurrence after the walk is the one SCHEDULED post; one post.scheduled per occurrence.
    series.refresh_from_db()
    [following] = upcoming(series)
    assert series.status == "ACTIVE" and series.next_occurrence_at == following.occurrence_at
    assert series.occurrence_count == len(expected) + 1
    scheduled = [event["occurrenceAt"] for event in scheduled_events(workspace.id)]
    assert scheduled == [iso(moment) for moment in [*expected, following.occurrence_at]]
    # The preview agrees with what the dispatcher produced.
    with time_machine.travel(expected[-1], tick=False):
        preview = api.get(f"{SERIES}/{series.id}/occurrences", {"limit": 1}).json()
    assert preview == {"occurrences": [iso(following.occurrence_at)]}


def start_before(api: Any, masto: Any, first: dt.datetime, rule: dict[str, Any], zone: str) -> RecurringPost:
    with time_machine.travel(first - dt.timedelta(days=1), tick=False):
        return start(api, masto, first, rule, timezone=zone)


@pytest.mark.parametrize(
    ("zone", "first_local", "gap_instant"),
    [
        ("America/New_York", (2026, 3, 7, 2, 30), dt.datetime(2026, 3, 8, 7, tzinfo=dt.UTC)),
        ("Europe/Berlin", (2026, 3, 28, 2, 30), dt.datetime(2026, 3, 29, 1, tzinfo=dt.UTC)),
    ],
)
def test_spring_forward_gap_through_the_dispatcher(
    api: Any, masto: Any, zone: str, first_local: tuple[int, ...], gap_instant: dt.datetime
) -> None:
    """A daily time that does not exist on the spring-forward day goes out at the change itself,
    and on its own wall-clock time again the day after."""
    series = start_before(api, masto, wall(zone, *first_local), {"frequency": "DAILY"}, zone)
    seen = walk(series, 3)
    assert seen[1] == gap_instant
    assert seen[1].astimezone(ZoneInfo(zone)).time() == dt.time(3, 0)
    assert seen[2] == wall(zone, *first_local[:2], first_local[2] + 2, 2, 30)


def test_maximum_occurrences_walked_to_the_end(api: Any, masto: Any) -> None:
    zone = "Europe/Berlin"
    first = wall(zone, 2026, 10, 23, 10)
    series = start_before(api, masto, first, {"frequency": "DAILY", "interval": 2, "maxOccurrences": 3}, zone)
    seen = walk(series, 3)
    assert seen == [first, wall(zone, 2026, 10, 25, 10), wall(zone, 2026, 10, 27, 10)]
    series.refresh_from_db()
    assert (series.status, series.next_occurrence_at, series.occurrence_count) == ("ENDED", None, 3)
    assert upcoming(series) == []
    assert Post.objects.filter(recurring_post=series, status=PostStatus.COMPLETED).count() == 3
