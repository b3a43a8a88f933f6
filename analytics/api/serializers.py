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
    value = serializers.FloatField(
        allow_null=True, help_text="The figure for the window; null when no selected platform reports it."
    )
    previousValue = serializers.FloatField(
        allow_null=True, help_text="The figure for the window of equal length just before `from`."
    )
    deltaPercent = serializers.FloatField(
        allow_null=True, help_text="The change against `previousValue`, in percent; null when that is 0 or null."
    )


class MetricBlock(serializers.Serializer):
    views = MetricValueOutput(help_text="Views of the posts published in the window.")
    likes = MetricValueOutput(help_text="Likes of those posts.")
    comments = MetricValueOutput(help_text="Comments on those posts.")
    shares = MetricValueOutput(help_text="Shares of those posts.")
    followers = MetricValueOutput(help_text="The latest known follower count.")
    postsCount = MetricValueOutput(help_text="Posts published in the window.")
    avgViewsPerPost = MetricValueOutput(help_text="Views per post published.")
    engagementRate = MetricValueOutput(help_text="(likes + comments + shares) / views × 100.")


class OverviewOutput(MetricBlock):
    partialMetrics = serializers.ListField(
        child=serializers.CharField(),
        help_text=("Metrics some selected platform cannot report: their totals cover only the platforms that can."),
    )
    lastSyncedAt = serializers.DateTimeField(
        allow_null=True, help_text="When the figures were last refreshed from the platforms."
    )


class PointOutput(serializers.Serializer):
    date = serializers.DateTimeField(help_text="Bucket start (UTC)")
    views = serializers.IntegerField(allow_null=True, help_text="Views of the posts published in the bucket.")
    likes = serializers.IntegerField(allow_null=True, help_text="Likes of those posts.")
    comments = serializers.IntegerField(allow_null=True, help_text="Comments on those posts.")
    shares = serializers.IntegerField(allow_null=True, help_text="Shares of those posts.")
    followers = serializers.IntegerField(allow_null=True, help_text="Latest known count at the bucket end")
    postsCount = serializers.IntegerField(help_text="Posts published in the bucket.")
    engagementRate = serializers.FloatField(
        allow_null=True, help_text="(likes + comments + shares) / views × 100 in the bucket."
    )


class TimeseriesOutput(serializers.Serializer):
    granularity = serializers.ChoiceField(choices=["DAILY", "WEEKLY", "MONTHLY"], help_text="DAILY, WEEKLY or MONTHLY.")
    points = PointOutput(many=True, help_text="One point per bucket of the window, oldest first.")


class BreakdownRowOutput(MetricBlock):
    platform = serializers.ChoiceField(choices=PLATFORM_CHOICES, help_text="The platform of this row.")
    supportedMetrics = serializers.ListField(
        child=serializers.CharField(), help_text="The metrics this platform reports."
    )


class BreakdownOutput(serializers.Serializer):
    platforms = BreakdownRowOutput(many=True, help_text="One row per platform with analytics data in the workspace.")


class PostMetricsOutput(serializers.Serializer):
    views = serializers.IntegerField(allow_null=True, help_text="Views; null when the platform does not report them.")
    likes = serializers.IntegerField(allow_null=True, help_text="Likes; null when not reported.")
    comments = serializers.IntegerField(allow_null=True, help_text="Comments; null when not reported.")
    shares = serializers.IntegerField(allow_null=True, help_text="Shares; null when not reported.")
    saves = serializers.IntegerField(allow_null=True, help_text="Pinterest saves, Instagram saved; else null")
    clicks = serializers.IntegerField(allow_null=True, help_text="Pinterest pin and outbound clicks; else null")
    impressions = serializers.IntegerField(
        allow_null=True, help_text="Pinterest, LinkedIn and Facebook impressions; else null"
    )
    reach = serializers.IntegerField(
        allow_null=True, help_text="Unique accounts reached: Instagram, LinkedIn members, Facebook; else null"
    )
    engagementRate = serializers.FloatField(allow_null=True, help_text="(likes + comments + shares) / views × 100.")


class PostRowOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The tracked post's id.")
    postId = serializers.CharField(
        allow_null=True, help_text="The service's post; null for a post discovered on a connected account."
    )
    postPlatformId = serializers.CharField(
        allow_null=True, help_text="The post's platform entry; null for a discovered post."
    )
    platform = serializers.ChoiceField(choices=PLATFORM_CHOICES, help_text="The platform.")
    accountName = serializers.CharField(help_text="The account's display name.")
    publishedAt = serializers.DateTimeField(help_text="When it was published.")
    text = serializers.CharField(help_text="The post's text.")
    title = serializers.CharField(
        allow_null=True,
        help_text="The platform's title (YouTube, Pinterest, LinkedIn document), else the first line of the "
        "text (at most 100 characters), or null",
    )
    permalink = serializers.CharField(help_text="The post on the platform.")
    thumbnailUrl = serializers.CharField(help_text="A preview image, when the platform has one.")
    metrics = PostMetricsOutput(help_text="The latest figures.")


class PostsOutput(serializers.Serializer):
    posts = PostRowOutput(many=True, help_text="This page's posts.")
    total = serializers.IntegerField(help_text="How many posts match, on every page together.")
    page = serializers.IntegerField(help_text="This page's number.")
    limit = serializers.IntegerField(help_text="Posts per page.")
    hasMore = serializers.BooleanField(help_text="true while page `page` + 1 holds posts.")


class TopPostsOutput(serializers.Serializer):
    posts = PostRowOutput(many=True, help_text="Best first; the rows of `GET /analytics/posts`.")


class DiscoveredPostOutput(serializers.Serializer):
    id = serializers.CharField(help_text="The tracked post's id (the `id` of `GET /analytics/posts`).")
    platform = serializers.ChoiceField(choices=PLATFORM_CHOICES, help_text="The platform.")
    publishedAt = serializers.DateTimeField(help_text="When it was published.")
    text = serializers.CharField(help_text="The post's text.")
    thumbnailUrl = serializers.CharField(help_text="A preview image, when the platform has one.")
    permalink = serializers.CharField(help_text="The post on the platform.")
    accountName = serializers.CharField(help_text="The account's display name.")


class DiscoveredPostsOutput(serializers.Serializer):
    posts = DiscoveredPostOutput(many=True, help_text="Newest first.")


class SyncOutput(serializers.Serializer):
    queued = serializers.BooleanField(help_text="true when a refresh was queued; false inside the 10-minute cooldown.")
    message = serializers.CharField(help_text="What happened, in words.")
    cooldownSecondsRemaining = serializers.IntegerField(
        allow_null=True,
        help_text="Seconds before the next sync is allowed when `queued` is false; null when `queued` is true.",
    )


SYNC_STATES = ["IDLE", "QUEUED", "SYNCING", "FAILED"]


class PlatformSyncOutput(serializers.Serializer):
    platform = serializers.ChoiceField(choices=PLATFORM_CHOICES, help_text="The platform.")
    connectionId = serializers.CharField(help_text="The account id (`GET /social-accounts`).")
    accountName = serializers.CharField(help_text="The account's display name.")
    status = choice(SYNC_STATES, help_text="IDLE, QUEUED, SYNCING or FAILED.")
    lastSyncedAt = serializers.DateTimeField(allow_null=True, help_text="When this account was last refreshed.")
    lastErrorMessage = serializers.CharField(allow_null=True, help_text="Why the last refresh failed, when it did.")
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
    accountId = serializers.CharField(help_text="The account's id.")
    platform = serializers.ChoiceField(choices=PLATFORM_CHOICES, help_text="The platform.")
    status = choice(SYNC_STATES, help_text="IDLE, QUEUED, SYNCING or FAILED.")
    lastSyncedAt = serializers.DateTimeField(allow_null=True, help_text="When this account was last refreshed.")
    lastErrorMessage = serializers.CharField(allow_null=True, help_text="Why the last refresh failed, when it did.")


class SyncStatusOutput(serializers.Serializer):
    accountGroupId = serializers.CharField(help_text="The workspace id.")
    syncInProgress = serializers.BooleanField(help_text="true while any account is being refreshed.")
    lastSyncedAt = serializers.DateTimeField(allow_null=True, help_text="When the workspace was last refreshed.")
    historyHorizonAt = serializers.DateTimeField(
        allow_null=True, help_text="The earliest `historyHorizonAt` over the accounts."
    )
    platforms = PlatformSyncOutput(many=True, help_text="One row per account with analytics.")
    accounts = AccountSyncOutput(many=True, help_text="The same rows in the earlier shape, kept for older callers.")
