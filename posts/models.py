from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from accounts.models import PLATFORM_CHOICES, SocialAccount
from core.ids import id_factory
from workspaces.models import Workspace


class PostStatus(models.TextChoices):
    DRAFT = "DRAFT"
    SCHEDULED = "SCHEDULED"
    PENDING = "PENDING"
    PUBLISHING = "PUBLISHING"
    COMPLETED = "COMPLETED"
    PARTIAL_FAILURE = "PARTIAL_FAILURE"
    FAILED = "FAILED"


FINAL_POST_STATUSES = (PostStatus.COMPLETED, PostStatus.PARTIAL_FAILURE, PostStatus.FAILED)


class TargetStatus(models.TextChoices):
    PENDING = "PENDING"
    PUBLISHING = "PUBLISHING"
    PUBLISHED = "PUBLISHED"
    FAILED = "FAILED"


class CommentStatus(models.TextChoices):
    """The first comment's step on an entry: due (PENDING), being sent (SENDING, under a lease), or
    done either way."""

    PENDING = "PENDING"
    SENDING = "SENDING"
    PUBLISHED = "PUBLISHED"
    FAILED = "FAILED"


class ActionKind(models.TextChoices):
    """A change to an entry after it was published, on its platform."""

    EDIT = "EDIT"
    DELETE = "DELETE"


class ActionStatus(models.TextChoices):
    """An action's step: due (PENDING), being sent (SENDING, under a lease), done either way, or
    SKIPPED: never sent, the entry's platform cannot take it (``reason`` says why)."""

    PENDING = "PENDING"
    SENDING = "SENDING"
    DONE = "DONE"
    FAILED = "FAILED"
    SKIPPED = "SKIPPED"


class LatePolicy(models.TextChoices):
    """What happens to an entry that reaches a worker later than the post's maxLatenessSeconds."""

    PUBLISH = "publish"  # it goes out late (the spec's behaviour, the default)
    SKIP = "skip"  # it fails with errorCode "missed"
    DRAFT = "draft"  # the post turns back into an undated draft (when nothing of it went out yet)


class ContentType(models.TextChoices):
    TEXT = "TEXT"
    IMAGE = "IMAGE"
    VIDEO = "VIDEO"
    CAROUSEL = "CAROUSEL"
    DOCUMENT = "DOCUMENT"


class RecurringStatus(models.TextChoices):
    ACTIVE = "ACTIVE"
    PAUSED = "PAUSED"
    ENDED = "ENDED"


class PauseReason(models.TextChoices):
    USER = "USER"
    CONSECUTIVE_FAILURES = "CONSECUTIVE_FAILURES"
    CONNECTION_REMOVED = "CONNECTION_REMOVED"
    INVALID_CONTENT = "INVALID_CONTENT"


class Frequency(models.TextChoices):
    DAILY = "DAILY"
    WEEKLY = "WEEKLY"
    MONTHLY = "MONTHLY"


