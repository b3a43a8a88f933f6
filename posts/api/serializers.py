"""Inputs of the posts endpoints that are not payloads of a post, and the output shapes (for
the OpenAPI description; bodies are rendered by ``posts.rendering``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core import serializers as strict
from core.fields import InstantField, TimeZoneField
from core.pagination import OffsetQuery
from posts.models import PostStatus, TargetStatus
from posts.payloads import PLATFORM_VALUES, choice
from posts.rendering import CLIENT_ALIASES, LIST_CONFIG_FIELDS, PLATFORM_CONFIG_FIELDS, record_field_name


class PostListQuery(OffsetQuery):
    sortOrder = choice(["NEWEST", "OLDEST"], default="NEWEST")
    statuses = serializers.ListField(child=choice(PostStatus.values), required=False)
    platforms = serializers.ListField(child=choice(PLATFORM_VALUES), required=False)
    startDate = InstantField(required=False)
    endDate = InstantField(required=False, help_text="Not before startDate.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("startDate"), attrs.get("endDate")
        if start and end and end < start:
            raise serializers.ValidationError({"endDate": "must not be before startDate"})
        return attrs


class PostPublishInput(strict.Serializer):
    timezone = TimeZoneField(required=False)
    scheduledAt = InstantField(required=False, allow_null=True)


class PostRetryInput(strict.Serializer):
    platformIds = serializers.ListField(
        child=serializers.CharField(max_length=255), required=False, allow_null=True, max_length=50
    )


# --- outputs ---------------------------------------------------------------------------------


class SkippedPlatformOutput(serializers.Serializer):
    platform = choice(PLATFORM_VALUES)
    reason = serializers.CharField()


class PostCreateOutput(serializers.Serializer):
    postId = serializers.CharField()
    status = choice(PostStatus.values)
    queuedPlatforms = serializers.ListField(child=choice(PLATFORM_VALUES))
    skippedPlatforms = SkippedPlatformOutput(many=True)
    isScheduled = serializers.BooleanField()
    scheduledAt = serializers.DateTimeField(allow_null=True)
    recurringPostId = serializers.CharField(required=False, help_text="Present when a series was started")


def _entry_fields() -> dict[str, Any]:
    fields: dict[str, Any] = {
        "id": serializers.CharField(),
        "platformId": serializers.CharField(help_text="Same value as id; retry's platformIds match it"),
        "platform": choice(PLATFORM_VALUES),
        "status": choice(TargetStatus.values),
        "connectionId": serializers.CharField(allow_null=True),
        "pageId": serializers.CharField(allow_null=True),
        "accountName": serializers.CharField(),
        "text": serializers.CharField(),
        "platformPostId": serializers.CharField(allow_null=True),
        "postUrl": serializers.CharField(allow_null=True),
        "errorMessage": serializers.CharField(allow_null=True),
        "errorCode": serializers.CharField(allow_null=True),
        "publishedAt": serializers.DateTimeField(allow_null=True),
        "tiktokDraftFallback": serializers.BooleanField(),
        "mediaUrls": serializers.ListField(
            child=serializers.CharField(), help_text="The media this entry publishes (the post's)"
        ),
        "previewUrls": serializers.ListField(
            child=serializers.CharField(allow_null=True), help_text="Per item of mediaUrls, as the post's previewUrls"
        ),
    }
    for platform, (_, keys) in PLATFORM_CONFIG_FIELDS.items():
        for key in keys:
            name = record_field_name(platform, key)
            if (platform, key) in LIST_CONFIG_FIELDS:
                fields[name] = serializers.ListField(child=serializers.CharField(), required=False)
            else:
                fields[name] = serializers.JSONField(
                    required=False, allow_null=True, help_text=f"{platform} entries only"
                )
    for name, alias in CLIENT_ALIASES.items():
        fields[alias] = serializers.JSONField(
            required=False, allow_null=True, help_text=f"The same value as {name} (the name the published clients read)"
        )
    return fields


PlatformEntryOutput = type("PlatformEntryOutput", (serializers.Serializer,), _entry_fields())


class PostOutput(serializers.Serializer):
    id = serializers.CharField()
    userId = serializers.CharField(
        allow_null=True, help_text="The member who created the post; null when its key has no member"
    )
    status = choice(PostStatus.values)
    contentType = serializers.CharField()
    text = serializers.CharField()
    timezone = serializers.CharField()
    scheduledAt = serializers.DateTimeField(allow_null=True, help_text="null for an undated draft or a post sent now")
    mediaUrls = serializers.ListField(child=serializers.CharField())
    mediaAltTexts = serializers.ListField(child=serializers.CharField())
    previewUrls = serializers.ListField(
        child=serializers.CharField(allow_null=True),
        help_text="Per media item: its WebP preview (at most 720 px; of a video, a still frame), or null where "
        "none is made (yet); never an empty string",
    )
    thumbnailUrl = serializers.CharField(allow_null=True)
    recurringPostId = serializers.CharField(allow_null=True)
    occurrenceAt = serializers.DateTimeField(allow_null=True)
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()
    platforms = PlatformEntryOutput(many=True)


class PostListOutput(serializers.Serializer):
    posts = PostOutput(many=True)
    total = serializers.IntegerField()
    hasMore = serializers.BooleanField()


class PostDeleteOutput(serializers.Serializer):
    deleted = serializers.BooleanField()


class PostResultOutput(serializers.Serializer):
    platformId = serializers.CharField()
    platform = choice(PLATFORM_VALUES)
    accountName = serializers.CharField()
    status = choice(TargetStatus.values)
    platformPostId = serializers.CharField(allow_null=True)
    errorMessage = serializers.CharField(allow_null=True)
    tiktokDraftFallback = serializers.BooleanField()
    publishedAt = serializers.DateTimeField(allow_null=True)


RESULT_FIELDS = tuple(PostResultOutput().fields)


class PostResultsOutput(serializers.Serializer):
    postId = serializers.CharField()
    status = choice(PostStatus.values)
    results = PostResultOutput(many=True)


class PostPublishOutput(serializers.Serializer):
    postId = serializers.CharField()
    queuedPlatforms = serializers.ListField(child=choice(PLATFORM_VALUES))
    isScheduled = serializers.BooleanField()
    scheduledAt = serializers.DateTimeField(allow_null=True)


class PostRetryOutput(serializers.Serializer):
    postId = serializers.CharField()
    queuedPlatforms = serializers.ListField(child=choice(PLATFORM_VALUES))
    isScheduled = serializers.BooleanField()


class BulkResultOutput(serializers.Serializer):
    postId = serializers.CharField(allow_null=True)
    success = serializers.BooleanField()
    isScheduled = serializers.BooleanField()
    scheduledAt = serializers.DateTimeField(allow_null=True)
    errorMessage = serializers.CharField(allow_null=True)


class BulkOutput(serializers.Serializer):
    totalScheduled = serializers.IntegerField()
    totalFailed = serializers.IntegerField()
    results = BulkResultOutput(many=True)


class ValidationIssueOutput(serializers.Serializer):
    platform = choice(PLATFORM_VALUES, allow_null=True)
    field = serializers.CharField(required=False)
    message = serializers.CharField()


class PostValidateOutput(serializers.Serializer):
    valid = serializers.BooleanField()
    issues = ValidationIssueOutput(many=True)
    skippedPlatforms = SkippedPlatformOutput(many=True)
