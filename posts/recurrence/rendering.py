"""The recurring post record of CONTRACT.md §6, rendered from the row alone (no query). Declared
once (:class:`core.records.Record`): the same declaration renders the body and gives the OpenAPI
description its ``RecurringPostOutput``."""

from __future__ import annotations

import datetime as dt
from typing import Any

from rest_framework import serializers

from core.fields import choice
from core.records import Key, Record, column, id_text, instant, listed, text_or_none
from platforms.base import Platform
from posts.models import Frequency, PauseReason, RecurringPost, RecurringStatus
from posts.recurrence.rules import WEEKDAYS, Rule
from posts.rendering import ENTRY_CONFIG, ENTRY_MEDIA_FIT

_PLATFORMS = [platform.value for platform in Platform]
_NO_CONFIG = Record({})

# A platform of the series' template: these keys, then its platform's config values (named and
# read as in a post's platform entries).
TEMPLATE_PLATFORM = Record(
    {
        "platform": Key(
            choice(_PLATFORMS, help_text="A platform each occurrence is published on."), column("platform")
        ),
        "connectionId": Key(
            serializers.CharField(allow_null=True, help_text="The account published to."), column("accountId")
        ),
        "pageId": Key(
            serializers.CharField(allow_null=True, help_text="FACEBOOK: the page's id on Facebook; else null."),
            text_or_none("pageId"),
        ),
        "accountName": Key(serializers.CharField(help_text="The account's display name."), column("accountName")),
        "text": Key(serializers.CharField(help_text="The text this platform gets"), column("text")),
    }
)
# A platform of the template with mediaFit auto only: ``mediaFit`` as on a post's entries (each
# occurrence's entry fits, and lists its variants in ``mediaVariants``).
TEMPLATE_MEDIA_FIT = Record({"mediaFit": ENTRY_MEDIA_FIT.keys["mediaFit"]})
RecurringPlatformOutput = TEMPLATE_PLATFORM.serializer(
    "RecurringPlatformOutput", *ENTRY_CONFIG.values(), TEMPLATE_MEDIA_FIT
)


def _template_platform(target: dict[str, Any]) -> dict[str, Any]:
    platform = str(target.get("platform") or "")
    row = {
        "platform": platform,
        "accountId": target.get("accountId"),
        "pageId": target.get("pageId"),
        "accountName": target.get("accountName") or "",
        "text": target.get("text") or "",
        "config": target.get("config"),
    }
    return {
        **TEMPLATE_PLATFORM.render(row),
        **ENTRY_CONFIG.get(platform, _NO_CONFIG).render(row),
        **(TEMPLATE_MEDIA_FIT.render(row) if target.get("mediaFit") == "auto" else {}),
    }


def _ends_on(row: dict[str, Any]) -> str | None:
    return row["ends_on"].isoformat() if row["ends_on"] else None


