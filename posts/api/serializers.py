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
from posts.payloads import (
    PLATFORM_VALUES,
    PlatformTextInput,
    PlatformTitleInput,
    choice,
    content_type_field,
    media_alt_texts_field,
    media_urls_field,
)
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
    timezone = TimeZoneField(required=False, help_text="The post's IANA time zone (kept when omitted).")
    scheduledAt = InstantField(
        required=False,
        allow_null=True,
        help_text="A future time schedules the post (a SCHEDULED post is rescheduled); missing or past: it goes "
        "out now (a dated draft keeps its own future date)",
    )


class PostRetryInput(strict.Serializer):
    platformIds = serializers.ListField(
        child=serializers.CharField(max_length=255),
        required=False,
        allow_null=True,
        max_length=50,
        help_text=(
            "The entries to retry: entry ids (`platformId`) or platform names; missing or empty: every failed entry."
        ),
    )


class PublishedPostEditInput(strict.Serializer):
    """PATCH of a COMPLETED or PARTIAL_FAILURE post: what can change on the platforms."""

    text = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=100_000,
        trim_whitespace=False,
        help_text="The new text of every entry without its own platformTexts item",
    )
    platformTexts = serializers.ListField(
        child=PlatformTextInput(), required=False, max_length=12, help_text="New text per platform (wins over text)"
    )
    title = serializers.CharField(
        required=False,
        max_length=1000,
        help_text="The new title of every entry whose platform's posts have one (YOUTUBE, PINTEREST, FACEBOOK video, "
        "LINKEDIN document, TIKTOK)",
    )
    platformTitles = serializers.ListField(
        child=PlatformTitleInput(), required=False, max_length=12, help_text="New title per platform (wins over title)"
    )
    contentType = content_type_field(
        "The post's content type with its new media, as at create (TEXT, IMAGE, VIDEO, CAROUSEL, DOCUMENT); omitted: "
        "the post's own. Send it when the media change the type (e.g. IMAGE → VIDEO, or TEXT once media are added)",
        required=False,
    )
    mediaUrls = media_urls_field(
        "The post's new media, in order (`publicUrl`s from POST /upload-urls, checked as at create); `[]` removes "
        "them (with contentType TEXT). Each entry whose platform changes media in place gets them"
    )
    mediaAltTexts = media_alt_texts_field(
        'Alternative text per new medium, in the order of mediaUrls ("" skips one); alone, it relabels the media '
        "the post has. New mediaUrls without it have none"
    )

    def to_internal_value(self, data: Any) -> Any:
        unknown = sorted(name for name in data if name not in self.fields) if isinstance(data, dict) else []
        if unknown:
            allowed = ", ".join(self.fields)
            raise serializers.ValidationError(
                {name: f"cannot be changed on a published post (only {allowed})" for name in unknown}
            )
        return super().to_internal_value(data)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError(
                {
                    "text": "a published post's edit needs text, platformTexts, title, platformTitles, contentType, "
                    "mediaUrls or mediaAltTexts"
                }
            )
        for name in ("platformTexts", "platformTitles"):
            items = attrs.get(name) or []
            if len({item["platform"] for item in items}) != len(items):
                raise serializers.ValidationError({name: "must name each platform once"})
        return attrs


# --- outputs ---------------------------------------------------------------------------------


class SkippedPlatformOutput(serializers.Serializer):
    platform = choice(PLATFORM_VALUES, help_text="A platform of the request that was left out.")
    reason = serializers.CharField(help_text='Why, e.g. "No valid connection found".')


_QUEUED_NOW = (
    "The platforms queued for publishing now: only a post going out now (PENDING) lists them; empty for a "
    "scheduled post and a draft"
)


class PostCreateOutput(serializers.Serializer):
    postId = serializers.CharField(help_text="The new post's id.")
    status = choice(PostStatus.values, help_text="DRAFT, SCHEDULED (future `scheduledAt`) or PENDING (publishing now).")
    queuedPlatforms = serializers.ListField(child=choice(PLATFORM_VALUES), help_text=_QUEUED_NOW)
    skippedPlatforms = SkippedPlatformOutput(
        many=True, help_text="Targets left out because no account of theirs was found; the rest is published."
    )
    isScheduled = serializers.BooleanField(help_text="true when the post waits for `scheduledAt`.")
    scheduledAt = serializers.DateTimeField(
        allow_null=True, help_text="When it is published; null for a draft without a date."
    )
    recurringPostId = serializers.CharField(required=False, help_text="Present when a series was started")


class PostListOutput(serializers.Serializer):
    posts = PostOutput(many=True, help_text="This page's posts.")
    total = serializers.IntegerField(help_text="How many posts match, on every page together.")
    hasMore = serializers.BooleanField(
        help_text="true while more posts follow this page (next: `offset` + the posts received)."
    )


class PostDeleteOutput(serializers.Serializer):
    deleted = serializers.BooleanField(help_text="true: the post is gone.")