class RecurringPost(models.Model):
    """A series: its rule and the content every occurrence copies (``template``: the normalized
    create payload, targets and configs included). Only the next occurrence exists as a Post."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("rec"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="recurring_posts")
    status = models.CharField(max_length=10, choices=RecurringStatus.choices, default=RecurringStatus.ACTIVE)
    pause_reason = models.CharField(max_length=30, choices=PauseReason.choices, null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    frequency = models.CharField(max_length=10, choices=Frequency.choices)
    interval = models.PositiveSmallIntegerField(default=1)
    weekdays = models.JSONField(default=list, blank=True)
    starts_at = models.DateTimeField()
    timezone = models.CharField(max_length=64)
    ends_on = models.DateField(null=True, blank=True)
    max_occurrences = models.PositiveIntegerField(null=True, blank=True)
    next_occurrence_at = models.DateTimeField(null=True, blank=True)
    occurrence_count = models.PositiveIntegerField(default=0)
    consecutive_failures = models.PositiveSmallIntegerField(default=0)
    template = models.JSONField(default=dict)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The member who created the series (null for a key without a member)",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=RecurringStatus.values), name="recurring_status_valid"),
            models.CheckConstraint(condition=Q(interval__gte=1) & Q(interval__lte=30), name="recurring_interval_range"),
        ]
        indexes = [models.Index(fields=["workspace", "status"])]


class Post(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=id_factory("post"), editable=False)
    # Indexed by post_ws_created and post_ws_status, which lead with it: a single-column index (and
    # its LIKE twin) would only add to the write cost of every status change and to planning.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="posts", db_index=False)
    status = models.CharField(max_length=20, choices=PostStatus.choices)
    content_type = models.CharField(max_length=10, choices=ContentType.choices)
    text = models.TextField(blank=True, default="")
    timezone = models.CharField(max_length=64, default="UTC")
    scheduled_at = models.DateTimeField(null=True, blank=True)
    media_urls = models.JSONField(default=list, blank=True)
    media_alt_texts = models.JSONField(default=list, blank=True)
    thumbnail_url = models.URLField(max_length=2000, blank=True, default="")
    thumbnail_timestamp_ms = models.PositiveIntegerField(null=True, blank=True)
    late_policy = models.CharField(max_length=10, choices=LatePolicy.choices, default=LatePolicy.PUBLISH)
    max_lateness_seconds = models.PositiveIntegerField(null=True, blank=True)
    thread = models.JSONField(
        default=list,
        blank=True,
        help_text="Replies published after the post's own text, in order: [{text, mediaUrls}] (empty: no thread)",
    )
    first_comment = models.JSONField(
        default=dict,
        blank=True,
        help_text="A comment posted under each entry once it is live: {text, delaySeconds} (empty: none)",
    )
    recurring_post = models.ForeignKey(  # indexed where set by post_unique_occurrence, which leads with it
        RecurringPost, null=True, blank=True, on_delete=models.SET_NULL, related_name="occurrences", db_index=False
    )
    occurrence_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(  # indexed where set, by post_created_by
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
        help_text="The member who created the post (null for a key without a member)",
    )
    created_at = models.DateTimeField(auto_now_add=True)  # indexed by post_created_status
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    unpublished_at = models.DateTimeField(
        null=True, blank=True, help_text="When removing the post from its platforms was asked for (null: never)"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=PostStatus.values), name="post_status_valid"),
            models.CheckConstraint(condition=Q(content_type__in=ContentType.values), name="post_content_type_valid"),
            models.CheckConstraint(
                condition=~Q(status=PostStatus.SCHEDULED) | Q(scheduled_at__isnull=False),
                name="post_scheduled_has_time",
            ),
            models.CheckConstraint(
                condition=Q(late_policy=LatePolicy.PUBLISH, max_lateness_seconds__isnull=True)
                | Q(late_policy__in=[LatePolicy.SKIP, LatePolicy.DRAFT], max_lateness_seconds__gte=1),
                name="post_late_policy_valid",
            ),
            models.UniqueConstraint(
                fields=["recurring_post", "occurrence_at"],
                condition=Q(recurring_post__isnull=False),
                name="post_unique_occurrence",
            ),
        ]
        indexes = [
            models.Index(fields=["workspace", "-created_at", "-id"], name="post_ws_created"),
            models.Index(fields=["workspace", "status"], name="post_ws_status"),
            models.Index(fields=["scheduled_at"], condition=Q(status="SCHEDULED"), name="post_due_scheduled"),
            # The staff dashboard: posts by status per window, finished posts per day (index-only).
            models.Index(fields=["created_at", "status"], name="post_created_status"),
            models.Index(
                fields=["finished_at", "status"], condition=Q(finished_at__isnull=False), name="post_finished_status"
            ),
            # A member's posts, for the SET NULL when a user is deleted: the posts a key made without
            # a member (most of them) are not in it, so their status changes do not maintain it.
            models.Index(fields=["created_by"], condition=Q(created_by__isnull=False), name="post_created_by"),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"


class PostTarget(models.Model):
    """A platform entry: one account of one platform that a post publishes to."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("pt"), editable=False)
    # Indexed by target_one_per_account, which leads with it (a post has a handful of entries: their
    # status is read from the rows).
    post = models.ForeignKey(Post, on_delete=models.CASCADE, related_name="targets", db_index=False)
    platform = models.CharField(max_length=20, choices=PLATFORM_CHOICES)
    # Indexed by target_account (a plain index: no LIKE twin, which no query uses and every
    # non-HOT update of an entry would maintain).
    account = models.ForeignKey(
        SocialAccount, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_index=False
    )
    account_name = models.CharField(max_length=255, blank=True, default="")
    page_id = models.CharField(max_length=255, blank=True, default="")
    status = models.CharField(max_length=12, choices=TargetStatus.choices, default=TargetStatus.PENDING)
    text = models.TextField(blank=True, default="", help_text="The text sent to this platform")
    config = models.JSONField(default=dict, blank=True, help_text="This platform's config values (camelCase)")
    platform_post_id = models.CharField(max_length=255, blank=True, default="")
    post_url = models.URLField(max_length=2000, blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    error_code = models.CharField(max_length=40, blank=True, default="")
    published_at = models.DateTimeField(null=True, blank=True)
    tiktok_draft_fallback = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    remote_state = models.JSONField(default=dict, blank=True, help_text="Intermediate ids of multi-step flows")
    thread_items = models.JSONField(
        default=list,
        blank=True,
        help_text="The thread items the platform confirmed, in order (the post itself first); kept across "
        "retries so that a thread resumes after its last confirmed item",
    )
    # The first comment's own step, claimed like the publish attempt (status, due time, lease as
    # fencing token) but on its own columns, so the entry's status never waits for it.
    comment_status = models.CharField(
        max_length=10, choices=CommentStatus.choices, blank=True, default="", help_text="Empty: not scheduled"
    )
    comment_due_at = models.DateTimeField(null=True, blank=True)
    comment_lease_until = models.DateTimeField(null=True, blank=True)
    comment_attempts = models.PositiveSmallIntegerField(default=0)
    first_comment = models.JSONField(
        default=dict,
        blank=True,
        help_text="The first comment's result: {platformCommentId, errorCode, errorMessage} and the state of a "
        "multi-step comment flow",
    )
    media_fit = models.BooleanField(
        default=False,
        help_text="mediaFit auto for this entry: its media is sent as variants fitted to its platform's rules",
    )
    first_comment_text = models.TextField(
        blank=True,
        default="",
        help_text="This entry's platformFirstComments text, sent instead of the post's firstComment text (empty: "
        "none given for its platform)",
    )
    # After publishing: when the entry was removed from its platform (null: it is still there), and
    # when it was last edited or asked to be removed (null: never; its record then reads no actions).
    unpublished_at = models.DateTimeField(null=True, blank=True)
    last_action_at = models.DateTimeField(null=True, blank=True)
    media = models.JSONField(
        default=dict,
        blank=True,
        help_text="After publishing, the media live on the platform where they differ from the post's (a media edit "
        "its platform could not take, or not confirmed yet): {contentType, mediaUrls, mediaAltTexts}; empty: the "
        "post's own",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=TargetStatus.values), name="target_status_valid"),
            models.UniqueConstraint(fields=["post", "account"], name="target_one_per_account"),
            models.CheckConstraint(
                condition=~Q(status=TargetStatus.PUBLISHED) | ~Q(platform_post_id=""),
                name="target_published_has_remote_id",
            ),
        ]
        # Every claim and every outcome changes an entry's status, so each is an update that writes
        # a new entry in every index whose columns or condition it touches (issue 35): the work
        # indexes are partial, holding the rows of their status only (the sweeper's PENDING and
        # PUBLISHING rows), and no index is kept that no query reads (the primary key's LIKE twin
        # is dropped by migration 0013: Django makes one for every text primary key).
        indexes = [
            models.Index(fields=["next_attempt_at"], condition=Q(status="PENDING"), name="target_pending_due"),
            models.Index(fields=["lease_until"], condition=Q(status="PUBLISHING"), name="target_publishing_lease"),
            models.Index(fields=["account"], name="target_account"),
            models.Index(
                fields=["comment_status", "comment_due_at"],
                condition=Q(comment_status__in=["PENDING", "SENDING"]),
                name="target_comment_due",
            ),
            # The staff dashboard: publishes and failures per platform and errorCode (index-only).
            models.Index(
                fields=["published_at"],
                include=["platform"],
                condition=Q(status="PUBLISHED"),
                name="target_published_at",
            ),
            models.Index(
                fields=["updated_at"],
                include=["platform", "error_code"],
                condition=Q(status="FAILED"),
                name="target_failed_at",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.platform} ({self.status})"


class PostTargetAction(models.Model):
    """One change of a published entry on its platform (an edit, or its removal): the work row of
    its platform step (claimed with a lease, fenced, retried; ``posts.pipeline.after_publishing``)
    and, kept after it is done, the entry's history of what was changed, when, and how it ended.
    The actions of one request (a PATCH, an unpublish) share ``request_id``; an entry's actions run
    one after the other, in the order they were asked for."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("act"), editable=False)
    target = models.ForeignKey(PostTarget, on_delete=models.CASCADE, related_name="actions")
    request_id = models.CharField(max_length=40, help_text="The request (PATCH or unpublish) that asked for it")
    kind = models.CharField(max_length=10, choices=ActionKind.choices)
    status = models.CharField(max_length=10, choices=ActionStatus.choices, default=ActionStatus.PENDING)
    changes = models.JSONField(
        default=dict,
        blank=True,
        help_text="An edit: the new values, {text?, title?, media?: {contentType, mediaUrls, mediaAltTexts}}",
    )
    previous = models.JSONField(default=dict, blank=True, help_text="An edit: the values it replaces")
    reason = models.TextField(blank=True, default="", help_text="SKIPPED: why the platform cannot take it")
    error_code = models.CharField(max_length=40, blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    due_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    sending = models.CharField(
        max_length=40, blank=True, default="", help_text="The lease of the attempt that started sending"
    )
    state = models.JSONField(
        default=dict,
        blank=True,
        help_text="What the platform's last answer asked to resume from (an edit whose new media it still processes)",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=ActionKind.values), name="action_kind_valid"),
            models.CheckConstraint(condition=Q(status__in=ActionStatus.values), name="action_status_valid"),
        ]
        indexes = [
            models.Index(fields=["target", "created_at"], name="action_target_created"),
            models.Index(fields=["request_id"], name="action_request"),
            models.Index(
                fields=["status", "due_at"], condition=Q(status__in=["PENDING", "SENDING"]), name="action_open"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.kind} ({self.status})"


class PostRecord(models.Model):
    """The list's read model: a post's record as the API answers it (JSON text), with the stamp of
    the rows it was rendered from. Read only where its stamp still matches those rows
    (:mod:`posts.read_model`), so no writer has to keep it up to date; the list writes it when a
    record is missing or stale."""

    # No foreign key in the database: storing a record must never wait on, or hold up, a post
    # being deleted (the delete removes the record here first, as Django cascades).
    post = models.OneToOneField(Post, primary_key=True, on_delete=models.CASCADE, db_constraint=False, related_name="+")
    stamp = models.TextField()
    body = models.TextField()

    def __str__(self) -> str:
        return f"record of {self.post_id}"


class PostCount(models.Model):
    """How many posts a workspace has, kept in a few shard rows by triggers on ``posts_post``
    (migration 0010), so the unfiltered list's ``total`` is a sum of at most
    :data:`POST_COUNT_SHARDS` rows instead of a count over every post of the workspace. An insert
    adds its posts to a random shard (concurrent creates in one workspace rarely wait on each
    other); a delete takes them off the workspace's lowest shard (a shard may go below zero: only
    the sum means anything). No writer has to know: the triggers see every INSERT and DELETE,
    the ORM's and the pipeline's own SQL alike."""

    # No foreign key in the database: a workspace's deletion removes these rows before its posts
    # (Django deletes them first), and the posts' delete trigger then finds no row to update.
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, db_constraint=False, db_index=False, related_name="+"
    )
    shard = models.PositiveSmallIntegerField()
    posts = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "shard"], name="postcount_ws_shard")]

    def __str__(self) -> str:
        return f"{self.workspace_id} shard {self.shard}: {self.posts}"


# The shards of a workspace's PostCount (the triggers of migration 0010 use the same number).
POST_COUNT_SHARDS = 8
