"""The ``recurrence`` object of POST /social-posts (CONTRACT.md §6). Rules that need the rest of
the payload (saveAsDraft, scheduledAt, platforms, endsOn against the first post) are checked when
the series starts (``posts.recurrence.services.series_start``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core import serializers as strict
from core.fields import choice
from posts.recurrence.rules import WEEKDAYS

RECURRENCE_DESCRIPTION = (
    "Makes the post the first occurrence of a recurring series (needs a future `scheduledAt`; not with "
    "`saveAsDraft`; not with TIKTOK). The first `scheduledAt` fixes the time of day on the wall clock of "
    "`timezone`, kept across DST changes; a time that does not exist on a day (clocks springing forward) "
    "moves to the first valid instant after it, a time that happens twice is the first of the two. "
    "WEEKLY weeks start on Monday and always include the weekday of `scheduledAt`. MONTHLY repeats the day "
    "of month of `scheduledAt`; in months without that day (29th, 30th, 31st) the post goes out on the "
    "month's last day. `endsOn` (inclusive, a date in `timezone`) and `maxOccurrences` (the first post "
    "included; an occurrence whose post is deleted before it goes out, by a pause or a DELETE, does not "
    "count) are exclusive of each other. Only the next occurrence exists, as a SCHEDULED post."
)


class RecurrenceInput(strict.Serializer):
    frequency = choice(["DAILY", "WEEKLY", "MONTHLY"], help_text="DAILY, WEEKLY or MONTHLY.")
    interval = serializers.IntegerField(
        min_value=1, max_value=30, default=1, help_text="Every how many days, weeks or months (1 to 30, default 1)."
    )
    weekdays = serializers.ListField(
        child=choice(list(WEEKDAYS)),
        required=False,
        max_length=7,
        help_text="WEEKLY only; the weekday of scheduledAt is always included",
    )
    endsOn = serializers.DateField(required=False, allow_null=True, help_text="Inclusive, in the post's timezone")
    maxOccurrences = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=2,
        max_value=365,
        help_text="Stop after this many occurrences (2 to 365).",
    )

    class Meta:
        ref_name = "RecurrenceInput"

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("weekdays") and attrs["frequency"] != "WEEKLY":
            raise serializers.ValidationError({"weekdays": "only with frequency WEEKLY"})
        if attrs.get("endsOn") is not None and attrs.get("maxOccurrences") is not None:
            raise serializers.ValidationError({"endsOn": "give endsOn or maxOccurrences, not both"})
        return attrs