class PostResultOutput(serializers.Serializer):
    platformId = serializers.CharField(
        help_text="The entry's id (`platformIds` of POST /social-posts/{id}/retry match it)."
    )
    platform = choice(PLATFORM_VALUES, help_text="The entry's platform.")
    accountName = serializers.CharField(help_text="The account's display name.")
    status = choice(TargetStatus.values, help_text="PENDING, PUBLISHING, PUBLISHED or FAILED.")
    platformPostId = serializers.CharField(allow_null=True, help_text="The post's id on the platform, once published.")
    errorMessage = serializers.CharField(allow_null=True, help_text="Why it failed, when it did.")
    tiktokDraftFallback = serializers.BooleanField(
        help_text=("true when TIKTOK delivered the content to the creator's inbox as a draft (its daily cap was hit).")
    )
    publishedAt = serializers.DateTimeField(allow_null=True, help_text="When the platform confirmed it.")
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
    postId = serializers.CharField(help_text="The post's id.")
    status = choice(PostStatus.values, help_text="The post's status.")
    results = PostResultOutput(many=True, help_text="One result per platform entry.")


class PostPublishOutput(serializers.Serializer):
    postId = serializers.CharField(help_text="The post's id.")
    queuedPlatforms = serializers.ListField(child=choice(PLATFORM_VALUES), help_text=_QUEUED_NOW)
    isScheduled = serializers.BooleanField(help_text="true when the post waits for `scheduledAt`.")
    scheduledAt = serializers.DateTimeField(allow_null=True, help_text="When it is published.")


class PostRetryOutput(serializers.Serializer):
    postId = serializers.CharField(help_text="The post's id.")
    queuedPlatforms = serializers.ListField(
        child=choice(PLATFORM_VALUES), help_text="The platforms of the entries queued again."
    )
    isScheduled = serializers.BooleanField(help_text="Always false: retried entries go out now.")


class BulkResultOutput(serializers.Serializer):
    postId = serializers.CharField(allow_null=True, help_text="The created post's id; null when the item failed.")
    success = serializers.BooleanField(help_text="true when the item's post was created.")
    isScheduled = serializers.BooleanField(help_text="true when the post waits for its `scheduledAt`.")
    scheduledAt = serializers.DateTimeField(allow_null=True, help_text="When the post is published.")
    errorMessage = serializers.CharField(allow_null=True, help_text="Why the item failed, when it did.")


class BulkOutput(serializers.Serializer):
    totalScheduled = serializers.IntegerField(help_text="How many items became scheduled posts.")
    totalFailed = serializers.IntegerField(help_text="How many items failed.")
    results = BulkResultOutput(many=True, help_text="One result per item, in the order of `posts`.")


class ValidationIssueOutput(serializers.Serializer):
    platform = choice(
        PLATFORM_VALUES, allow_null=True, help_text="The platform the problem concerns; null for the post as a whole."
    )
    field = serializers.CharField(required=False, help_text="The field at fault, when one is.")
    message = serializers.CharField(help_text="What is wrong, as the create would answer it.")


class PostValidateOutput(serializers.Serializer):
    valid = serializers.BooleanField(help_text="true when a create with this body would be accepted.")
    issues = ValidationIssueOutput(many=True, help_text="Every problem found (empty when valid).")
    skippedPlatforms = SkippedPlatformOutput(many=True, help_text="Targets the create would leave out.")


ActionReportEntryOutput = type(
    "ActionReportEntryOutput",
    (serializers.Serializer,),
    {
        "platformId": serializers.CharField(help_text="The entry's id."),
        "platform": choice(PLATFORM_VALUES, help_text="The entry's platform."),
        "outcome": choice(
            ["QUEUED", "SKIPPED", "UNCHANGED"],
            help_text="QUEUED: sent to the platform next (its result in the entry's `edits` / `unpublish` and in the "
            "request's event); SKIPPED: never sent, `reason` says why; UNCHANGED: nothing to do for this entry (same "
            "values, or its removal is done or under way)",
        ),
        "fields": serializers.ListField(
            child=choice(["media", "text", "title"]), help_text="An edit: the fields it changes."
        ),
        "reason": serializers.CharField(allow_null=True, help_text="SKIPPED: why (the platform cannot take it, ...)."),
    },
)


class ActionReportOutput(serializers.Serializer):
    requestId = serializers.CharField(help_text="Names this request's actions and its event.")
    entries = ActionReportEntryOutput(many=True, help_text="One item per entry of the post, in entry order.")


PostChangeOutput = type(
    "PostChangeOutput",
    (PostOutput,),
    {
        "editReport": ActionReportOutput(
            required=False,
            help_text="Published posts only: per entry, what the edit does on its platform; the outcomes follow in "
            "`post.updated`",
        )
    },
)
PostUnpublishOutput = type(
    "PostUnpublishOutput",
    (PostOutput,),
    {
        "unpublishReport": ActionReportOutput(
            help_text="Per entry, what removing the post does on its platform; the outcomes follow in "
            "`post.unpublished`"
        )
    },
)
