"""Models of the media app: uploaded (or generated) files, AI image jobs and AI usage."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.ids import id_factory
from workspaces.models import ApiKey, Workspace


class MediaKind(models.TextChoices):
    IMAGE = "image"
    VIDEO = "video"
    DOCUMENT = "document"


class MediaSource(models.TextChoices):
    UPLOAD = "upload"
    AI = "ai"
    FIT = "fit"


class PreviewStatus(models.TextChoices):
    NONE = "", "none yet"
    QUEUED = "queued"
    READY = "ready"
    FAILED = "failed"
    NOT_APPLICABLE = "n/a"


class ProbeStatus(models.TextChoices):
    NONE = "", "none yet"
    QUEUED = "queued"
    READY = "ready"
    UNUSABLE = "unusable"
    NOT_APPLICABLE = "n/a"


class MediaFile(models.Model):
    """One object in storage under ``<workspace id>/<32 hex>/<file name>``. ``size`` and
    ``uploaded_at`` are set once the bytes are known to be in storage."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("med"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="media_files")
    key = models.CharField(max_length=500, unique=True)
    public_url = models.CharField(max_length=2000, unique=True)
    file_name = models.CharField(max_length=255)
    mime_type = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=MediaKind.choices)
    source = models.CharField(max_length=10, choices=MediaSource.choices, default=MediaSource.UPLOAD)
    size = models.BigIntegerField(null=True, blank=True)
    uploaded_at = models.DateTimeField(null=True, blank=True)
    upload_claimed_at = models.DateTimeField(
        null=True, blank=True, help_text="Set while the one accepted PUT is being received (local storage)"
    )
    first_referenced_at = models.DateTimeField(null=True, blank=True)
    keep_until = models.DateTimeField(null=True, blank=True, help_text="Never collected before this instant")
    preview_key = models.CharField(max_length=520, blank=True, default="")
    preview_status = models.CharField(max_length=10, choices=PreviewStatus.choices, blank=True, default="")
    preview_queued_at = models.DateTimeField(null=True, blank=True)
    probe_status = models.CharField(max_length=10, choices=ProbeStatus.choices, blank=True, default="")
    probe_queued_at = models.DateTimeField(null=True, blank=True)
    probe = models.JSONField(
        null=True, blank=True, help_text="What the probe read from the file (media.probe), once ready"
    )
    probe_error = models.CharField(max_length=300, blank=True, default="", help_text="Why the file is unusable")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=MediaKind.values), name="media_kind_valid"),
            models.CheckConstraint(condition=Q(size__isnull=True) | Q(size__gte=0), name="media_size_non_negative"),
        ]
        indexes = [
            models.Index(fields=["workspace", "-created_at"], name="media_ws_created"),
            models.Index(fields=["preview_key"], condition=~Q(preview_key=""), name="media_preview_key"),
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def is_uploaded(self) -> bool:
        return self.uploaded_at is not None


class VariantStatus(models.TextChoices):
    QUEUED = "queued"
    READY = "ready"
    UNCHANGED = "unchanged", "the original already fits"
    FAILED = "failed"


class MediaVariant(models.Model):
    """One original fitted for one platform and post type (``media.fitting``): the file made for
    it (``output``, a MediaFile of its own beside the original, which is never changed), the
    rule codes it repairs, or why it could not be made. One per (original, platform, post type):
    every post that sends the original there shares it."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("mvar"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    original = models.ForeignKey(MediaFile, on_delete=models.CASCADE, related_name="variants")
    platform = models.CharField(max_length=20)
    post_type = models.CharField(max_length=20)
    status = models.CharField(max_length=10, choices=VariantStatus.choices, default=VariantStatus.QUEUED)
    output = models.OneToOneField(
        MediaFile, null=True, blank=True, on_delete=models.SET_NULL, related_name="fitted_from"
    )
    rules_fixed = models.JSONField(default=list, blank=True, help_text="The rule codes the variant repairs")
    error = models.CharField(max_length=500, blank=True, default="", help_text="Why the fit failed")
    queued_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["original", "platform", "post_type"], name="media_variant_unique"),
            models.CheckConstraint(condition=Q(status__in=VariantStatus.values), name="media_variant_status_valid"),
        ]
        indexes = [models.Index(fields=["status", "queued_at"], name="media_variant_status_queued")]

    def __str__(self) -> str:
        return f"{self.original_id} for {self.platform} {self.post_type} ({self.status})"


class AiJobStatus(models.TextChoices):
    QUEUED = "queued"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"


class AspectRatio(models.TextChoices):
    SQUARE = "1:1"
    LANDSCAPE_16_9 = "16:9"
    PORTRAIT_9_16 = "9:16"
    LANDSCAPE_3_2 = "3:2"
    PORTRAIT_2_3 = "2:3"
    PORTRAIT_4_5 = "4:5"
    LANDSCAPE_5_4 = "5:4"


class AiUsageKind(models.TextChoices):
    CAPTION = "caption"
    IMAGE = "image"


class AiUsage(models.Model):
    """Calls and units one member spent on one kind of AI generation in one workspace and month.
    A member is the signed-in user, or for an API key the user who created it, or else the key
    itself (``member`` says which). Failed generations are refunded, so they count in neither."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="ai_usage")
    month = models.DateField(help_text="First day of the calendar month (UTC)")
    kind = models.CharField(max_length=10, choices=AiUsageKind.choices)
    member = models.CharField(max_length=60, help_text="user:<id> or key:<id>")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    api_key = models.ForeignKey(ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    calls = models.PositiveIntegerField(default=0)
    units = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "AI usage"
        verbose_name_plural = "AI usage"
        ordering = ["-month", "workspace_id", "member", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "month", "kind", "member"], name="ai_usage_unique_row"),
            models.CheckConstraint(condition=Q(kind__in=AiUsageKind.values), name="ai_usage_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.member} {self.kind} {self.month:%Y-%m}: {self.units} units"


class AiImageJob(models.Model):
    """One ``POST /ai/images`` request and its outcome (a MediaFile, or an error)."""

    id = models.CharField(primary_key=True, max_length=40, default=id_factory("imgjob"), editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="ai_image_jobs")
    session_id = models.CharField(max_length=200)
    prompt = models.TextField()
    aspect_ratio = models.CharField(max_length=5, choices=AspectRatio.choices, default=AspectRatio.SQUARE)
    status = models.CharField(max_length=10, choices=AiJobStatus.choices, default=AiJobStatus.QUEUED)
    media_file = models.ForeignKey(MediaFile, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    image_url = models.CharField(max_length=2000, blank=True, default="")
    image_id = models.CharField(
        max_length=40, blank=True, default="", help_text="The MediaFile id (kept if it is deleted)"
    )
    error = models.TextField(blank=True, default="")
    usage = models.ForeignKey(
        AiUsage,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Charged to; refunded on failure",
    )
    charged_units = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    lease_until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=AiJobStatus.values), name="ai_job_status_valid"),
            models.CheckConstraint(condition=Q(aspect_ratio__in=AspectRatio.values), name="ai_job_ratio_valid"),
        ]
        indexes = [models.Index(fields=["status", "lease_until"], name="ai_job_status_lease")]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"
