"""When a series' occurrences fall: python-dateutil ``rrule`` evaluated on the wall clock of the
series' time zone, then turned into instants.

- The first occurrence is the series' ``startsAt`` exactly; every later one keeps its local
  time of day, whatever the UTC offset that day (DST-correct).
- A local time that does not exist on a day (the hour skipped when clocks spring forward) moves
  forward to the first valid instant, which is the moment of the change (02:30 on the New York
  spring-forward day becomes 03:00 EDT). A local time that happens twice (clocks falling back)
  is the first of the two.
- WEEKLY: on ``weekdays`` plus the weekday of the first occurrence; weeks start on Monday, so an
  interval of 2 means every other Monday-to-Sunday week, counted from the first occurrence's.
- MONTHLY on the day of month of the first occurrence; in months without that day (the 29th,
  30th or 31st) the occurrence falls on the last day of the month instead of being skipped.
- ``endsOn`` is an inclusive local date; ``maxOccurrences`` counts the occurrences of the rule,
  the first one included (occurrences skipped while paused count too).
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal
from zoneinfo import ZoneInfo

from dateutil import rrule

WEEKDAYS = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")
_FREQUENCIES: dict[str, Literal[1, 2, 3]] = {"MONTHLY": rrule.MONTHLY, "WEEKLY": rrule.WEEKLY, "DAILY": rrule.DAILY}
# Shortest month: every day of month up to this one exists in every month.
_ALWAYS_PRESENT_DAY = 28


def to_instant(local: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    """The UTC instant of the naive wall-clock ``local`` in ``zone``: the first of two when the
    time happens twice, the first valid instant after it when it does not exist."""
    first = local.replace(tzinfo=zone, fold=0).astimezone(dt.UTC)
    if first.astimezone(zone).replace(tzinfo=None) == local:
        return first
    # In a gap the two folds give instants on either side of the change; find the change itself
    # (whole seconds: zone offsets change on whole seconds).
    second = local.replace(tzinfo=zone, fold=1).astimezone(dt.UTC)
    before, after = min(first, second), max(first, second)
    low, high = int(before.timestamp()), int(after.timestamp())
    while high - low > 1:
        middle = (low + high) // 2
        if dt.datetime.fromtimestamp(middle, zone).replace(tzinfo=None) >= local:
            high = middle
        else:
            low = middle
    return dt.datetime.fromtimestamp(high, dt.UTC)


def local_date(moment: dt.datetime, timezone_name: str) -> dt.date:
    return moment.astimezone(ZoneInfo(timezone_name)).date()


def effective_weekdays(
    frequency: str, weekdays: list[str] | tuple[str, ...], starts_at: dt.datetime, tz: str
) -> list[str]:
    """WEEKLY: the requested weekdays plus the first occurrence's, Monday first; else none."""
    if frequency != "WEEKLY":
        return []
    wanted = set(weekdays) | {WEEKDAYS[starts_at.astimezone(ZoneInfo(tz)).weekday()]}
    return [day for day in WEEKDAYS if day in wanted]


@dataclass(frozen=True)
class Rule:
    frequency: str
    interval: int
    weekdays: tuple[str, ...]
    starts_at: dt.datetime
    timezone: str
    ends_on: dt.date | None = None
    max_occurrences: int | None = None

    @classmethod
    def of(cls, series: Any) -> Rule:
        """The slots of a RecurringPost row (or anything with the same attributes). Its
        ``maxOccurrences`` is left out: it caps the occurrences the series makes (an occurrence
        deleted before it went out does not count), which the series' count tracks, not its slots."""
        return cls(
            frequency=series.frequency,
            interval=series.interval,
            weekdays=tuple(series.weekdays or ()),
            starts_at=series.starts_at,
            timezone=series.timezone,
            ends_on=series.ends_on,
        )

    def _rrule(self) -> rrule.rrule:
        zone = ZoneInfo(self.timezone)
        start = self.starts_at.astimezone(zone).replace(tzinfo=None, microsecond=0)
        options: dict[str, Any] = {"dtstart": start, "interval": self.interval, "wkst": rrule.MO}
        if self.frequency == "WEEKLY":
            days = effective_weekdays("WEEKLY", self.weekdays, self.starts_at, self.timezone)
            options["byweekday"] = [WEEKDAYS.index(day) for day in days]
        if self.frequency == "MONTHLY" and start.day > _ALWAYS_PRESENT_DAY:
            # The last of the days 28..D that the month has: D itself, or the month's last day.
            options["bymonthday"] = list(range(_ALWAYS_PRESENT_DAY, start.day + 1))
            options["bysetpos"] = -1
        if self.ends_on is not None:
            options["until"] = dt.datetime.combine(self.ends_on, dt.time(23, 59, 59))
        if self.max_occurrences is not None:
            options["count"] = self.max_occurrences
        return rrule.rrule(_FREQUENCIES[self.frequency], **options)

    def instants(self) -> Iterator[dt.datetime]:
        """Every occurrence in order (possibly endless), as UTC instants; the first is
        ``starts_at`` itself. The rule ends where a datetime does (year 9999)."""
        zone = ZoneInfo(self.timezone)
        micro = self.starts_at.microsecond
        yield self.starts_at.astimezone(dt.UTC)
        later = itertools.islice(self._rrule(), 1, None)
        while True:
            try:
                yield to_instant(next(later).replace(microsecond=micro), zone)
            except StopIteration:
                return
            except (OverflowError, ValueError):  # "year 10000 is out of range", locally or in UTC
                return

    def upcoming(self, moment: dt.datetime, *, limit: int, inclusive: bool = False) -> list[dt.datetime]:
        """The first ``limit`` occurrences after ``moment`` (at or after it when ``inclusive``)."""
        later = (i for i in self.instants() if i > moment or (inclusive and i == moment))
        return list(itertools.islice(later, limit))

    def next_after(self, moment: dt.datetime) -> dt.datetime | None:
        """The first occurrence strictly after ``moment``, or None when the rule has ended."""
        found = self.upcoming(moment, limit=1)
        return found[0] if found else None
