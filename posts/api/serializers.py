"""Inputs of the posts endpoints that are not payloads of a post, and the output shapes of the
OpenAPI description (the post record's, ``PostOutput``, is generated from the declaration that
renders it: ``posts.rendering``)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core import serializers as strict
from core.fields import InstantField, TimeZoneField
from core.pagination import OffsetQuery
from posts.models import PostStatus, TargetStatus
from posts.payloads import PLATFORM_VALUES, choice
from posts.rendering import FirstCommentResultOutput, PostOutput, ThreadItemResultOutput


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
    scheduledAt = InstantField(
        required=False,
        allow_null=True,
        help_text="A future time schedules the post (a SCHEDULED post is rescheduled); missing or past: it goes "
        "out now (a dated draft keeps its own future date)",
    )


class PostRetryInput(strict.Serializer):
    platformIds = serializers.ListField(
        child=serializers.CharField(max_length=255), required=False, allow_null=True, max_length=50
    )


# --- outputs ---------------------------------------------------------------------------------


class SkippedPlatformOutput(serializers.Serializer):
    platform = choice(PLATFORM_VALUES)
    reason = serializers.CharField()


_QUEUED_NOW = (
    "The platforms queued for publishing now: only a post going out now (PENDING) lists them; empty for a "
    "scheduled post and a draft"
)


class PostCreateOutput(serializers.Serializer):
    postId = serializers.CharField()
    status = choice(PostStatus.values)
    queuedPlatforms = serializers.ListField(child=choice(PLATFORM_VALUES), help_text=_QUEUED_NOW)
    skippedPlatforms = SkippedPlatformOutput(many=True)
    isScheduled = serializers.BooleanField()
    scheduledAt = serializers.DateTimeField(allow_null=True)
    recurringPostId = serializers.CharField(required=False, help_text="Present when a series was started")


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
    threadItems = serializers.ListField(
        child=ThreadItemResultOutput(),
        required=False,
        help_text="Posts with a thread only: every item's id on the platform confirmed so far, in order, the "
        "post itself first (as the entry's threadItems)",
    )
    firstComment = FirstCommentResultOutput(
        required=False, help_text="Posts with a firstComment only: the comment's result (as the entry's firstComment)"
    )


RESULT_FIELDS = tuple(PostResultOutput().fields)


class PostResultsOutput(serializers.Serializer):
    postId = serializers.CharField()
    status = choice(PostStatus.values)
    results = PostResultOutput(many=True)


class PostPublishOutput(serializers.Serializer):
    postId = serializers.CharField()
    queuedPlatforms = serializers.ListField(child=choice(PLATFORM_VALUES), help_text=_QUEUED_NOW)
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
