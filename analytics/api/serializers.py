from __future__ import annotations

from typing import Any

from rest_framework import serializers

from analytics.reports import SORT_FIELDS
from core import serializers as strict
from core.fields import InstantField, choice
from platforms.base import Platform

PLATFORM_CHOICES = [p.value for p in Platform]
MAX_BUCKETS = 1000


# The spec makes both ends of the window required (no default): a request without one is told
# what to send.
WINDOW_REQUIRED = (
    "This field is required: the window is from=<start>&to=<end>, each an ISO 8601 date-time or a date "
    "(YYYY-MM-DD, midnight UTC), e.g. from=2026-08-01&to=2026-08-31."
)
WINDOW_DESCRIPTION = (
    "Every analytics report covers the window `from`..`to` (both required, both inclusive; "
    "e.g. `?from=2026-08-01&to=2026-08-31`); a request without either is a 400 naming it and its format."
)


class WindowQuery(strict.QuerySerializer):
    # "from" is a Python keyword: the field is declared under that name below.
    to = InstantField(
        help_text="Required. End of the window (inclusive), not before `from`. A bare date means midnight UTC.",
        error_messages={"required": WINDOW_REQUIRED},
    )
    platforms = serializers.ListField(
        child=serializers.ChoiceField(choices=PLATFORM_CHOICES),
        required=False,
        default=list,
        help_text="Repeated. Omitted: every platform with analytics. MASTODON and TELEGRAM are ignored.",
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        fields = super().get_fields()
        fields["from"] = InstantField(
            help_text="Required. Start of the window (inclusive): an ISO 8601 date-time or a date (YYYY-MM-DD, "
            "midnight UTC).",
            error_messages={"required": WINDOW_REQUIRED},
        )
        return fields

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["to"] < attrs["from"]:
            raise serializers.ValidationError({"to": "must not be earlier than from"})
        return attrs


class BreakdownQuery(WindowQuery):
    """``platforms`` is accepted (and validated) but ignored here: older clients send it."""


class TimeseriesQuery(WindowQuery):
    granularity = serializers.ChoiceField(
        choices=["DAILY", "WEEKLY", "MONTHLY"],
        required=False,
        help_text=f"Default DAILY. The window may hold at most {MAX_BUCKETS} buckets of it (days, weeks of 7 days, "
        "months of 28 days).",
    )
    interval = serializers.ChoiceField(
        choices=["DAY", "WEEK", "MONTH"], required=False, help_text="Deprecated: legacy alias of granularity."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        legacy = {"DAY": "DAILY", "WEEK": "WEEKLY", "MONTH": "MONTHLY"}
        if "granularity" not in attrs:
            attrs["granularity"] = legacy.get(attrs.pop("interval", ""), "DAILY")
        attrs.pop("interval", None)
        days = (attrs["to"] - attrs["from"]).days
        per_bucket = {"DAILY": 1, "WEEKLY": 7, "MONTHLY": 28}[attrs["granularity"]]
        if days / per_bucket > MAX_BUCKETS:
            raise serializers.ValidationError(
                {"granularity": f"the window has more than {MAX_BUCKETS} {attrs['granularity'].lower()} buckets"}
            )
        return attrs


class PostsQuery(WindowQuery):
    page = serializers.IntegerField(min_value=1, default=1, max_value=1_000_000)
    limit = serializers.IntegerField(min_value=1, max_value=100, default=20)
    sortBy = serializers.ChoiceField(choices=list(SORT_FIELDS), default="PUBLISHED_AT")


class TopPostsQuery(WindowQuery):
    sortBy = serializers.ChoiceField(
        choices=list(SORT_FIELDS), default="VIEWS", help_text="The figure the posts are ranked by, descending."
    )
    limit = serializers.IntegerField(min_value=1, max_value=50, default=10)


class DiscoveredPostsQuery(WindowQuery):
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=200)


class MetricValueOutput(serializers.Serializer):
    value = serializers.FloatField(allow_null=True)
    previousValue = serializers.FloatField(allow_null=True)
    deltaPercent = serializers.FloatField(allow_null=True)


class MetricBlock(serializers.Serializer):
    views = MetricValueOutput()
    likes = MetricValueOutput()
    comments = MetricValueOutput()
    shares = MetricValueOutput()
    followers = MetricValueOutput()
    postsCount = MetricValueOutput()
    avgViewsPerPost = MetricValueOutput()
    engagementRate = MetricValueOutput()


class OverviewOutput(MetricBlock):
    partialMetrics = serializers.ListField(child=serializers.CharField())
    lastSyncedAt = serializers.DateTimeField(allow_null=True)


class PointOutput(serializers.Serializer):
    date = serializers.DateTimeField(help_text="Bucket start (UTC)")
    views = serializers.IntegerField(allow_null=True)
    likes = serializers.IntegerField(allow_null=True)
    comments = serializers.IntegerField(allow_null=True)
    shares = serializers.IntegerField(allow_null=True)
    followers = serializers.IntegerField(allow_null=True, help_text="Latest known count at the bucket end")
    postsCount = serializers.IntegerField()
    engagementRate = serializers.FloatField(allow_null=True)


class TimeseriesOutput(serializers.Serializer):
    granularity = serializers.ChoiceField(choices=["DAILY", "WEEKLY", "MONTHLY"])
    points = PointOutput(many=True)


class BreakdownRowOutput(MetricBlock):
    platform = serializers.ChoiceField(choices=PLATFORM_CHOICES)
    supportedMetrics = serializers.ListField(child=serializers.CharField())


class BreakdownOutput(serializers.Serializer):
    platforms = BreakdownRowOutput(many=True)


class PostMetricsOutput(serializers.Serializer):
    views = serializers.IntegerField(allow_null=True)
    likes = serializers.IntegerField(allow_null=True)
    comments = serializers.IntegerField(allow_null=True)
    shares = serializers.IntegerField(allow_null=True)
    saves = serializers.IntegerField(allow_null=True, help_text="Pinterest saves, Instagram saved; else null")
    clicks = serializers.IntegerField(allow_null=True, help_text="Pinterest pin and outbound clicks; else null")
    impressions = serializers.IntegerField(
        allow_null=True, help_text="Pinterest, LinkedIn and Facebook impressions; else null"
    )
    reach = serializers.IntegerField(
        allow_null=True, help_text="Unique accounts reached: Instagram, LinkedIn members, Facebook; else null"
    )
    engagementRate = serializers.FloatField(allow_null=True)


class PostRowOutput(serializers.Serializer):
    id = serializers.CharField()
    postId = serializers.CharField(allow_null=True)
    postPlatformId = serializers.CharField(allow_null=True)
    platform = serializers.ChoiceField(choices=PLATFORM_CHOICES)
    accountName = serializers.CharField()
    publishedAt = serializers.DateTimeField()
    text = serializers.CharField()
    title = serializers.CharField(
        allow_null=True,
        help_text="The platform's title (YouTube, Pinterest, LinkedIn document), else the first line of the "
        "text (at most 100 characters), or null",
    )
    permalink = serializers.CharField()
    thumbnailUrl = serializers.CharField()
    metrics = PostMetricsOutput()


class PostsOutput(serializers.Serializer):
    posts = PostRowOutput(many=True)
    total = serializers.IntegerField()
    page = serializers.IntegerField()
    limit = serializers.IntegerField()
    hasMore = serializers.BooleanField()


class TopPostsOutput(serializers.Serializer):
    posts = PostRowOutput(many=True, help_text="Best first; the rows of `GET /analytics/posts`.")


class DiscoveredPostOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The tracked post's id (the `id` of `GET /analytics/posts`).")
    platform = serializers.ChoiceField(choices=PLATFORM_CHOICES)
    publishedAt = serializers.DateTimeField()
    text = serializers.CharField()
    thumbnailUrl = serializers.CharField()
    permalink = serializers.CharField()
    accountName = serializers.CharField()


class DiscoveredPostsOutput(serializers.Serializer):
    posts = DiscoveredPostOutput(many=True, help_text="Newest first.")


class SyncOutput(serializers.Serializer):
    queued = serializers.BooleanField()
    message = serializers.CharField()
    cooldownSecondsRemaining = serializers.IntegerField(
        allow_null=True,
        help_text="Seconds before the next sync is allowed when `queued` is false; null when `queued` is true.",
    )


SYNC_STATES = ["IDLE", "QUEUED", "SYNCING", "FAILED"]


class PlatformSyncOutput(serializers.Serializer):
    platform = serializers.ChoiceField(choices=PLATFORM_CHOICES)
    connectionId = serializers.CharField(help_text="The account id (`GET /social-accounts`).")
    accountName = serializers.CharField()
    status = choice(SYNC_STATES)
    lastSyncedAt = serializers.DateTimeField(allow_null=True)
    lastErrorMessage = serializers.CharField(allow_null=True)
    historyHorizonAt = serializers.DateTimeField(
        allow_null=True, help_text="The oldest instant the imported history reaches; null before the import."
    )
    lastDiscoveryAt = serializers.DateTimeField(
        allow_null=True, help_text="When the account's posts were last listed on the platform (the import)."
    )
    needsAnalyticsReconnect = serializers.BooleanField(
        help_text="The account's token lacks the scopes analytics needs: reconnect it to get figures."
    )


class AccountSyncOutput(serializers.Serializer):
    accountId = serializers.CharField()
    platform = serializers.ChoiceField(choices=PLATFORM_CHOICES)
    status = choice(SYNC_STATES)
    lastSyncedAt = serializers.DateTimeField(allow_null=True)
    lastErrorMessage = serializers.CharField(allow_null=True)


class SyncStatusOutput(serializers.Serializer):
    accountGroupId = serializers.CharField(help_text="The workspace id.")
    syncInProgress = serializers.BooleanField()
    lastSyncedAt = serializers.DateTimeField(allow_null=True)
    historyHorizonAt = serializers.DateTimeField(
        allow_null=True, help_text="The earliest `historyHorizonAt` over the accounts."
    )
    platforms = PlatformSyncOutput(many=True, help_text="One row per account with analytics.")
    accounts = AccountSyncOutput(many=True, help_text="The same rows in the earlier shape, kept for older callers.")
