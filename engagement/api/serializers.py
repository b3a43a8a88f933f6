"""The inbox's request and response serializers (the bodies themselves are declared once in
``engagement.records``)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core import serializers as strict
from core.fields import InstantField, UntrimmedTextField, choice
from engagement.records import ACTION, COMMENT
from platforms.base import Platform

PLATFORM_VALUES = [p.value for p in Platform]
CURSOR_PATTERN = r"^[A-Za-z0-9_-]{1,200}$"

CommentOutput = COMMENT.serializer("CommentOutput")
CommentActionOutput = ACTION.serializer("CommentActionOutput")


class CommentListQuery(strict.QuerySerializer):
    after = serializers.RegexField(
        CURSOR_PATTERN,
        required=False,
        help_text="A `nextCursor` from an earlier page, passed back as it is: the (older) comments after it.",
        error_messages={"invalid": "must be a nextCursor returned by GET /comments"},
    )
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20, help_text="Comments per page (1 to 100).")
    accountId = serializers.CharField(max_length=40, required=False, help_text="Only under this account's posts.")
    platforms = serializers.ListField(
        child=choice(PLATFORM_VALUES), required=False, help_text="Only on these platforms (repeat for several)."
    )
    postId = serializers.CharField(max_length=40, required=False, help_text="Only under this post.")
    unanswered = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="true: only others' comments without a reply of the account's; false: only answered ones.",
    )
    hidden = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="Only hidden (true) or visible (false) comments."
    )
    since = InstantField(required=False, help_text="Only comments written at or after this instant.")
    q = serializers.CharField(
        max_length=200,
        required=False,
        help_text="Only comments whose text, author name or handle contains this (case-insensitive).",
    )


class CommentListOutput(serializers.Serializer):
    comments = CommentOutput(many=True, help_text="Newest first.")
    nextCursor = serializers.CharField(
        allow_null=True,
        help_text="Pass back as `after` for the next (older) page; stays the `after` sent when nothing follows.",
    )
    hasMore = serializers.BooleanField(help_text="true while older comments follow this page.")


class CommentDetailOutput(COMMENT.serializer("CommentDetailBase")):  # type: ignore[misc]
    actions = CommentActionOutput(many=True, help_text="Every action asked for on the comment, oldest first.")


@extend_schema_field(
    {
        "type": "array",
        "items": {"$ref": "#/components/schemas/CommentNodeOutput"},
        "description": "Its direct replies, oldest first, each with its own.",
    }
)
class _RepliesField(serializers.Field):
    pass


class CommentNodeOutput(COMMENT.serializer("CommentNodeBase")):  # type: ignore[misc]
    replies = _RepliesField(help_text="Its direct replies, oldest first, each with its own.")


class CommentTreeEntryOutput(serializers.Serializer):
    platformId = serializers.CharField(help_text="The entry (`platforms[].id` of the post).")
    platform = serializers.CharField(help_text="Its platform.")
    accountId = serializers.CharField(allow_null=True, help_text="Its account.")
    platformPostId = serializers.CharField(allow_null=True, help_text="The post's id on the platform, once published.")
    lastSyncedAt = serializers.DateTimeField(
        allow_null=True, help_text="When its comments were last read (null: never, or no comment API)."
    )
    truncated = serializers.BooleanField(help_text="true when it has more comments than a tree holds (2000).")
    comments = CommentNodeOutput(many=True, help_text="The comments under the post, oldest first, as a tree.")


class CommentTreeOutput(serializers.Serializer):
    postId = serializers.CharField(help_text="The post.")
    entries = CommentTreeEntryOutput(many=True, help_text="Every entry of the post, in the post's order.")


class CommentSyncOutput(serializers.Serializer):
    queued = serializers.BooleanField(help_text="true when a sync was queued; false inside the 10-minute cooldown.")
    message = serializers.CharField(help_text="What happened, in words.")
    cooldownSecondsRemaining = serializers.IntegerField(
        allow_null=True,
        help_text="Seconds before the next sync is allowed when `queued` is false; null when `queued` is true.",
    )


class CommentReplyInput(strict.Serializer):
    text = UntrimmedTextField(
        max_length=20000,
        help_text="The reply, checked against the platform's comment rules (`GET /platforms`, `comments.textLimit`).",
    )
