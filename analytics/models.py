from __future__ import annotations

from django.db import models
from django.db.models import F, FloatField, Q, Value
from django.db.models.expressions import CombinedExpression
from django.db.models.functions import Cast, Coalesce, NullIf

from accounts.models import PLATFORM_CHOICES, SocialAccount
from core.ids import id_factory
from workspaces.models import Workspace


def engagement_rate_expression() -> CombinedExpression:
    """A row's (likes + comments + shares) / views × 100, NULL without views: the posts reports
    sort by exactly this expression, so the index below can serve that sort."""
    engaged = Coalesce(F("likes"), Value(0)) + Coalesce(F("comments"), Value(0)) + Coalesce(F("shares"), Value(0))
    return Cast(engaged, FloatField()) * 100.0 / Cast(NullIf(F("views"), 0), FloatField())


class TrackedPost(models.Model):
    """One post on a platform whose figures we follow: published through us (``target_id`` set)
    or discovered on a connected account (no link). A NULL metric means the platform does not
    report it, distinct from 0. Deleting the account row deletes its rows (a disconnect keeps the row, and them)."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("tp"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    account = models.ForeignKey(SocialAccount, on_delete=models.CASCADE, related_name="tracked_posts")
    platform = models.CharField(max_length=20, choices=PLATFORM_CHOICES)
    platform_post_id = models.CharField(max_length=255)
    post_id = models.CharField(max_length=40, null=True, blank=True)
    target_id = models.CharField(max_length=40, null=True, blank=True, unique=True)
    published_at = models.DateTimeField()
    text = models.TextField(blank=True, default="")
    title = models.CharField(
        max_length=300, blank=True, default="", help_text="The platform's title of the post, where it has one"
    )
    permalink = models.URLField(max_length=2000, blank=True, default="")
    thumbnail_url = models.URLField(max_length=2000, blank=True, default="")
    views = models.BigIntegerField(null=True, blank=True)
    likes = models.BigIntegerField(null=True, blank=True)
    comments = models.BigIntegerField(null=True, blank=True)
    shares = models.BigIntegerField(null=True, blank=True)
    saves = models.BigIntegerField(null=True, blank=True)
    clicks = models.BigIntegerField(null=True, blank=True)
    impressions = models.BigIntegerField(null=True, blank=True)
    reach = models.BigIntegerField(null=True, blank=True)
    refresh_until = models.DateTimeField()
    last_refreshed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "platform_post_id"], name="trackedpost_unique_remote"),
        ]
        indexes = [
            models.Index(fields=["workspace", "published_at"], name="tracked_ws_published"),
            models.Index(fields=["workspace", "platform", "published_at"], name="tracked_ws_platform_published"),
            models.Index(fields=["account", "refresh_until"], name="tracked_account_refresh"),
            # The posts report's sorts by a figure: read in order, filtered by the window on the index.
            *(
                models.Index(
                    "workspace",
                    F(name).desc(nulls_last=True),
                    F("published_at").desc(),
                    F("id").desc(),
                    name=f"tracked_ws_{name}_sort",
                )
                for name in ("views", "likes", "comments", "shares")
            ),
            models.Index(
                "workspace",
                engagement_rate_expression().desc(nulls_last=True),
                F("published_at").desc(),
                F("id").desc(),
                name="tracked_ws_engagement_sort",
            ),
            # The discovered-posts report: a workspace's posts not published through us, newest first.
            models.Index(
                F("workspace"),
                F("published_at").desc(),
                F("id").desc(),
                name="tracked_ws_discovered",
                condition=Q(target_id__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.platform} {self.platform_post_id}"


class FollowerSnapshot(models.Model):
    """The follower count of an account on a day (the last reading of that day wins)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    account = models.ForeignKey(SocialAccount, on_delete=models.CASCADE, related_name="follower_snapshots")
    platform = models.CharField(max_length=20, choices=PLATFORM_CHOICES)
    day = models.DateField()
    count = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "day"], name="followersnapshot_unique_day")]
        indexes = [models.Index(fields=["workspace", "platform", "day"], name="followers_ws_platform_day")]


class SyncStatus(models.TextChoices):
    IDLE = "IDLE"
    QUEUED = "QUEUED"
    SYNCING = "SYNCING"
    FAILED = "FAILED"


class AccountSyncState(models.Model):
    account = models.OneToOneField(SocialAccount, on_delete=models.CASCADE, related_name="sync_state", primary_key=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=SyncStatus.choices, default=SyncStatus.IDLE)
    history_imported_at = models.DateTimeField(null=True, blank=True)
    last_synced_at = models.DateTimeField(null=True, blank=True)
    last_error_message = models.TextField(blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(status__in=SyncStatus.values), name="syncstate_status_valid")]


class AnalyticsDailyRollup(models.Model):
    """The sums of TrackedPost per (workspace, platform, UTC day of ``published_at``), kept exact
    by database triggers on TrackedPost (every insert, upsert, update and delete, whichever code
    path writes it) so the reports read whole days here instead of scanning posts. Sums count a
    NULL figure as 0 (the reports do too); ``view_posts`` counts rows whose views are known."""

    workspace_id = models.CharField(max_length=40)
    platform = models.CharField(max_length=20, choices=PLATFORM_CHOICES)
    day = models.DateField()
    posts = models.BigIntegerField(default=0)
    view_posts = models.BigIntegerField(default=0)
    views = models.BigIntegerField(default=0)
    likes = models.BigIntegerField(default=0)
    comments = models.BigIntegerField(default=0)
    shares = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace_id", "day", "platform"], name="rollup_unique_ws_day_platform"),
        ]
