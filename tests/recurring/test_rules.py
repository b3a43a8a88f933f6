"""The rule alone: wall-clock time kept across both DST changes in three zones (northern and
southern hemisphere), skipped and repeated local times, month ends, leap days, the 29th/30th/31st
of the month, weekly with several weekdays, intervals, endsOn and maxOccurrences."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from posts.recurrence.rules import Rule, effective_weekdays, to_instant


def utc(*parts: int) -> dt.datetime:
    return dt.datetime(*parts, tzinfo=dt.UTC)


def local(zone: str, *parts: int) -> dt.datetime:
    return dt.datetime(*parts, tzinfo=ZoneInfo(zone)).astimezone(dt.UTC)


def first(rule: Rule, n: int) -> list[dt.datetime]:
    return rule.upcoming(rule.starts_at, limit=n, inclusive=True)


def daily(zone: str, start: dt.datetime, **kwargs: object) -> Rule:
    return Rule(frequency="DAILY", interval=1, weekdays=(), starts_at=start, timezone=zone, **kwargs)  # type: ignore[arg-type]


def test_new_york_keeps_nine_oclock_across_both_dst_changes() -> None:
    spring = first(daily("America/New_York", local("America/New_York", 2026, 3, 7, 9)), 3)
    assert spring == [utc(2026, 3, 7, 14), utc(2026, 3, 8, 13), utc(2026, 3, 9, 13)]
    autumn = first(daily("America/New_York", local("America/New_York", 2026, 10, 31, 9)), 3)
    assert autumn == [utc(2026, 10, 31, 13), utc(2026, 11, 1, 14), utc(2026, 11, 2, 14)]


def test_berlin_weekly_on_sunday_across_both_dst_changes() -> None:
    zone = "Europe/Berlin"
    spring = Rule("WEEKLY", 1, ("SUNDAY",), local(zone, 2026, 3, 22, 10), zone)
    assert first(spring, 3) == [utc(2026, 3, 22, 9), utc(2026, 3, 29, 8), utc(2026, 4, 5, 8)]
    autumn = Rule("WEEKLY", 1, ("SUNDAY",), local(zone, 2026, 10, 18, 10), zone)
    assert first(autumn, 3) == [utc(2026, 10, 18, 8), utc(2026, 10, 25, 9), utc(2026, 11, 1, 9)]


def test_sydney_southern_hemisphere_both_changes() -> None:
    zone = "Australia/Sydney"
    # DST ends on 5 April 2026 (+11 → +10) and starts on 4 October 2026 (+10 → +11).
    april = first(daily(zone, local(zone, 2026, 4, 4, 9)), 3)
    assert april == [utc(2026, 4, 3, 22), utc(2026, 4, 4, 23), utc(2026, 4, 5, 23)]
    october = first(daily(zone, local(zone, 2026, 10, 3, 9)), 3)
    assert october == [utc(2026, 10, 2, 23), utc(2026, 10, 3, 22), utc(2026, 10, 4, 22)]


@pytest.mark.parametrize(
    ("zone", "start", "moved"),
    [
        # 02:30 does not exist on the spring-forward day: the first valid instant is the change itself.
        ("America/New_York", (2026, 3, 7, 2, 30), utc(2026, 3, 8, 7)),  # 03:00 EDT
        ("Europe/Berlin", (2026, 3, 28, 2, 30), utc(2026, 3, 29, 1)),  # 03:00 CEST
        ("Australia/Sydney", (2026, 10, 3, 2, 30), utc(2026, 10, 3, 16)),  # 03:00 AEDT
    ],
)
def test_a_skipped_local_time_moves_to_the_first_valid_instant(zone: str, start: tuple, moved: dt.datetime) -> None:
    occurrences = first(daily(zone, local(zone, *start)), 3)
    assert occurrences[1] == moved
    assert occurrences[1].astimezone(ZoneInfo(zone)).time() == dt.time(3, 0)
    # The day after, the wall-clock time is 02:30 again.
    assert occurrences[2].astimezone(ZoneInfo(zone)).time() == dt.time(2, 30)


def test_a_repeated_local_time_is_the_first_of_the_two() -> None:
    zone = "America/New_York"
    occurrences = first(daily(zone, local(zone, 2026, 10, 31, 1, 30)), 3)
    assert occurrences == [utc(2026, 10, 31, 5, 30), utc(2026, 11, 1, 5, 30), utc(2026, 11, 2, 6, 30)]


def test_to_instant_of_existing_and_missing_times() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    assert to_instant(dt.datetime(2026, 7, 1, 12), berlin) == utc(2026, 7, 1, 10)
    assert to_instant(dt.datetime(2026, 3, 29, 2, 0), berlin) == utc(2026, 3, 29, 1)
    assert to_instant(dt.datetime(2026, 3, 29, 2, 59, 59), berlin) == utc(2026, 3, 29, 1)


def test_monthly_on_the_31st_falls_on_the_last_day_of_shorter_months() -> None:
    rule = Rule("MONTHLY", 1, (), utc(2026, 1, 31, 10), "UTC")
    days = [o.date() for o in first(rule, 7)]
    assert days == [
        dt.date(2026, 1, 31),
        dt.date(2026, 2, 28),
        dt.date(2026, 3, 31),
        dt.date(2026, 4, 30),
        dt.date(2026, 5, 31),
        dt.date(2026, 6, 30),
        dt.date(2026, 7, 31),
    ]


def test_monthly_on_the_31st_in_a_leap_year_uses_february_29() -> None:
    rule = Rule("MONTHLY", 1, (), utc(2028, 1, 31, 10), "UTC")
    assert [o.date() for o in first(rule, 3)] == [dt.date(2028, 1, 31), dt.date(2028, 2, 29), dt.date(2028, 3, 31)]


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        (dt.date(2027, 1, 29), [dt.date(2027, 1, 29), dt.date(2027, 2, 28), dt.date(2027, 3, 29)]),
        (dt.date(2028, 1, 29), [dt.date(2028, 1, 29), dt.date(2028, 2, 29), dt.date(2028, 3, 29)]),
        (dt.date(2026, 1, 30), [dt.date(2026, 1, 30), dt.date(2026, 2, 28), dt.date(2026, 3, 30)]),
        (dt.date(2026, 4, 30), [dt.date(2026, 4, 30), dt.date(2026, 5, 30), dt.date(2026, 6, 30)]),
        (dt.date(2026, 1, 15), [dt.date(2026, 1, 15), dt.date(2026, 2, 15), dt.date(2026, 3, 15)]),
    ],
)
def test_monthly_late_days(start: dt.date, expected: list[dt.date]) -> None:
    rule = Rule("MONTHLY", 1, (), dt.datetime.combine(start, dt.time(8), dt.UTC), "UTC")
    assert [o.date() for o in first(rule, 3)] == expected


def test_yearly_via_monthly_interval_12_from_a_leap_day() -> None:
    rule = Rule("MONTHLY", 12, (), utc(2028, 2, 29, 8), "UTC")
    days = [o.date() for o in first(rule, 5)]
    assert days == [
        dt.date(2028, 2, 29),
        dt.date(2029, 2, 28),
        dt.date(2030, 2, 28),
        dt.date(2031, 2, 28),
        dt.date(2032, 2, 29),
    ]


def test_daily_across_a_leap_day_and_month_ends() -> None:
    rule = daily("UTC", utc(2028, 2, 27, 6))
    assert [o.date() for o in first(rule, 4)] == [
        dt.date(2028, 2, 27),
        dt.date(2028, 2, 28),
        dt.date(2028, 2, 29),
        dt.date(2028, 3, 1),
    ]
    every_third = Rule("DAILY", 3, (), utc(2026, 12, 30, 6), "UTC")
    assert [o.date() for o in first(every_third, 3)] == [
        dt.date(2026, 12, 30),
        dt.date(2027, 1, 2),
        dt.date(2027, 1, 5),
    ]


def test_monthly_keeps_local_time_across_dst_and_month_end() -> None:
    zone = "Europe/Berlin"
    rule = Rule("MONTHLY", 1, (), local(zone, 2026, 1, 31, 10), zone)
    assert first(rule, 4) == [utc(2026, 1, 31, 9), utc(2026, 2, 28, 9), utc(2026, 3, 31, 8), utc(2026, 4, 30, 8)]


def test_weekly_several_weekdays_and_interval_two() -> None:
    # Starts on Wednesday 7 January 2026; Monday and Friday asked for; every other week.
    rule = Rule("WEEKLY", 2, ("MONDAY", "FRIDAY"), utc(2026, 1, 7, 10), "UTC")
    assert [o.date() for o in first(rule, 6)] == [
        dt.date(2026, 1, 7),
        dt.date(2026, 1, 9),
        dt.date(2026, 1, 19),
        dt.date(2026, 1, 21),
        dt.date(2026, 1, 23),
        dt.date(2026, 2, 2),
    ]


def test_weekly_always_includes_the_first_weekday() -> None:
    start = utc(2026, 1, 7, 10)  # a Wednesday
    assert effective_weekdays("WEEKLY", ["FRIDAY", "MONDAY"], start, "UTC") == ["MONDAY", "WEDNESDAY", "FRIDAY"]
    assert effective_weekdays("WEEKLY", [], start, "UTC") == ["WEDNESDAY"]
    # The weekday is the local one: 23:30 UTC on Wednesday is Thursday in Berlin.
    assert effective_weekdays("WEEKLY", [], utc(2026, 1, 7, 23, 30), "Europe/Berlin") == ["THURSDAY"]
    assert effective_weekdays("DAILY", ["MONDAY"], start, "UTC") == []


def test_ends_on_is_an_inclusive_local_date() -> None:
    zone = "America/New_York"
    rule = daily(zone, local(zone, 2026, 3, 8, 23, 30), ends_on=dt.date(2026, 3, 10))
    assert list(rule.instants()) == [utc(2026, 3, 9, 3, 30), utc(2026, 3, 10, 3, 30), utc(2026, 3, 11, 3, 30)]
    assert rule.next_after(utc(2026, 3, 11, 3, 30)) is None


def test_max_occurrences_counts_the_first() -> None:
    rule = daily("UTC", utc(2026, 5, 1, 6), max_occurrences=3)
    assert len(list(rule.instants())) == 3
    assert rule.next_after(utc(2026, 5, 3, 6)) is None
    assert rule.next_after(utc(2026, 5, 2, 6)) == utc(2026, 5, 3, 6)


def test_the_first_occurrence_is_the_start_exactly() -> None:
    start = dt.datetime(2026, 5, 1, 6, 0, 0, 250000, tzinfo=dt.UTC)
    rule = daily("UTC", start)
    assert first(rule, 2) == [start, start + dt.timedelta(days=1)]
    assert rule.next_after(start) == start + dt.timedelta(days=1)
