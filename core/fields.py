"""Serializer fields shared across apps."""

from __future__ import annotations

import datetime as dt
import functools
import zoneinfo
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers


def choice(values: list[str], **kwargs: Any) -> serializers.ChoiceField:
    """A choice field whose OpenAPI enum stays inline (nested in ``allOf``), so that no shared enum
    component is made from it whose name would collide with another field's of the same name."""
    field_class = extend_schema_field({"type": "string", "allOf": [{"enum": list(values)}]})(
        type("InlineChoiceField", (serializers.ChoiceField,), {})
    )
    return field_class(choices=values, **kwargs)  # type: ignore[no-any-return]


def format_instant(value: dt.datetime | None) -> str | None:
    """The one way the API writes an instant, in every response body and event body: ISO 8601 in
    UTC, always with milliseconds, and ``Z`` (``2026-01-01T10:00:00.000Z``, as the published
    clients' examples). ``posts.selectors`` writes the same in SQL."""
    if value is None:
        return None
    return value.astimezone(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class InstantJSONEncoder(DjangoJSONEncoder):
    """Django's encoder, with every datetime written by :func:`format_instant`."""

    def default(self, o: Any) -> Any:
        if isinstance(o, dt.datetime):
            return format_instant(o)
        return super().default(o)


@extend_schema_field(OpenApiTypes.DATETIME)
class InstantField(serializers.Field):
    """An instant: a full ISO 8601 date-time (naive means UTC) or a bare date (midnight UTC).
    Rendered in UTC with ``Z``."""

    default_error_messages = {"invalid": "must be an ISO 8601 date-time or a date (YYYY-MM-DD)"}
    json_type = "string"  # core.serializers: anything but a string is refused below

    def to_internal_value(self, data: Any) -> dt.datetime:
        if not isinstance(data, str) or not data.strip():
            self.fail("invalid")
        text = data.strip()
        try:
            parsed = parse_datetime(text.replace(" ", "+") if "T" in text else text)
        except ValueError:
            parsed = None
        if parsed is None:
            try:
                day = parse_date(text)
            except ValueError:
                day = None
            if day is None:
                self.fail("invalid")
            parsed = dt.datetime.combine(day, dt.time.min)
        if timezone.is_naive(parsed):
            parsed = parsed.replace(tzinfo=dt.UTC)
        try:
            return parsed.astimezone(dt.UTC)
        except (OverflowError, ValueError):
            self.fail("invalid")
            raise  # unreachable

    def to_representation(self, value: dt.datetime) -> str | None:
        return format_instant(value)


TIME_ZONE_COMPONENT = "TimeZone"


@functools.cache
def time_zone_names() -> frozenset[str]:
    """The IANA names of this machine's tz database: what ``zoneinfo`` can load, and all that is
    documented (the ``TimeZone`` enum of the OpenAPI description)."""
    return frozenset(zoneinfo.available_timezones())


@extend_schema_field({"$ref": f"#/components/schemas/{TIME_ZONE_COMPONENT}"})
class TimeZoneField(serializers.CharField):
    """An IANA time zone name such as ``Europe/Paris``, exactly as the tz database spells it."""

    default_error_messages = {"unknown": "must be an IANA time zone name such as Europe/Paris"}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", 64)
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if value not in time_zone_names():
            self.fail("unknown")
        return value


class UntrimmedTextField(serializers.CharField):
    """Text kept exactly as sent (no trimming) that must still hold more than whitespace; its
    OpenAPI pattern says so (``core.schema``)."""

    default_error_messages = {"blank_text": "must not be blank"}

    def __init__(self, **kwargs: Any) -> None:
        kwargs["trim_whitespace"] = False
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if not self.allow_blank and not value.strip():
            self.fail("blank_text")
        return value
