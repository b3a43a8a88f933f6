"""The inbox: the comments (and Google Business reviews) under the accounts' published posts, the
state of their sync per published entry, and the actions taken on them (reply, hide, unhide,
delete, like), each an exactly-once platform step (``engagement.actions``)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from accounts.models import PLATFORM_CHOICES, SocialAccount
from core.ids import id_factory
from posts.models import Post, PostTarget
from workspaces.models import Workspace


class Comment(models.Model):
    """One comment as the platform has it, upserted by the sync on ``(account,
    platform_comment_id)``. ``parent`` keeps the platform's reply nesting (``parent_platform_id``
    names it until the parent itself is stored). A Google Business review has no post or entry.
    ``received_at`` is the marker of its one ``comment.received`` event (set by the statement that
    emits it, so never twice); ``deleted_at``: gone (deleted through us, or no longer on the
    platform at a full sync)."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("cmt"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    account = models.ForeignKey(SocialAccount, on_delete=models.CASCADE, related_name="+", db_index=False)
    platform = models.CharField(max_length=20, choices=PLATFORM_CHOICES)
    post = models.ForeignKey(Post, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    target = models.ForeignKey(PostTarget, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    platform_comment_id = models.CharField(max_length=255)
    platform_post_id = models.CharField(max_length=255, blank=True, default="")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replies", db_index=False
    )
    parent_platform_id = models.CharField(max_length=255, blank=True, default="")
    author_id = models.CharField(max_length=255, blank=True, default="")
    author_name = models.CharField(max_length=255, blank=True, default="")
    author_handle = models.CharField(max_length=255, blank=True, default="")
    author_avatar_url = models.URLField(max_length=2000, blank=True, default="")
    text = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(help_text="When the platform says it was written")
    like_count = models.IntegerField(null=True, blank=True)
    reply_count = models.IntegerField(null=True, blank=True)
    hidden = models.BooleanField(default=False)
    answered = models.BooleanField(default=False, help_text="A reply from the account exists under it")
    permalink = models.URLField(max_length=2000, blank=True, default="")
    from_account = models.BooleanField(default=False, help_text="Written by the connected account itself")
    rating = models.PositiveSmallIntegerField(null=True, blank=True, help_text="A review's stars, 1 to 5")
    deleted_at = models.DateTimeField(null=True, blank=True)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    received_at = models.DateTimeField(null=True, blank=True, help_text="When comment.received named it")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "platform_comment_id"], name="comment_unique_remote"),
            models.CheckConstraint(
                condition=Q(rating__isnull=True) | Q(rating__gte=1, rating__lte=5), name="comment_rating_range"
            ),
        ]
        indexes = [
            # GET /comments: newest first, cursor-paged, in one workspace.
            models.Index(fields=["workspace", "-created_at", "-id"], name="comment_ws_newest"),
            models.Index(
                fields=["workspace", "-created_at", "-id"],
                condition=Q(answered=False, from_account=False, deleted_at__isnull=True),
                name="comment_ws_unanswered",
            ),
            models.Index(fields=["parent"], condition=Q(parent__isnull=False), name="comment_parent"),
            # comment.received: the account's comments never announced.
            models.Index(fields=["account"], condition=Q(received_at__isnull=True), name="comment_unannounced"),
            # The dashboard's backlog: unanswered comments, oldest first.
            models.Index(
                fields=["first_seen_at"],
                condition=Q(answered=False, from_account=False, deleted_at__isnull=True),
                name="comment_unanswered_seen",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.platform} {self.platform_comment_id}"


class SyncStatus(models.TextChoices):
    IDLE = "IDLE"
    FAILED = "FAILED"


class CommentSource(models.Model):
    """Where a sync reads comments: one published entry (``target``), or, for Google Business, the
    account's location (its reviews; no entry). Holds the incremental cursor (``since``: the newest
    comment seen; a pass cut short by the budget resumes at ``page_cursor``), when it is due next
    (``next_due_at``, from the post's age: None = on demand only) and the lease of the sync that
    holds it (``lease_until``, the fencing token of the cursor's write)."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("csrc"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    account = models.ForeignKey(SocialAccount, on_delete=models.CASCADE, related_name="+", db_index=False)
    platform = models.CharField(max_length=20, choices=PLATFORM_CHOICES)
    target = models.OneToOneField(PostTarget, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    platform_post_id = models.CharField(max_length=255, blank=True, default="")
    published_at = models.DateTimeField(null=True, blank=True, help_text="The post's; None for reviews")
    next_due_at = models.DateTimeField(null=True, blank=True)
    queued_at = models.DateTimeField(null=True, blank=True, help_text="When its account's sync task was queued")
    lease_until = models.DateTimeField(null=True, blank=True)
    since = models.DateTimeField(null=True, blank=True, help_text="The newest comment seen by a finished pass")
    page_cursor = models.TextField(blank=True, default="", help_text="Where a pass cut short resumes")
    pass_since = models.DateTimeField(null=True, blank=True, help_text="The `since` of the pass under way")
    pass_newest = models.DateTimeField(null=True, blank=True, help_text="The newest comment of the pass under way")
    last_synced_at = models.DateTimeField(null=True, blank=True)
    full_synced_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=SyncStatus.choices, default=SyncStatus.IDLE)
    error_code = models.CharField(max_length=40, blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # One review source per account (the entry sources are one per entry by their key).
            models.UniqueConstraint(
                fields=["account"], condition=Q(target__isnull=True), name="source_one_review_feed"
            ),
        ]
        indexes = [
            models.Index(fields=["next_due_at"], condition=Q(next_due_at__isnull=False), name="source_due"),
            models.Index(fields=["account", "next_due_at"], name="source_account_due"),
            models.Index(fields=["workspace"], name="source_workspace"),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.platform} {self.platform_post_id or '(reviews)'}"


class ActionKind(models.TextChoices):
    REPLY = "REPLY"
    HIDE = "HIDE"
    UNHIDE = "UNHIDE"
    DELETE = "DELETE"
    LIKE = "LIKE"


class ActionStatus(models.TextChoices):
    """A comment action's step: due (PENDING), being sent (SENDING, under a lease), or done either way."""

    PENDING = "PENDING"
    SENDING = "SENDING"
    DONE = "DONE"
    FAILED = "FAILED"


class CommentAction(models.Model):
    """One action on a comment through the platform: the work row of its platform step (claimed
    with a lease, the start of sending recorded fenced in ``sending``, fenced writes, retried;
    ``engagement.actions``) and, kept after it is done, the comment's history. The actions of one
    comment reach the platform one after the other, in the order they were asked for."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("cact"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+", db_index=False)
    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="actions", db_index=False)
    kind = models.CharField(max_length=10, choices=ActionKind.choices)
    status = models.CharField(max_length=10, choices=ActionStatus.choices, default=ActionStatus.PENDING)
    text = models.TextField(blank=True, default="", help_text="A reply's text")
    reply = models.ForeignKey(
        Comment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text="A reply's comment"
    )
    state = models.JSONField(default=dict, blank=True, help_text="A multi-step reply under way")
    error_code = models.CharField(max_length=40, blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    due_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    sending = models.CharField(
        max_length=40, blank=True, default="", help_text="The lease of the attempt that started sending"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=ActionKind.values), name="comment_action_kind_valid"),
            models.CheckConstraint(condition=Q(status__in=ActionStatus.values), name="comment_action_status_valid"),
        ]
        indexes = [
            models.Index(fields=["comment", "created_at"], name="comment_action_comment"),
            models.Index(
                fields=["status", "due_at"], condition=Q(status__in=["PENDING", "SENDING"]), name="comment_action_open"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} {self.kind} ({self.status})"