# The series record: the columns of the row, and its template's values under ``template_*``.
SERIES = Record(
    {
        "id": Key(serializers.CharField(help_text="The series' id."), column("id")),
        "status": Key(choice(RecurringStatus.values, help_text="ACTIVE, PAUSED or ENDED."), column("status")),
        "pauseReason": Key(
            choice(
                PauseReason.values,
                allow_null=True,
                help_text="Why a PAUSED series was paused (null when active or paused by a caller).",
            ),
            text_or_none("pause_reason"),
        ),
        "lastError": Key(
            serializers.CharField(allow_null=True, help_text="The latest failure of an occurrence, or why it paused"),
            text_or_none("last_error"),
        ),
        "frequency": Key(choice(Frequency.values, help_text="How often it repeats."), column("frequency")),
        "interval": Key(serializers.IntegerField(help_text="Every how many `frequency` units."), column("interval")),
        "weekdays": Key(
            serializers.ListField(child=choice(list(WEEKDAYS)), help_text="WEEKLY: every weekday it runs on"),
            listed("weekdays"),
        ),
        "startsAt": Key(serializers.DateTimeField(help_text="The first occurrence"), instant("starts_at")),
        "timezone": Key(
            serializers.CharField(help_text="The IANA time zone its occurrences are computed in."), column("timezone")
        ),
        "endsOn": Key(
            serializers.DateField(allow_null=True, help_text="The last day an occurrence may fall on, if any."),
            _ends_on,
        ),
        "maxOccurrences": Key(
            serializers.IntegerField(allow_null=True, help_text="How many occurrences at most, if limited."),
            column("max_occurrences"),
        ),
        "nextOccurrenceAt": Key(
            serializers.DateTimeField(
                allow_null=True,
                help_text="The next occurrence not created yet: the slot after the upcoming scheduled post (which "
                "holds the one before it, its occurrenceAt). null unless ACTIVE, and when the series will make no "
                "more (its endsOn or maxOccurrences reached)",
            ),
            instant("next_not_created"),
        ),
        "occurrenceCount": Key(
            serializers.IntegerField(
                help_text="Occurrences made so far, the first included; an occurrence whose post was deleted before "
                "it went out (by a pause, or a DELETE of the post) does not count, here nor toward maxOccurrences"
            ),
            column("occurrence_count"),
        ),
        "userId": Key(
            serializers.CharField(
                allow_null=True, help_text="The member who created the series; null when its key has no member"
            ),
            id_text("created_by_id"),
        ),
        "contentType": Key(
            serializers.CharField(help_text="Each occurrence's content type."), column("template_content_type")
        ),
        "text": Key(serializers.CharField(help_text="Each occurrence's text."), column("template_text")),
        "mediaUrls": Key(
            serializers.ListField(child=serializers.CharField(), help_text="Each occurrence's media."),
            listed("template_media_urls"),
        ),
        "mediaAltTexts": Key(
            serializers.ListField(child=serializers.CharField(), help_text="Alternative text per medium."),
            listed("template_media_alt_texts"),
        ),
        "thumbnailUrl": Key(
            serializers.CharField(allow_null=True, help_text="A video's cover image, if any."),
            text_or_none("template_thumbnail_url"),
        ),
        "platformTypes": Key(
            serializers.ListField(child=choice(_PLATFORMS), help_text="The platforms each occurrence is published on."),
            column("template_platform_types"),
        ),
        "platforms": Key(
            RecurringPlatformOutput(many=True, help_text="The accounts each occurrence is published to."),
            column("template_platforms"),
        ),
        "createdAt": Key(serializers.DateTimeField(help_text="When the series was created."), instant("created_at")),
        "updatedAt": Key(serializers.DateTimeField(help_text="When the series last changed."), instant("updated_at")),
    }
)
RecurringPostOutput = SERIES.serializer("RecurringPostOutput")

_COLUMNS = (
    "id",
    "status",
    "pause_reason",
    "last_error",
    "frequency",
    "interval",
    "weekdays",
    "starts_at",
    "timezone",
    "ends_on",
    "max_occurrences",
    "next_occurrence_at",
    "occurrence_count",
    "created_by_id",
    "created_at",
    "updated_at",
)


def _next_not_created(series: RecurringPost) -> dt.datetime | None:
    """The slot after the upcoming post's (``next_occurrence_at``, which an ACTIVE series has
    already created), or None when the series is not ACTIVE or makes no more occurrences."""
    upcoming = series.next_occurrence_at
    if series.status != RecurringStatus.ACTIVE or upcoming is None:
        return None
    if series.max_occurrences is not None and series.occurrence_count >= series.max_occurrences:
        return None
    return Rule.of(series).next_after(upcoming)


def recurring_record(series: RecurringPost) -> dict[str, Any]:
    template = series.template or {}
    targets = list(template.get("targets") or [])
    row = {name: getattr(series, name) for name in _COLUMNS}
    row.update(
        next_not_created=_next_not_created(series),
        template_content_type=template.get("contentType"),
        template_text=template.get("text") or "",
        template_media_urls=template.get("mediaUrls"),
        template_media_alt_texts=template.get("mediaAltTexts"),
        template_thumbnail_url=template.get("thumbnailUrl"),
        template_platform_types=list(dict.fromkeys(target.get("platform") for target in targets)),
        template_platforms=[_template_platform(target) for target in targets],
    )
    return SERIES.render(row)
